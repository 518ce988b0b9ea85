//! What a call ends with, and what the gate answers: [`FinalStatus`], [`Reason`] (one stable name per way a
//! call can end or wait, with the words the model reads), and [`Decision`].

use crate::retry::classify::Recover;
// The doc links name the gate's items (`decide`, `MAX_INPUT_ROUNDS`, `CallState`, …).
#[cfg(doc)]
#[allow(clippy::wildcard_imports, unused_imports)]
use super::*;

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FinalStatus {
    /// The tool ran and returned a result.
    Succeeded,
    /// The tool ran and said no (`isError: true`): returned to the model as is.
    ToolError,
    /// Definitely not done.
    Failed,
    /// May or may not have happened. Never to be reported as success or as a clean failure.
    Unknown,
    /// In progress: a task, or an in-flight operation with an id to check.
    Pending,
}

impl FinalStatus {
    /// Every status, in declaration order (the order of the `as u8` codes).
    pub const ALL: [FinalStatus; 5] = [
        FinalStatus::Succeeded,
        FinalStatus::ToolError,
        FinalStatus::Failed,
        FinalStatus::Unknown,
        FinalStatus::Pending,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            FinalStatus::Succeeded => "succeeded",
            FinalStatus::ToolError => "tool_error",
            FinalStatus::Failed => "failed",
            FinalStatus::Unknown => "unknown",
            FinalStatus::Pending => "pending",
        }
    }

    /// Whether the tool itself answered (`succeeded`, `tool_error`): the outcome is the tool's result, and
    /// carries no error of the call's. Both faces assemble a call's outcome by it.
    pub const fn tool_answered(self) -> bool {
        matches!(self, FinalStatus::Succeeded | FinalStatus::ToolError)
    }

    /// Whether the outcome carries the answer the server gave: the tool's result, or the task a `pending`
    /// call created.
    pub const fn carries_result(self) -> bool {
        matches!(self, FinalStatus::Succeeded | FinalStatus::ToolError | FinalStatus::Pending)
    }
}

macro_rules! reasons {
    ($($(#[$doc:meta])* $v:ident = $s:literal, $words:literal, $next:expr;)*) => {
        /// Why a decision was taken: one stable name per branch of [`decide`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Reason { $($(#[$doc])* $v,)* }
        impl Reason {
            /// Every reason, in declaration order (the order of the `as u8` codes).
            pub const ALL: &'static [Reason] = &[$(Reason::$v,)*];
            /// The stable snake_case name.
            pub const fn as_str(self) -> &'static str { match self { $(Reason::$v => $s,)* } }
            /// What the model is told happened, as a phrase ("the time allowed for this call ran out").
            pub const fn words(self) -> &'static str { match self { $(Reason::$v => $words,)* } }
            /// What the model is told to do after a `failed` stop for this reason, when it is more than
            /// "It is safe to call it again later."
            pub const fn next_step(self) -> Option<&'static str> { match self { $(Reason::$v => $next,)* } }
        }
    };
}

// Adding a reason: one line here (its name, the words the model reads, the next step after a `failed` stop),
// then use it in `decide`; `cargo run --example names` (scripts/build.sh runs it) renders the JS and TS tables.
reasons! {
    /// The tool answered.
    Succeeded = "succeeded", "it succeeded", None;
    /// The tool answered `isError: true`.
    ToolError = "tool_error", "the tool ran and reported an error", None;
    /// The server created a task.
    TaskPending = "task_pending", "the server started it as a task that is still running", None;
    /// The same request would fail the same way.
    Permanent = "permanent", "the server rejected the request",
        Some("Calling it again with the same arguments will fail the same way; fix the arguments or choose another tool.");
    /// The delivery is unknown and the tool is unsafe: a re-send may act twice.
    UnsafeAfterUnknown = "unsafe_after_unknown",
        "the request may have been acted on before it failed, and this tool is not safe to send twice", None;
    /// `maxAttempts` reached.
    MaxAttempts = "max_attempts", "every attempt failed", None;
    /// The next attempt would start past the total deadline.
    Deadline = "deadline", "the time allowed for this call ran out", None;
    /// The retry budget for this server is empty.
    BudgetExhausted = "budget_exhausted", "the retry budget for this server is spent (it has been failing)", None;
    /// The circuit breaker for this server is open (a call that sent nothing, or a held call whose wait would
    /// pass its deadline).
    BreakerOpen = "breaker_open", "the server has been failing and calls to it are paused", None;
    /// The server asked to wait past the total deadline.
    RetryAfterBeyondDeadline = "retry_after_beyond_deadline", "the server asked to wait longer than the time allowed",
        None;
    /// The caller aborted.
    Aborted = "aborted", "the call was cancelled", Some("It is safe to call it again if it is still wanted.");
    /// A recovery step (re-initialize, refresh tools, renegotiate) was already tried once in this call.
    RecoverExhausted = "recover_exhausted",
        "a recovery step (a new session, a fresh tool list or a new protocol version) was needed more than once", None;
    /// Credentials were refused: the user or the auth provider must act.
    ReauthenticationRequired = "reauthentication_required", "the server refused the credentials",
        Some("The user must sign in again before this tool can be used.");
    /// Retry: a transient transport failure.
    Transient = "transient", "the connection failed", None;
    /// Retry: the server asked us to slow down.
    Throttled = "throttled", "the server asked to slow down", None;
    /// Retry: after (or by way of) a recovery step.
    Recover = "recover",
        "a recovery step was needed (a new session, a fresh tool list, a new protocol version or a resumed stream)",
        None;
    /// Retry: answer the server's input request (a continuation, not a failure).
    ContinueInput = "continue_input", "the server asked for more input", None;
    /// Retry, held: the breaker is open; wait for its next probe, then send again.
    BreakerHold = "breaker_hold", "the server has been failing; the call waits for it to recover", None;
    /// Retry, held: the retry budget is empty; wait for it to refill, then send again.
    BudgetHold = "budget_hold", "the retry budget for this server is spent; the call waits for it to refill", None;
    /// The server asked for input more than [`MAX_INPUT_ROUNDS`] times in one call.
    InputRoundsExceeded = "input_rounds_exceeded", "the server kept asking for more input", None;
    /// The server asked for input and this caller cannot answer it ([`CallState::cannot_answer_input`]).
    InputRequiredUnhandled = "input_required_unhandled",
        "the server asked for input and no input handler is configured", None;
    /// Not a branch of [`decide`]: the server asked for input, the caller has handlers, and they did not give
    /// it (a handler failed, or gave up before the deadline): [`decide_unanswered`].
    InputNotGiven = "input_not_given", "the server asked for input and it could not be given", None;
    /// Not a branch of [`decide`]: the server's status tool (the operation ledger) said how a write whose
    /// delivery was unknown ended, so the client reports that instead of `unknown`.
    ResolvedByStatus = "resolved_by_status", "the server's record of this operation says so", None;
    /// Not a branch of [`decide`]: the status tool says the write is still running.
    StatusInProgress = "status_in_progress", "the server says it is still running", None;
    /// Not a branch of [`decide`]: the status tool has no record of the write (it may still be on its way,
    /// or its record was purged): the outcome stays unknown.
    StatusNotFound = "status_not_found",
        "the server has no record of it (the request may not have arrived yet, or its record was purged)", None;
    /// Not a branch of [`decide`]: the status tool does not know the outcome either.
    StatusUnknown = "status_unknown", "the server does not know whether it took effect either", None;
    /// Not a branch of [`decide`]: `resolve` could not ask (no status tool, or no answer in time).
    StatusNotAsked = "status_not_asked", "the server could not be asked what happened", None;
    /// [`decide_poll`]: the operation is still running (a task working, a write in progress): look again.
    StillRunning = "still_running", "it is still running", None;
    /// [`decide_poll`]: still running after [`MAX_POLLS`] looks in one call: the call ends `pending`.
    PollsExhausted = "polls_exhausted", "it was still running after the most checks one call makes", None;
    /// Not a branch of [`decide`]: the server cancelled the task before it finished (some of it may have run).
    TaskCancelled = "task_cancelled", "its task was cancelled before it finished, after some of it may have run",
        None;
    /// Not a branch of [`decide`]: the task finished, but its result could not be fetched.
    TaskResultUnavailable = "task_result_unavailable", "its task finished, but the result could not be fetched", None;
    /// [`Engine::admit_within`](crate::retry::Engine::admit_within) / [`Engine::poll_within`](crate::retry::Engine::poll_within):
    /// the next attempt (or look) needs more outgoing requests than the invocation has left (a Cloudflare
    /// Worker's subrequest limit, less what the app keeps for itself).
    SubrequestBudget = "subrequest_budget",
        "this request has no outgoing requests left for another attempt",
        Some("It is safe to call it again in a later request.");
}

/// What to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Wait `delay_ms`, do `recover` if given, then send again (with the same operation id).
    Retry {
        /// How long to wait first.
        delay_ms: u64,
        /// A recovery step to take instead of, or before, the re-send.
        recover: Option<Recover>,
        /// Why.
        reason: Reason,
    },
    /// Stop and report `status`.
    Stop {
        /// The call's final status.
        status: FinalStatus,
        /// Why.
        reason: Reason,
    },
}

impl Decision {
    /// A stop.
    pub const fn stop(status: FinalStatus, reason: Reason) -> Self {
        Decision::Stop { status, reason }
    }

    /// Whether this is a retry.
    pub const fn is_retry(&self) -> bool {
        matches!(self, Decision::Retry { .. })
    }

    /// The reason.
    pub const fn reason(&self) -> Reason {
        match *self {
            Decision::Retry { reason, .. } | Decision::Stop { reason, .. } => reason,
        }
    }
}
