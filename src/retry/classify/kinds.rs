//! What a classification says: whether the server acted ([`Delivery`]), what could make a re-send succeed
//! ([`Verdict`]), the recovery step before it ([`Recover`]), and the whole meaning ([`Classification`]).

use super::Cause;

/// Whether the server acted on the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Delivery {
    /// Provably not acted on: each row of [`classify`](super::classify) that says so cites its proof (a failed connect,
    /// a 429/503 with `Retry-After`, 401, an expired session, a header or version mismatch the server rejects
    /// before dispatch, …).
    NotProcessed,
    /// May or may not have been acted on: timeout, reset after send, broken stream, a 5xx an intermediary
    /// may have produced after forwarding, -32603, and every case without proof.
    Unknown,
    /// The tool answered (success or `isError`).
    Processed,
}

impl Delivery {
    /// Every delivery, in declaration order (the order of the `as u8` codes).
    pub const ALL: [Delivery; 3] = [Delivery::NotProcessed, Delivery::Unknown, Delivery::Processed];

    /// How little this delivery claims: processed 0, not processed 1, unknown 2. The most conservative reading
    /// of an outcome is the one with the highest.
    pub const fn uncertainty(self) -> u8 {
        match self {
            Delivery::Processed => 0,
            Delivery::NotProcessed => 1,
            Delivery::Unknown => 2,
        }
    }

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Delivery::NotProcessed => "not_processed",
            Delivery::Unknown => "unknown",
            Delivery::Processed => "processed",
        }
    }
}

/// A recovery step that must happen before (or instead of) a plain re-send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Recover {
    /// The session is gone (HTTP 404 with a session id, ≤ 2025-11-25), or the stdio server's process is (it
    /// exited, or stopped answering): initialize again — over a fresh process for stdio —, then re-send.
    Reinitialize,
    /// The server's tool list changed (-32020, 2026-07-28): call `tools/list`, then re-send once.
    RefreshTools,
    /// The server does not speak our protocol version (-32022): negotiate again.
    Renegotiate,
    /// The stream broke after an SSE event id (≤ 2025-11-25): GET with `Last-Event-ID`, do not re-send.
    ResumeStream,
    /// The server created a task: poll it, do not re-send.
    PollTask,
    /// The server needs input (`resultType: "input_required"`): answer it by re-sending with the input.
    ContinueInput,
    /// Credentials were refused (HTTP 401): the user or the auth provider must act.
    Reauthenticate,
}

/// An attempt's own requests where they are counted: its `tools/call`, and the cancellation that may follow it.
pub const ATTEMPT_REQUESTS: u32 = 2;

impl Recover {
    /// Whether the action is taken at once, at most once per call, with neither it nor its re-send counted as
    /// an attempt: the steps that follow a lost session, a changed tool list or a version mismatch — and a
    /// re-initialization after a lost stdio process. Where the request may have been processed (a lost process,
    /// an unconfirmed -32020/-32022) the gate in `decide` stops an unsafe tool. The one definition `decide` and the
    /// engine both use.
    pub const fn is_one_shot(self) -> bool {
        matches!(self, Recover::Reinitialize | Recover::RefreshTools | Recover::Renegotiate)
    }

    /// The outgoing HTTP requests this step makes before its re-send (or instead of it), as the MCP SDK
    /// clients make them over Streamable HTTP: a new session is `initialize`, `notifications/initialized` and
    /// the standalone GET stream the client opens after it (3); a fresh tool list one `tools/list` page; a resumed
    /// stream one GET; a task poll one `tasks/get`; an input round nothing extra (its re-send is the attempt).
    pub const fn subrequests(self) -> u32 {
        match self {
            Recover::Reinitialize | Recover::Renegotiate => 3,
            Recover::RefreshTools | Recover::ResumeStream | Recover::PollTask => 1,
            Recover::ContinueInput | Recover::Reauthenticate => 0,
        }
    }

    /// What an attempt may cost in outgoing requests when it follows `recover` (none: a plain re-send): the
    /// step's ([`Recover::subrequests`]), its own request, and the `notifications/cancelled` the MCP SDK
    /// clients send for it when it times out or is aborted (a POST of its own on Streamable HTTP — counted, so
    /// that a last attempt that times out cannot spend the app's reserve on it). The engine's admission counts
    /// with it ([`crate::retry::engine::Engine::admit_within`]); the JS layer's table of it is generated from it.
    pub const fn attempt_subrequests(recover: Option<Recover>) -> u32 {
        match recover {
            Some(r) => r.subrequests().saturating_add(ATTEMPT_REQUESTS),
            None => ATTEMPT_REQUESTS,
        }
    }

    /// Every action, in declaration order (the order of the `as u8` codes).
    pub const ALL: [Recover; 7] = [
        Recover::Reinitialize,
        Recover::RefreshTools,
        Recover::Renegotiate,
        Recover::ResumeStream,
        Recover::PollTask,
        Recover::ContinueInput,
        Recover::Reauthenticate,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Recover::Reinitialize => "reinitialize",
            Recover::RefreshTools => "refresh_tools",
            Recover::Renegotiate => "renegotiate",
            Recover::ResumeStream => "resume_stream",
            Recover::PollTask => "poll_task",
            Recover::ContinueInput => "continue_input",
            Recover::Reauthenticate => "reauthenticate",
        }
    }
}

/// What the outcome means for the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The tool ran and returned a result.
    Success,
    /// The tool ran and said no (`isError: true`): returned to the model as is, never retried.
    ToolError,
    /// The same request will fail the same way: do not re-send.
    Permanent,
    /// A transport failure that a later attempt may not meet.
    Transient,
    /// The server asked us to slow down (HTTP 429).
    Throttled,
    /// A recovery step is needed; see [`Classification::recover`].
    Recover,
    /// The caller aborted.
    Cancelled,
}

impl Verdict {
    /// Every verdict, in declaration order (the order of the `as u8` codes).
    pub const ALL: [Verdict; 7] = [
        Verdict::Success,
        Verdict::ToolError,
        Verdict::Permanent,
        Verdict::Transient,
        Verdict::Throttled,
        Verdict::Recover,
        Verdict::Cancelled,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Success => "success",
            Verdict::ToolError => "tool_error",
            Verdict::Permanent => "permanent",
            Verdict::Transient => "transient",
            Verdict::Throttled => "throttled",
            Verdict::Recover => "recover",
            Verdict::Cancelled => "cancelled",
        }
    }
}

/// The meaning of one attempt's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Classification {
    /// What the outcome means for the call.
    pub verdict: Verdict,
    /// Whether the server acted on the request.
    pub delivery: Delivery,
    /// The recovery step, when `verdict` is [`Verdict::Recover`].
    pub recover: Option<Recover>,
    /// A server-given minimum wait (HTTP `Retry-After`, SSE `retry`), in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// The row of the table that applied.
    pub cause: Cause,
}

impl Classification {
    /// Whether this outcome is a transport-level failure: the only kind that moves the breaker (a transient
    /// or throttled verdict, or a broken stream to resume) — never a tool's `isError`.
    pub const fn is_transport_failure(&self) -> bool {
        (matches!(self.verdict, Verdict::Transient | Verdict::Throttled)
            || matches!(self.recover, Some(Recover::ResumeStream)))
            && !matches!(self.cause, Cause::Withheld)
    }

    /// This classification for a server behind a proxy that may retry a POST on another replica (Envoy/Istio's
    /// default route retry policy — `retry_on: connect-failure,refused-stream,unavailable,cancelled,
    /// retriable-status-codes` with 503 and the `previous_hosts` predicate, regardless of method —, nginx with
    /// `proxy_next_upstream … non_idempotent`): the answer may be the last replica's, given after the first one
    /// ran the request. The rows such a replica can produce ([`Cause::replica_may_answer`]: a session it does
    /// not know, a 404/400 it gives a request meant for another, its own 429/503 with `Retry-After`) keep their
    /// verdict and recovery (re-initialize, wait) but prove nothing: the delivery is unknown.
    #[must_use]
    pub const fn behind_retrying_proxy(mut self) -> Self {
        if matches!(self.delivery, Delivery::NotProcessed) && self.cause.replica_may_answer() {
            self.delivery = Delivery::Unknown;
        }
        self
    }

    pub(super) const fn new(verdict: Verdict, delivery: Delivery, cause: Cause) -> Self {
        Classification { verdict, delivery, recover: None, retry_after_ms: None, cause }
    }
    pub(super) const fn recovering(delivery: Delivery, cause: Cause) -> Self {
        Classification { verdict: Verdict::Recover, delivery, recover: cause.recover(), retry_after_ms: None, cause }
    }
    pub(super) const fn waiting(mut self, retry_after_ms: Option<u64>) -> Self {
        self.retry_after_ms = retry_after_ms;
        self
    }
}
