// Chat against a real server, or the embedded mock when LLM_URL is unset (so CI runs it).
//
//   go run ./cmd/tokenstorm run -e LLM_URL=http://127.0.0.1:8000/v1 \
//     -e LLM_MODEL=Qwen/Qwen3-0.6B examples/chat.js
//
// LLM_DIALECT picks the wire protocol (openai-chat by default; anthropic, ollama …);
// LLM_API_KEY, when set, is sent as the bearer token and never printed.
import { check, sleep } from 'k6';
import storm from 'k6/x/tokenstorm';

export const options = {
  vus: 2,
  iterations: 10,
  thresholds: {
    llm_req_failed: ['rate<0.05'],
    llm_goodput: ['rate>0.9'],
  },
};

const client = new storm.Client({
  url: __ENV.LLM_URL, // undefined → the embedded mock
  model: __ENV.LLM_MODEL || 'mock-model',
  dialect: /** @type {import('k6/x/tokenstorm').Dialect} */ (__ENV.LLM_DIALECT || 'openai-chat'),
  apiKey: __ENV.LLM_API_KEY,
  timeout: '60s',
  firstTokenTimeout: '30s',
  slo: { ttft: '2s', tpot: '100ms' },
  tags: { target: __ENV.LLM_URL ? 'server' : 'mock' },
});

export default function () {
  const r = client.chat({
    messages: [
      { role: 'system', content: 'You are a concise assistant.' },
      { role: 'user', content: 'Explain what time to first token measures, in two sentences.' },
    ],
    max_tokens: 64,
    temperature: 0,
  });
  check(r, {
    'ok': (r) => r.ok,
    'finished': (r) => r.finish_reason === 'stop' || r.finish_reason === 'length',
  });
  if (!r.ok) {
    console.warn(`request failed: ${r.error_type}: ${r.error}`);
  }
  sleep(0.1);
}
