// The operation ledger and withIdempotency: a replayed write returns its first outcome. The rules (what to
// do with a write, how a record changes) come from the wasm core; this file does the store I/O and talks
// to the tool handler.
import { typeError } from '../errors.js';
import { LedgerRules, isValidOperationId } from '../mcp_retry_policy_server.js';
import { fingerprint } from './fingerprint.js';

/** The `_meta` key of the ledger's own answers (in progress, unknown, conflict, invalid id). */
export const LEDGER_META_KEY = 'dev.mcp-retry-policy/ledger';

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

const optError = (field, expected) => typeError(field, `${field} must be ${expected}`);

/**
 * `new OperationLedger({ store, ttlMs?, leaseMs?, reconcile?, now? })`. `reconcile({ tenant, action,
 * operationId, record, result })` is asked when an outcome is not known (a claim whose lease ran out, or
 * `unknown`): answer `{ status: 'succeeded' | 'failed', result }` if you found out, `{ status: 'not_done' }`
 * if it provably did not happen (it runs again), or `{ status: 'unknown' }`.
 */
export class OperationLedger {
  #store;
  #rules;
  #reconcile;
  #now;

  constructor(options = {}) {
    const { store, reconcile, now, ...rules } = options ?? {};
    for (const m of ['get', 'insert', 'replace']) {
      if (typeof store?.[m] !== 'function') throw optError('store', `a ledger store (missing ${m}())`);
    }
    if (reconcile !== undefined && typeof reconcile !== 'function') throw optError('reconcile', 'a function');
    if (now !== undefined && typeof now !== 'function') throw optError('now', 'a function');
    this.#store = store;
    this.#rules = new LedgerRules(rules);
    this.#reconcile = reconcile;
    this.#now = now ?? (() => Date.now());
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
      const now = this.#now();
      const stored = await this.#store.get(key);
      const a = this.#rules.admit(stored?.record, inputFingerprint, now);
      switch (a.action) {
        case 'execute': {
          const claim = this.#rules.claim(stored?.record, inputFingerprint, now);
          const won = stored ? await this.#store.replace(key, stored.record.version, claim) : await this.#store.insert(key, claim);
          if (won) return { action: 'execute', claim };
          continue; // another request claimed it first: look again
        }
        case 'replay':
          return { action: 'replay', state: stored.record.state, result: stored.result };
        case 'conflict':
          return { action: 'conflict' };
        case 'in_progress':
          return { action: 'in_progress', retryAfterMs: a.retryAfterMs };
        case 'reconcile': {
          if (!this.#reconcile) return { action: 'unknown' };
          const verdict = await this.#reconcile({ ...key, record: stored.record, result: stored.result });
          const status = verdict?.status;
          if (status === 'succeeded' || status === 'failed') {
            const done = this.#rules.finish(stored.record, status, now);
            if (await this.#store.replace(key, stored.record.version, done, verdict.result)) {
              return { action: 'replay', state: status, result: verdict.result };
            }
            continue;
          }
          if (status === 'not_done') {
            const claim = this.#rules.claim(stored.record, inputFingerprint, now);
            if (await this.#store.replace(key, stored.record.version, claim)) return { action: 'execute', claim };
            continue;
          }
          return { action: 'unknown' };
        }
        default:
          return { action: 'unknown' };
      }
    }
    // Lost the race every time: someone else is working on it right now.
    return { action: 'in_progress', retryAfterMs: 1000 };
  }

  /** Records how an executed write ended: `succeeded`, `failed` or `unknown`, with the result to replay. */
  async finish(key, claim, state, result) {
    const done = this.#rules.finish(claim, state, this.#now());
    return this.#store.replace(key, claim.version, done, result);
  }
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
  const { action, tenant, operationIdArgument = 'operation_id', validate } = options ?? {};
  if (typeof action !== 'string' || !action) throw optError('action', 'a non-empty string');
  if (typeof tenant !== 'function') throw optError('tenant', 'a function of the request context');
  if (validate !== undefined && typeof validate !== 'function') throw optError('validate', 'a function');

  return async function idempotentHandler(args, extra) {
    const operationId = args?.[operationIdArgument];
    // Rejected before any claim: nothing attempted, nothing stored.
    if (!isValidOperationId(operationId)) {
      return reply('invalid_operation_id', undefined,
        `${operationIdArgument} must be 8–128 characters of A–Z a–z 0–9 - _ . : (a UUID works); nothing was done.`);
    }
    let who;
    try {
      who = await tenant(extra);
    } catch {
      who = undefined;
    }
    if (typeof who !== 'string' || !who) {
      return reply('unauthenticated', operationId, 'This request has no authenticated tenant; nothing was done.');
    }
    if (validate) {
      const problem = await validate(args, extra);
      if (problem) return { isError: true, content: [{ type: 'text', text: String(problem) }] };
    }
    const { [operationIdArgument]: _, ...input } = args;
    const key = { tenant: who, action, operationId };
    const admission = await ledger.begin(key, fingerprint(input));
    switch (admission.action) {
      case 'replay':
        return admission.result;
      case 'conflict':
        return reply('conflict', operationId,
          `${operationIdArgument} ${operationId} was already used for a different request; nothing was done. Use a new ${operationIdArgument} for a new request.`);
      case 'in_progress':
        return reply('in_progress', operationId,
          `This operation (${operationIdArgument} ${operationId}) is still running. Check back with the same ${operationIdArgument}; do not use a new one.`,
          { retryAfterMs: admission.retryAfterMs });
      case 'unknown':
        return unknownReply(operationId, operationIdArgument);
      case 'execute':
        break;
      default:
        return unknownReply(operationId, operationIdArgument);
    }
    let result;
    let state;
    try {
      result = await handler(args, extra);
      state = result?.isError ? 'failed' : 'succeeded';
    } catch (e) {
      // OutcomeUnknown says so; any other exception after the claim cannot say whether it committed either.
      state = 'unknown';
      result = unknownReply(operationId, operationIdArgument, e);
    }
    try {
      await ledger.finish(key, admission.claim, state, state === 'unknown' ? undefined : result);
    } catch {
      // The record stays pending: after its lease it is reconciled. The caller still gets the truth now.
    }
    return result;
  };
}

function unknownReply(operationId, arg, cause) {
  const why = cause?.message ? ` (${cause.message})` : '';
  return reply('unknown', operationId,
    `The outcome of this operation (${arg} ${operationId}) is unknown${why}: it may or may not have taken effect. ` +
      `Do not use a new ${arg}; check whether it happened, or call again with the same ${arg} later.`);
}
