// The option under test comes from __ENV.OPT (JSON), so one script covers the table.
export const options = JSON.parse(__ENV.OPT);
export default function () {}
