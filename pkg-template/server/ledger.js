// The operation ledger and withIdempotency: a replayed write returns its first outcome. The rules (what to
// do with a write, how a record changes) come from the wasm core; this file does the store I/O and talks
// to the tool handler.
import { optionError as optError, rangeError, typeError } from '../errors.js';
import { LedgerRules, isValidOperationId } from './rules.js';
import { fingerprint } from './fingerprint.js';
import { CommitUnknown, checkNowMs } from './stores.js';
import {
  LEDGER_CONFLICT, LEDGER_IN_PROGRESS, LEDGER_META_KEY, LEDGER_REJECTED, LEDGER_UNKNOWN, LOOKUP_FAILED, LOOKUP_IN_PROGRESS,
  LOOKUP_NOT_DONE, LOOKUP_NOT_FOUND, LOOKUP_SUCCEEDED, OPERATION_IN_PROGRESS, OPERATION_NOT_DONE, OPERATION_UNKNOWN, RECORD_FAILED,
  RECORD_SUCCEEDED, RECORD_UNKNOWN,
} from '../generated/names.js';

/** Each ledger's answer counter (OpenTelemetry), when it was given `opentelemetry`. */
const COUNTERS = new WeakMap();

/** The record changed while the reconcile hook was asked: look again. */
const RACED = Symbol('raced');

/** The `_meta` key of the ledger's own answers (in progress, unknown, conflict, rejected, result not stored). */
export { LEDGER_META_KEY };

// ── The one result encoding ─────────────────────────────────────────────────────────────────────────────
// Every store keeps a recorded result as opaque text, written here and read back here, so every store
// replays the same value. The text is the result's MCP wire form: exactly `JSON.stringify(result)` —
// `toJSON` is honoured (a Date becomes its ISO string), NaN and ±Infinity become null, -0 becomes 0,
// undefined object members are left out (undefined in an array becomes null), and the key order is kept.
// A replay is `JSON.parse` of that text. A result that has no such form — a BigInt, a function or a Symbol
// anywhere in it, a cycle, a `toJSON` that throws, or nothing at all — is not data: the ledger still records
// how the operation ended, with a stored note in place of the result (`unstoredResult`).

class Unencodable extends Error {}

function noteUnencodable(key, value) {
  const t = typeof value;
  if (t === 'bigint' || t === 'function' || t === 'symbol') {
    const what = t === 'bigint' ? 'a BigInt' : t === 'symbol' ? 'a Symbol' : 'a function';
    throw new Unencodable(key === '' ? `it is ${what}` : `${what} at ${JSON.stringify(key)}`);
  }
  return value;
}

/** The result's text, or `{ why }` when it has none. */
export function encodeResult(result) {
  let text;
  try {
    text = JSON.stringify(result, noteUnencodable);
  } catch (e) {
    if (e instanceof Unencodable) return { why: e.message };
    if (e instanceof TypeError && /circular|cyclic/i.test(e.message)) return { why: 'it contains a cycle' };
    return { why: `encoding it threw ${e?.name ?? 'an error'}: ${e?.message ?? e}` };
  }
  if (text === undefined) return { why: 'there was no result (undefined)' };
  return { text };
}

/** A stored note in place of a result that could not be stored; `state` says how the operation ended. */
function unstoredResult(state, operationId, why) {
  const failed = state === 'failed';
  const ended = failed ? 'ran and reported an error' : 'succeeded';
  return {
    isError: failed,
    content: [{
      type: 'text',
      text: `The operation${operationId ? ` ${operationId}` : ''} ${ended}; its result could not be stored (${why}), so it cannot be shown again. ` +
        'It has taken effect: do not repeat it with a new operation id.',
    }],
    _meta: { [LEDGER_META_KEY]: { status: 'result_not_stored', state, ...(operationId ? { operationId } : {}), reason: why } },
  };
}

/** The text to store for a result: its encoding, or a note saying it could not be stored and why. */
function storedText(state, operationId, result) {
  const { text, why } = encodeResult(result);
  return text ?? JSON.stringify(unstoredResult(state, operationId, why));
}

/** A replay of the stored text. Rows written before results were text (an object) are re-encoded once. */
function decodeResult(stored, state, operationId) {
  if (stored === undefined || stored === null) return undefined;
  if (typeof stored !== 'string') return decodeResult(storedText(state, operationId, stored), state, operationId);
  try {
    return JSON.parse(stored);
  } catch (e) {
    return unstoredResult(state, operationId, `the stored text is not JSON: ${e?.message ?? e}`);
  }
}

/**
 * Thrown by a handler that submitted work downstream and cannot tell whether it committed (a timeout after
 * the request left). The ledger records `unknown` — never success, never a clean failure.
 */
export class OutcomeUnknown extends Error {
  constructor(message = 'the downstream outcome is unknown', options) {
    super(message, options);
    this.name = 'OutcomeUnknown';
  }
}


/**
 * `new OperationLedger({ store, ttlMs?, leaseMs?, reconcile?, now? })`. `reconcile({ tenant, action,
 * operationId, record, result })` is asked when an outcome is not known (a claim whose lease ran out, or
 * `unknown`): answer `{ status: 'succeeded' | 'failed', result }` if you found out, `{ status: 'not_done' }`
 * if it provably did not happen (it runs again), or `{ status: 'unknown' }`.
 *
 * An unresolved record (`pending`, `unknown`) never expires: it stays unresolved until the hook answers or an
 * operator calls `release(key, { reason })`. `ttlMs` (≥ `leaseMs`) is how long a resolved outcome is
 * replayed, counted from when it was recorded.
 */
export class OperationLedger {
  #store;
  #rules;
  #reconcile;
  #now;

  constructor(options = {}) {
    const { store, reconcile, now, opentelemetry, ...rules } = options ?? {};
    for (const m of ['get', 'insert', 'replace']) {
      if (typeof store?.[m] !== 'function') throw optError('store', `a ledger store (missing ${m}())`);
    }
    if (reconcile !== undefined && typeof reconcile !== 'function') throw optError('reconcile', 'a function');
    if (now !== undefined && typeof now !== 'function') throw optError('now', 'a function');
    if (opentelemetry !== undefined && typeof opentelemetry?.metrics?.getMeter !== 'function') {
      throw optError('opentelemetry', "the @opentelemetry/api module (import * as api from '@opentelemetry/api')");
    }
    this.#store = store;
    this.#rules = new LedgerRules(rules);
    this.#reconcile = reconcile;
    this.#now = now ?? (() => Date.now());
    if (opentelemetry !== undefined) {
      COUNTERS.set(this, opentelemetry.metrics.getMeter('mcp-retry-policy').createCounter('mcp_retry_policy.ledger.answers', {
        unit: '{answer}',
        description: 'What the operation ledger answered a keyed write: execute, replay, conflict, in_progress, unknown, rejected, rolled_back.',
      }));
    }
  }

  get ttlMs() {
    return this.#rules.ttlMs;
  }

  get leaseMs() {
    return this.#rules.leaseMs;
  }

  /**
   * Admits a write. Resolves to `{ action: 'execute', claim }` (you hold the claim: run, then `finish`),
   * `{ action: 'replay', state, result }`, `{ action: 'in_progress', retryAfterMs }`, `{ action: 'conflict' }`
   * or `{ action: 'unknown' }`.
   */
  async begin(key, inputFingerprint) {
    for (let round = 0; round < 4; round++) {
      const admission = await this.#admit(key, inputFingerprint, 'claim');
      if (admission !== RACED) return admission;
    }
    // Lost the race every time: someone else is working on it right now.
    return { action: 'in_progress', retryAfterMs: 1000 };
  }

  /**
   * One look at the key. `mode` 'claim' claims an executable key here (`{ action: 'execute', claim }`, or
   * RACED when another request claimed it first); 'atomic' leaves the claim to the store's transaction
   * (`{ action: 'execute', claim, expectedVersion }`: the version it replaces, null for none).
   */
  async #admit(key, inputFingerprint, mode) {
    const now = this.#now();
    const stored = await this.#store.get(key);
    const a = this.#rules.admit(stored?.record, inputFingerprint, now);
    const execute = async (previous) => {
      const claim = this.#rules.claim(previous, inputFingerprint, now);
      if (mode === 'atomic') return { action: 'execute', claim, expectedVersion: previous?.version ?? null };
      const won = previous ? await this.#store.replace(key, previous.version, claim) : await this.#store.insert(key, claim);
      return won ? { action: 'execute', claim } : RACED;
    };
    switch (a.action) {
      case 'execute':
        return execute(stored?.record);
      case 'replay':
        return { action: 'replay', state: stored.record.state, result: decodeResult(stored.result, stored.record.state, key.operationId) };
      case 'conflict':
        return { action: 'conflict' };
      case 'in_progress':
        return { action: 'in_progress', retryAfterMs: a.retryAfterMs };
      case 'reconcile': {
        const r = await this.#reconcileStored(key, stored, now);
        if (r === RACED) return RACED;
        if (r === LOOKUP_NOT_DONE) return execute(stored.record);
        // The same replay every later call gets.
        return r.state ? { action: 'replay', ...r } : { action: 'unknown' };
      }
      default:
        return { action: 'unknown' };
    }
  }

  /** Whether the store can run a handler's writes and the ledger's record in one transaction (`transaction`). */
  get transactional() {
    return typeof this.#store.transaction === 'function';
  }

  /**
   * Runs a write whose effects all commit in the store's own transaction, together with its record: the
   * claim, `work(tx)`'s writes and the `succeeded`/`failed` record commit at once, or none of them does. No
   * pending claim is ever visible, so a crash leaves nothing (the next call with the key executes) and never
   * an unknown. Resolves to one of:
   * - `{ action: 'executed', state, result }` — committed with its record (`result`: what `work` returned);
   * - `{ action: 'rolled_back', error }` — `work` threw: its writes were rolled back with the claim;
   * - `{ action: 'commit_unknown', error }` — the commit did not answer: it may have committed (the record
   *   tells: the status lookup, or the next call, replays it if it did);
   * - any other admission of `begin` (`replay`, `conflict`, `in_progress`, `unknown`) for a key already used.
   */
  async executeAtomically(key, inputFingerprint, work) {
    if (!this.transactional) throw optError('store', 'a ledger store with transaction() (SQLite, Postgres, D1 or a Durable Object)');
    for (let round = 0; round < 4; round++) {
      const admission = await this.#admit(key, inputFingerprint, 'atomic');
      if (admission === RACED) continue;
      if (admission.action !== 'execute') return admission;
      const { claim } = admission;
      let ran = false;
      let outcome;
      try {
        const committed = await this.#store.transaction(key, admission.expectedVersion, claim, async (tx) => {
          ran = true;
          const result = await work(tx);
          const state = result?.isError ? RECORD_FAILED : RECORD_SUCCEEDED;
          outcome = { state, result, text: storedText(state, key.operationId, result) };
          return { record: this.#rules.finish(claim, state, this.#now()), result: outcome.text };
        });
        if (!committed) continue; // another request committed first: its record is replayed next round
      } catch (error) {
        if (error instanceof CommitUnknown) return { action: 'commit_unknown', error: error.cause ?? error };
        // The handler threw, or the record could not be written after it: either way all was rolled back.
        if (ran) return { action: 'rolled_back', error };
        throw error; // the store failed before the handler ran: nothing was done
      }
      return { action: 'executed', state: outcome.state, result: outcome.result };
    }
    return { action: 'in_progress', retryAfterMs: 1000 };
  }

  /**
   * Asks the reconcile hook about a stored record whose outcome is not known, and records what it found out.
   * `{ state, result }` (resolved: the replay every later call gets), `LOOKUP_NOT_DONE` (it provably did not
   * happen: nothing is recorded, the next call executes), `{}` (still unknown) or `RACED` (the record changed).
   */
  async #reconcileStored(key, stored, now) {
    if (!this.#reconcile) return {};
    const verdict = await this.#reconcile({
      ...key, record: stored.record, result: decodeResult(stored.result, stored.record.state, key.operationId),
    });
    const status = verdict?.status;
    if (status === RECORD_SUCCEEDED || status === RECORD_FAILED) {
      const done = this.#rules.finish(stored.record, status, now);
      const text = storedText(status, key.operationId, verdict.result);
      if (!(await this.#store.replace(key, stored.record.version, done, text))) return RACED;
      return { state: status, result: decodeResult(text, status, key.operationId) };
    }
    return status === LOOKUP_NOT_DONE ? LOOKUP_NOT_DONE : {};
  }

  /**
   * What is known about an operation, read-only (nothing is claimed or executed): `{ status }`, one of
   * `not_found` (no record: never received, or purged — not proof it did not happen: a call with the same
   * id executes it at most once), `not_done` (it did not take effect: released by an operator, or the
   * reconcile hook says so; the next call executes), `in_progress` (with `retryAfterMs`), `succeeded` or
   * `failed` (with `result`, exactly what a replay returns) and `unknown` (after the reconcile hook, if any).
   * The key's tenant must come from the authenticated caller: a lookup never crosses tenants.
   */
  async status(key) {
    for (let round = 0; round < 4; round++) {
      const now = this.#now();
      const stored = await this.#store.get(key);
      const l = this.#rules.lookup(stored?.record, now);
      switch (l.status) {
        case LOOKUP_SUCCEEDED:
        case LOOKUP_FAILED:
          return { status: l.status, result: decodeResult(stored.result, stored.record.state, key.operationId) };
        case LOOKUP_IN_PROGRESS:
          return { status: OPERATION_IN_PROGRESS, retryAfterMs: l.retryAfterMs };
        case LOOKUP_NOT_FOUND:
        case LOOKUP_NOT_DONE:
          return { status: l.status };
        default: {
          const r = await this.#reconcileStored(key, stored, now);
          if (r === RACED) continue;
          if (r === LOOKUP_NOT_DONE) return { status: OPERATION_NOT_DONE };
          return r.state ? { status: r.state, result: r.result } : { status: OPERATION_UNKNOWN };
        }
      }
    }
    return { status: OPERATION_IN_PROGRESS, retryAfterMs: 1000 };
  }

  /**
   * Records how an executed write ended: `succeeded`, `failed` or `unknown`, with the result to replay. The
   * result is stored as its encoding; one that cannot be encoded, or that the store refuses (too large for
   * it, say), is recorded as a note saying so, with the state it ended in: never left pending.
   */
  async finish(key, claim, state, result) {
    const done = this.#rules.finish(claim, state, this.#now());
    if (state === 'unknown') return this.#store.replace(key, claim.version, done);
    const text = storedText(state, key?.operationId, result);
    try {
      return await this.#store.replace(key, claim.version, done, text);
    } catch (e) {
      if (e?.field === 'key') throw e;
      const note = JSON.stringify(unstoredResult(state, key.operationId, `the store refused it: ${e?.message ?? e}`));
      return this.#store.replace(key, claim.version, done, note);
    }
  }

  /**
   * Deletes the resolved records (`succeeded`, `failed`) that expired at or before `nowMs` (default: the
   * ledger's clock) and resolves to how many went. Unresolved records (`pending`, `unknown`) are never
   * deleted, however old: they stay until the reconcile hook or an operator resolves them. Run it on a
   * timer (a Durable Object: `DurableObjectLedgerStore#purgeOnAlarm`); a store without `purge` is a
   * `TypeError` (`field: 'store'`).
   */
  async purge(nowMs = this.#now()) {
    checkNowMs(nowMs);
    if (typeof this.#store.purge !== 'function') throw optError('store', 'a ledger store with purge(nowMs) to purge');
    return this.#store.purge(nowMs);
  }

  /**
   * An operator's way out for an unresolved record (`unknown`, or `pending` whose lease ran out) when the
   * reconcile hook cannot tell: after checking by hand that the write did **not** take effect, release it,
   * and the next call with the same key executes. `reason` (required) is kept in the store beside the
   * released record. Resolves to `{ released: true, previousState, record }`; refuses with a `RangeError`
   * (`field: 'key'`) whose `code` is `not_found`, `resolved` (succeeded/failed: replayed, nothing to
   * release), `lease_live` (the handler may be running: wait `retryAfterMs`) or `already_released`.
   */
  async release(key, options) {
    const reason = options?.reason;
    if (typeof reason !== 'string' || !reason.trim()) {
      throw typeError('reason', 'release needs { reason }: a non-empty string saying how you know the operation did not happen');
    }
    for (let round = 0; round < 4; round++) {
      const now = this.#now();
      const stored = await this.#store.get(key);
      if (!stored) throw refusal('not_found', `there is no ledger record for ${describe(key)}: nothing to release`);
      const r = this.#rules.release(stored.record, now);
      if (r.refused) {
        const state = stored.record.state;
        const why = {
          resolved: `its outcome is recorded (${state}) and is replayed: only an unresolved (pending or unknown) record can be released`,
          lease_live: `its claim is live for ${r.retryAfterMs} ms more: the operation may be running now. Release it after the lease ends`,
          already_released: 'it is already released: the next call executes',
        }[r.refused];
        throw refusal(r.refused, `cannot release ${describe(key)}: ${why}`, { state, ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}) });
      }
      const note = JSON.stringify({ released: { reason, previousState: stored.record.state, atMs: now } });
      if (await this.#store.replace(key, stored.record.version, r.released, note)) {
        return { released: true, previousState: stored.record.state, record: r.released };
      }
      // The record changed under us (a reconcile, a finish): look again.
    }
    throw refusal('contended', `cannot release ${describe(key)}: the record keeps changing; try again`);
  }
}

const describe = (key) => `operation ${key?.operationId} (tenant ${key?.tenant}, action ${key?.action})`;

function refusal(code, message, extra = {}) {
  return Object.assign(rangeError('key', message, code), extra);
}

/** Refused before any claim: nothing was done. Clients read `status: 'rejected'` as "permanent, not processed". */
export function rejected(reason, operationId, text) {
  return reply(LEDGER_REJECTED, operationId, text, { reason });
}

function reply(status, operationId, text, extra = {}) {
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: { [LEDGER_META_KEY]: { status, ...(operationId !== undefined ? { operationId } : {}), ...extra } },
  };
}

/**
 * Wraps a tool handler for `McpServer.registerTool` so that a replayed write returns its first outcome.
 * `tenant(extra)` reads the authenticated request context (`extra.authInfo`, headers) — never the
 * arguments. The tool's input schema must declare the operation-id argument (default `operation_id`).
 */
export function withIdempotency(ledger, handler, options = {}) {
  if (!(ledger instanceof OperationLedger)) throw optError('ledger', 'an OperationLedger');
  if (typeof handler !== 'function') throw optError('handler', 'a function');
  const { action, tenant, operationIdArgument = 'operation_id', validate, transaction = false } = options ?? {};
  if (typeof action !== 'string' || !action) throw optError('action', 'a non-empty string');
  if (typeof transaction !== 'boolean') throw optError('transaction', 'true or false');
  if (transaction && !ledger.transactional) {
    throw optError('transaction', 'false with this ledger: its store cannot run a transaction (a SQLite, Postgres, D1 or Durable Object ledger store can)');
  }
  if (typeof tenant !== 'function') throw optError('tenant', 'a function of the request context');
  if (validate !== undefined && typeof validate !== 'function') throw optError('validate', 'a function');

  // With OpenTelemetry: each answer counted by kind (the ledger's own answers carry it in `_meta`; a replayed
  // result is marked here; anything else is the handler's own result: an execution).
  const counter = COUNTERS.get(ledger);
  const replays = new WeakSet();

  if (!counter) return respond;
  return async function idempotentHandler(args, extra) {
    const result = await respond(args, extra);
    const meta = result?._meta?.[LEDGER_META_KEY];
    const kind = meta?.status === LEDGER_REJECTED && meta.reason === 'rolled_back' ? 'rolled_back'
      : meta?.status && meta.status !== 'result_not_stored' ? meta.status
        : replays.has(result) ? 'replay' : 'execute';
    counter.add(1, { 'mcp_retry_policy.ledger.answer': kind, 'mcp_retry_policy.ledger.action': action });
    return result;
  };

  async function respond(args, extra) {
    const operationId = args?.[operationIdArgument];
    // Rejected before any claim: nothing attempted, nothing stored.
    if (!isValidOperationId(operationId)) {
      return rejected('invalid_operation_id', undefined,
        `${operationIdArgument} must be 8–128 characters of A–Z a–z 0–9 - _ . : (a UUID works); nothing was done.`);
    }
    let who;
    try {
      who = await tenant(extra);
    } catch {
      who = undefined;
    }
    if (typeof who !== 'string' || !who) {
      return rejected('unauthenticated', operationId, 'This request has no authenticated tenant; nothing was done.');
    }
    if (validate) {
      let problem;
      try {
        problem = await validate(args, extra);
      } catch (e) {
        // The validator itself failed: still before any claim, so nothing was done.
        return rejected('validation_failed', operationId,
          `The input could not be validated (${e?.message ?? String(e)}); nothing was done. Call again with the same ${operationIdArgument}.`);
      }
      if (problem) return rejected('invalid_input', operationId, `${String(problem)} (nothing was done; fix the input and call again)`);
    }
    const { [operationIdArgument]: _, ...input } = args;
    const key = { tenant: who, action, operationId };
    let inputFingerprint;
    try {
      inputFingerprint = fingerprint(input);
    } catch (e) {
      // Input the fingerprint refuses (too large, not JSON): refused before any claim.
      return rejected('invalid_input', operationId, `The input cannot be fingerprinted (${e?.message ?? String(e)}); nothing was done.`);
    }
    if (transaction) return atomically(key, inputFingerprint, args, extra);
    const admission = await ledger.begin(key, inputFingerprint);
    const answer = answerAdmission(admission, operationId);
    if (answer) return answer;
    let result;
    let state;
    try {
      result = await handler(args, extra);
      state = result?.isError ? RECORD_FAILED : RECORD_SUCCEEDED;
    } catch (e) {
      // OutcomeUnknown says so; any other exception after the claim cannot say whether it committed either.
      state = RECORD_UNKNOWN;
      result = unknownReply(operationId, operationIdArgument, e);
    }
    try {
      await ledger.finish(key, admission.claim, state, state === RECORD_UNKNOWN ? undefined : result);
    } catch {
      // The record stays pending: after its lease it is reconciled. The caller still gets the truth now.
    }
    return result;
  };

  /** The transaction option: the handler's writes and the record commit together (`executeAtomically`). */
  async function atomically(key, inputFingerprint, args, extra) {
    const { operationId } = key;
    const done = await ledger.executeAtomically(key, inputFingerprint, (tx) => handler(args, extra, tx));
    switch (done.action) {
      case 'executed':
        return done.result;
      case 'rolled_back': {
        // Proof of "nothing took effect": the store rolled back the handler's writes with the claim.
        const why = done.error?.message ? ` (${done.error.message})` : '';
        return rejected('rolled_back', operationId,
          `The operation failed and was rolled back${why}: nothing took effect. It may be called again with the same ${operationIdArgument}.`);
      }
      case 'commit_unknown':
        return unknownReply(operationId, operationIdArgument, done.error);
      default:
        return answerAdmission(done, operationId) ?? unknownReply(operationId, operationIdArgument);
    }
  }

  /** The answer for an admission that does not execute here (a replay, a conflict, …); undefined for `execute`. */
  function answerAdmission(admission, operationId) {
    switch (admission.action) {
      case 'replay':
        if (counter && admission.result !== null && typeof admission.result === 'object') replays.add(admission.result);
        return admission.result;
      case 'conflict':
        return reply(LEDGER_CONFLICT, operationId,
          `${operationIdArgument} ${operationId} was already used for a different request; nothing was done. Use a new ${operationIdArgument} for a new request.`);
      case 'in_progress':
        return reply(LEDGER_IN_PROGRESS, operationId,
          `This operation (${operationIdArgument} ${operationId}) is still running. Check back with the same ${operationIdArgument}; do not use a new one.`,
          { retryAfterMs: admission.retryAfterMs });
      case 'unknown':
        return unknownReply(operationId, operationIdArgument);
      case 'execute':
        return undefined;
      default:
        return unknownReply(operationId, operationIdArgument);
    }
  }
}

function unknownReply(operationId, arg, cause) {
  const why = cause?.message ? ` (${cause.message})` : '';
  return reply(LEDGER_UNKNOWN, operationId,
    `The outcome of this operation (${arg} ${operationId}) is unknown${why}: it may or may not have taken effect. ` +
      `Do not use a new ${arg}; check whether it happened, or call again with the same ${arg} later.`);
}
