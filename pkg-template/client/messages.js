// What the model is told when a call did not simply succeed: what happened, whether it may have run, and
// what to do next. `unknown` is always said as unknown.

const seconds = (ms) => `${Math.max(1, Math.round(ms / 1000))} s`;

export function messageFor({ tool, status, reason, cause, operationId, operationIdArgument, breakerOpenForMs }) {
  const id = operationId ? ` (${operationIdArgument} ${operationId})` : '';
  switch (status) {
    case 'succeeded':
      return `${tool} succeeded.`;
    case 'tool_error':
      return `${tool} ran and reported an error; the result is the tool's own answer.`;
    case 'pending':
      return operationId
        ? `${tool} is still in progress${id}. Check its status with the same ${operationIdArgument}; do not call it again with a new one.`
        : `${tool} is still in progress (a task was created). Check the task's status instead of calling again.`;
    case 'unknown':
      return operationId
        ? `${tool} may or may not have taken effect${id}: ${explain(reason, cause)}. Do not call it again with a new ${operationIdArgument}. ` +
            `Check whether it happened, or call again with the same ${operationIdArgument} ${operationId} so the server can return the first outcome.`
        : `${tool} may or may not have taken effect: ${explain(reason, cause)}. ${nextStepUnknown(cause)}`;
    case 'failed':
    default:
      return `${tool} did not take effect: ${explain(reason, cause)}. ${nextStep(reason, cause, breakerOpenForMs)}`;
  }
}

// Causes whose words say more than the reason's.
function explainCause(cause) {
  switch (cause) {
    case 'jsonrpc_url_elicitation_required': return 'the server needs the user to finish a step in the browser first (a URL elicitation)';
    case 'ledger_rejected': return 'the server refused the request before doing anything (a missing or malformed operation id, no signed-in tenant, or invalid input)';
    case 'http_503': case 'http_502': case 'http_504': case 'http_500': case 'http_5xx': case 'http_429':
      return 'the server or a gateway in front of it answered with an error that does not prove the request was not acted on';
    default: return undefined;
  }
}

function explain(reason, cause) {
  const byCause = explainCause(cause);
  if (byCause && (reason === 'unsafe_after_unknown' || reason === 'permanent' || reason === 'max_attempts')) return byCause;
  switch (reason) {
    case 'unsafe_after_unknown': return 'the connection failed after the request was sent, and this tool is not safe to send twice';
    case 'max_attempts': return 'every attempt failed';
    case 'deadline': return 'the time allowed for this call ran out';
    case 'budget_exhausted': return 'the retry budget for this server is spent (it has been failing)';
    case 'breaker_open': return 'the server has been failing and calls to it are paused';
    case 'retry_after_beyond_deadline': return 'the server asked to wait longer than the time allowed';
    case 'aborted': return 'the call was cancelled';
    case 'permanent': return 'the server rejected the request';
    case 'recover_exhausted': return 'the connection had to be re-established more than once';
    case 'reauthentication_required': return 'the server refused the credentials';
    case 'input_rounds_exceeded': return 'the server kept asking for more input';
    case 'recover_unavailable': return 'the connection could not be re-established';
    case 'input_required_unhandled': return 'the server asked for input and no input handler is configured';
    default: return reason ?? 'it failed';
  }
}

function nextStepUnknown(cause) {
  if (cause === 'jsonrpc_url_elicitation_required') {
    return 'Ask the user to finish the step the server asked for; then check whether it happened before calling it again.';
  }
  return 'Calling it again may do it twice. Check whether it happened before calling it again.';
}

function nextStep(reason, cause, breakerOpenForMs) {
  if (cause === 'jsonrpc_url_elicitation_required') return 'Ask the user to finish the step the server asked for, then call it again.';
  if (cause === 'ledger_rejected') return 'Fix what the server named and call again with a valid operation id.';
  switch (reason) {
    case 'permanent': return 'Calling it again with the same arguments will fail the same way; fix the arguments or choose another tool.';
    case 'reauthentication_required': return 'The user must sign in again before this tool can be used.';
    case 'breaker_open': return `It is safe to call it again later${breakerOpenForMs ? `, in about ${seconds(breakerOpenForMs)}` : ''}.`;
    case 'aborted': return 'It is safe to call it again if it is still wanted.';
    default: return 'It is safe to call it again later.';
  }
}
