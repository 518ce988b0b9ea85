// RetryCall: one call's state in the client wasm, held by its handle (made by RetryEngine.begin, freed by
// free() or, when the program drops it, by the finalizer). Its engine marks it in use while a getter of an
// outcome it reads may run, so the call cannot be freed from inside one of its own calls.
import * as w from '../mcp_retry_policy_client.js';
import { typeError } from '../errors.js';
import { foreign, inUse, ok } from './engine-read.js';

// Frees what the program dropped without free(). The handle is all it needs.
const finalizeCalls = new FinalizationRegistry((h) => w.callFree(h));
const MADE_BY_BEGIN = Symbol('RetryCall');

export let callHandle;
export let callRelease;
const callField = (call, i) => ok(w.callField(callHandle(call, 'this'), i), 'RetryCall');

/** One call's state across its attempts, made by `RetryEngine.begin`. */
export class RetryCall {
  #h = 0;
  #busy = 0;

  /** @internal */
  constructor(token, h, owned = false) {
    if (token !== MADE_BY_BEGIN) throw typeError('this', 'a RetryCall is made by RetryEngine.begin()', 'foreign_object');
    this.#h = h;
    if (!owned) finalizeCalls.register(this, h, this);
  }

  static {
    /** The live handle of `call` (`field` names it in errors); `busy` ±1 marks it in use. */
    callHandle = (call, field, busy = 0) => {
      if (call === null || typeof call !== 'object' || !(#h in call)) throw foreign(field, 'RetryCall', call);
      if (call.#h === 0) throw typeError(field, `${field} is a RetryCall that was freed`, 'freed');
      call.#busy += busy;
      return call.#h;
    };
    /** Ends the mark `callHandle(call, field, 1)` set (the call is live: marked, it could not be freed). */
    callRelease = (call) => {
      call.#busy--;
    };
  }

  /** Attempts so far that count toward `maxAttempts`. */
  get attempts() {
    return callField(this, 0);
  }

  /** When the call must be over (ms, same clock as `nowMs`). */
  get deadlineMs() {
    return callField(this, 1);
  }

  /** Whether any attempt so far may have been delivered without an answer from the tool. */
  get maybeDelivered() {
    return callField(this, 2) === 1;
  }

  /** Looks taken so far at an operation still running (`RetryEngine.poll`). */
  get polls() {
    return callField(this, 3);
  }

  /** Frees the call's state (the engine forgets it). Later use is a `freed` TypeError. */
  free() {
    const h = callHandle(this, 'this');
    if (this.#busy > 0) throw inUse('RetryCall');
    this.#h = 0;
    finalizeCalls.unregister(this);
    w.callFree(h);
  }

  [Symbol.dispose]() {
    RetryCall.prototype.free.call(this);
  }
}

/** A RetryCall for the live handle `h` (RetryEngine.begin's). */
export const newCall = (h) => new RetryCall(MADE_BY_BEGIN, h);
/**
 * The same for a call whose owner frees it on every path (withRetry's `finally`): not registered with the
 * finalizer (measured: the registration was ~1.5 µs of a call's cost). Unregistering it in free() is a no-op.
 */
export const newOwnedCall = (h) => new RetryCall(MADE_BY_BEGIN, h, true);
