// A small scenario with an SLO threshold; the test decides how strict through __ENV.
import { check } from 'k6';
import storm from 'k6/x/tokenstorm';

export const options = {
  vus: 2,
  iterations: 6,
  thresholds: {
    llm_ttft: [`p(95)<${__ENV.TTFT_LIMIT_MS || 1000}`],
    llm_req_failed: ['rate<0.01'],
    checks: ['rate==1'],
  },
};

const client = new storm.Client({ url: __ENV.LLM_URL, model: 'mock-model', tags: { suite: 'gotest' } });

export default function () {
  const r = client.chat({ messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 });
  check(r, { 'request ok': (r) => r.ok });
}
