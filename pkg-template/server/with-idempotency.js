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
import { writeStart, writeStep } from './write.js';
import {
  OPERATION_IN_PROGRESS, RECORD_FAILED, RECORD_SUCCEEDED, REPLY_IN_PROGRESS, TEL_LEDGER_ACTION, TEL_LEDGER_ANSWER,
  WRITE_BEGUNS, WRITE_BEGUN_COMMIT_UNKNOWN, WRITE_BEGUN_EXECUTE, WRITE_BEGUN_IN_PROGRESS, WRITE_BEGUN_REPLAY,
  WRITE_BEGUN_ROLLED_BACK, WRITE_BEGUN_STORE_DOWN, WRITE_BEGUN_UNKNOWN, WRITE_EVENT_AUTHORIZED, WRITE_EVENT_BEGUN,
  WRITE_EVENT_FINGERPRINTED, WRITE_EVENT_OPERATION_ID, WRITE_EVENT_PRINCIPAL, WRITE_EVENT_RAN, WRITE_EVENT_RECORDED,
  WRITE_EVENT_STATUS, WRITE_EVENT_TENANT, WRITE_EVENT_VALIDATED, WRITE_RAN_COMMIT_REFUSED, WRITE_RAN_FAILED,
  WRITE_RAN_OUTCOME_UNKNOWN, WRITE_RAN_SUCCEEDED, WRITE_RAN_THREW, WRITE_STEP_ASK_AUTHORIZE, WRITE_STEP_ASK_PRINCIPAL,
  WRITE_STEP_ASK_STATUS, WRITE_STEP_ASK_TENANT, WRITE_STEP_BEGIN, WRITE_STEP_FINGERPRINT, WRITE_STEP_RECORD,
  WRITE_STEP_RUN, WRITE_STEP_RUN_TRANSACTION, WRITE_STEP_VALIDATE, WRITE_VALIDATION_OK, WRITE_VALIDATION_PROBLEM,
  WRITE_VALIDATION_THREW,
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

/** A string that is not empty, or undefined (a hook that threw reads as none). */
async function named(read, extra) {
  try {
    const v = await read(extra);
    return typeof v === 'string' && v ? v : undefined;
  } catch {
    return undefined;
  }
}

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
  const start = writeStart(authorize !== undefined, principal !== undefined, validate !== undefined, transaction);
  // With OpenTelemetry: each answer counted by the kind the driver gave it.
  const counter = COUNTERS.get(ledger)?.answers;

  /**
   * One call: the core's write driver, performed. `c` is what the face holds while it runs — the key, the
   * fingerprint, the handler's (or the replayed) result, the cause an answer may show, an in-progress wait.
   */
  return async function idempotentHandler(args, extra) {
    const operationId = args?.[operationIdArgument];
    const valid = isValidOperationId(operationId);
    const c = { args, extra, key: undefined, bound: undefined, fingerprint: undefined, problem: undefined, why: '', result: undefined, retryAfterMs: 0, claim: undefined, hold: undefined };
    let s = writeStep(start, WRITE_EVENT_OPERATION_ID, valid);
    for (;;) {
      const w = s.write;
      switch (s.step) {
        case WRITE_STEP_ASK_TENANT: {
          const who = await named(tenant, extra);
          if (who !== undefined) c.key = { tenant: who, action, operationId };
          s = writeStep(w, WRITE_EVENT_TENANT, who !== undefined);
          break;
        }
        case WRITE_STEP_ASK_AUTHORIZE:
          s = writeStep(w, WRITE_EVENT_AUTHORIZED, await allowed({ ...c.key, args, extra }, c.key));
          break;
        case WRITE_STEP_ASK_PRINCIPAL:
          c.bound = await named(principal, extra);
          s = writeStep(w, WRITE_EVENT_PRINCIPAL, c.bound !== undefined);
          break;
        case WRITE_STEP_VALIDATE:
          s = writeStep(w, WRITE_EVENT_VALIDATED, await validated(c));
          break;
        case WRITE_STEP_FINGERPRINT:
          s = writeStep(w, WRITE_EVENT_FINGERPRINTED, fingerprinted(c));
          break;
        case WRITE_STEP_BEGIN:
          s = writeStep(w, WRITE_EVENT_BEGUN, await begin(c));
          break;
        case WRITE_STEP_RUN_TRANSACTION:
          s = writeStep(w, WRITE_EVENT_BEGUN, await atomically(c));
          break;
        case WRITE_STEP_RUN:
          s = writeStep(w, WRITE_EVENT_RAN, await run(c));
          break;
        case WRITE_STEP_RECORD:
          try {
            const claim = await c.hold.stop();
            await ledger.finish(c.key, claim, s.state, c.result);
          } catch {
            // The record stays pending (told to onEvent): after its lease it is reconciled. The caller still gets the truth now.
          }
          s = writeStep(w, WRITE_EVENT_RECORDED);
          break;
        case WRITE_STEP_ASK_STATUS:
          s = writeStep(w, WRITE_EVENT_STATUS, await statusNow(c));
          break;
        default: {
          const { answer, reply, why, kind } = s.answer;
          counter?.add(1, { [TEL_LEDGER_ANSWER]: kind, [TEL_LEDGER_ACTION]: action });
          if (reply === undefined) return c.result;
          const fill = { arg: operationIdArgument, why: why ? c.why : '', problem: String(c.problem) };
          return ledgerReply(reply, valid ? operationId : undefined, fill, reply === REPLY_IN_PROGRESS ? { retryAfterMs: c.retryAfterMs } : undefined);
        }
      }
    }
  };

  /** `authorize`'s answer: anything but `true` — a throw included (told to onEvent) — refuses. */
  async function allowed(ctx, key) {
    try {
      return (await authorize(ctx)) === true;
    } catch (error) {
      emit({ type: 'authorize_error', key, error });
      return false;
    }
  }

  /** The validator's answer; one that throws is told to onEvent (still before any claim: nothing was done). */
  async function validated(c) {
    try {
      c.problem = await validate(c.args, c.extra);
      return c.problem ? WRITE_VALIDATION_PROBLEM : WRITE_VALIDATION_OK;
    } catch (error) {
      emit({ type: 'handler_error', during: 'validate', key: c.key, error });
      return WRITE_VALIDATION_THREW;
    }
  }

  /**
   * The input's fingerprint, without the operation id. With `principal`, the caller is part of what the id
   * stands for: another principal's call with the same id and input is a different request (a conflict).
   * Input the fingerprint refuses (too large, not JSON) keeps its reason for the answer.
   */
  function fingerprinted(c) {
    const { [operationIdArgument]: _, ...input } = c.args;
    try {
      c.fingerprint = fingerprint(c.bound === undefined ? input : { principal: c.bound, input });
      return true;
    } catch (e) {
      c.why = e?.message ?? String(e);
      return false;
    }
  }

  /** What the ledger's admission is, for the driver (its claim, result or wait kept in `c`). */
  function admitted(c, admission) {
    const { action: a } = admission;
    if (a === WRITE_BEGUN_EXECUTE) c.claim = admission.claim;
    else if (a === WRITE_BEGUN_REPLAY) c.result = admission.result;
    else if (a === WRITE_BEGUN_IN_PROGRESS) c.retryAfterMs = admission.retryAfterMs;
    return WRITE_BEGUNS.includes(a) ? a : WRITE_BEGUN_UNKNOWN;
  }

  async function begin(c) {
    try {
      return admitted(c, await ledger.begin(c.key, c.fingerprint));
    } catch (e) {
      if (e instanceof LedgerStoreError) return WRITE_BEGUN_STORE_DOWN;
      throw e;
    }
  }

  /** The handler, under its claim's hold; how it ended. */
  async function run(c) {
    c.hold = ledger.hold(c.key, c.claim);
    const context = c.extra !== null && typeof c.extra === 'object' ? c.extra : {};
    setClaim(context, new HandlerClaim(c.key, c.hold));
    try {
      c.result = await handler(c.args, context);
      return c.result?.isError ? WRITE_RAN_FAILED : WRITE_RAN_SUCCEEDED;
    } catch (error) {
      // Its fenced transaction was refused (another run took the record over): none of its writes stand.
      if (error instanceof LeaseLost && error.committed === false) return WRITE_RAN_COMMIT_REFUSED;
      // OutcomeUnknown says so (its message is written for the model); any other exception after the claim
      // cannot say whether it committed either (told to onEvent, never shown).
      if (error instanceof OutcomeUnknown) {
        c.why = error.message;
        return WRITE_RAN_OUTCOME_UNKNOWN;
      }
      emit({ type: 'handler_error', during: 'handler', key: c.key, error });
      return WRITE_RAN_THREW;
    }
  }

  /** After a refused commit: the record changed hands; what the ledger says of it now. */
  async function statusNow(c) {
    await c.hold.stop();
    let now;
    try {
      now = await ledger.status(c.key);
    } catch {
      now = undefined;
    }
    if (now?.status === RECORD_SUCCEEDED || now?.status === RECORD_FAILED) {
      c.result = now.result;
      return WRITE_BEGUN_REPLAY;
    }
    if (now?.status === OPERATION_IN_PROGRESS) {
      c.retryAfterMs = now.retryAfterMs;
      return WRITE_BEGUN_IN_PROGRESS;
    }
    return WRITE_BEGUN_UNKNOWN;
  }

  /** The transaction option: the handler's writes and the record commit together (`executeAtomically`). */
  async function atomically(c) {
    const context = c.extra !== null && typeof c.extra === 'object' ? c.extra : {};
    let done;
    try {
      // (A signal that never aborts: the transaction holds no lease. Made here: workerd refuses one at module scope.)
      done = await ledger.executeAtomically(c.key, c.fingerprint, (tx, claim) => {
        setClaim(context, Object.freeze({ ...c.key, fence: claim.version, signal: new AbortController().signal }));
        return handler(c.args, context, tx);
      });
    } catch (e) {
      if (e instanceof LedgerStoreError) return WRITE_BEGUN_STORE_DOWN;
      throw e;
    }
    switch (done.action) {
      case 'executed':
        c.result = done.result;
        return WRITE_BEGUN_EXECUTE;
      case 'rolled_back':
        // The handler ran and failed; the store rolled back its writes with the claim. Its database writes did
        // not take effect — anything it did outside the transaction may have.
        emit({ type: 'handler_error', during: 'transaction', key: c.key, error: done.error });
        return WRITE_BEGUN_ROLLED_BACK;
      case 'commit_unknown':
        emit({ type: 'store_error', during: 'commit', key: c.key, error: done.error });
        return WRITE_BEGUN_COMMIT_UNKNOWN;
      default:
        return admitted(c, done);
    }
  }
}
