// What the model is told when a call did not simply succeed: what happened, whether it may have run, and
// what to do next. `unknown` is always said as unknown. Every name it switches on is imported from the
// generated tables (../generated/names.js): a reason or cause renamed in Rust fails at module link.
import {
  CAUSE_HTTP_429, CAUSE_HTTP_500, CAUSE_HTTP_502, CAUSE_HTTP_503, CAUSE_HTTP_504, CAUSE_HTTP_5XX, CAUSE_JSONRPC_URL_ELICITATION_REQUIRED, CAUSE_LEDGER_REJECTED, REASON_ABORTED, REASON_BREAKER_OPEN, REASON_BUDGET_EXHAUSTED, REASON_DEADLINE, REASON_INPUT_REQUIRED_UNHANDLED, REASON_INPUT_ROUNDS_EXCEEDED, REASON_MAX_ATTEMPTS, REASON_PERMANENT, REASON_REAUTHENTICATION_REQUIRED, REASON_RECOVER_EXHAUSTED, REASON_RETRY_AFTER_BEYOND_DEADLINE, REASON_UNSAFE_AFTER_UNKNOWN, STATUS_FAILED, STATUS_PENDING, STATUS_SUCCEEDED, STATUS_TOOL_ERROR, STATUS_UNKNOWN,
} from '../generated/names.js';

const seconds = (ms) => `${Math.max(1, Math.round(ms / 1000))} s`;

export function messageFor({ tool, status, reason, cause, operationId, operationIdArgument, breakerOpenForMs }) {
  const id = operationId ? ` (${operationIdArgument} ${operationId})` : '';
  switch (status) {
    case STATUS_SUCCEEDED:
      return `${tool} succeeded.`;
    case STATUS_TOOL_ERROR:
      return `${tool} ran and reported an error; the result is the tool's own answer.`;
    case STATUS_PENDING:
      return operationId
        ? `${tool} is still in progress${id}. Check its status with the same ${operationIdArgument}; do not call it again with a new one.`
        : `${tool} is still in progress (a task was created). Check the task's status instead of calling again.`;
    case STATUS_UNKNOWN:
      return operationId
        ? `${tool} may or may not have taken effect${id}: ${explain(reason, cause)}. Do not call it again with a new ${operationIdArgument}. ` +
            `Check whether it happened, or call again with the same ${operationIdArgument} ${operationId} so the server can return the first outcome.`
        : `${tool} may or may not have taken effect: ${explain(reason, cause)}. ${nextStepUnknown(cause)}`;
    case STATUS_FAILED:
    default:
      return `${tool} did not take effect: ${explain(reason, cause)}. ${nextStep(reason, cause, breakerOpenForMs)}`;
  }
}

// Causes whose words say more than the reason's.
function explainCause(cause) {
  switch (cause) {
    case CAUSE_JSONRPC_URL_ELICITATION_REQUIRED: return 'the server needs the user to finish a step in the browser first (a URL elicitation)';
    case CAUSE_LEDGER_REJECTED: return 'the server refused the request before doing anything (a missing or malformed operation id, no signed-in tenant, or invalid input)';
    case CAUSE_HTTP_503: case CAUSE_HTTP_502: case CAUSE_HTTP_504: case CAUSE_HTTP_500: case CAUSE_HTTP_5XX: case CAUSE_HTTP_429:
      return 'the server or a gateway in front of it answered with an error that does not prove the request was not acted on';
    default: return undefined;
  }
}

function explain(reason, cause) {
  const byCause = explainCause(cause);
  if (byCause && (reason === REASON_UNSAFE_AFTER_UNKNOWN || reason === REASON_PERMANENT || reason === REASON_MAX_ATTEMPTS)) return byCause;
  switch (reason) {
    case REASON_UNSAFE_AFTER_UNKNOWN: return 'the connection failed after the request was sent, and this tool is not safe to send twice';
    case REASON_MAX_ATTEMPTS: return 'every attempt failed';
    case REASON_DEADLINE: return 'the time allowed for this call ran out';
    case REASON_BUDGET_EXHAUSTED: return 'the retry budget for this server is spent (it has been failing)';
    case REASON_BREAKER_OPEN: return 'the server has been failing and calls to it are paused';
    case REASON_RETRY_AFTER_BEYOND_DEADLINE: return 'the server asked to wait longer than the time allowed';
    case REASON_ABORTED: return 'the call was cancelled';
    case REASON_PERMANENT: return 'the server rejected the request';
    case REASON_RECOVER_EXHAUSTED: return 'the connection had to be re-established more than once';
    case REASON_REAUTHENTICATION_REQUIRED: return 'the server refused the credentials';
    case REASON_INPUT_ROUNDS_EXCEEDED: return 'the server kept asking for more input';
    case REASON_INPUT_REQUIRED_UNHANDLED: return 'the server asked for input and no input handler is configured';
    default: return reason ?? 'it failed';
  }
}

function nextStepUnknown(cause) {
  if (cause === CAUSE_JSONRPC_URL_ELICITATION_REQUIRED) {
    return 'Ask the user to finish the step the server asked for; then check whether it happened before calling it again.';
  }
  return 'Calling it again may do it twice. Check whether it happened before calling it again.';
}

function nextStep(reason, cause, breakerOpenForMs) {
  if (cause === CAUSE_JSONRPC_URL_ELICITATION_REQUIRED) return 'Ask the user to finish the step the server asked for, then call it again.';
  if (cause === CAUSE_LEDGER_REJECTED) return 'Fix what the server named and call again with a valid operation id.';
  switch (reason) {
    case REASON_PERMANENT: return 'Calling it again with the same arguments will fail the same way; fix the arguments or choose another tool.';
    case REASON_REAUTHENTICATION_REQUIRED: return 'The user must sign in again before this tool can be used.';
    case REASON_BREAKER_OPEN: return `It is safe to call it again later${breakerOpenForMs ? `, in about ${seconds(breakerOpenForMs)}` : ''}.`;
    case REASON_ABORTED: return 'It is safe to call it again if it is still wanted.';
    default: return 'It is safe to call it again later.';
  }
}
