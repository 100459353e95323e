// One script for the lifecycle options; __ENV.CASE picks the behaviour.
import { check, sleep } from 'k6';

const cases = {
  noSetup: { iterations: 1, noSetup: true },
  setupTimeout: { iterations: 1, setupTimeout: '100ms' },
  teardownThrows: { iterations: 1 },
  minIteration: { vus: 1, iterations: 3, minIterationDuration: '100ms' },
  initThrowsInVU2: { vus: 3, iterations: 3 },
  setupData: { iterations: 1, thresholds: { checks: ['rate==1'] } },
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
  // Functions are dropped on the JSON copy to the VUs, as JSON.stringify drops them.
  return { n: 1, f() {}, list: [1, () => 2] };
}

export default function (data) {
  if (__ENV.CASE === 'setupData') {
    check(data, { 'setup data is a JSON copy': (d) => d.n === 1 && d.f === undefined && d.list[1] === null });
  }
}

export function teardown() {
  if (__ENV.CASE === 'teardownThrows') throw new Error('teardown boom');
}
