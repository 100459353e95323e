import { opened } from './sub/opener.js';
export const fromParent = 'parent:' + opened;
