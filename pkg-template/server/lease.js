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
import { CLAIM_STANDING_NOT_RENEWED, CLAIM_STANDING_RECORD_CHANGED } from '../generated/names.js';
import { wroteAnswer } from './store-common.js';

/** Why a handler's claim signal aborted: `reason` is `record_changed` or `not_renewed`. */
export class LeaseLost extends Error {
  constructor(reason, fence, committed) {
    super(reason === CLAIM_STANDING_RECORD_CHANGED
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
 * A claim held while its handler runs: carries out the core's hold driver (src/ledger/hold, through
 * `rules.holdStart` / `rules.hold`) — renewals, the give-up point, a hung or late renewal, the read back, the
 * fenced commit are all its decisions; here they are performed (a store write, one timer) and answered.
 * `stop()` ends the renewals and resolves to the claim as it is now. `env` is the ledger's, made once:
 * `{ store, rules, now, mono, emit, live }` — `live` the ledger's map of the claims this process holds (by key
 * string `k`: the in-process guard), `mono` the monotonic clock the give-up point is kept on
 * (`performance.now`). Cheap on purpose (a call that ends before its first renewal is due is the common
 * case): one timer, the AbortController only when `signal` is read, nothing awaited by `stop()` unless a write
 * is in flight.
 */
export class ClaimHold {
  #env;
  #key;
  #k;
  #claimed; // the record the hold began with (a renewal changes only its lease and version)
  #state; // the driver's numbers (rules.hold updates them in place)
  #at; // the last reading: { step, standing, timeout, claimVersion, claimLeaseUntilMs, … }
  #timer;
  #stopping = false;
  #ended; // resolves stop() once the driver says done
  #committing = null; // the fenced transaction in flight, if any
  #onCommit; // a transaction waiting for the driver's go (a renewal was in flight)
  #controller; // made when the handler first reads `signal` (an AbortController per call costs)
  #lost; // the LeaseLost, once lost
  #isBroken = false; // the rules refused a step: the driver is not asked again

  constructor(env, key, k, claim) {
    this.#env = env;
    this.#key = key;
    this.#k = k;
    this.#claimed = claim;
    /** The fencing token: the version the claim was made with. Every later claim of the key has a higher one. */
    this.fence = claim.version;
    const { state, reading } = env.rules.holdStart(claim, env.now(), env.mono());
    this.#state = state;
    env.live.set(k, this);
    this.#apply(reading);
  }

  /** Feeds `event` to the driver and carries out its answer. */
  #step(event, arg) {
    if (this.#isBroken) return this.#at;
    const { rules, now, mono } = this.#env;
    return this.#apply(rules.hold(this.#state, event, arg, now(), mono()));
  }

  #apply(r) {
    this.#at = r;
    if (r.tell === 'lost') this.#lose(r.standing);
    else if (r.tell === 'late') this.#env.emit({ type: 'lease_late', key: this.#key, fence: this.fence, leftMs: r.leftMs });
    if (r.step === 'renew') this.#write(r.write);
    else if (r.step === 'read_back' && this.#stopping) this.#readBack(r.write);
    else if (r.step === 'commit') this.#onCommit?.(r);
    else if (r.step === 'done') this.#end();
    this.#arm(r.timeout);
    return r;
  }

  /** The driver's timer: one, at its `timeout` on the monotonic clock (kept referenced only while stopping). */
  #arm(timeout) {
    clearTimeout(this.#timer);
    if (timeout === undefined) return;
    this.#timer = setTimeout(() => this.#guarded(() => this.#step('timer')), Math.max(0, Math.ceil(timeout - this.#env.mono())));
    if (!this.#stopping) this.#timer.unref?.();
  }

  /** Runs a step outside the handler's own calls (a timer, a store's answer); a failure of the rules is told. */
  #guarded(f) {
    try {
      f();
    } catch (error) {
      this.#broken(error);
    }
  }

  /**
   * The rules refused a step (they cannot, for the state they made — a clock that gave no number can): told,
   * the claim no longer kept, and nothing left waiting on the driver.
   */
  #broken(error) {
    this.#env.emit({ type: 'store_error', during: 'renew', key: this.#key, error });
    clearTimeout(this.#timer);
    this.#lose(CLAIM_STANDING_NOT_RENEWED);
    this.#isBroken = true;
    const waiting = this.#onCommit;
    this.#onCommit = undefined;
    waiting?.(undefined);
    this.#end();
  }

  /** The claim at a write's version and lease. */
  #record(w) {
    return { ...this.#claimed, version: w.version, leaseUntilMs: w.leaseUntilMs };
  }

  #write(w) {
    const renewed = this.#record(w);
    const { store, emit } = this.#env;
    (async () => {
      let answer;
      try {
        answer = wroteAnswer('replace', await store.replace(this.#key, w.expected, renewed)) ? 'won' : 'changed';
      } catch (error) {
        emit({ type: 'store_error', during: 'renew', key: this.#key, error });
        answer = 'failed';
      }
      this.#guarded(() => this.#step('renewed', answer));
    })();
  }

  /** Unanswered by the give-up point, the renewal may have landed: the record read back tells. */
  #readBack(w) {
    const sent = this.#record(w);
    (async () => {
      let same = false;
      try {
        same = sameRecord((await this.#env.store.get(this.#key))?.record, sent);
      } catch {
        // Not known: finish with the claim as last answered (refused, and told, if the renewal had landed).
      }
      this.#guarded(() => this.#step('read_back', same));
    })();
  }

  /** Aborts when the claim can no longer be kept (its `reason` is a `LeaseLost`). */
  get signal() {
    this.#controller ??= new AbortController();
    this.#look();
    if (this.#lost && !this.#controller.signal.aborted) this.#controller.abort(this.#lost);
    return this.#controller.signal;
  }

  /** Whether the claim is still held (not lost, not stopped, its give-up point not passed). */
  get live() {
    this.#look();
    return this.#at.standing === 'held';
  }

  /** The handler reads its claim: past the give-up point on the monotonic clock it is lost now, timers or not. */
  #look() {
    if (this.#at.standing === 'held') this.#step('look');
  }

  /**
   * Whether `record` is this claim's while its handler still runs here (not stopped): the version it holds.
   * True after a renewal was given up on, as long as nobody claimed the record since — the handler is still
   * running in this process, whatever the stored lease says.
   */
  holds(record) {
    return !this.#stopping && record?.version === this.#at.claimVersion;
  }

  /** The claim as last written (its version moves with each renewal). */
  get claim() {
    const r = this.#at;
    return r.claimVersion === this.#claimed.version ? this.#claimed : this.#record({ version: r.claimVersion, leaseUntilMs: r.claimLeaseUntilMs });
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
    const { store } = this.#env;
    if (typeof store.transaction !== 'function') {
      throw typeError('store', 'claim.transaction needs a ledger store with transaction() (SQLite, Postgres, D1 or a Durable Object)', 'not_transactional');
    }
    if (typeof work !== 'function') throw typeError('work', 'claim.transaction(work): work must be a function of the transaction');
    while (this.#committing) await this.#committing.catch(() => {}); // one at a time
    if (this.#stopping) throw typeError('claim', 'the claim has ended: its handler returned', 'claim_ended');
    const run = this.#commit(work);
    this.#committing = run;
    try {
      return await run;
    } finally {
      this.#committing = null;
    }
  }

  /** A step of the commit: a refusal of the rules breaks the hold (told) and rejects the transaction. */
  #commitStep(event, arg) {
    if (this.#isBroken) throw new LeaseLost(CLAIM_STANDING_NOT_RENEWED, this.fence, false);
    try {
      return this.#step(event, arg);
    } catch (error) {
      this.#broken(error);
      throw error;
    }
  }

  async #commit(work) {
    const { store } = this.#env;
    let r = this.#commitStep('commit');
    // A renewal in flight: the driver says go when it has answered (or hung past the give-up point).
    if (r.step !== 'commit') r = await new Promise((resolve) => (this.#onCommit = resolve));
    this.#onCommit = undefined;
    if (r === undefined) throw new LeaseLost(CLAIM_STANDING_NOT_RENEWED, this.fence, false); // the hold broke meanwhile
    const renewed = this.#record(r.write);
    let value;
    let won;
    try {
      won = await store.transaction(this.#key, r.write.expected, renewed, async (tx) => {
        value = await work(tx);
        return { record: renewed, result: undefined };
      });
    } catch (error) {
      this.#commitStep('committed', 'failed');
      throw error;
    }
    let next = this.#commitStep('committed', won ? 'won' : 'changed');
    if (next.step === 'read_back') {
      // Refused — unless the store could not tell and the record read back is this very renewal (D1: a batch
      // whose answer was lost): then it committed after all.
      let back;
      try {
        back = (await store.get(this.#key))?.record;
      } catch (error) {
        this.#commitStep('read_back', false); // not known: the claim is not kept, and the caller hears the store's error
        throw error;
      }
      next = this.#commitStep('read_back', sameRecord(back, renewed));
    }
    if (next.step === 'refused') throw new LeaseLost(next.standing, this.fence, false);
    return value;
  }

  #lose(reason) {
    if (this.#lost) return;
    this.#lost = new LeaseLost(reason, this.fence);
    this.#env.emit({ type: 'lease_lost', key: this.#key, fence: this.fence, reason });
    this.#controller?.abort(this.#lost);
  }

  /** The driver is done: no longer this process's live claim (the guard stops answering in_progress for it). */
  #end() {
    clearTimeout(this.#timer);
    const { live } = this.#env;
    if (live.get(this.#k) === this) live.delete(this.#k);
    this.#ended?.(this.claim);
  }

  /**
   * Ends the renewals and resolves to the claim as it is now: after the write in flight, if any, has settled —
   * or at the give-up point if a renewal has not answered by then (a hung store: the claim is given up,
   * `lease_lost`, the record read back, and the answer is not held up by it).
   */
  async stop() {
    if (this.#stopping) return this.claim;
    while (this.#committing) await this.#committing.catch(() => {});
    this.#stopping = true;
    if (this.#isBroken) return this.claim; // ended already (told): nothing to wait for
    const ended = new Promise((resolve) => (this.#ended = resolve));
    this.#guarded(() => this.#step('stop'));
    return ended;
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
