// handleSummary as k6's documentation writes it, with jslib's textSummary.
import { textSummary } from 'https://jslib.k6.io/k6-summary/0.0.2/index.js';
import { check, group } from 'k6';
export const options = { iterations: 2, thresholds: { checks: ['rate==1'], iteration_duration: ['p(99)<60000'] } };
export default function () {
  group('g', () => check(1, { fine: () => true }));
}
export function handleSummary(data) {
  return { stdout: 'FROM HANDLESUMMARY\n' + textSummary(data, { indent: ' ', enableColors: false }) };
}
