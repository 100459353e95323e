// Its own execution options are meant to be replaced by -u/-d/-i.
import exec from 'k6/execution';
export const options = {
  scenarios: {
    long: { executor: 'constant-vus', vus: 3, duration: '10m' },
  },
};
export default function () {}
