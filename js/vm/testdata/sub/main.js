import { fromParent } from '../shared.js';
import { a } from './cycle_a.js';
import * as k6 from 'k6';
import probe from 'k6/x/probe';
import { record } from 'k6/x/probe';

const text = open('./data.txt');
const bin = open('../data/bytes.bin', 'b');

record(fromParent + ' ' + a() + ' ' + typeof k6.check + ' ' + text.trim() + ' ' + bin.byteLength + ' ' + new Uint8Array(bin)[1]);
probe.record(typeof probe.record);

export default function () {}
