// The CallOutcome a call answers with, from the engine's last decision (status and reason are the engine's),
// and what `callTool` returns for it: the tool's own result, or an MCP error result carrying the outcome.
// Pure.
import { OUTCOME_META_KEY, STATUS_CARRIES_RESULT, STATUS_PENDING, STATUS_TOOL_ANSWERED } from '../generated/names.js';
import { messageFor } from './messages.js';

/**
 * Step 3 — assemble the CallOutcome from the engine's last decision: the status and reason are the engine's;
 * the result only when the tool answered; the words for the model from `messages.js`. Pure.
 */
export function assembleOutcome({ name, safety, operationId, attempts, result, lastError, decision, operationIdArgument, breakerOpenForMs }) {
  const { status, reason } = decision;
  // Built field by field, in this order (the spreads of conditional objects were measured on the hot path).
  const outcome = { status, tool: name };
  // What the outcome carries is the core's rule, by status (src/retry/decide/status.rs: carries_result, tool_answered).
  if (result !== undefined && STATUS_CARRIES_RESULT[status]) outcome.result = result;
  if (lastError !== undefined && !STATUS_TOOL_ANSWERED[status]) outcome.error = describeError(lastError);
  if (operationId) outcome.operationId = operationId;
  outcome.safety = safety;
  outcome.attempts = attempts;
  outcome.reason = reason;
  outcome.message = messageFor({
    tool: name,
    status,
    reason,
    taskId: typeof result?.task?.taskId === 'string' ? result.task.taskId : undefined,
    cause: attempts.at(-1)?.classification?.cause,
    operationId,
    operationIdArgument,
    breakerOpenForMs,
  });
  return outcome;
}

function describeError(error) {
  return {
    name: error?.name ?? 'Error',
    message: String(error?.message ?? error),
    ...(error?.code !== undefined ? { code: error.code } : {}),
  };
}

// What goes into `_meta` (JSON-safe, without the full per-attempt details' raw errors).
export function summary(o) {
  return {
    status: o.status,
    reason: o.reason,
    tool: o.tool,
    safety: o.safety,
    ...(o.operationId ? { operationId: o.operationId } : {}),
    attempts: o.attempts.map((a) => ({ outcome: a.outcome, classification: a.classification, decision: a.decision })),
    ...(o.error ? { error: o.error } : {}),
  };
}

/**
 * What `callTool` returns for `outcome`: the tool's result when it answered (or the task a pending call
 * created); else an `isError` result whose text is the outcome's message and whose `_meta` carries the outcome.
 */
export function toolResultOf(outcome) {
  if (outcome.status === STATUS_PENDING && outcome.result) return outcome.result;
  return modelResultOf(outcome);
}

/**
 * What a model is given for `outcome`: the tool's result when it answered; else (a pending task too: its
 * CreateTaskResult tells a model nothing it can act on) an `isError` result whose text is the outcome's message —
 * still in progress, do not call it again — and whose `_meta` carries the outcome.
 */
export function modelResultOf(outcome) {
  if (STATUS_TOOL_ANSWERED[outcome.status]) return outcome.result;
  return {
    isError: true,
    content: [{ type: 'text', text: outcome.message }],
    _meta: { [OUTCOME_META_KEY]: summary(outcome) },
  };
}
