// The ends the core decides outside an attempt's step: the status tool's answer, a followed task's status, a
// task's result the engine would not stop on, and a call's end after its loop (resolve, settle, answer). Each reads its names into codes (refused by name) and asks the
// wasm once; `RetryEngine`'s methods of the same names call these.
import * as w from '../mcp_retry_policy_client.js';
import { CAUSES, FINISHINGS, FINISH_NEXTS, OPERATION_STATUSES, REASONS, STATUSES, TASK_STATUSES } from '../generated/names.js';
import { O_FINISH_NEXT, O_GAVE_UP, O_REASON, O_STOP } from '../generated/seam.js';
import { CAUSE_CODES, OPERATION_CODES, REASON_CODES, STATUS_CODES, TASK_CODES, bool, code, codes, fields, ok, ours, required } from './engine-read.js';
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

const FINISHING_CODES = codes(FINISHINGS);

/** `{ keyed, mayResolve, cancelled }` (booleans; absent: false) → `[0|1, 0|1, 0|1]`. */
function readFacts(facts) {
  const f = [0, 0, 0];
  let at = 'facts';
  try {
    fields(facts, 'facts', ['keyed', 'mayResolve', 'cancelled'], (key, v, field) => {
      at = field;
      f[key === 'keyed' ? 0 : key === 'mayResolve' ? 1 : 2] = bool(v, field);
    });
  } catch (e) {
    throw ours(e, at);
  }
  return f;
}

/** `RetryEngine.finish`: one step of a call's end → `{ next, status, reason, gaveUp }`. */
export function finishOf(happened, end, facts) {
  const h = code(required(happened, 'happened', FINISHINGS), 'happened', FINISHING_CODES, FINISHINGS);
  const [s, r] = readBefore(required(end, 'end', 'the end as it stands: { status, reason }'), 'end');
  const [keyed, mayResolve, cancelled] = readFacts(facts);
  ok(w.callFinish(h, s, r, keyed, mayResolve, cancelled));
  const o = out();
  return { next: FINISH_NEXTS[o[O_FINISH_NEXT]], status: STATUSES[o[O_STOP]], reason: REASONS[o[O_REASON]], gaveUp: o[O_GAVE_UP] === 1 };
}
