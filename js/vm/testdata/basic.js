import { check, group, sleep } from 'k6';
import probe from 'k6/x/probe';
import { double, name as libName } from './lib.js';

export const options = { vus: 2, iterations: 4, thresholds: { checks: ['rate==1'] } };

probe.record('init ' + __VU + ' ' + libName);

export default function () {
  probe.record(double(__ITER));
  check(1, { 'is one': (v) => v === 1, 'truthy value': true });
}

export function setup() {
  return { token: 'abc', vu: __VU };
}

export function teardown(data) {
  probe.record('teardown ' + data.token);
}

export const notAFunction = 42;
