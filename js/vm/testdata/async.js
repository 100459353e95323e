import probe from 'k6/x/probe';

export async function awaitLater() {
  const v = await probe.later('late value');
  probe.record(v);
}

export async function parallel() {
  const vs = await Promise.all([probe.soon(1), probe.soon(2), probe.soon(3)]);
  probe.record(vs.join(','));
}

export function thenChain() {
  probe.soon('x').then((v) => probe.soon(v + 'y')).then((v) => probe.record(v));
}

export async function asyncThrow() {
  await probe.soon(1);
  throw new Error('async boom');
}

export function unhandled() {
  probe.soon(1).then(() => {
    throw new Error('nobody catches me');
  });
}

export function handledLater() {
  const p = Promise.reject(new Error('handled'));
  p.catch((e) => probe.record('caught ' + e.message));
}

export async function dynamicImport() {
  await import('./lib.js');
}

export function holdForever() {
  probe.hold();
}

export function timers() {
  // Timer callbacks run on the VU; the iteration waits for all of them. Order between
  // timers is not asserted: it is wall-clock dependent.
  const order = [];
  let n = 0;
  const done = () => {
    if (order.length === 2 && n === 3) probe.record(order.sort().join(',') + ' n=' + n);
  };
  setTimeout(() => { order.push('t2'); done(); }, 2);
  setTimeout((a) => { order.push(a); done(); }, 0, 't0');
  const cleared = setTimeout(() => order.push('never'), 1);
  clearTimeout(cleared);
  const iv = setInterval(() => {
    n++;
    if (n === 3) {
      clearInterval(iv);
      done();
    }
  }, 1);
}

export default async function () {
  await null;
}
