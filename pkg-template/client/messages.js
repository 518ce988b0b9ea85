// What the model is told when a call did not simply succeed: what happened, whether it may have run, and
// what to do next. `unknown` is always said as unknown. The words are Rust's (each `Reason` and `Cause`
// carries its own: src/retry/decide/status.rs, src/retry/classify/cause.rs), rendered into ../generated/names.js; this file
// only puts them together with the call's own values.
import {
  CAUSES, CAUSE_NEXT_FAILED, CAUSE_NEXT_UNKNOWN, CAUSE_WORDS, REASONS, REASON_BREAKER_OPEN, REASON_MAX_ATTEMPTS,
  REASON_NEXT_STEPS, REASON_PERMANENT, REASON_UNSAFE_AFTER_UNKNOWN, REASON_WORDS, STATUS_FAILED, STATUS_PENDING,
  STATUS_SUCCEEDED, STATUS_TOOL_ERROR, STATUS_UNKNOWN,
} from '../generated/names.js';

const byName = (names, words) => new Map(names.map((name, code) => [name, words[code]]));
const REASON_TEXT = byName(REASONS, REASON_WORDS);
const REASON_NEXT = byName(REASONS, REASON_NEXT_STEPS);
const CAUSE_TEXT = byName(CAUSES, CAUSE_WORDS);
const CAUSE_FAILED = byName(CAUSES, CAUSE_NEXT_FAILED);
const CAUSE_UNKNOWN = byName(CAUSES, CAUSE_NEXT_UNKNOWN);
// The reasons after which the row that applied says more than the reason does.
const CAUSE_SPEAKS = new Set([REASON_UNSAFE_AFTER_UNKNOWN, REASON_PERMANENT, REASON_MAX_ATTEMPTS]);

const seconds = (ms) => `${Math.max(1, Math.round(ms / 1000))} s`;

export function messageFor({ tool, status, reason, cause, operationId, operationIdArgument, breakerOpenForMs, taskId }) {
  const id = operationId ? ` (${operationIdArgument} ${operationId})` : '';
  switch (status) {
    case STATUS_SUCCEEDED:
      return `${tool} succeeded.`;
    case STATUS_TOOL_ERROR:
      return `${tool} ran and reported an error; the result is the tool's own answer.`;
    case STATUS_PENDING:
      if (taskId) {
        return `${tool} is still in progress as task ${taskId}${id}. Check the task's status (tasks/get) instead of calling it again.`;
      }
      return operationId
        ? `${tool} is still in progress${id}. Check its status with the same ${operationIdArgument}; do not call it again with a new one.`
        : `${tool} is still in progress. Check its status instead of calling it again.`;
    case STATUS_UNKNOWN:
      return operationId
        ? `${tool} may or may not have taken effect${id}: ${explain(reason, cause)}. Do not call it again with a new ${operationIdArgument}. ` +
            `Check whether it happened, or call again with the same ${operationIdArgument} ${operationId} so the server can return the first outcome.`
        : `${tool} may or may not have taken effect: ${explain(reason, cause)}. ` +
            (CAUSE_UNKNOWN.get(cause) ?? 'Calling it again may do it twice. Check whether it happened before calling it again.');
    case STATUS_FAILED:
    default:
      return `${tool} did not take effect: ${explain(reason, cause)}. ${nextStep(reason, cause, breakerOpenForMs)}`;
  }
}

function explain(reason, cause) {
  const byCause = CAUSE_TEXT.get(cause);
  if (byCause && CAUSE_SPEAKS.has(reason)) return byCause;
  return REASON_TEXT.get(reason) ?? reason ?? 'it failed';
}

function nextStep(reason, cause, breakerOpenForMs) {
  const step = CAUSE_FAILED.get(cause) ?? REASON_NEXT.get(reason);
  if (step) return step;
  // The one next step with a value in it: how long the breaker stays open.
  if (reason === REASON_BREAKER_OPEN && breakerOpenForMs) return `It is safe to call it again later, in about ${seconds(breakerOpenForMs)}.`;
  return 'It is safe to call it again later.';
}
