// A breaker shared by every isolate (and every Node instance) calling one server (issue 20 §4; the budget: below).
// Alone, each process learns of an outage by its own failures and sends its own probes into it: a hundred
// isolates, a hundred probes every open time. Shared, the state lives in one Durable Object per server and the
// processes meet there — but only at the edges, never on every attempt that is answered:
//   - a process refreshes the shared snapshot at most once per `ttlMs` (1 s; a quarter of it while its breaker
//     sheds calls, which then cost nothing else), and reports its own breaker's
//     transitions (closed → open, a probe's result) when they happen;
//   - while closed, it reports each failure its breaker counted (at most one per call) and the first answer after
//     failures, so the fleet counts its failures in a row together: a trip needs `consecutiveFailures` failing
//     calls across all processes, not in each (in a Worker, where each request makes its own withRetry, no single
//     engine would ever see five);
//   - a probe goes out only under the object's probe lease: one process at a time, the others adopt "a probe is
//     out" and fail fast, so N processes send one probe into the outage, not N.
// The state is only stored here. Each process's own engine decides every attempt (`RetryEngine.adoptShared`:
// the newer state wins; a closed breaker takes an open one only if its own last attempt failed or it has seen
// none; the rules are the core's, src/retry/breaker/). The object keeps what it is told by one rule of storage,
// the newest report wins, and holds the probe lease like a lock. The retry budget stays each process's own: taking
// the lowest count reported within 10 s across processes (the engine can, `adoptShared({ budgetTokens })`) was
// measured in the storm simulator: the calls answered in the long brownout 83 % → 76 %, nothing gained in the full
// outage (the breaker already sheds) — a budget is sized for one client.
// Unreachable (an error, a timeout of `timeoutMs`, an answer of the wrong shape), it is skipped: the local
// breaker decides alone, and no call waits longer than `timeoutMs` on it or ends otherwise because of it.
// In a Worker, a request to the object is a subrequest (on the free plan counted against the 1,000 for Cloudflare
// services, beside the 50 external ones): with withRetry's `subrequestBudget` each one is counted in it, and one
// is made only while the budget has room beyond what the next attempt needs — the object's state is worth less
// than the call's own request and never worth the app's reserve. Skipped, it is as unreachable (`stats.unpaid`).
import { typeError } from '../errors.js';
import { MAX_MS, MAX_SERVER_CHARS, ms, object, only, snapshotOf, text } from './breaker-state.js';
import { BREAKER_STATES } from '../generated/names.js';
import { newOperationId } from './engine.js';

export { DurableObjectBreakerState } from './breaker-state.js';

const CLOSED = BREAKER_STATES[0];

/** A snapshot from the object, as the engine may adopt it, or `undefined` for anything else. */
function answerSnapshot(v) {
  try {
    return snapshotOf(v, 'snapshot');
  } catch {
    return undefined;
  }
}

/**
 * One process's link to the shared state of one server, through a Durable Object stub (`env.BREAKER.get(id)`,
 * anything with `fetch`) whose object hands its requests to a `DurableObjectBreakerState`. Give it to withRetry
 * (`sharedBreaker`); it never decides, it only fetches and stores.
 */
export class SharedBreaker {
  #stub;
  #server;
  #ttlMs;
  #timeoutMs;
  #holder;
  #syncedAt = -Infinity;
  #failures = 0; // this engine's failures in a row, as last reported
  #shared = 0; // the fleet's, as last answered
  /** What it did: the object's answers it used, and the times it went without one. */
  stats = { reads: 0, reports: 0, probesAsked: 0, probesGranted: 0, unreachable: 0, unpaid: 0 };

  /**
   * `options.server`: the server's key in the object (default `default`); `ttlMs`: the longest a snapshot is used
   * before it is read again (default 1000); `timeoutMs`: the longest a call waits on the object (default 100).
   */
  constructor(stub, options = {}) {
    if (!stub || typeof stub.fetch !== 'function') throw typeError('stub', 'stub must be a Durable Object stub (with fetch)');
    object(options, 'options');
    only(options, 'options', ['server', 'ttlMs', 'timeoutMs']);
    this.#stub = stub;
    this.#server = options.server === undefined ? 'default' : text(options.server, 'server', MAX_SERVER_CHARS);
    this.#ttlMs = options.ttlMs === undefined ? 1_000 : ms(options.ttlMs, 'ttlMs', 0);
    this.#timeoutMs = options.timeoutMs === undefined ? 100 : ms(options.timeoutMs, 'timeoutMs', 1);
  }

  /**
   * The object's answer to `body`, or `undefined` (unreachable, too slow, not JSON, an error; or not paid for:
   * `pay` = `{ budget, keep }`, a SubrequestBudget with no more `room` than the `keep` the next attempt needs).
   * Never throws.
   */
  async #ask(body, pay) {
    if (pay !== undefined) {
      if (pay.budget.room <= pay.keep) {
        this.stats.unpaid++;
        return undefined;
      }
      pay.budget.spend(1);
    }
    let timer;
    try {
      const asked = this.#stub.fetch('https://shared-breaker/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, server: this.#server }),
      }).then(async (res) => (res.ok ? res.json() : undefined));
      const late = new Promise((resolve) => (timer = setTimeout(resolve, this.#timeoutMs)));
      const answer = await Promise.race([asked, late]);
      asked.catch(() => {}); // a late failure changes nothing
      if (answer === null || typeof answer !== 'object') throw new Error('no answer');
      return answer;
    } catch {
      this.stats.unreachable++;
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Adopts the object's snapshot; one of the wrong shape (or one the engine refuses) counts as no answer. */
  #adopt(engine, snapshot, nowMs) {
    const s = answerSnapshot(snapshot);
    try {
      if (!s) throw new Error('not a snapshot');
      engine.adoptShared(s, nowMs); // the object's times are no later than this process's now
    } catch {
      this.stats.unreachable++;
      return false; // this process decides alone
    }
    this.#syncedAt = nowMs;
    this.#shared = s.failures ?? 0;
    this.#failures = engine.sharedSnapshot().failures;
    return true;
  }

  /**
   * Before an attempt: a due probe asks for the lease (not granted: adopt what the object holds, so the engine
   * fails fast or sees the newer state, and ask once more if a probe is still due); otherwise a snapshot older
   * than `ttlMs` is refreshed (a report of this process's own state, whose answer is the shared one). `pay`:
   * what the object's requests may take from the invocation's subrequests (`{ budget, keep }`), if counted.
   */
  async beforeAdmit(engine, nowMs, pay) {
    if (engine.breakerState === undefined) return;
    for (let asked = 0; asked < 2 && engine.probeDue(nowMs); asked++) {
      this.#holder ??= newOperationId(); // drawn inside a call: Workers refuse randomness at module scope
      this.stats.probesAsked++;
      const leaseMs = Math.min(Math.max(1, engine.policy.attemptTimeoutMs), MAX_MS);
      const { sinceMs } = engine.sharedSnapshot();
      const r = await this.#ask({ op: 'probe', holder: this.#holder, sinceMs, nowMs, leaseMs }, pay);
      if (r?.granted === true) {
        this.stats.probesGranted++;
        this.#syncedAt = nowMs;
        return;
      }
      if (!r || !this.#adopt(engine, r.snapshot, nowMs)) return; // unreachable: the local breaker decides
      this.stats.reads++;
    }
    // While this breaker sheds (open, or a probe out elsewhere), a refresh is all a call costs: a quarter of the
    // ttl, so that the others' probe closing it is seen about as soon as a probe of its own would have.
    const ttl = engine.breakerState === CLOSED ? this.#ttlMs : this.#ttlMs / 4;
    if (nowMs - this.#syncedAt >= ttl) await this.#report(engine, nowMs, 'reads', undefined, pay);
  }

  /**
   * After an attempt was recorded (`transitioned`: its step changed the breaker): tells the object of a
   * transition, of a failure the breaker counted, or of an answer after failures. Nothing on the healthy path.
   * `pay`: as for `beforeAdmit`.
   */
  async afterRecord(engine, nowMs, transitioned, pay) {
    if (engine.breakerState === undefined) return;
    const { failures } = engine.sharedSnapshot();
    let counted;
    if (!transitioned && failures > this.#failures) counted = 'failure';
    else if (!transitioned && failures === 0 && (this.#failures > 0 || this.#shared > 0)) counted = 'success';
    this.#failures = failures;
    if (transitioned || counted) await this.#report(engine, nowMs, 'reports', counted, pay);
  }

  async #report(engine, nowMs, counter, counted, pay) {
    const { state, sinceMs } = engine.sharedSnapshot();
    const r = await this.#ask({ op: 'report', snapshot: { state, sinceMs }, ...(counted ? { counted } : {}) }, pay);
    if (r && this.#adopt(engine, r, nowMs)) this.stats[counter]++;
  }
}
