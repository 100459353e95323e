// Open-model load: a fixed request rate whatever the latency (k6 constant-arrival-rate).
// Iterations that find no free VU are counted in dropped_iterations.
//
//   go run ./cmd/tokenstorm run examples/arrival-rate.js
import storm from 'k6/x/tokenstorm';

export const options = {
  scenarios: {
    steady: {
      executor: 'constant-arrival-rate',
      rate: 20,
      timeUnit: '1s',
      duration: '5s',
      preAllocatedVUs: 8,
      maxVUs: 32,
    },
  },
  thresholds: {
    llm_req_failed: ['rate<0.01'],
    llm_ttft: ['p(99)<500'],
    dropped_iterations: ['count<5'],
  },
};

const url = storm.mock({ ttft: '30ms', itl: '4ms', maxNumSeqs: 16, jitter: 0.1, seed: 1 });
const client = new storm.Client({ url, model: 'mock-model' });
const lengths = storm.lognormal({ median: 48, sigma: 0.5, min: 8, max: 128, seed: 3 });

export default function () {
  client.chat({
    messages: [{ role: 'user', content: 'Summarise the plot of a short film.' }],
    max_tokens: lengths.sample(),
  });
}
