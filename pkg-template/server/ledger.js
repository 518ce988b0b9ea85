// The operation ledger: a replayed write returns its first outcome. The rules (what to do with a write, how
// a record changes) come from the wasm core; this file does the store I/O, the reconcile hook and the claims
// held while handlers run (lease.js). withIdempotency (with-idempotency.js) talks to the tool handler; the
// result encoding is result.js's.
import { optionError as optError } from '../errors.js';
import { LedgerRules } from './rules.js';
import { countUnresolved, purge, release, releaseAll, unresolved } from './operators.js';
import { ClaimHold } from './lease.js';
import { LedgerStoreError, OutcomeUnknown } from './ledger-errors.js';
import { keyString, storedAnswer, wroteAnswer } from './store-common.js';
import { checkUnresolvedCacheMs, ledgerInstruments } from './metrics.js';
import { checkMaxResultBytes, decodeResult, storedText, unstoredResult } from './result.js';
import { lookAnswer } from './look-answer.js';
import {
  IN_PROGRESS_POLL_MS, LEDGER_META_KEY, LOOK_EVENT_HELD, LOOK_EVENT_READ, LOOK_EVENT_RECONCILED, LOOK_EVENT_WROTE,
  LOOK_MODE_ATOMIC, LOOK_MODE_CLAIM, LOOK_MODE_STATUS, LOOK_STEP_ASK_HELD, LOOK_STEP_ASK_RECONCILE, LOOK_STEP_READ, LOOK_STEP_WRITE_CLAIM,
  LOOK_STEP_WRITE_RECONCILED, LOOK_VERDICT_FAILED, LOOK_VERDICT_NOT_DONE, LOOK_VERDICT_SUCCEEDED, LOOK_VERDICT_UNKNOWN,
  RECORD_FAILED, RECORD_SUCCEEDED, TEL_LEDGER_ACTION, TEL_LEDGER_INCIDENT,
} from '../generated/names.js';

/** Each ledger's instruments (OpenTelemetry, metrics.js), when it was given `opentelemetry`: `{ answers, incidents, gauge? }`. */
export const COUNTERS = new WeakMap();
/** Each ledger's internals for withIdempotency and the status tool: `{ emit(event), addAction(action) }`. */
export const INTERNALS = new WeakMap();

/** The monotonic clock a claim's give-up point is kept on (a paused process's wall clock may jump or be skewed). */
const MONO = () => performance.now();

/** The `_meta` key of the ledger's own answers (in progress, unknown, conflict, rejected, result not stored). */
export { LEDGER_META_KEY, LedgerStoreError, OutcomeUnknown };

/**
 * `new OperationLedger({ store, ttlMs?, leaseMs?, reconcile?, now?, onEvent?, maxResultBytes?, opentelemetry?, unresolvedCacheMs? })`.
 * `reconcile({ tenant, action, operationId, record, result })` is asked when an outcome is not known (a claim
 * whose lease ran out — its run's renewals stopped — or `unknown`): answer `{ status: 'succeeded' | 'failed',
 * result }` if you found out, `{ status: 'not_done' }` if it provably did not happen and cannot happen any
 * more (it runs again), or `{ status: 'unknown' }`. It is never asked while this process holds a live claim
 * on the key.
 *
 * An unresolved record (`pending`, `unknown`) never expires: it stays unresolved until the hook answers or an
 * operator calls `release(key, { reason })`. `ttlMs` (≥ `leaseMs`) is how long a resolved outcome is
 * replayed, counted from when it was recorded. `onEvent(event)` hears what operators must know:
 * `store_error`, `lease_lost`, `lease_late`, `late_finish`, `result_not_stored`, `handler_error`, `reconcile_error`,
 * `authorize_error`. With `opentelemetry`, the ledger counts its answers and incidents and observes a gauge of its
 * unresolved records by action and state (metrics.js; `unresolvedCacheMs` bounds how often the store is asked).
 */
export class OperationLedger {
  #store;
  #rules;
  #reconcile;
  #now;
  #onEvent;
  #maxResultBytes;
  #live = new Map(); // the claims this process holds, by key string: the in-process guard
  #actions = new Set();
  #inner;
  #holdEnv; // what every ClaimHold of this ledger shares (made once: nothing per call)
  #keepAliveMs;

  constructor(options = {}) {
    const { store, reconcile, now, opentelemetry, onEvent, maxResultBytes, unresolvedCacheMs, ...rules } = options ?? {};
    for (const m of ['get', 'insert', 'replace']) {
      if (typeof store?.[m] !== 'function') throw optError('store', `a ledger store (missing ${m}())`);
    }
    if (reconcile !== undefined && typeof reconcile !== 'function') throw optError('reconcile', 'a function');
    if (now !== undefined && typeof now !== 'function') throw optError('now', 'a function');
    if (onEvent !== undefined && typeof onEvent !== 'function') throw optError('onEvent', 'a function');
    if (opentelemetry !== undefined && typeof opentelemetry?.metrics?.getMeter !== 'function') {
      throw optError('opentelemetry', "the @opentelemetry/api module (import * as api from '@opentelemetry/api')");
    }
    this.#maxResultBytes = checkMaxResultBytes(maxResultBytes);
    const cacheMs = checkUnresolvedCacheMs(unresolvedCacheMs);
    this.#store = store;
    this.#rules = new LedgerRules(rules);
    this.#reconcile = reconcile;
    this.#now = now ?? (() => Date.now());
    this.#onEvent = onEvent;
    const emit = (e) => this.#emit(e);
    this.#inner = {
      store, rules: this.#rules, now: this.#now, io: (during, key, f) => this.#io(during, key, f),
      emit, addAction: (a) => this.#actions.add(a),
    };
    INTERNALS.set(this, this.#inner);
    if (opentelemetry !== undefined) COUNTERS.set(this, ledgerInstruments(opentelemetry, this.#inner, this.#actions, cacheMs));
    this.#keepAliveMs = this.#rules.keepAliveMs;
    this.#holdEnv = { store, rules: this.#rules, now: this.#now, mono: MONO, emit, live: this.#live };
  }

  /** Tells `onEvent` (a throw there is ignored) and counts the incident. */
  #emit(event) {
    COUNTERS.get(this)?.incidents.add(1, {
      [TEL_LEDGER_INCIDENT]: event.type, ...(event.key ? { [TEL_LEDGER_ACTION]: event.key.action } : {}),
    });
    try {
      this.#onEvent?.(event);
    } catch {
      // An observer's failure changes nothing here.
    }
  }

  /** Runs a store operation; a throw becomes a `LedgerStoreError` after a `store_error` event. */
  async #io(during, key, f) {
    try {
      return await f();
    } catch (error) {
      throw this.#failed(during, key, error);
    }
  }

  /**
   * What a store's throw during `during` becomes: a `LedgerStoreError` after a `store_error` event (our own
   * argument checks pass as they are). The hot path calls the store inline and this on a throw (no closure,
   * no extra await per store call).
   */
  #failed(during, key, error) {
    if (error?.field === 'key' || error?.field === 'result') return error;
    this.#emit({ type: 'store_error', during, key, error });
    return new LedgerStoreError(during, error);
  }

  #text(state, key, result) {
    return storedText(state, key?.operationId, result, this.#maxResultBytes, (why) => this.#emit({ type: 'result_not_stored', key, state, why }));
  }

  get ttlMs() {
    return this.#rules.ttlMs;
  }

  get leaseMs() {
    return this.#rules.leaseMs;
  }

  /** The largest result text (UTF-8 bytes) a record keeps; a larger one is recorded as `result_not_stored`. */
  get maxResultBytes() {
    return this.#maxResultBytes;
  }

  /**
   * Admits a write. Resolves to `{ action: 'execute', claim }` (you hold the claim: `hold` it while you
   * run, then `finish`), `{ action: 'replay', state, result }`, `{ action: 'in_progress', retryAfterMs }`,
   * `{ action: 'conflict' }` or `{ action: 'unknown' }`. A store failure rejects with a `LedgerStoreError`.
   */
  async begin(key, inputFingerprint) {
    return this.#look(key, inputFingerprint, LOOK_MODE_CLAIM, async (claim, expected) => {
      const during = expected === undefined ? 'insert' : 'replace';
      let won;
      try {
        won = wroteAnswer(during, expected === undefined ? await this.#store.insert(key, claim) : await this.#store.replace(key, expected, claim));
      } catch (error) {
        throw this.#failed(during, key, error);
      }
      return { won }; // won: the look ends `execute`, and `claim` is the key's
    });
  }

  /**
   * Keeps a claim from `begin` while its handler runs: renews its lease every third of it, aborts
   * `hold.signal` when it cannot be kept. `hold.fence` is the fencing token (the version it was claimed with);
   * `await hold.stop()` resolves to the claim to `finish` with.
   */
  hold(key, claim) {
    return new ClaimHold(this.#holdEnv, key, keyString(key), claim);
  }

  /**
   * A claim of this process on `key` whose handler still runs here and whose record is still the one it holds
   * (pending, its lease maybe behind — even one given up on, `not_renewed`, while the handler has not
   * returned): in progress. A record another run took (its version moved on) is not this process's.
   */
  #held(key, record) {
    return record?.state === 'pending' && this.#live.get(keyString(key))?.holds(record)
      ? { retryAfterMs: Math.min(IN_PROGRESS_POLL_MS, this.#keepAliveMs) } : undefined;
  }

  /**
   * One look at `key` through the core's driver (`rules.look`, src/ledger/look.rs): this face carries out each
   * step — the store's reads and writes, the in-process guard, the reconcile hook — and feeds back what
   * happened. `mode`: `claim`, `atomic` or `status`. `writeClaim(claim, expected)` writes a claim the driver
   * asks for (insert when `expected` is undefined) and resolves to `{ won }`, or — the atomic write, whose
   * transaction ran the handler — `{ answer }`, what the look resolves to. Resolves to `begin`'s answer, or for
   * `status` the status tool's.
   */
  async #look(key, inputFingerprint, mode, writeClaim) {
    const rules = this.#rules;
    let stored; // the row read last
    let found; // the reconcile hook's result, until it is written
    let replayed; // the result text just recorded for the hook's answer
    let claim; // the claim written last
    let next = { step: LOOK_STEP_READ, look: rules.lookStart(mode, inputFingerprint) };
    for (;;) {
      let event;
      let arg;
      switch (next.step) {
        case LOOK_STEP_READ:
          try {
            stored = storedAnswer(await this.#store.get(key));
          } catch (error) {
            throw this.#failed('get', key, error);
          }
          replayed = undefined;
          event = LOOK_EVENT_READ;
          arg = stored !== undefined && stored.record.fingerprint === inputFingerprint;
          break;
        case LOOK_STEP_ASK_HELD:
          event = LOOK_EVENT_HELD;
          arg = this.#held(key, stored.record)?.retryAfterMs ?? -1;
          break;
        case LOOK_STEP_ASK_RECONCILE:
          [arg, found] = await this.#askReconcile(key, stored);
          event = LOOK_EVENT_RECONCILED;
          break;
        case LOOK_STEP_WRITE_RECONCILED: {
          const state = next.record.state;
          const text = this.#text(state, key, found);
          arg = await this.#io('replace', key, async () => wroteAnswer('replace', await this.#store.replace(key, next.expected, next.record, text)));
          replayed = text;
          event = LOOK_EVENT_WROTE;
          break;
        }
        case LOOK_STEP_WRITE_CLAIM: {
          claim = next.record;
          const wrote = await writeClaim(claim, next.expected);
          if (wrote.answer) return wrote.answer;
          arg = wrote.won;
          event = LOOK_EVENT_WROTE;
          break;
        }
        default:
          return lookAnswer(next, key, mode, replayed ?? stored?.result, claim);
      }
      next = rules.look(next.look, event, arg, stored?.record, inputFingerprint, this.#now());
    }
  }

  /** Whether the store can run a handler's writes and the ledger's record in one transaction (`transaction`). */
  get transactional() {
    return typeof this.#store.transaction === 'function';
  }

  /**
   * Runs a write whose effects all commit in the store's own transaction, together with its record: the
   * claim, `work(tx, claim)`'s writes and the `succeeded`/`failed` record commit at once, or none of them
   * does. No pending claim is ever visible, so a crash leaves nothing (the next call with the key executes)
   * and never an unknown. Resolves to one of:
   * - `{ action: 'executed', state, result }` — committed with its record (`result`: what `work` returned);
   * - `{ action: 'rolled_back', error }` — `work` threw: its writes were rolled back with the claim;
   * - `{ action: 'commit_unknown', error }` — the commit did not answer: it may have committed (the record
   *   tells: the status lookup, or the next call, replays it if it did);
   * - any other admission of `begin` (`replay`, `conflict`, `in_progress`, `unknown`) for a key already used.
   * A store failure before `work` ran rejects with a `LedgerStoreError`.
   */
  async executeAtomically(key, inputFingerprint, work) {
    if (!this.transactional) throw optError('store', 'a ledger store with transaction() (SQLite, Postgres, D1 or a Durable Object)');
    // One look; the claim it asks for is written by the store's transaction, around `work`.
    return this.#look(key, inputFingerprint, LOOK_MODE_ATOMIC, async (claim, expected) => {
      let ran = false;
      let outcome;
      try {
        const committed = await this.#store.transaction(key, expected ?? null, claim, async (tx) => {
          ran = true;
          const result = await work(tx, claim);
          const state = result?.isError ? RECORD_FAILED : RECORD_SUCCEEDED;
          outcome = { state, result, text: this.#text(state, key, result) };
          return { record: this.#rules.finish(claim, state, this.#now()), result: outcome.text };
        });
        // Not committed: another request committed first (the look reads again; its record is replayed).
        if (!committed) return { won: false };
      } catch (error) {
        if (error?.name === 'CommitUnknown') return { answer: { action: 'commit_unknown', error: error.cause ?? error } };
        // The handler threw, or the record could not be written after it: either way all was rolled back.
        if (ran) return { answer: { action: 'rolled_back', error } };
        this.#emit({ type: 'store_error', during: 'transaction', key, error });
        throw new LedgerStoreError('transaction', error); // the store failed before the handler ran: nothing was done
      }
      return { answer: { action: 'executed', state: outcome.state, result: outcome.result } };
    });
  }

  /**
   * Asks the reconcile hook about a stored record whose outcome is not known: `[verdict, result]`, the verdict a
   * `LOOK_VERDICTS` name (`succeeded`/`failed`, with the hook's result to record; `not_done`; `unknown` — also
   * without a hook, or when it throws, told as `reconcile_error`).
   */
  async #askReconcile(key, stored) {
    if (!this.#reconcile) return [LOOK_VERDICT_UNKNOWN];
    let verdict;
    try {
      verdict = await this.#reconcile({
        ...key, record: stored.record, result: decodeResult(stored.result, stored.record.state, key.operationId),
      });
    } catch (error) {
      this.#emit({ type: 'reconcile_error', key, error });
      return [LOOK_VERDICT_UNKNOWN];
    }
    const status = verdict?.status;
    if (status === LOOK_VERDICT_SUCCEEDED || status === LOOK_VERDICT_FAILED) return [status, verdict.result];
    return [status === LOOK_VERDICT_NOT_DONE ? LOOK_VERDICT_NOT_DONE : LOOK_VERDICT_UNKNOWN];
  }

  /**
   * What is known about an operation, read-only (nothing is claimed or executed): `{ status }`, one of
   * `not_found` (no record: never received, or purged — not proof it did not happen: a call with the same
   * id executes it at most once), `not_done` (it did not take effect: released by an operator, or the
   * reconcile hook says so; the next call executes), `in_progress` (with `retryAfterMs`), `succeeded` or
   * `failed` (with `result`, exactly what a replay returns) and `unknown` (after the reconcile hook, if any).
   * The key's tenant must come from the authenticated caller: a lookup never crosses tenants.
   */
  status(key) {
    return this.#look(key, undefined, LOOK_MODE_STATUS);
  }

  /**
   * Which action of this ledger holds `operationId` for `tenant` (read-only, one tenant only): the asked
   * `action` if its record exists, else the one action registered by `withIdempotency` on this ledger under
   * which a record of the id exists. Resolves to `{ action }`, `{ ambiguous: true, actions }` (several actions
   * hold the id: the caller cannot be told which it meant) or `undefined` (none). The status tool asks by tool name;
   * this is how it finds a write whose `withIdempotency` named its action otherwise.
   */
  async locate({ tenant, operationId, action }) {
    const has = async (a) => (await this.#io('get', { tenant, action: a, operationId }, async () => storedAnswer(await this.#store.get({ tenant, action: a, operationId })))) !== undefined;
    if (await has(action)) return { action };
    const found = [];
    for (const a of this.#actions) if (a !== action && (await has(a))) found.push(a);
    if (found.length === 1) return { action: found[0] };
    return found.length ? { ambiguous: true, actions: found } : undefined;
  }

  /**
   * Records how an executed write ended: `succeeded`, `failed` or `unknown`, with the result to replay. The
   * result is stored as its encoding; one that cannot be encoded, is longer than `maxResultBytes`, or that
   * the store refuses (too large for it, say), is recorded as a note saying so, with the state it ended in:
   * never left pending. Resolves to false — and tells `onEvent` (`late_finish`) — when the claim is no longer
   * the record's (its lease was lost and the record changed hands): the outcome is then not recorded.
   */
  async finish(key, claim, state, result) {
    const done = this.#rules.finish(claim, state, this.#now());
    if (state === 'unknown') return this.#finishWrite(key, claim, state, done, undefined);
    try {
      return await this.#finishWrite(key, claim, state, done, this.#text(state, key, result));
    } catch (e) {
      if (!(e instanceof LedgerStoreError)) throw e;
      // The store refused the result (too large for it, say): the outcome is recorded with a note instead.
      const why = 'the store refused it';
      this.#emit({ type: 'result_not_stored', key, state, why, error: e.cause });
      return this.#finishWrite(key, claim, state, done, JSON.stringify(unstoredResult(state, key.operationId, why)));
    }
  }

  /** The finish's versioned write: false (and `late_finish` told) when the claim is no longer the record's. */
  async #finishWrite(key, claim, state, done, text) {
    let ok;
    try {
      ok = wroteAnswer('replace', await this.#store.replace(key, claim.version, done, text));
    } catch (error) {
      throw this.#failed('replace', key, error);
    }
    if (!ok) this.#emit({ type: 'late_finish', key, version: claim.version, state });
    return ok;
  }

  /**
   * Deletes the resolved records (`succeeded`, `failed`) that expired at or before `nowMs` (default: the
   * ledger's clock) and resolves to how many went; never an unresolved one (operators.js).
   */
  purge(nowMs) {
    return purge(this.#inner, nowMs);
  }

  /**
   * An operator's way out for an unresolved record after checking by hand that it did **not** take effect:
   * the next call with the key executes; `{ reason }` is required (operators.js).
   */
  release(key, options) {
    return release(this.#inner, key, options);
  }

  /** Releases, with one `reason`, up to `filter.limit` unresolved records of a tenant and/or action (operators.js). */
  releaseAll(filter, options) {
    return releaseAll(this.#inner, filter, options);
  }

  /** The unresolved records of a tenant and/or action, oldest first (operators.js). */
  unresolved(filter) {
    return unresolved(this.#inner, filter);
  }

  /** How many unresolved records each (tenant, action) holds (operators.js). */
  countUnresolved(filter) {
    return countUnresolved(this.#inner, filter);
  }
}
