// One request to the embedded mock per iteration (benchmarks and the mock test).
import storm from 'k6/x/tokenstorm';
const client = new storm.Client({ url: __ENV.MOCK_URL, model: 'mock-model' });
export default function () {
  const r = client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
  if (!r.ok) throw new Error('request failed: ' + r.error);
}
