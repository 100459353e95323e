import exec from 'k6/execution';
export const options = { vus: 1, iterations: 100 };
export default function () {
  if (exec.scenario.iterationInTest === 3) {
    exec.test.abort('enough');
  }
}
