// open() resolves relative to this module (testdata/sub), not the entry script.
export const opened = open('./data.txt').trim();
