// 50 iterations scheduled over 1 s on at most one VU whose iterations take 200 ms:
// most must be dropped, and started + dropped must equal the schedule.
import { sleep } from 'k6';
export const options = {
  scenarios: {
    open: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: '1s', preAllocatedVUs: 1, maxVUs: 1 },
  },
  thresholds: { 'dropped_iterations{scenario:open}': ['count>0'], 'schedule_lag{scenario:open}': ['max>=0'] },
};
export default function () {
  sleep(0.2);
}
