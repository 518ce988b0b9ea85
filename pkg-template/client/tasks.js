// Tasks (2025-11-25): a tools/call the server answers with a created task, followed to its end within the
// call's deadline (tasks/get with the engine's waits, then tasks/result), cancelled on abort, never re-sent.
// Observes and acts: the sequence, every wait and every status are the core's call driver's (engine.next).
import { rangeError, typeError } from '../errors.js';
import { resultOutcome, typeOptionError } from './attempt.js';
import { RESULT_SCHEMA } from './result-schema.js';
import { linkedSignal } from './own-signal.js';
import { sleep } from './sleep.js';
import {
  HAPPENED_CANCELLED, HAPPENED_TASK_CANCEL_ANSWERED, HAPPENED_TASK_CREATED, HAPPENED_TASK_LOOK_FAILED, HAPPENED_TASK_LOOKED,
  HAPPENED_TASK_RESULT, HAPPENED_TASK_RESULT_FAILED, HAPPENED_WAITED, NEXT_FETCH_TASK_RESULT, NEXT_LOOK_AT_TASK,
  NEXT_POLL_TASK, TASK_COMPLETED, TASK_INPUT_REQUIRED, TASK_STATUSES,
} from '../generated/names.js';
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

/** What the core's driver takes of a task the server showed: its status, and its `pollInterval` if usable. */
const viewOf = (t) => {
  const hint = hintOf(t.pollInterval);
  return hint ? { status: t.status, pollInterval: hint.hintMs } : { status: t.status };
};

/** The happening that starts following `created` (the call's driver follows it if the call ended on it). */
export const taskCreated = (created) => ({ kind: HAPPENED_TASK_CREATED, task: viewOf(created) });

/**
 * Carries out one of the driver's task steps for the followed task `follow` (`{ taskId, status, told }`):
 * wait before a look, look (`tasks/get`), fetch the result (`tasks/result`, held by the server until the task
 * ends; it also relays the server's input requests to the client's handlers), or cancel it (`tasks/cancel`,
 * on the caller's abort). Resolves to `{ happened, result?, error? }` for the driver; never throws. The call
 * itself is never sent again: the sequence and every end are the core's (src/retry/follow.rs).
 */
export async function taskStep(ctx, follow, n, { tool, signal, say }) {
  const { taskId } = follow;
  if (n.next === NEXT_POLL_TASK) {
    say({ type: 'task', tool, taskId, status: n.status, delayMs: n.decision.delayMs });
    return { happened: (await sleep(n.decision.delayMs, signal)) ? HAPPENED_WAITED : HAPPENED_CANCELLED };
  }
  if (n.next === NEXT_LOOK_AT_TASK) {
    const g = await taskRpc(ctx, 'tasks/get', taskId, { timeout: n.timeoutMs, signal });
    if (signal?.aborted) return { happened: HAPPENED_CANCELLED };
    const t = g.value;
    if (t && t.taskId === taskId && KNOWN.has(t.status)) {
      follow.status = t.status;
      return { happened: { kind: HAPPENED_TASK_LOOKED, task: viewOf(t) } };
    }
    return { happened: HAPPENED_TASK_LOOK_FAILED, error: g.error ?? new TypeError('tasks/get answered something that is not this task') };
  }
  if (n.next === NEXT_FETCH_TASK_RESULT) {
    const r = await taskRpc(ctx, 'tasks/result', taskId, { timeout: n.timeoutMs, signal });
    if (r.value !== undefined) {
      say({ type: 'task', tool, taskId, status: follow.status === TASK_INPUT_REQUIRED ? TASK_COMPLETED : follow.status });
      follow.told = true;
      return { happened: { kind: HAPPENED_TASK_RESULT, outcome: resultOutcome(r.value) }, result: r.value };
    }
    if (signal?.aborted) return { happened: HAPPENED_CANCELLED };
    return { happened: HAPPENED_TASK_RESULT_FAILED, error: r.error };
  }
  // cancel_task: bounded by the driver's timeout, not by the caller's (aborted) signal.
  const c = await taskRpc(ctx, 'tasks/cancel', taskId, { timeout: n.timeoutMs });
  say({ type: 'task', tool, taskId, status: c.value?.status ?? 'cancel_failed' });
  follow.told = true;
  return { happened: HAPPENED_TASK_CANCEL_ANSWERED };
}

/** The tasks part (`withRetry(client, { parts: [tasks] })`): from the browser entry, needed to ask for a task
 *  (`task`), to call a tool that runs only as one, and to follow a task a server created. */
export const tasks = Object.freeze({ part: 'tasks', taskRequest, createdTask, taskCreated, taskStep });
