// An abortable wait: resolves true after `ms`, or false as soon as `signal` aborts. The engine decides how
// long; this only waits. Tied to the signal through own-signal.js: however many calls wait on one signal, it
// holds one listener.
import { tie } from './own-signal.js';

export function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    let untie;
    const done = (ok) => {
      clearTimeout(timer);
      untie?.();
      resolve(ok);
    };
    const timer = setTimeout(() => done(true), ms);
    if (typeof signal?.addEventListener === 'function') untie = tie(signal, () => done(false));
  });
}
