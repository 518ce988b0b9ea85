// The SQLite store's bounded transaction: a handler's `tx` is the Database behind a guard that refuses every
// call once the transaction has ended (committed, rolled back, or timed out), so a handler still running
// after its transaction timed out cannot write outside it (better-sqlite3 would autocommit those writes).
// Statements prepared through `tx`, and functions made by `tx.transaction`, are guarded the same way.
import { rangeError } from '../errors.js';

/** The transaction ran longer than `transactionTimeoutMs`: it was rolled back, the handler's later writes are refused. */
export class TransactionTimeout extends Error {
  constructor(ms) {
    super(`the transaction ran longer than transactionTimeoutMs (${ms} ms) and was rolled back`);
    this.name = 'TransactionTimeout';
  }
}

const ended = () => rangeError('tx', 'this transaction has ended (committed, rolled back or timed out): write through a live one', 'transaction_ended');

/** `target` behind the guard `state` (`{ open }`): every method call checks `state.open` first. */
export function guarded(target, state) {
  return new Proxy(target, {
    get(t, prop) {
      const v = Reflect.get(t, prop, t);
      if (typeof v !== 'function') return v;
      return (...args) => {
        if (!state.open) throw ended();
        const out = v.apply(t, args);
        if (typeof out === 'function') {
          return (...a) => {
            if (!state.open) throw ended();
            return out(...a);
          };
        }
        return out !== null && typeof out === 'object' && typeof out.run === 'function' ? guarded(out, state) : out;
      };
    },
  });
}

/** `work`'s promise, or a `TransactionTimeout` after `ms` (the later settling of `work` is observed, not lost). */
export function withTimeout(work, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new TransactionTimeout(ms)), ms);
    timer.unref?.();
  });
  work.catch(() => {});
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
