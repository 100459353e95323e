// Requests drawn from a JSONL dataset with Zipf popularity (a few prompts are hot, most
// are rare), output lengths from a log-normal distribution.
//
//   go run ./cmd/tokenstorm run examples/dataset.js
import { check } from 'k6';
import storm from 'k6/x/tokenstorm';

export const options = {
  vus: 3,
  iterations: 30,
  thresholds: { llm_req_failed: ['rate<0.01'] },
};

// Read once per run and shared by the VUs; the path is relative to this script.
const prompts = storm.dataset('./data/prompts.jsonl', { order: 'zipf', s: 1.1, seed: 7 });
const lengths = storm.lognormal({ median: 40, sigma: 0.6, min: 4, max: 160, seed: 11 });
const client = new storm.Client({ model: 'mock-model' });

export default function () {
  const item = prompts.next();
  // A dataset line is a valid request; its own max_tokens wins over the sampled one.
  const r = client.chat({ max_tokens: lengths.sample(), ...item });
  check(r, { 'ok': (r) => r.ok });
}
