// N VUs, each with a tokenstorm client, as a typical script has (BenchmarkVUMemory).
// setup() runs after every planned VU is initialised: the benchmark reads the heap then.
import storm from 'k6/x/tokenstorm';
const client = new storm.Client({ url: __ENV.MOCK_URL, model: 'mock-model' });
export const options = { vus: Number(__ENV.VUS), iterations: Number(__ENV.VUS) };
export function setup() {
  console.log('MEASURE-HEAP');
}
export default function () {}
