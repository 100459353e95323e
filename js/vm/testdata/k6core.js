import { check, group, fail, sleep, randomSeed } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
import exec from 'k6/execution';
import { SharedArray } from 'k6/data';
import probe from 'k6/x/probe';

const reqs = new Counter('my_reqs');
const temp = new Gauge('my_temp', true);
const ok = new Rate('my_ok');
const lat = new Trend('my_lat', true);
const plain = new Trend('my_plain');

const users = new SharedArray('users', function () {
  probe.record('shared fn ran');
  return [{ name: 'ann', roles: ['a'] }, { name: 'bob', roles: [] }];
});

export function checks() {
  const r = check(5, {
    'is five': (v) => v === 5,
    'is six': (v) => v === 6,
  }, { kind: 'num' });
  probe.record(r);
  group('outer', function () {
    check(true, { 'inside outer': (v) => v });
    group('inner', function () {
      check(true, { 'inside inner': true });
      probe.emit('custom_in_group', 1, null);
    });
  });
  probe.emit('custom_root', 1, { group: 'mine', x: 'y' });
}

export function metrics() {
  reqs.add(2, { route: '/a' });
  temp.add(21.5);
  ok.add(true);
  ok.add(0);
  lat.add(12.5);
  plain.add(3);
  probe.record(reqs.name + ' ' + (lat instanceof Trend));
}

export function execInfo() {
  probe.record([exec.vu.idInTest, exec.vu.idInInstance, exec.vu.iterationInInstance, exec.vu.iterationInScenario,
    exec.scenario.name, exec.scenario.executor, exec.scenario.iterationInTest, typeof exec.scenario.startTime,
    __VU, __ITER, __ENV.GREETING, __ENV.SCENARIO_ONLY || 'none'].join(','));
}

export function tagging() {
  exec.vu.tags['tier'] = 'gold';
  probe.emit('tagged', 1, null);
  probe.emit('tagged', 1, { tier: 'sample-wins', scenario: 'overridden' });
  delete exec.vu.tags['tier'];
}

export function shared() {
  probe.record(users.length + ' ' + users[1].name + ' ' + users[5] + ' ' + Array.isArray(users));
  const names = [];
  for (const u of users) names.push(u.name);
  probe.record(names.join('+') + ' ' + users.map((u) => u.roles.length).join('+'));
  try {
    users[0].name = 'eve';
    probe.record('mutated');
  } catch (e) {
    probe.record('frozen: ' + e.name);
  }
  try {
    users[0] = 1;
    probe.record('set');
  } catch (e) {
    probe.record('read-only: ' + e.name);
  }
}

export function lateMetric() {
  new Counter('too_late');
}

export function lateShared() {
  new SharedArray('x', () => []);
}

export function lateOpen() {
  open('./lib.js');
}

export function failing() {
  fail('custom failure');
}

export function nested() {
  helper();
}

function helper() {
  throw new Error('deep');
}

export function cancelThenSleep() {
  probe.cancel();
  sleep(3600);
  probe.record('not reached');
}

export function spin() {
  probe.cancel();
  for (;;) {}
}

export function abort() {
  try {
    exec.test.abort('enough');
  } catch (e) {
    probe.record('caught abort');
  }
  probe.record('after abort');
}

export function seeded() {
  randomSeed(42);
  const a = Math.random();
  randomSeed(42);
  probe.record(a === Math.random());
}

export function logs() {
  console.log('plain', 1, { a: 1 });
  console.info('info');
  console.debug('dbg');
  console.warn('warn');
  console.error(new Error('bad'));
}

export default function () {}
