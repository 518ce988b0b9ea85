// One call over its named steps: admit → run one attempt → record → (wait, recover, continue input)* until the
// engine stops, then follow a created task, assemble the outcome, close the unknown, settle the journal. Every
// decision is the engine's; this strings the steps together and tells listeners what happened.
import { ACTION_STOP, ATTEMPT_SUBREQUESTS, REASON_TASK_PENDING, STATUS_PENDING, STATUS_SUCCEEDED, STATUS_TOOL_ERROR, STATUS_UNKNOWN } from '../generated/names.js';
import { assembleOutcome } from './outcome.js';
import { runAttempt } from './run-attempt.js';
import { sleep } from './sleep.js';
import { resolveOutcome } from './status-resolution.js';
import { subrequestBudgetOf, subrequestRoom } from './options.js';

/**
 * What a shared breaker's request to its object may take from the invocation's subrequests: never the app's
 * reserve, and never what the next attempt needs (`keep`: its request and the recovery before it, from the
 * core's `Recover::attempt_subrequests`). A budget function that throws here pays for nothing (the breaker
 * goes without the object): the call's own outcome is never lost to the breaker's bookkeeping.
 */
const UNPAID = Object.freeze({ budget: Object.freeze({ room: 0 }), keep: 0 });
const payFrom = (options, keep) => {
  let budget;
  try {
    budget = subrequestBudgetOf(options);
  } catch {
    return UNPAID;
  }
  return budget === undefined ? undefined : { budget, keep };
};
const attemptCost = (recover) => ATTEMPT_SUBREQUESTS[recover ?? ''];

/**
 * Sends the call's attempts until the engine stops it, then follows the task it created, if any (never
 * re-sending the call). `run` holds the call's engine state and what each attempt sends; `say` tells listeners;
 * `tel` traces. Resolves to `{ decision, result, lastError, attempts }`: the engine's last decision and what
 * the attempts saw.
 */
export async function attemptLoop(ctx, op, run, { say, tel, signal }) {
  const { engine, now } = ctx;
  const attempts = [];
  let recover;
  let result;
  let lastError;
  let previousError; // the error of the attempt just before: what a recovery step answers
  let decision;
  for (;;) {
    // A shared breaker (shared-breaker.js): the fleet's newest state adopted, a probe only under its lease.
    if (ctx.options.sharedBreaker) await ctx.options.sharedBreaker.beforeAdmit(engine, now(), payFrom(ctx.options, attemptCost(recover)));
    const admission = engine.admit(run.state, now(), subrequestRoom(ctx.options));
    if (!admission.admitted && admission.decision.action !== ACTION_STOP) {
      // Held by an open breaker or an empty budget: wait as long as the engine says, then ask again.
      const held = admission.decision;
      recover = held.recover; // what the next attempt does after the wait (a held resumption may become a re-send)
      say({ type: 'hold', tool: op.name, delayMs: held.delayMs, reason: held.reason });
      if (await sleep(held.delayMs, signal)) continue;
      decision = engine.record(run.state, { kind: 'aborted', sent: 'no' }, op.safety, now()).decision;
      break;
    }
    if (!admission.admitted) {
      decision = admission.decision;
      break;
    }
    if (admission.breaker) say({ type: 'breaker', tool: op.name, ...admission.breaker });
    const started = now();
    const traced = tel.attempt(attempts.length + 1);
    run.traceMeta = traced.meta;
    const attempt = { admission, recover, cause: previousError, started, streamBrokeAt: ctx.streamBrokeAt };
    // Hedged when the hedging part is in (parts.js): the engine then says whether a copy may race this attempt.
    const hedged = ctx.parts.hedging?.runHedged;
    const sent = await traced.run(() => (hedged ? hedged(ctx, run, attempt, { tool: op.name, safety: op.safety, say }) : runAttempt(ctx, run, attempt)));
    result = sent.result;
    previousError = sent.error;
    if (sent.error !== undefined) lastError = sent.error;
    const step = engine.record(run.state, sent.outcome, op.safety, now());
    const durationMs = now() - started;
    traced.end(sent.outcome, step.classification, durationMs);
    attempts.push({ attempt: attempts.length + 1, startedAt: started, durationMs, outcome: sent.outcome, ...step });
    say({ type: 'attempt', tool: op.name, attempt: attempts.length, durationMs, outcome: sent.outcome, ...step });
    if (step.breaker) say({ type: 'breaker', tool: op.name, ...step.breaker });
    if (ctx.options.sharedBreaker) {
      // After the last attempt, one request is kept for the status lookup that may follow (`autoResolve`).
      const next = step.decision.action === ACTION_STOP ? 1 : attemptCost(step.decision.recover);
      await ctx.options.sharedBreaker.afterRecord(engine, now(), !!step.breaker, payFrom(ctx.options, next));
    }
    decision = step.decision;
    if (decision.action === ACTION_STOP) break;
    tel.retry(decision, step.classification.cause);
    say({ type: 'retry', tool: op.name, delayMs: decision.delayMs, recover: decision.recover, reason: decision.reason });
    recover = decision.recover;
    if (!(await sleep(decision.delayMs, signal))) {
      // Aborted during the backoff: the engine says what that means.
      decision = engine.record(run.state, { kind: 'aborted', sent: 'no' }, op.safety, now()).decision;
      break;
    }
    if (recover === 'continue_input') {
      // The server asked for input: the next round carries it (never the first phase again).
      // (Only a call begun with the input-rounds part answering is ever told to: with-retry.js.)
      const stopped = await ctx.parts.inputRounds.continueInput(ctx, run, result, { safety: op.safety, signal, say: (e) => say({ ...e, tool: op.name }) });
      if (stopped) {
        decision = stopped.decision;
        if (stopped.error !== undefined) lastError = stopped.error;
        break;
      }
    }
  }
  // The server created a task: follow it to its end within the call's deadline (never re-sending the call).
  // Without the tasks part it is not followed: the call ends as the engine said, pending, with the task's id.
  const tasks = ctx.parts.tasks;
  const created = tasks && decision.status === STATUS_PENDING && decision.reason === REASON_TASK_PENDING ? tasks.createdTask(result) : undefined;
  if (created) {
    const followed = await tasks.followTask({ ...ctx, emit: say }, run.state, created, { tool: op.name, safety: op.safety, signal });
    decision = followed.decision;
    if (followed.result !== undefined) result = followed.result;
    if (followed.error !== undefined) lastError = followed.error;
  }
  return { decision, result, lastError, attempts };
}

/**
 * After the loop: the CallOutcome from the engine's last decision; for a keyed write whose outcome is open,
 * the server's status tool asked within the call's deadline (`autoResolve`, on by default; it never sends the
 * write again to find out); the journal entry settled; a `give_up` event for an outcome that is not the tool's.
 */
export async function finishCall(ctx, op, ended, { say, signal, deadlineMs }) {
  const { engine, now } = ctx;
  let outcome = assembleOutcome({
    name: op.name,
    safety: op.safety,
    operationId: op.operationId,
    attempts: ended.attempts,
    result: ended.result,
    lastError: ended.lastError,
    decision: ended.decision,
    operationIdArgument: ctx.idArg,
    breakerOpenForMs: engine.breakerState === 'open' ? engine.policy.breaker?.openMs : undefined,
  });
  const open = outcome.status === STATUS_UNKNOWN || outcome.status === STATUS_PENDING;
  if (op.operationId && open && ctx.options.autoResolve !== false) {
    outcome = (await resolveOutcome({ ...ctx, emit: say }, outcome, { deadlineMs, signal, attempts: ended.attempts })) ?? outcome;
  }
  if (op.operationId) {
    try {
      await ctx.journal.settle(op.operationId, outcome.status, now());
    } catch {
      // The entry stays pending: pendingOperations() will list it.
    }
  }
  if (outcome.status !== STATUS_SUCCEEDED && outcome.status !== STATUS_TOOL_ERROR) {
    say({ type: 'give_up', tool: op.name, status: outcome.status, reason: outcome.reason, operationId: op.operationId });
  }
  return outcome;
}
