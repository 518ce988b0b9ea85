// Tasks (2025-11-25): a tools/call the server answers with a created task, followed to its end within the
// call's deadline (tasks/get with the engine's waits, then tasks/result), cancelled on abort, never re-sent.
// Observes and acts; every wait and every status is the engine's.
import { rangeError, typeError } from '../errors.js';
import { resultOutcome, typeOptionError } from './attempt.js';
import { RESULT_SCHEMA } from './result-schema.js';
import { linkedSignal } from './own-signal.js';
import { sleep } from './sleep.js';
import { ACTION_STOP, TASK_COMPLETED, TASK_FAILED, TASK_INPUT_REQUIRED, TASK_STATUSES } from '../generated/names.js';
import { subrequestRoom } from './options.js';
import { hintOf } from './status-resolution.js';

const KNOWN = new Set(TASK_STATUSES);

/** The caller's `task` request option: `true` or `{ ttl }` (ms the server keeps the task). */
export function taskRequest(task) {
  if (task === undefined || task === false) return undefined;
  if (task === true) return { task: {} };
  if (task === null || typeof task !== 'object' || Array.isArray(task)) throw typeOptionError('task', 'true or { ttl }');
  const { ttl, ...rest } = task;
  const extra = Object.keys(rest);
  if (extra.length) throw typeError('task', `task.${extra[0]} is not a field of a task request (ttl)`, 'unknown_option');
  if (ttl === undefined) return { task: {} };
  if (typeof ttl !== 'number') throw typeError('task.ttl', `task.ttl must be a number of milliseconds, got ${typeof ttl}`);
  if (!Number.isSafeInteger(ttl) || ttl < 1) throw rangeError('task.ttl', `task.ttl must be a whole number of milliseconds, at least 1 (${ttl})`);
  return { task: { ttl } };
}

/** The task a `tools/call` result created (`{ task: { taskId, status, … } }`), if it is one. */
export function createdTask(result) {
  const t = result?.task;
  return t && typeof t.taskId === 'string' && t.taskId && KNOWN.has(t.status) ? t : undefined;
}

/**
 * One `tasks/*` request about `taskId`: `{ value }` or `{ error }`. Never throws. The request gets a signal of
 * its own tied to the caller's (own-signal.js): the SDK hangs a listener on it that it never removes.
 */
async function taskRpc(ctx, method, taskId, { timeout, signal }) {
  const linked = linkedSignal(signal);
  try {
    const value = await ctx.client.request({ method, params: { taskId } }, RESULT_SCHEMA, { timeout: Math.max(1, timeout), ...(linked ? { signal: linked.signal } : {}) });
    return { value };
  } catch (error) {
    return { error };
  } finally {
    linked?.untie();
  }
}

/**
 * Follows a created task to its end within the call's deadline: `tasks/get` while it runs, with the waits the
 * engine decides (the task's `pollInterval` as the hint), then `tasks/result` — the tool's own result, which the
 * engine reads like any result. An abort cancels the task (`tasks/cancel`) and the engine says what the call's
 * status is then. Resolves to `{ decision, result?, error? }`; the call is never sent again.
 */
export async function followTask(ctx, state, created, { tool, safety, signal }) {
  const { engine, now, emit } = ctx;
  const taskId = created.taskId;
  const { attemptTimeoutMs } = engine.policy; // read once: the getter crosses into wasm for every field
  const attemptTimeout = () => Math.min(attemptTimeoutMs, state.deadlineMs - now());
  let task = created;
  let looked = true; // the last look answered (its pollInterval is the hint)
  let lastError;
  const cancel = async () => {
    const c = await taskRpc(ctx, 'tasks/cancel', taskId, { timeout: Math.min(5_000, attemptTimeoutMs) });
    emit({ type: 'task', tool, taskId, status: c.value?.status ?? 'cancel_failed' });
    return { decision: engine.record(state, { kind: 'aborted', sent: 'maybe' }, safety, now()).decision, ...(lastError ? { error: lastError } : {}) };
  };
  for (;;) {
    if (signal?.aborted) return cancel();
    // The result is asked for once the task ended, or when it waits for input (tasks/result first relays the
    // server's input request to the client's handlers); held by the server until the task ends, so it may
    // take until the deadline.
    const fetches = task.status === TASK_COMPLETED || task.status === TASK_FAILED || task.status === TASK_INPUT_REQUIRED;
    if (fetches) {
      const r = await taskRpc(ctx, 'tasks/result', taskId, { timeout: state.deadlineMs - now(), signal });
      if (r.value !== undefined) {
        const step = engine.record(state, resultOutcome(r.value), safety, now());
        emit({ type: 'task', tool, taskId, status: task.status === TASK_INPUT_REQUIRED ? TASK_COMPLETED : task.status });
        if (step.decision.action === ACTION_STOP) return { decision: step.decision, result: r.value };
        // A result the engine would not stop on (the server ledger's in_progress or unknown, run as a task): the
        // task completed, but not with the tool's answer — an open end, the engine's, never `completed`'s
        // succeeded. Nothing is sent again: a created task is never re-sent.
        return { decision: engine.taskResultEnd(step.classification.cause, step.decision.reason), result: r.value };
      }
      if (signal?.aborted) return cancel();
      lastError = r.error ?? lastError;
    }
    // No result read: the engine says what the task's own status means (an end, or follow on).
    const end = engine.taskEnd(task.status);
    if (end.action === ACTION_STOP) {
      if (fetches) return { decision: end, ...(lastError ? { error: lastError } : {}) };
      emit({ type: 'task', tool, taskId, status: task.status });
      return { decision: end };
    }
    if (fetches) looked = false; // input_required and no result yet: keep looking
    // Still running: the engine says when to look again, or that the call ends pending within its deadline.
    const next = engine.poll(state, { ...(looked ? hintOf(task.pollInterval) : undefined), ...subrequestRoom(ctx.options) }, now());
    emit({ type: 'task', tool, taskId, status: task.status, ...(next.action === ACTION_STOP ? {} : { delayMs: next.delayMs }) });
    if (next.action === ACTION_STOP) return { decision: next, ...(lastError ? { error: lastError } : {}) };
    if (!(await sleep(next.delayMs, signal))) return cancel();
    const g = await taskRpc(ctx, 'tasks/get', taskId, { timeout: attemptTimeout(), signal });
    const t = g.value;
    looked = !!t && t.taskId === taskId && KNOWN.has(t.status);
    if (looked) task = t;
    else lastError = g.error ?? new TypeError('tasks/get answered something that is not this task');
  }
}

/** The tasks part (`withRetry(client, { parts: [tasks] })`): from the browser entry, needed to ask for a task
 *  (`task`), to call a tool that runs only as one, and to follow a task a server created. */
export const tasks = Object.freeze({ part: 'tasks', taskRequest, createdTask, followTask });
