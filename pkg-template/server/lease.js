// A running handler keeps its claim: the lease is renewed (a heartbeat) every third of it while the handler
// runs (the core's `renew` and `keep_alive_ms`, through LedgerRules), so a repeat of the operation hears
// `in_progress` — never the reconcile hook — for as long as the run goes on. When the lease cannot be kept,
// the handler's `signal` aborts and the ledger says so (`lease_lost`): the record changed hands (another run
// claimed it after the lease ended), or the claim's give-up point (the core's `give_up_at_ms`: a third of the
// lease before its end) passed on this process's *monotonic* clock with no renewal landed — renewals failed or
// hung, or the process was paused or its event loop blocked (the signal's getter reads the clock too, so a
// handler resuming from a pause reads it aborted before its timers have run). Its late `finish` is refused by
// the store's version check and reported (`late_finish`). The claim's fence — the version it was claimed with —
// goes downstream so a stale writer can be refused there too; `transaction(work)` checks it where the write
// lands: the handler's writes commit in the store's transaction only while the claim is still the record's.

import { typeError } from '../errors.js';
import { wroteAnswer } from './store-common.js';

/** Why a handler's claim signal aborted: `reason` is `record_changed` or `not_renewed`. */
export class LeaseLost extends Error {
  constructor(reason, fence, committed) {
    super(reason === 'record_changed'
      ? 'the ledger record of this operation changed hands: stop, another run may take over'
      : 'the claim on this operation could not be renewed in time: stop, another run may take over');
    this.name = 'LeaseLost';
    this.reason = reason;
    this.fence = fence;
    // `false` when thrown by `claim.transaction(work)`: the store refused the commit, none of `work`'s writes stand.
    if (committed === false) this.committed = false;
  }
}

/**
 * A claim held while its handler runs. `stop()` ends the renewals and resolves to the claim as it is now.
 * `env` is the ledger's, made once: `{ store, rules, now, mono, emit, live, every }` — `live` the ledger's map
 * of the claims this process holds (by key string `k`: the in-process guard), `every` the renewal period,
 * `mono` the monotonic clock the give-up point is kept on (`performance.now`).
 * Cheap on purpose (a call that ends before its first renewal is due is the common case): one timer, no
 * closure per call but the timer's, the AbortController only when `signal` is read, nothing awaited by
 * `stop()` unless a renewal is in flight.
 */
export class ClaimHold {
  #env;
  #key;
  #k;
  #current;
  #timer;
  #renewing = null; // the renewal in flight, if any
  #sending = null; // the record that renewal writes
  #stopped = false;
  #committing = false; // a fenced transaction is running: it renews the claim itself, no timer meanwhile
  #deadline; // the give-up point on the monotonic clock (`env.mono`, ms)
  #controller; // made when the handler first reads `signal` (an AbortController per call costs)
  #lost; // the LeaseLost, once lost

  constructor(env, key, k, claim) {
    this.#env = env;
    this.#key = key;
    this.#k = k;
    this.#current = claim;
    /** The fencing token: the version the claim was made with. Every later claim of the key has a higher one. */
    this.fence = claim.version;
    // Counted from now, not from when the claim was written: never later than the claim's own give-up point.
    this.#deadline = env.mono() + (env.rules.giveUpAt(claim) - env.now());
    env.live.set(k, this);
    this.#schedule(env.every);
  }

  /** Aborts when the claim can no longer be kept (its `reason` is a `LeaseLost`). */
  get signal() {
    this.#controller ??= new AbortController();
    this.#checkClock();
    if (this.#lost && !this.#controller.signal.aborted) this.#controller.abort(this.#lost);
    return this.#controller.signal;
  }

  /** Whether the claim is still held (not lost, not stopped, its give-up point not passed). */
  get live() {
    this.#checkClock();
    return !this.#stopped && !this.#lost;
  }

  /** Past the give-up point on the monotonic clock with no renewal landed: lost, whatever the timers did. */
  #checkClock() {
    if (!this.#lost && !this.#stopped && this.#env.mono() >= this.#deadline) this.#lose('not_renewed');
  }

  /**
   * Whether `record` is this claim's while its handler still runs here (not stopped): the version it holds.
   * True after a renewal was given up on, as long as nobody claimed the record since — the handler is still
   * running in this process, whatever the stored lease says.
   */
  holds(record) {
    return !this.#stopped && record?.version === this.#current.version;
  }

  /** The claim as last written (its version moves with each renewal). */
  get claim() {
    return this.#current;
  }

  #schedule(ms) {
    if (this.#stopped || this.#committing) return;
    this.#timer = setTimeout(() => {
      this.#renewing = this.#renew().catch((error) => {
        // Not a store failure (those are handled in #renew): the claim cannot be renewed; say so, never hang.
        this.#env.emit({ type: 'store_error', during: 'renew', key: this.#key, error });
        this.#lose('not_renewed');
      }).finally(() => {
        this.#renewing = null;
      });
    }, ms);
    this.#timer.unref?.();
  }

  async #renew() {
    this.#checkClock(); // resumed from a pause past the give-up point: lost, not renewed late
    if (!this.live) return;
    const { store, rules, now: clock, mono, emit, every } = this.#env;
    const now = clock();
    const at = mono();
    // Late on the ledger's clock (it jumped ahead of the monotonic one): still renewed if nobody took the
    // claim — the store's version check proves that — but operators hear that the lease is too short.
    const late = now >= rules.giveUpAt(this.#current);
    const renewed = rules.renew(this.#current, now);
    // A renewal that hangs must not hold the claim past the point where the owner gives up: at that point the
    // claim is lost whether or not the store has answered.
    const hung = setTimeout(() => this.#stopped || this.#lose('not_renewed'), Math.max(0, this.#deadline - at));
    hung.unref?.();
    let won;
    this.#sending = renewed;
    try {
      won = wroteAnswer('replace', await store.replace(this.#key, this.#current.version, renewed));
    } catch (error) {
      emit({ type: 'store_error', during: 'renew', key: this.#key, error });
      // Past the give-up point (on the monotonic clock, after the wait) and not renewed: give up before
      // anyone may reconcile it.
      this.#checkClock();
      if (this.#lost) return;
      return this.#schedule(Math.max(1, Math.floor(every / 4)));
    } finally {
      clearTimeout(hung);
      this.#sending = null;
    }
    if (won) this.#renewedTo(renewed, now, at);
    if (this.#stopped || this.#lost) return; // stopped (or given up on) while renewing: the renewal stands if it won (finish uses it)
    if (!won) return this.#lose('record_changed');
    if (late) emit({ type: 'lease_late', key: this.#key, fence: this.fence, leftMs: this.#current.leaseUntilMs - now });
    this.#schedule(every);
  }

  /** `renewed` landed: written at `now` on the ledger's clock, `at` on the monotonic one (read before the write). */
  #renewedTo(renewed, now, at) {
    this.#current = renewed;
    this.#deadline = at + (this.#env.rules.giveUpAt(renewed) - now);
  }

  /**
   * Runs `work(tx)` in one transaction of the ledger's store that commits only while this claim is still the
   * record's: the transaction first renews the claim under the store's version check (SQLite: under its write
   * lock; Postgres: the row stays locked until the commit), so a run whose record changed hands — it was paused,
   * or its clock was behind, past another run's takeover — has its writes refused there instead of committed
   * after another run's. Refused: a `LeaseLost` (`record_changed`, `committed: false`) and none of `work`'s
   * writes stand. `work` throwing rolls everything back and rejects with its error.
   */
  async transaction(work) {
    const { store, rules, now: clock, mono, every } = this.#env;
    if (typeof store.transaction !== 'function') {
      throw typeError('store', 'claim.transaction needs a ledger store with transaction() (SQLite, Postgres, D1 or a Durable Object)', 'not_transactional');
    }
    if (typeof work !== 'function') throw typeError('work', 'claim.transaction(work): work must be a function of the transaction');
    if (this.#stopped) throw typeError('claim', 'the claim has ended: its handler returned', 'claim_ended');
    this.#committing = true;
    try {
      if (this.#renewing) await this.#settled();
      clearTimeout(this.#timer);
      const now = clock();
      const at = mono();
      const renewed = rules.renew(this.#current, now);
      let value;
      const won = await store.transaction(this.#key, this.#current.version, renewed, async (tx) => {
        value = await work(tx);
        return { record: renewed, result: undefined };
      });
      // Not applied — unless the store could not tell and read back a changed record that is this very
      // renewal (D1: a batch whose answer was lost): then it committed after all.
      if (!won && !sameRecord((await store.get(this.#key))?.record, renewed)) {
        this.#lose('record_changed');
        throw new LeaseLost('record_changed', this.fence, false);
      }
      this.#renewedTo(renewed, now, at);
      return value;
    } finally {
      this.#committing = false;
      if (!this.#lost) this.#schedule(every);
    }
  }

  /**
   * The renewal in flight settled (true), or the give-up point passed first (false: the claim is lost, the
   * renewal unanswered).
   */
  #settled() {
    const renewing = this.#renewing;
    const left = this.#deadline - this.#env.mono();
    if (renewing === null) return Promise.resolve(true);
    if (left <= 0) {
      this.#lose('not_renewed');
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.#lose('not_renewed'); // the renewal never answered: given up, as the hung timer would have
        resolve(false);
      }, left); // kept referenced: an answer waits on it (bounded)
      renewing.finally(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  #lose(reason) {
    if (this.#lost) return;
    this.#lost = new LeaseLost(reason, this.fence);
    this.#env.emit({ type: 'lease_lost', key: this.#key, fence: this.fence, reason });
    this.#controller?.abort(this.#lost);
  }

  /** No longer this process's live claim (the guard stops answering in_progress for it). */
  #unlist() {
    const { live } = this.#env;
    if (live.get(this.#k) === this) live.delete(this.#k);
  }

  /**
   * Ends the renewals and resolves to the claim as it is now: after the renewal in flight, if any, has
   * settled — or at the give-up point if it has not answered by then (a hung store: the claim is given up,
   * `lease_lost`, and the answer is not held up by it).
   */
  stop() {
    this.#checkClock();
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (this.#renewing === null) {
      this.#unlist();
      return Promise.resolve(this.#current);
    }
    const sending = this.#sending;
    return this.#settled().then(async (answered) => {
      // Unanswered by the give-up point: the renewal may have landed. The record read back tells — exactly
      // the renewal this claim sent (another run's claim has its own creation time and lease) or not.
      if (!answered && sending) {
        try {
          if (sameRecord((await this.#env.store.get(this.#key))?.record, sending)) this.#current = sending;
        } catch {
          // Not known: finish with the claim as last answered (refused, and told, if the renewal had landed).
        }
      }
      this.#unlist();
      return this.#current;
    });
  }
}

const sameRecord = (a, b) => a !== undefined && a.state === b.state && a.fingerprint === b.fingerprint &&
  a.leaseUntilMs === b.leaseUntilMs && a.createdMs === b.createdMs && a.expiresMs === b.expiresMs && a.version === b.version;

/**
 * What `claimOf(extra)` gives the handler: the key, the fence and the signal of its hold — read-only, and
 * without the hold's own controls (a handler cannot stop its renewals).
 */
export class HandlerClaim {
  #key;
  #hold;

  constructor(key, hold) {
    this.#key = key;
    this.#hold = hold;
  }

  get tenant() {
    return this.#key.tenant;
  }

  get action() {
    return this.#key.action;
  }

  get operationId() {
    return this.#key.operationId;
  }

  get fence() {
    return this.#hold.fence;
  }

  get signal() {
    return this.#hold.signal;
  }

  /** `work(tx)`'s writes in the store's transaction, committed only while this claim is the record's (ClaimHold.transaction). */
  transaction(work) {
    return this.#hold.transaction(work);
  }
}
