// Closed-model load that ramps the number of VUs through stages (k6 ramping-vus), to see
// latency grow with concurrency as the mock's capacity model fills up.
//
//   go run ./cmd/tokenstorm run examples/ramping.js
import storm from 'k6/x/tokenstorm';

export const options = {
  stages: [
    { duration: '2s', target: 6 },
    { duration: '2s', target: 6 },
    { duration: '1s', target: 0 },
  ],
  thresholds: {
    llm_req_failed: ['rate<0.01'],
    llm_itl: ['p(95)<100'],
  },
};

// Each running sequence adds 1 ms to every decode gap, with at most 4 decoding at once.
const url = storm.mock({ ttft: '20ms', itl: '3ms', itlPerRunning: '1ms', maxNumSeqs: 4, seed: 2 });
const client = new storm.Client({ url, model: 'mock-model', tags: { example: 'ramping' } });

export default function () {
  client.chat({ messages: [{ role: 'user', content: 'Count to ten.' }], max_tokens: 24 });
}
