// Closing the unknown: a keyed write whose outcome the call could not see is asked about — the server's status
// tool (the operation ledger), polled while it runs with the engine's waits — and the engine says what the
// answer makes of the call (`statusAnswer`). The write itself is never sent again. Also `resolve` and
// `reconcile`, the same question for journaled operations.
import { rangeError } from '../errors.js';
import { typeOptionError } from './attempt.js';
import { assembleOutcome } from './outcome.js';
import { ofServer, ofServerOrUnbound } from './scope.js';
import { sleep } from './sleep.js';
import { ACTION_STOP, MAX_DURATION_MS, OPERATION_IN_PROGRESS, OPERATION_STATUSES, STATUS_SUCCEEDED, STATUS_TOOL_ERROR } from '../generated/names.js';
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
  if (!statusTool || !outcome.operationId || !(deadlineMs > now())) return undefined;
  if (!(await ctx.toolInfo(statusTool))) return undefined;
  const action = outcome.tool;
  const state = engine.begin(now(), { answersInput: false });
  let answer;
  try {
    for (;;) {
      answer = await ctx.askStatus({ action, operationId: outcome.operationId }, { signal });
      ctx.emit({ type: 'resolve', tool: action, operationId: outcome.operationId, answer: answer?.status ?? 'no_answer' });
      if (!answer || answer.status !== OPERATION_IN_PROGRESS) break;
      // Still running: the engine says when to look again (the ledger's hint, jittered; within the deadline).
      const next = engine.poll(state, { ...hintOf(answer.retryAfterMs), ...subrequestRoom(ctx.options) }, now());
      if (next.action === ACTION_STOP || now() + next.delayMs >= deadlineMs) break;
      if (!(await sleep(next.delayMs, signal))) break;
    }
  } finally {
    state.free();
  }
  // No answer: nothing to change (the engine's stop stands: statusAnswer(undefined, before) is before).
  if (!answer) return undefined;
  const decision = engine.statusAnswer(answer.status, { status: outcome.status, reason: outcome.reason });
  return assembleOutcome({
    name: outcome.tool,
    safety: outcome.safety,
    operationId: outcome.operationId,
    attempts,
    result: decision.status === STATUS_SUCCEEDED || decision.status === STATUS_TOOL_ERROR ? answer.result : undefined,
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
