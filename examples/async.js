// Several concurrent streams per VU: chatAsync returns a Promise and the VU's event loop
// waits for all of them, so 2 VUs keep 8 streams in flight.
//
//   go run ./cmd/tokenstorm run examples/async.js
import { check } from 'k6';
import storm from 'k6/x/tokenstorm';

export const options = {
  vus: 2,
  iterations: 8,
  thresholds: { llm_req_failed: ['rate<0.01'] },
};

const client = new storm.Client({ model: 'mock-model' });
const STREAMS = 4;

export default async function () {
  const started = Date.now();
  const results = await Promise.all(
    Array.from({ length: STREAMS }, (_, i) =>
      client.chatAsync({
        messages: [{ role: 'user', content: `Question number ${i + 1}?` }],
        max_tokens: 24,
        tags: { stream: String(i) },
      }),
    ),
  );
  const wall = Date.now() - started;
  const slowest = Math.max(...results.map((r) => r.duration_ms));
  check(results, {
    'all ok': (rs) => rs.every((r) => r.ok),
    // Overlapping streams finish in about the time of the slowest one, not the sum.
    'streams overlapped': () => wall < slowest * 2,
  });
}
