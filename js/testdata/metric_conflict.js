// A script metric that conflicts with one of the tokenstorm module's: an init error
// (exit 107) at the script's declaration, not something the first request discovers.
import './lib/ttft_counter.js';
import storm from 'k6/x/tokenstorm';
export const options = { iterations: 1 };
export default function () {
  new storm.Client();
}
