// Quickstart: a 5-second load test against the embedded mock LLM, no server needed.
//
//   go run ./cmd/tokenstorm run examples/quickstart.js
//
// Four VUs stream chat completions; the llm_* metrics are emitted by the module and the
// thresholds below decide the exit code (99 when one is crossed).
import { check } from 'k6';
import storm from 'k6/x/tokenstorm';

export const options = {
  vus: 4,
  duration: '5s',
  thresholds: {
    llm_ttft: ['p(95)<250'], // time to first token, ms
    llm_req_failed: ['rate<0.01'],
  },
};

// No url: the client talks to the embedded mock, started once for the whole run.
const client = new storm.Client({ model: 'mock-model' });

export default function () {
  const r = client.chat({
    messages: [{ role: 'user', content: 'Say hello in a few words.' }],
    max_tokens: 32,
  });
  check(r, {
    'request ok': (r) => r.ok,
    'got tokens': (r) => r.completion_tokens > 0,
  });
}
