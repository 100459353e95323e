import { aName } from './cycle_a.js';
export function b() {
  return 'b>' + aName;
}
export const bName = 'B';
