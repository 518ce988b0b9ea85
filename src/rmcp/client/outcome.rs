//! What a call ends with: `CallOutcome`, `AttemptRecord`, `CallError`.

#[allow(clippy::wildcard_imports)]
use super::*;

/// One attempt of a call, as it went ([`CallOutcome::attempts`]).
///
/// ```
/// use mcp_retry_policy::rmcp::CallOutcome;
///
/// fn log_attempts(outcome: &CallOutcome) {
///     for a in &outcome.attempts {
///         // e.g. "attempt 1: 31 ms, cause connection_reset, decision Retry { delay_ms: 180, .. }"
///         println!("attempt {}: {} ms, cause {}, decision {:?}", a.attempt, a.duration_ms, a.classification.cause.as_str(), a.decision);
///     }
/// }
/// # let _ = log_attempts;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptRecord {
    /// 1 for the first.
    pub attempt: u32,
    /// How long it took.
    pub duration_ms: u64,
    /// How it ended, in the core's vocabulary.
    pub outcome: AttemptOutcome,
    /// What the core made of it.
    pub classification: Classification,
    /// What the core decided next.
    pub decision: Decision,
}

/// How a call ended ([`RetryClient::call_tool`]): the same `CallOutcome` as the npm package's. Match on
/// [`status`](Self::status) ([`FinalStatus`] lives in `mcp_retry_policy::retry`); [`message`](Self::message)
/// is what to tell the model when it did not simply succeed.
///
/// ```
/// use mcp_retry_policy::retry::FinalStatus;
/// use mcp_retry_policy::rmcp::CallOutcome;
/// use rmcp::model::CallToolResult;
///
/// /// What the model gets back for one tool call.
/// fn for_the_model(outcome: CallOutcome) -> CallToolResult {
///     match (outcome.status, outcome.result) {
///         // The tool answered (a success, or the tool's own error): its result, as is.
///         (FinalStatus::Succeeded | FinalStatus::ToolError, Some(result)) => result,
///         // Failed (not done), unknown (may or may not have happened), pending (still running): the words.
///         _ => CallToolResult::error(vec![rmcp::model::ContentBlock::text(outcome.message)]),
///     }
/// }
/// # let _ = for_the_model;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutcome {
    /// `succeeded | tool_error | failed | pending | unknown` — `unknown` is never reported as either of the others.
    pub status: FinalStatus,
    /// Why (the core's reason).
    pub reason: Reason,
    /// The tool.
    pub tool: String,
    /// The tool's safety, as judged for this call.
    pub safety: Safety,
    /// The operation id every attempt carried (keyed tools).
    pub operation_id: Option<String>,
    /// The tool's result, when it answered (`succeeded`, `tool_error`).
    pub result: Option<CallToolResult>,
    /// The last attempt's error, when the call did not get an answer from the tool.
    pub error: Option<String>,
    /// Every attempt.
    pub attempts: Vec<AttemptRecord>,
    /// The id of the task the call created, when the server ran it as one (a `pending` call's task is still
    /// running: look at it later with `tasks/get`).
    pub task_id: Option<String>,
    /// What the model is told (the core's words).
    pub message: String,
}

/// Why a call could not be made at all ([`RetryClient::call_tool`]'s `Err`): nothing was sent.
///
/// ```
/// use mcp_retry_policy::rmcp::CallError;
///
/// fn explain(e: &CallError) -> &'static str {
///     match e {
///         CallError::Journal(_) => "the operation id could not be journaled: try again later",
///         CallError::IntentReused { .. } => "a bug: this intent already names another call",
///         CallError::OperationIdReused { .. } => "a bug: this operation id belongs to another call",
///     }
/// }
/// # let _ = explain;
/// ```
#[derive(Debug)]
pub enum CallError {
    /// The journal could not record the operation id: the write was not sent.
    Journal(JournalError),
    /// The intent already names a call of another tool or another server.
    IntentReused {
        /// The intent.
        intent: String,
        /// The tool it names.
        tool: String,
    },
    /// The operation id the arguments carry is already journaled for a call of another tool or another
    /// server: a call of its own must not share (and settle) that operation.
    OperationIdReused {
        /// The operation id.
        operation_id: String,
        /// The tool it was journaled for.
        tool: String,
    },
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Journal(e) => write!(f, "{e}; the call was not sent"),
            CallError::IntentReused { intent, tool } => write!(
                f,
                "intent {intent:?} already names a call of {tool}: give each intended call its own intent; the call was not sent"
            ),
            CallError::OperationIdReused { operation_id, tool } => write!(
                f,
                "operation id {operation_id:?} is already journaled for a call of {tool}: give each call its own operation id; the call was not sent"
            ),
        }
    }
}

impl std::error::Error for CallError {}

impl From<JournalError> for CallError {
    fn from(e: JournalError) -> Self {
        CallError::Journal(e)
    }
}
