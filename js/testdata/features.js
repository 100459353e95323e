// k6 core features as a script uses them through the runner: SharedArray over open(),
// __ENV (process environment and -e), __VU/__ITER, k6/execution, fail(), console,
// Gauge/Rate, ramping-arrival-rate and per-VU iteration numbering. Every check must
// pass and every threshold hold.
import { check, fail } from 'k6';
import { SharedArray } from 'k6/data';
import { Gauge, Rate } from 'k6/metrics';
import exec from 'k6/execution';

const items = new SharedArray('items', () => JSON.parse(open('./lib/shared.json')));
const last = new Gauge('last_iter');
const even = new Rate('even_iters');

export const options = {
  scenarios: {
    loop: { executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'loop' },
    // 0 → 50/s over 200ms, then 50/s for 200ms: 5 + 10 iterations.
    rar: {
      executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1s', preAllocatedVUs: 2, exec: 'arrive',
      stages: [{ duration: '200ms', target: 50 }, { duration: '200ms', target: 50 }],
    },
  },
  thresholds: {
    checks: ['rate==1'],
    'iterations{scenario:loop}': ['count==6'],
    'iterations{scenario:rar}': ['count>=14', 'count<=16'],
    last_iter: ['value==2'],
    even_iters: [{ threshold: 'rate>0.5', abortOnFail: true, delayAbortEval: '10s' }],
  },
};

export function loop() {
  check(null, {
    'shared array': () => items.length === 3 && items[1].name === 'beta',
    'process env': () => __ENV.TS_FEATURES_PROCESS === 'from-process',
    '-e env': () => __ENV.TS_FEATURES_FLAG === 'from-flag',
    '__VU is the VU id': () => __VU === exec.vu.idInTest && __VU >= 1 && __VU <= 4,
    '__ITER counts this VU': () => __ITER === exec.vu.iterationInInstance,
    'scenario name': () => exec.scenario.name === 'loop',
  });
  let caught = '';
  try {
    fail('on purpose');
  } catch (e) {
    caught = String(e);
  }
  check(caught, { 'fail throws': (c) => c.includes('on purpose') });
  const i = exec.vu.iterationInScenario;
  last.add(i);
  even.add(i % 2 === 0);
  console.log(`features vu=${__VU} iter=${i}`);
}

export function arrive() {
  check(exec.scenario, { 'arrival scenario': (s) => s.name === 'rar' && s.executor === 'ramping-arrival-rate' });
}
