// A VU reused by a second scenario: __ITER counts the VU's iterations across scenarios
// (k6's vu.iterationInInstance), vu.iterationInScenario restarts at 0. The scenarios do
// not overlap, so one VU runs both.
import { check } from 'k6';
import exec from 'k6/execution';
export const options = {
  scenarios: {
    first: { executor: 'per-vu-iterations', vus: 1, iterations: 2, exec: 'first', maxDuration: '400ms', gracefulStop: '0s' },
    second: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'second', startTime: '500ms' },
  },
};
export function first() {}
export function second() {
  check(null, {
    '__ITER is iterationInInstance': () => __ITER === 2 && exec.vu.iterationInInstance === 2,
    'iterationInScenario restarts': () => exec.vu.iterationInScenario === 0,
  });
}
