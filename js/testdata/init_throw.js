const ok = 1;
if (ok) {
  throw new Error('boom in init');
}
export default function () {}
