// Shortcut options from __ENV.OPT (JSON), to test how -u/-d/-i replace them.
import { sleep } from 'k6';
export const options = JSON.parse(__ENV.OPT);
export default function () {
  sleep(0.01);
}
