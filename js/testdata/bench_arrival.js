// constant-arrival-rate against a mock at 1 ms TTFT (BenchmarkArrivalRate).
import storm from 'k6/x/tokenstorm';
const client = new storm.Client({ url: __ENV.MOCK_URL, model: 'mock-model' });
export const options = {
  scenarios: {
    open: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE),
      timeUnit: '1s',
      duration: __ENV.DURATION,
      preAllocatedVUs: Number(__ENV.VUS),
      maxVUs: Number(__ENV.MAX_VUS),
    },
  },
};
export default function () {
  client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
}
