// A running handler keeps its claim: the lease is renewed (a heartbeat) every third of it while the handler
// runs (the core's `renew` and `keep_alive_ms`, through LedgerRules), so a repeat of the operation hears
// `in_progress` — never the reconcile hook — for as long as the run goes on. When the lease cannot be kept
// (the record changed hands: another run claimed it after the lease ended; or renewals failed until only a
// third of the lease was left), the handler's `signal` aborts and the ledger says so (`lease_lost`); its late `finish` is refused by
// the store's version check and reported (`late_finish`). The claim's fence — the version it was claimed
// with — goes downstream so a stale writer can be refused there too.

/** Why a handler's claim signal aborted: `reason` is `record_changed` or `not_renewed`. */
export class LeaseLost extends Error {
  constructor(reason, fence) {
    super(reason === 'record_changed'
      ? 'the ledger record of this operation changed hands: stop, another run may take over'
      : 'the claim on this operation could not be renewed in time: stop, another run may take over');
    this.name = 'LeaseLost';
    this.reason = reason;
    this.fence = fence;
  }
}

/**
 * A claim held while its handler runs. `stop()` ends the renewals and resolves to the claim as it is now.
 * `env` is the ledger's, made once: `{ store, rules, now, emit, live, every }` — `live` the ledger's map of
 * the claims this process holds (by key string `k`: the in-process guard), `every` the renewal period.
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
  #stopped = false;
  #controller; // made when the handler first reads `signal` (an AbortController per call costs)
  #lost; // the LeaseLost, once lost

  constructor(env, key, k, claim) {
    this.#env = env;
    this.#key = key;
    this.#k = k;
    this.#current = claim;
    /** The fencing token: the version the claim was made with. Every later claim of the key has a higher one. */
    this.fence = claim.version;
    env.live.set(k, this);
    this.#schedule(env.every);
  }

  /** Aborts when the claim can no longer be kept (its `reason` is a `LeaseLost`). */
  get signal() {
    this.#controller ??= new AbortController();
    if (this.#lost && !this.#controller.signal.aborted) this.#controller.abort(this.#lost);
    return this.#controller.signal;
  }

  /** Whether the claim is still held (not lost, not stopped). */
  get live() {
    return !this.#stopped && !this.#lost;
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
    if (this.#stopped) return;
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
    if (!this.live) return;
    const { store, rules, now: clock, emit, every } = this.#env;
    const now = clock();
    // Late (the event loop stalled past two thirds of the lease): still renewed if nobody took the claim —
    // the store's version check proves that — but operators hear that the lease is too short for this process.
    const giveUpAt = this.#current.leaseUntilMs - every;
    const late = now >= giveUpAt;
    const renewed = rules.renew(this.#current, now);
    // A renewal that hangs must not hold the claim past the point where the owner gives up: at that point (or,
    // already late, at the lease's end) the claim is lost whether or not the store has answered.
    const hung = setTimeout(() => this.#stopped || this.#lose('not_renewed'), Math.max(0, (late ? this.#current.leaseUntilMs : giveUpAt) - now));
    hung.unref?.();
    let won;
    try {
      won = await store.replace(this.#key, this.#current.version, renewed);
    } catch (error) {
      emit({ type: 'store_error', during: 'renew', key: this.#key, error });
      // Only a third of the lease left (on the clock now, after the wait) and not renewed: give up before
      // anyone may reconcile it.
      if (this.#lost || clock() >= giveUpAt) return this.#lose('not_renewed');
      return this.#schedule(Math.max(1, Math.floor(every / 4)));
    } finally {
      clearTimeout(hung);
    }
    if (this.#stopped || this.#lost) {
      // Stopped (or given up on) while renewing: the renewal stands if it won (finish uses it).
      if (won) this.#current = renewed;
      return;
    }
    if (!won) return this.#lose('record_changed');
    if (late) emit({ type: 'lease_late', key: this.#key, fence: this.fence, leftMs: this.#current.leaseUntilMs - now });
    this.#current = renewed;
    this.#schedule(every);
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

  /** Ends the renewals (waiting for one in flight) and resolves to the claim as it is now. */
  stop() {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const renewing = this.#renewing;
    if (renewing === null) {
      this.#unlist();
      return Promise.resolve(this.#current);
    }
    return renewing.finally(() => this.#unlist()).then(() => this.#current);
  }
}

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
}
