// One request to the embedded mock per iteration (benchmarks and the mock test).
import storm from 'k6/x/tokenstorm';
const client = new storm.Client({ url: __ENV.MOCK_URL, model: 'mock-model' }); // no MOCK_URL: the embedded mock
export const options = __ENV.OPTIONS ? JSON.parse(__ENV.OPTIONS) : {};
export default function () {
  const r = client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
  if (!r.ok) throw new Error('request failed: ' + r.error);
}
