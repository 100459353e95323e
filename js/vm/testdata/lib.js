export const name = 'lib';
export function double(x) {
  return x * 2;
}
