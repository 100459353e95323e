// Exercises the whole lifecycle: setup data reaches default and teardown, checks and
// groups land in the summary, __ENV carries -e values, custom metrics with tags feed
// thresholds including submetrics.
import { check, group } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import exec from 'k6/execution';

const work = new Counter('work_items');
const size = new Trend('work_size');

export const options = {
  vus: 2,
  iterations: 6,
  thresholds: {
    'work_items': ['count==12'],
    'work_items{kind:even}': ['count==6'],
    'work_size{kind:odd}': ['max<=5'],
    'checks': ['rate==1'],
    'iterations': ['count==6'],
  },
};

export function setup() {
  return { answer: 42, who: __ENV.WHO || 'nobody' };
}

export default function (data) {
  const i = exec.scenario.iterationInTest;
  group('outer', () => {
    group('inner', () => {
      check(data, { 'setup data arrived': (d) => d.answer === 42 });
    });
  });
  check(__ENV, { 'env WHO is set': (e) => e.WHO === 'tester' });
  check(exec.scenario, {
    'scenario info': (sc) => sc.progress >= 0 && sc.progress <= 1 && sc.startTime <= Date.now() && sc.name === 'default',
  });
  check(exec.instance, {
    'instance info': (inst) => inst.vusInitialized === 2 && inst.vusActive >= 1 && inst.iterationsCompleted >= 0,
  });
  work.add(1, { kind: 'even' });
  work.add(1, { kind: 'odd' });
  size.add(i % 5, { kind: 'odd' });
}

export function teardown(data) {
  console.log('teardown saw ' + data.answer + ' ' + data.who);
}
