// Two scenarios with their own exec functions, env and tags.
import { Counter } from 'k6/metrics';
const hits = new Counter('hits');
export const options = {
  scenarios: {
    first: { executor: 'shared-iterations', vus: 2, iterations: 4, exec: 'first', env: { WHICH: 'one' }, tags: { lane: 'a' } },
    second: { executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'second', startTime: '0s' },
  },
  thresholds: {
    'hits{lane:a}': ['count==4'],
    'hits{scenario:second}': ['count==6'],
    'iterations': ['count==10'],
  },
};
export function first() {
  if (__ENV.WHICH !== 'one') throw new Error('scenario env missing');
  hits.add(1);
}
export function second() {
  hits.add(1);
}
