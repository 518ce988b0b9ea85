// Closing the unknown: a keyed write whose outcome the call could not see is asked about — the server's status
// tool (the operation ledger), polled while it runs with the engine's waits — as the core's status driver says
// (`engine.statusNext`: ask, wait, or what the answer makes of the call). The write itself is never sent again. Also `resolve` and
// `reconcile`, the same question for journaled operations.
import { rangeError } from '../errors.js';
import { typeOptionError } from './attempt.js';
import { assembleOutcome } from './outcome.js';
import { ofServer, ofServerOrUnbound } from './scope.js';
import { sleep } from './sleep.js';
import {
  HEARD_ANSWERED, HEARD_CANCELLED, HEARD_START, HEARD_WAITED, MAX_DURATION_MS, OPERATION_STATUSES, RESOLVE_ASK, RESOLVE_DONE,
  RESOLVE_WAIT, STATUS_SUCCEEDED, STATUS_TOOL_ANSWERED,
} from '../generated/names.js';
import { subrequestRoom } from './options.js';

/** `{ hintMs }` from a server's interval (a task's `pollInterval`, the ledger's `retryAfterMs`), if it is one: capped at the
 *  longest the engine takes, not refused. */
export function hintOf(ms) {
  return typeof ms === 'number' && ms >= 0 && ms !== Infinity ? { hintMs: Math.min(ms, MAX_DURATION_MS) } : undefined;
}

/**
 * One status query through `call` (withRetry's own loop, so a lost session is re-initialized and a transient
 * failure retried as the engine decides): a call of the read-only status tool, never the write. Its answer is
 * in structuredContent; anything else (an error, a refusal, a malformed answer) is no answer (`undefined`).
 */
export function statusAsker(call, statusTool) {
  return async ({ action, operationId }, { signal }) => {
    try {
      const out = await call({ name: statusTool, arguments: { action, operation_id: operationId } }, { signal });
      const res = out.status === STATUS_SUCCEEDED ? out.result : undefined;
      const sc = res?.structuredContent;
      if (!sc || !OPERATION_STATUSES.includes(sc.status) || sc.operation_id !== operationId) return undefined;
      return sc;
    } catch {
      return undefined;
    }
  };
}

/**
 * Closing the unknown: asks the server's status tool (when the server lists one) about `outcome`'s operation,
 * polling while it is in progress with the waits the engine decides, until `deadlineMs`. Resolves to the
 * CallOutcome with what the server knows, or `undefined` when it cannot be asked (no status tool, the query
 * failed, no time left). The write itself is never sent again.
 */
export async function resolveOutcome(ctx, outcome, { deadlineMs, signal, attempts }) {
  const { engine, now, statusTool } = ctx;
  if (!statusTool || !outcome.operationId) return undefined;
  if (!(await ctx.toolInfo(statusTool))) return undefined;
  const action = outcome.tool;
  // The look's own call (its polls), stepped by the core's status driver: ask, wait, or end.
  const state = engine.begin(now(), { answersInput: false });
  const options = { before: { status: outcome.status, reason: outcome.reason }, deadlineMs, ...subrequestRoom(ctx.options) };
  let happened = HEARD_START;
  let answer;
  let n;
  try {
    for (;;) {
      n = engine.statusNext(state, happened, now(), options);
      if (n.next === RESOLVE_ASK) {
        answer = await ctx.askStatus({ action, operationId: outcome.operationId }, { signal });
        ctx.emit({ type: 'resolve', tool: action, operationId: outcome.operationId, answer: answer?.status ?? 'no_answer' });
        const hint = answer && hintOf(answer.retryAfterMs);
        happened = answer ? { kind: HEARD_ANSWERED, answer: answer.status, ...(hint && { retryAfterMs: hint.hintMs }) } : HEARD_ANSWERED;
      } else if (n.next === RESOLVE_WAIT) {
        happened = (await sleep(n.decision.delayMs, signal)) ? HEARD_WAITED : HEARD_CANCELLED;
      } else {
        break;
      }
    }
  } finally {
    state.free();
  }
  // Nothing learned: nothing to change (the call's own end stands).
  if (n.next !== RESOLVE_DONE) return undefined;
  const { decision } = n;
  return assembleOutcome({
    name: outcome.tool,
    safety: outcome.safety,
    operationId: outcome.operationId,
    attempts,
    result: STATUS_TOOL_ANSWERED[decision.status] ? answer?.result : undefined,
    decision,
    operationIdArgument: ctx.idArg,
  });
}

/**
 * Asks the server's status tool what happened to one journaled operation (or `{ tool }` for one the journal
 * does not hold), updates the journal, and returns a CallOutcome with what is known: `succeeded`/`tool_error`
 * with the recorded result, `failed` (it did not take effect), `pending`, or still `unknown`.
 */
export async function resolveOperation(ctx, operationId, requestOptions = {}) {
  const { engine, journal, now } = ctx;
  if (typeof operationId !== 'string' || !operationId) throw typeOptionError('operationId', 'a non-empty string');
  const entry = (await journal.pending()).find((e) => e.operationId === operationId);
  // Another server's operation is never asked here: its answer would be about an id it never saw.
  if (entry && !ofServerOrUnbound(entry, ctx.server())) {
    throw rangeError('operationId', `operation ${operationId.slice(0, 64)} went to another server (${String(entry.server).slice(0, 120)}): resolve it through that server's withRetry`, 'other_server');
  }
  const tool = entry?.tool ?? requestOptions.tool;
  if (typeof tool !== 'string' || !tool) {
    throw rangeError('operationId', `no pending journal entry for ${operationId.slice(0, 64)}: pass { tool }`, 'not_pending');
  }
  const base = assembleOutcome({
    name: tool, safety: 'keyed', operationId, attempts: [], decision: engine.statusAnswer(undefined), operationIdArgument: ctx.idArg,
  });
  const deadlineMs = now() + engine.policy.totalTimeoutMs;
  const outcome = (await resolveOutcome(ctx, base, { deadlineMs, signal: requestOptions.signal, attempts: [] })) ?? base;
  try {
    await journal.settle(operationId, outcome.status, now());
  } catch {
    // The entry stays pending.
  }
  return outcome;
}

/**
 * `resolveOperation` for every operation the journal holds as not finished *for this server*; one CallOutcome
 * each. Entries written before entries were bound to a server are left alone (pendingOperations() lists them).
 */
export async function reconcileOperations(ctx, requestOptions = {}) {
  const out = [];
  const mine = ctx.server();
  for (const e of await ctx.journal.pending()) if (ofServer(e, mine)) out.push(await resolveOperation(ctx, e.operationId, requestOptions));
  return out;
}
