// One call: the core's call driver says each step (admit → send → record → (wait, recover, gather input)* until
// the engine stops, then the created task's looks, result or cancel); this carries them out, then assembles the
// outcome and carries out the core's call end (close the unknown, settle the journal). Every decision, and their
// sequence, is the core's; this tells listeners.
import {
  ACTION_STOP, ATTEMPT_SUBREQUESTS, FINISHED_RESOLVED, FINISHED_SETTLED, FINISHED_START, FINISH_RESOLVE, FINISH_SETTLE,
  HAPPENED_CANCELLED, HAPPENED_SENT, HAPPENED_START, HAPPENED_WAITED, NEXT_DONE, NEXT_GATHER_INPUT, NEXT_SEND, NEXT_WAIT,
} from '../generated/names.js';
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
 * re-sending the call). The sequence is the core's call driver (`engine.next`: send, wait, gather input, the
 * task's steps, done); this carries out each step and feeds back what happened. `run` holds the call's engine state and
 * what each attempt sends; `say` tells listeners; `tel` traces. Resolves to `{ decision, result, lastError,
 * attempts }`: the engine's last decision and what the attempts saw.
 */
export async function attemptLoop(ctx, op, run, { say, tel, signal }) {
  const { engine, now } = ctx;
  const attempts = [];
  const shared = ctx.options.sharedBreaker;
  let recover;
  let result;
  let lastError;
  let previousError; // the error of the attempt just before: what a recovery step answers
  let happened = HAPPENED_START;
  let sending; // the attempt sent and not yet recorded, with its trace
  let decision;
  let follow; // the created task, once the driver follows it: { taskId, status, told }
  for (;;) {
    // A shared breaker (shared-breaker.js): the fleet's newest state adopted before each admission, a probe
    // only under its lease.
    if (shared && !follow && (happened === HAPPENED_START || happened === HAPPENED_WAITED)) {
      await shared.beforeAdmit(engine, now(), payFrom(ctx.options, attemptCost(recover)));
    }
    const n = engine.next(run.state, happened, op.safety, now(), subrequestRoom(ctx.options));
    if (n.step && sending) {
      // The attempt just sent was recorded: what it was, what it means, what comes next.
      const { last, traced } = sending;
      sending = undefined;
      Object.assign(last, n.step);
      traced.end(last.outcome, n.step.classification, last.durationMs);
      say({ type: 'attempt', tool: op.name, attempt: attempts.length, durationMs: last.durationMs, outcome: last.outcome, ...n.step });
      if (n.step.breaker) say({ type: 'breaker', tool: op.name, ...n.step.breaker });
      if (shared) {
        // After the last attempt, one request is kept for the status lookup that may follow (`autoResolve`).
        const cost = n.step.decision.action === ACTION_STOP ? 1 : attemptCost(n.step.decision.recover);
        await shared.afterRecord(engine, now(), !!n.step.breaker, payFrom(ctx.options, cost));
      }
      if (n.step.decision.action !== ACTION_STOP) {
        tel.retry(n.step.decision, n.step.classification.cause);
        say({ type: 'retry', tool: op.name, delayMs: n.step.decision.delayMs, recover: n.step.decision.recover, reason: n.step.decision.reason });
      }
    }
    if (n.next === NEXT_DONE) {
      // The server created a task: the driver follows it if the call ended on it (never re-sending the call).
      // Without the tasks part it is not followed: the call ends as the engine said, pending, with the task's id.
      const created = !follow && ctx.parts.tasks?.createdTask(result);
      if (created) {
        follow = { taskId: created.taskId, status: created.status, told: false };
        happened = ctx.parts.tasks.taskCreated(created);
        continue;
      }
      decision = n.decision;
      break;
    }
    if (follow && n.next !== NEXT_SEND && n.next !== NEXT_WAIT && n.next !== NEXT_GATHER_INPUT) {
      // A step of following the task: wait, look, fetch its result, or cancel it.
      const got = await ctx.parts.tasks.taskStep(ctx, follow, n, { tool: op.name, signal, say });
      if (got.result !== undefined) result = got.result;
      if (got.error !== undefined) lastError = got.error;
      happened = got.happened;
      continue;
    }
    if (n.next === NEXT_WAIT) {
      // A hold (an open breaker, an empty budget) or a backoff; aborted during it, nothing was sent.
      recover = n.decision.recover; // what the next attempt does after the wait (a held resumption may become a re-send)
      if (n.held) say({ type: 'hold', tool: op.name, delayMs: n.decision.delayMs, reason: n.decision.reason });
      happened = (await sleep(n.decision.delayMs, signal)) ? HAPPENED_WAITED : HAPPENED_CANCELLED;
      continue;
    }
    if (n.next === NEXT_GATHER_INPUT) {
      // The server asked for input: the next round carries it (never the first phase again). Only a call begun
      // with the input-rounds part answering is ever told to (with-retry.js).
      const got = await ctx.parts.inputRounds.gatherRound(ctx, run, result, { signal, say: (e) => say({ ...e, tool: op.name }) });
      if (got.error !== undefined) lastError = got.error;
      happened = got.happened;
      continue;
    }
    // Send: the admitted attempt, after its recovery step.
    recover = n.recover;
    const { admission } = n;
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
    const last = { attempt: attempts.length + 1, startedAt: started, durationMs: now() - started, outcome: sent.outcome };
    attempts.push(last);
    sending = { last, traced };
    happened = { kind: HAPPENED_SENT, outcome: sent.outcome };
  }
  if (follow && !follow.told) say({ type: 'task', tool: op.name, taskId: follow.taskId, status: follow.status }); // the status it ended on
  return { decision, result, lastError, attempts };
}

/**
 * After the loop: the CallOutcome from the engine's last decision, then the core's call end (`engine.finish`)
 * says what is left — the server's status tool asked about an open keyed write within the call's deadline
 * (`autoResolve`, on by default; it never sends the write again to find out), the journal entry settled — and
 * whether the call gave up (a `give_up` event: an outcome that is not the tool's).
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
  const facts = { keyed: !!op.operationId, mayResolve: !!ctx.statusTool && ctx.options.autoResolve !== false, cancelled: !!signal?.aborted };
  for (let happened = FINISHED_START; ;) {
    const n = engine.finish(happened, { status: outcome.status, reason: outcome.reason }, facts);
    if (n.next === FINISH_RESOLVE) {
      outcome = (await resolveOutcome({ ...ctx, emit: say }, outcome, { deadlineMs, signal, attempts: ended.attempts })) ?? outcome;
      happened = FINISHED_RESOLVED;
    } else if (n.next === FINISH_SETTLE) {
      try {
        await ctx.journal.settle(op.operationId, n.status, now());
      } catch {
        // The entry stays pending: pendingOperations() will list it.
      }
      happened = FINISHED_SETTLED;
    } else {
      if (n.gaveUp) say({ type: 'give_up', tool: op.name, status: outcome.status, reason: outcome.reason, operationId: op.operationId });
      return outcome;
    }
  }
}
