// Logs INTERRUPT-ME at its third iteration; the test's stderr writer cancels the run's
// context when it sees it, like Ctrl-C.
import { check } from 'k6';
import exec from 'k6/execution';
export const options = { vus: 1, duration: '1m', thresholds: { checks: ['rate==1'] } };
export default function () {
  check(1, { 'ran': () => true });
  if (exec.scenario.iterationInTest === 2) {
    console.log('INTERRUPT-ME');
  }
}
export function teardown() {
  console.log('teardown after interrupt');
}
