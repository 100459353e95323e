// Fails a check every iteration; the abortOnFail threshold must stop the 1-minute run at
// the first evaluation.
import { check, sleep } from 'k6';
export const options = {
  vus: 1,
  duration: '1m',
  thresholds: {
    checks: [{ threshold: 'rate>0.99', abortOnFail: true }],
  },
};
export default function () {
  check(null, { 'always fails': () => false });
  sleep(0.01);
}
export function teardown() {
  console.log('teardown after abort');
}
