// An SLO gate for CI: a fixed batch of requests, each judged against TTFT and TPOT SLOs,
// with thresholds on goodput and on tagged submetrics. The same scenario is written in Go
// in slo_gate_test.go; the test checks that both emit the same metrics and tags and
// reach the same threshold outcomes.
//
//   go run ./cmd/tokenstorm run examples/slo-gate.js
import { check } from 'k6';
import storm from 'k6/x/tokenstorm';

export const options = {
  vus: 3,
  iterations: 12,
  thresholds: {
    llm_goodput: ['rate>=0.95'],
    'llm_ttft{tier:gold}': ['p(95)<500'],
    'llm_reqs{model:mock-model,dialect:openai-chat,status:200,finish_reason:length,scenario:default}': ['count>=12'],
    'checks{check:request ok}': ['rate==1'],
  },
};

const client = new storm.Client({
  url: __ENV.LLM_URL, // undefined → the embedded mock
  model: 'mock-model',
  tags: { tier: 'gold' },
  slo: { ttft: '500ms', tpot: '50ms' },
});

export default function () {
  const r = client.chat({
    messages: [{ role: 'user', content: 'Write one sentence about rivers.' }],
    max_tokens: 16,
  });
  check(r, { 'request ok': (r) => r.ok });
}
