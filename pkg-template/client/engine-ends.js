// The ends the core decides outside an attempt's step: the status tool's answer, a followed task's status, and a
// task's result the engine would not stop on. Each reads its names into codes (refused by name) and asks the
// wasm once; `RetryEngine`'s methods of the same names call these.
import * as w from '../mcp_retry_policy_client.js';
import { CAUSES, OPERATION_STATUSES, REASONS, STATUSES, TASK_STATUSES } from '../generated/names.js';
import { CAUSE_CODES, OPERATION_CODES, REASON_CODES, STATUS_CODES, TASK_CODES, code, fields, ok, ours, required } from './engine-read.js';
import { decision, out } from './engine-codec.js';

/**
 * A call's open end as `statusAnswer` and `statusNext` take it (`{ status, reason }`, a decision's other fields
 * allowed) → `[statusCode, reasonCode]`; none: the count of statuses.
 */
export function readBefore(before, path) {
  let s = STATUSES.length;
  let r = 0;
  let at = path;
  try {
    fields(before, path, ['action', 'status', 'reason', 'delayMs', 'recover'], (key, v, field) => {
      at = field;
      if (key === 'status') s = code(required(v, field, STATUSES), field, STATUS_CODES, STATUSES);
      else if (key === 'reason') r = code(required(v, field, REASONS), field, REASON_CODES, REASONS);
    });
  } catch (e) {
    throw ours(e, at);
  }
  return [s, r];
}

/** `RetryEngine.statusAnswer`. */
export function statusAnswerOf(answer, before) {
  const a = answer === undefined ? OPERATION_STATUSES.length : code(answer, 'answer', OPERATION_CODES, OPERATION_STATUSES);
  const [s, r] = readBefore(before, 'before');
  ok(w.statusAnswer(a, s, r));
  return decision(out());
}

/** `RetryEngine.taskEnd`. */
export function taskEndOf(status) {
  ok(w.taskEnd(code(required(status, 'task.status', TASK_STATUSES), 'task.status', TASK_CODES, TASK_STATUSES)));
  return decision(out());
}

/** `RetryEngine.taskResultEnd`. */
export function taskResultEndOf(cause, reason) {
  const c = code(required(cause, 'step.classification.cause', CAUSES), 'step.classification.cause', CAUSE_CODES, CAUSES);
  const r = code(required(reason, 'step.decision.reason', REASONS), 'step.decision.reason', REASON_CODES, REASONS);
  ok(w.taskResultEnd(c, r));
  return decision(out());
}
