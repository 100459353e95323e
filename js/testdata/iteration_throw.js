// Iteration 2 throws; the run must go on and the other iterations pass their check.
import { check } from 'k6';
import exec from 'k6/execution';
export const options = { vus: 1, iterations: 5 };
export default function () {
  if (exec.scenario.iterationInTest === 2) {
    explode();
  }
  check(1, { 'reached the end': (v) => v === 1 });
}
function explode() {
  throw new Error('iteration boom');
}
