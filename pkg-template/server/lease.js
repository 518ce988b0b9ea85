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

/** A claim held while its handler runs. `stop()` ends the renewals and resolves to the claim as it is now. */
export class ClaimHold {
  #store;
  #rules;
  #now;
  #key;
  #emit;
  #onStop;
  #current;
  #every;
  #timer;
  #renewing = Promise.resolve();
  #stopped = false;
  #controller; // made when the handler first reads `signal` (an AbortController per call costs)
  #lost; // the LeaseLost, once lost

  constructor({ store, rules, now, key, claim, emit, onStop }) {
    this.#store = store;
    this.#rules = rules;
    this.#now = now;
    this.#key = key;
    this.#emit = emit;
    this.#onStop = onStop;
    this.#current = claim;
    this.#every = rules.keepAliveMs;
    /** The fencing token: the version the claim was made with. Every later claim of the key has a higher one. */
    this.fence = claim.version;
    this.#schedule(this.#every);
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

  /** The claim as last written (its version moves with each renewal). */
  get claim() {
    return this.#current;
  }

  #schedule(ms) {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#renewing = this.#renew();
    }, ms);
    this.#timer.unref?.();
  }

  async #renew() {
    if (!this.live) return;
    const now = this.#now();
    // Late (the event loop stalled past two thirds of the lease): still renewed if nobody took the claim —
    // the store's version check proves that — but operators hear that the lease is too short for this process.
    const late = now >= this.#current.leaseUntilMs - this.#every;
    const renewed = this.#rules.renew(this.#current, now);
    let won;
    try {
      won = await this.#store.replace(this.#key, this.#current.version, renewed);
    } catch (error) {
      this.#emit({ type: 'store_error', during: 'renew', key: this.#key, error });
      // Only a third of the lease left and not renewed: give up before anyone may reconcile it.
      if (late) return this.#lose('not_renewed');
      return this.#schedule(Math.max(1, Math.floor(this.#every / 4)));
    }
    if (this.#stopped) {
      // Stopped while renewing: the renewal stands (finish uses it).
      if (won) this.#current = renewed;
      return;
    }
    if (!won) return this.#lose('record_changed');
    if (late) this.#emit({ type: 'lease_late', key: this.#key, fence: this.fence, leftMs: this.#current.leaseUntilMs - now });
    this.#current = renewed;
    this.#schedule(this.#every);
  }

  #lose(reason) {
    if (this.#lost) return;
    this.#lost = new LeaseLost(reason, this.fence);
    this.#emit({ type: 'lease_lost', key: this.#key, fence: this.fence, reason });
    this.#controller?.abort(this.#lost);
  }

  /** Ends the renewals (waiting for one in flight) and resolves to the claim as it is now. */
  async stop() {
    this.#stopped = true;
    clearTimeout(this.#timer);
    try {
      await this.#renewing;
    } finally {
      this.#onStop?.();
    }
    return this.#current;
  }
}
