export const options = { iterations: 2, thresholds: { iterations: ['count==2'] } };
export default function () {}
export function handleSummary(data) {
  const out = {
    stdout: 'custom stdout: ' + data.metrics.iterations.values.count + '\n',
    stderr: 'custom stderr\n',
  };
  out[__ENV.OUT_FILE] = JSON.stringify(data);
  out[__ENV.BIN_FILE] = new Uint8Array([104, 105]).buffer; // ArrayBuffers are written as bytes
  return out;
}
