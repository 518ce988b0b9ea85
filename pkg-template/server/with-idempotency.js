// withIdempotency: a tool handler behind the operation ledger, so that a replayed write returns its first
// outcome. Checks before any claim (operation id, tenant, validation, fingerprint) answer `rejected`; the
// claim is held (renewed) while the handler runs; every answer of the ledger's own has words for the model
// and `_meta[LEDGER_META_KEY]` for clients. Store, driver and handler error messages never reach the model:
// they go to the ledger's `onEvent` (only an `OutcomeUnknown`'s message, written for it, is shown).
import { optionError as optError } from '../errors.js';
import { isValidOperationId } from './rules.js';
import { fingerprint } from './fingerprint.js';
import { COUNTERS, INTERNALS, LedgerStoreError, OperationLedger, OutcomeUnknown } from './ledger.js';
import { HandlerClaim, LeaseLost } from './lease.js';
import { ledgerReply } from './replies.js';
import {
  LEDGER_META_KEY, LEDGER_REJECTED, OPERATION_IN_PROGRESS, RECORD_FAILED, RECORD_SUCCEEDED, RECORD_UNKNOWN, TEL_LEDGER_ACTION,
  TEL_LEDGER_ANSWER,
} from '../generated/names.js';

// Each handler call's claim, for `claimOf(extra)`: on the call's own context object under a symbol (a
// WeakMap entry per call costs about a microsecond in the garbage collector's ephemeron work), or in a WeakMap
// when the context cannot take a property (frozen, sealed).
const CLAIM = Symbol('mcp-retry-policy.claim');
const CLAIMS = new WeakMap();

function setClaim(context, claim) {
  if (Object.isExtensible(context)) context[CLAIM] = claim;
  else CLAIMS.set(context, claim);
}

/**
 * The claim a handler runs under, from inside the handler: `claimOf(extra)` → `{ tenant, action,
 * operationId, fence, signal }`. `fence` is the fencing token — the claim's version, higher for every later
 * claim of the key: pass it downstream (a column, a conditional write) so that a stale run is refused there.
 * `signal` aborts when the claim can no longer be kept (`lease_lost`): stop, and do not commit. `undefined`
 * outside a handler wrapped by `withIdempotency`.
 */
export function claimOf(extra) {
  if (extra === null || typeof extra !== 'object') return undefined;
  return Object.hasOwn(extra, CLAIM) ? extra[CLAIM] : CLAIMS.get(extra);
}

/** `unknown`: it may or may not have taken effect. Only an `OutcomeUnknown`'s own message is shown. */
function unknownReply(operationId, arg, cause, extra) {
  const why = cause instanceof OutcomeUnknown ? cause.message : '';
  return ledgerReply('unknown', operationId, { arg, why }, extra);
}

/** The ledger's store failed before this call ran anything: unknown (an earlier call with the id may have). */
const storeDown = (operationId, arg) => ledgerReply('store_down', operationId, { arg });

/**
 * Wraps a tool handler for `McpServer.registerTool` so that a replayed write returns its first outcome.
 * `tenant(extra)` reads the authenticated principal from the request context (`extra.authInfo`: the token's
 * subject, not the app's client id) — never the arguments. The tool's input schema must declare the
 * operation-id argument (default `operation_id`).
 */
export function withIdempotency(ledger, handler, options = {}) {
  if (!(ledger instanceof OperationLedger)) throw optError('ledger', 'an OperationLedger');
  if (typeof handler !== 'function') throw optError('handler', 'a function');
  const { action, tenant, operationIdArgument = 'operation_id', validate, transaction = false, authorize, principal } = options ?? {};
  if (typeof action !== 'string' || !action) throw optError('action', 'a non-empty string');
  if (typeof transaction !== 'boolean') throw optError('transaction', 'true or false');
  if (transaction && !ledger.transactional) {
    throw optError('transaction', 'false with this ledger: its store cannot run a transaction (a SQLite, Postgres, D1 or Durable Object ledger store can)');
  }
  if (typeof tenant !== 'function') throw optError('tenant', 'a function of the request context');
  if (validate !== undefined && typeof validate !== 'function') throw optError('validate', 'a function');
  if (authorize !== undefined && typeof authorize !== 'function') throw optError('authorize', 'a function ({ tenant, action, operationId, args, extra }) → true to allow');
  if (principal !== undefined && typeof principal !== 'function') throw optError('principal', 'a function of the request context');
  const { emit, addAction } = INTERNALS.get(ledger);
  addAction(action); // the status tool finds this action's records by tool name too (OperationLedger.locate)

  // With OpenTelemetry: each answer counted by kind (the ledger's own answers carry it in `_meta`; a replayed
  // result is marked here; anything else is the handler's own result: an execution).
  const counter = COUNTERS.get(ledger)?.answers;
  const replays = new WeakSet();

  if (!counter) return respond;
  return async function idempotentHandler(args, extra) {
    const result = await respond(args, extra);
    const meta = result?._meta?.[LEDGER_META_KEY];
    const kind = meta?.status === LEDGER_REJECTED && meta.reason === 'rolled_back' ? 'rolled_back'
      : meta?.status && meta.status !== 'result_not_stored' ? meta.status
        : replays.has(result) ? 'replay' : 'execute';
    counter.add(1, { [TEL_LEDGER_ANSWER]: kind, [TEL_LEDGER_ACTION]: action });
    return result;
  };

  async function respond(args, extra) {
    const operationId = args?.[operationIdArgument];
    // Rejected before any claim: nothing attempted, nothing stored.
    if (!isValidOperationId(operationId)) {
      return ledgerReply('invalid_operation_id', undefined, { arg: operationIdArgument });
    }
    let who;
    try {
      who = await tenant(extra);
    } catch {
      who = undefined;
    }
    if (typeof who !== 'string' || !who) {
      return ledgerReply('unauthenticated', operationId);
    }
    const key = { tenant: who, action, operationId };
    // Asked on every call, a replay included, before the ledger is read: a caller the write would refuse
    // learns nothing of a recorded result, nor whether the id was used.
    if (authorize && !(await allowed({ tenant: who, action, operationId, args, extra }, key))) {
      return ledgerReply('unauthorized', operationId);
    }
    let bound;
    if (principal) {
      try {
        bound = await principal(extra);
      } catch {
        bound = undefined;
      }
      if (typeof bound !== 'string' || !bound) {
        return ledgerReply('unauthenticated_principal', operationId);
      }
    }
    if (validate) {
      let problem;
      try {
        problem = await validate(args, extra);
      } catch (error) {
        // The validator itself failed: still before any claim, so nothing was done.
        emit({ type: 'handler_error', during: 'validate', key, error });
        return ledgerReply('validation_failed', operationId, { arg: operationIdArgument });
      }
      if (problem) return ledgerReply('invalid_input', operationId, { problem: String(problem) });
    }
    const { [operationIdArgument]: _, ...input } = args;
    let inputFingerprint;
    try {
      // With `principal`, the caller is part of what the id stands for: another principal's call with the
      // same id and input is a different request (a conflict), never answered with this one's result.
      inputFingerprint = fingerprint(bound === undefined ? input : { principal: bound, input });
    } catch (e) {
      // Input the fingerprint refuses (too large, not JSON): refused before any claim.
      return ledgerReply('unfingerprintable', operationId, { why: e?.message ?? String(e) });
    }
    if (transaction) return atomically(key, inputFingerprint, args, extra);
    let admission;
    try {
      admission = await ledger.begin(key, inputFingerprint);
    } catch (e) {
      if (e instanceof LedgerStoreError) return storeDown(operationId, operationIdArgument);
      throw e;
    }
    const answer = answerAdmission(admission, operationId);
    if (answer) return answer;
    const hold = ledger.hold(key, admission.claim);
    const context = extra !== null && typeof extra === 'object' ? extra : {};
    setClaim(context, new HandlerClaim(key, hold));
    let result;
    let state;
    try {
      result = await handler(args, context);
      state = result?.isError ? RECORD_FAILED : RECORD_SUCCEEDED;
    } catch (error) {
      // Its fenced transaction was refused (another run took the record over): none of its writes stand,
      // and the record is the other run's. This caller hears what every caller hears now.
      if (error instanceof LeaseLost && error.committed === false) return afterRefusedCommit(key, hold);
      // OutcomeUnknown says so; any other exception after the claim cannot say whether it committed either.
      if (!(error instanceof OutcomeUnknown)) emit({ type: 'handler_error', during: 'handler', key, error });
      state = RECORD_UNKNOWN;
      result = unknownReply(operationId, operationIdArgument, error);
    }
    try {
      const claim = await hold.stop();
      await ledger.finish(key, claim, state, state === RECORD_UNKNOWN ? undefined : result);
    } catch {
      // The record stays pending (told to onEvent): after its lease it is reconciled. The caller still gets the truth now.
    }
    return result;
  }

  /** `authorize`'s answer: anything but `true` — a throw included (told to onEvent) — refuses. */
  async function allowed(ctx, key) {
    try {
      return (await authorize(ctx)) === true;
    } catch (error) {
      emit({ type: 'authorize_error', key, error });
      return false;
    }
  }

  /**
   * After `claim.transaction` was refused: this run committed nothing and the record changed hands. Answers
   * what the ledger says now — the other run's result (the replay every caller gets), in progress, or unknown.
   */
  async function afterRefusedCommit(key, hold) {
    const { operationId } = key;
    await hold.stop();
    let now;
    try {
      now = await ledger.status(key);
    } catch {
      now = undefined;
    }
    if (now?.status === RECORD_SUCCEEDED || now?.status === RECORD_FAILED) {
      if (counter && now.result !== null && typeof now.result === 'object') replays.add(now.result);
      return now.result;
    }
    if (now?.status === OPERATION_IN_PROGRESS) return answerAdmission({ action: 'in_progress', retryAfterMs: now.retryAfterMs }, operationId);
    return unknownReply(operationId, operationIdArgument);
  }

  /** The transaction option: the handler's writes and the record commit together (`executeAtomically`). */
  async function atomically(key, inputFingerprint, args, extra) {
    const { operationId } = key;
    const context = extra !== null && typeof extra === 'object' ? extra : {};
    let done;
    try {
      // (A signal that never aborts: the transaction holds no lease. Made here: workerd refuses one at module scope.)
      done = await ledger.executeAtomically(key, inputFingerprint, (tx, claim) => {
        setClaim(context, Object.freeze({ ...key, fence: claim.version, signal: new AbortController().signal }));
        return handler(args, context, tx);
      });
    } catch (e) {
      if (e instanceof LedgerStoreError) return storeDown(operationId, operationIdArgument);
      throw e;
    }
    switch (done.action) {
      case 'executed':
        return done.result;
      case 'rolled_back':
        // The handler ran and failed; the store rolled back its writes with the claim. Its database writes did
        // not take effect — anything it did outside the transaction may have.
        emit({ type: 'handler_error', during: 'transaction', key, error: done.error });
        return ledgerReply('rolled_back', operationId, { arg: operationIdArgument });
      case 'commit_unknown':
        emit({ type: 'store_error', during: 'commit', key, error: done.error });
        return unknownReply(operationId, operationIdArgument);
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
        return ledgerReply(principal ? 'conflict_principal' : 'conflict', operationId, { arg: operationIdArgument });
      case 'in_progress':
        return ledgerReply('in_progress', operationId, { arg: operationIdArgument }, { retryAfterMs: admission.retryAfterMs });
      case 'execute':
        return undefined;
      default:
        return unknownReply(operationId, operationIdArgument);
    }
  }
}
