export const options = { iterations: 1 };
export default function () {}
export function handleSummary() {
  throw new Error('broken summary');
}
