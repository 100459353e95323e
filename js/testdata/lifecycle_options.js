// One script for the lifecycle options; __ENV.CASE picks the behaviour.
import { sleep } from 'k6';

const cases = {
  noSetup: { iterations: 1, noSetup: true },
  setupTimeout: { iterations: 1, setupTimeout: '100ms' },
  teardownThrows: { iterations: 1 },
  minIteration: { vus: 1, iterations: 3, minIterationDuration: '100ms' },
  initThrowsInVU2: { vus: 3, iterations: 3 },
  runTags: { iterations: 2, tags: { team: 'llm' }, thresholds: { 'iterations{team:llm}': ['count==2'] } },
  scenariosAndDuration: { duration: '1s', scenarios: { s: { executor: 'shared-iterations' } } },
};
export const options = cases[__ENV.CASE];

if (__ENV.CASE === 'initThrowsInVU2' && __VU === 2) {
  throw new Error('VU 2 cannot start');
}

export function setup() {
  if (__ENV.CASE === 'noSetup') throw new Error('setup must not run with noSetup');
  if (__ENV.CASE === 'setupTimeout') sleep(30);
  return {};
}

export default function () {}

export function teardown() {
  if (__ENV.CASE === 'teardownThrows') throw new Error('teardown boom');
}
