import { double } from './lib/math.js';
import { check } from 'k6';
export const options = { iterations: 1, thresholds: { checks: ['rate==1'] } };
export default function () {
  check(double(21), { 'imported helper works': (v) => v === 42 });
}
