// The package example: 3 iterations with a check and a threshold.
import { check } from 'k6';
export const options = { iterations: 3, thresholds: { checks: ['rate==1'] } };
export default function () {
  check(2 + 2, { 'arithmetic works': (v) => v === 4 });
}
