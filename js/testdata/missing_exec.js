export const options = { scenarios: { s: { executor: 'shared-iterations', exec: 'nope' } } };
export default function () {}
