export const options = {
  iterations: 3,
  thresholds: {
    iterations: ['count<1'],
    iteration_duration: ['max>=0'],
  },
};
export default function () {}
