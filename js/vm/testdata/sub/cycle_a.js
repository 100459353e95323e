import { b, bName } from './cycle_b.js';
export function a() {
  return 'a>' + b();
}
export const aName = 'A';
