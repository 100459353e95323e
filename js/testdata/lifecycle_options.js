// One script for the lifecycle options; __ENV.CASE picks the behaviour.
import { check, sleep } from 'k6';

const cases = {
  noSetup: { iterations: 1, noSetup: true, thresholds: { checks: ['rate==1'] } },
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
  // The VUs get JSON.parse(JSON.stringify(result)), as in k6: functions and undefined
  // are dropped, NaN becomes null, a Date its ISO string, toJSON is honoured.
  return {
    n: 1, f() {}, list: [1, () => 2, undefined], u: undefined, nan: NaN,
    when: new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 678)), custom: { toJSON: () => 'custom' },
  };
}

export default function (data) {
  if (__ENV.CASE === 'setupData') {
    check(data, {
      'setup data is a JSON copy': (d) => d.n === 1 && d.f === undefined && d.list[1] === null &&
        d.list[2] === null && !('u' in d) && d.nan === null && d.when === '2020-01-02T03:04:05.678Z' &&
        d.custom === 'custom',
    });
  }
  if (__ENV.CASE === 'noSetup') {
    check(data, { 'no setup, no data': (d) => d === undefined });
  }
}

export function teardown() {
  if (__ENV.CASE === 'teardownThrows') throw new Error('teardown boom');
}
