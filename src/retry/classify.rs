//! The classification table: what one attempt's outcome means, per spec revision.
//!
//! Every row cites the fact it rests on (spec text or the documented behaviour of real software, beside the
//! row; the README's "What proves 'not processed'" table lists them). The question each row answers is
//! *did the server act on the request?* — [`Delivery`] — and *what could make a re-send succeed?* —
//! [`Verdict`]. Whether a re-send is *allowed* is not decided here but in [`decide`](mod@super::decide), from
//! the delivery and the tool's [`Safety`](super::Safety).

use super::outcome::{AttemptOutcome, LedgerStatus, ResultType, Revision, Sent};

/// Whether the server acted on the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Delivery {
    /// Provably not acted on: each row of [`classify`] that says so cites its proof (a failed connect,
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
    /// with it ([`super::engine::Engine::admit_within`]); the JS layer's table of it is generated from it.
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

macro_rules! causes {
    ($($(#[$doc:meta])* $v:ident = $s:literal,)*) => {
        /// Why an outcome was classified the way it was: one stable name per row of the table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Cause { $($(#[$doc])* $v,)* }
        impl Cause {
            /// The stable snake_case name.
            pub const fn as_str(self) -> &'static str { match self { $(Cause::$v => $s,)* } }
            /// Every cause, in table order.
            pub const ALL: &'static [Cause] = &[$(Cause::$v,)*];
        }
    };
}

causes! {
    /// A complete result without `isError`.
    Result = "result",
    /// A result with `isError: true`.
    ToolError = "tool_error",
    /// `resultType: "input_required"`.
    InputRequired = "input_required",
    /// `resultType: "task"` or a created task.
    TaskCreated = "task_created",
    /// -32700.
    ParseError = "jsonrpc_parse_error",
    /// -32600.
    InvalidRequest = "jsonrpc_invalid_request",
    /// -32601.
    MethodNotFound = "jsonrpc_method_not_found",
    /// -32602.
    InvalidParams = "jsonrpc_invalid_params",
    /// -32603: the server may have acted before failing.
    InternalError = "jsonrpc_internal_error",
    /// -32002 up to 2025-11-25.
    ResourceNotFound = "jsonrpc_resource_not_found",
    /// -32020 (2026-07-28).
    HeaderMismatch = "jsonrpc_header_mismatch",
    /// -32021 (2026-07-28).
    MissingClientCapability = "jsonrpc_missing_client_capability",
    /// -32022 (2026-07-28).
    UnsupportedProtocolVersion = "jsonrpc_unsupported_protocol_version",
    /// -32042 (2025-11-25).
    UrlElicitationRequired = "jsonrpc_url_elicitation_required",
    /// Python SDK's positive 408: a request timeout.
    SdkRequestTimeout = "sdk_request_timeout",
    /// -32000..-32099 without a meaning in this revision: implementation-defined.
    ImplementationDefined = "jsonrpc_implementation_defined",
    /// A code the specification reserves without a meaning in this revision (2026-07-28: the retired
    /// -32002/-32042, and -32020..-32099 beyond the defined ones).
    ReservedCode = "jsonrpc_reserved",
    /// Any other code: application-defined.
    ApplicationDefined = "jsonrpc_application_defined",
    /// HTTP 400.
    HttpBadRequest = "http_400",
    /// HTTP 401.
    HttpUnauthorized = "http_401",
    /// HTTP 403.
    HttpForbidden = "http_403",
    /// HTTP 404 on a request with a session id (≤ 2025-11-25): the session is gone, whatever the body says.
    HttpSessionExpired = "http_404_session_expired",
    /// HTTP 400 with body -32000 on a request with a session id (≤ 2025-11-25): the session is not known to
    /// the server (the reference server and the TS SDK's example servers through 1.20 answer a lost session so).
    HttpSessionUnknown = "http_400_session_unknown",
    /// HTTP 404 otherwise.
    HttpNotFound = "http_404",
    /// HTTP 405.
    HttpMethodNotAllowed = "http_405",
    /// HTTP 408.
    HttpRequestTimeout = "http_408",
    /// HTTP 409.
    HttpConflict = "http_409",
    /// HTTP 413.
    HttpPayloadTooLarge = "http_413",
    /// HTTP 429 without `Retry-After`.
    HttpTooManyRequests = "http_429",
    /// HTTP 429 with `Retry-After`: a rate limiter's refusal before the handler.
    HttpTooManyRetryAfter = "http_429_retry_after",
    /// HTTP 500.
    HttpInternalServerError = "http_500",
    /// HTTP 502.
    HttpBadGateway = "http_502",
    /// HTTP 503 without `Retry-After`: possibly an intermediary after it forwarded the request.
    HttpServiceUnavailable = "http_503",
    /// HTTP 503 with `Retry-After`: an overloaded server's refusal.
    HttpServiceUnavailableRetryAfter = "http_503_retry_after",
    /// HTTP 504.
    HttpGatewayTimeout = "http_504",
    /// Another 4xx.
    HttpOtherClientError = "http_4xx",
    /// Another 5xx.
    HttpOtherServerError = "http_5xx",
    /// A 1xx/2xx/3xx without a JSON-RPC answer.
    HttpUnexpected = "http_unexpected",
    /// A network failure before the request left.
    NotSent = "network_not_sent",
    /// A network failure after the request may have left.
    MaybeSent = "network_maybe_sent",
    /// Our per-attempt timer fired.
    Timeout = "timeout",
    /// The stream broke after an SSE event id, on a revision with resumability.
    StreamBrokenResumable = "stream_broken_resumable",
    /// The stream broke and cannot be resumed.
    StreamBroken = "stream_broken",
    /// The caller aborted.
    Aborted = "aborted",
    /// The server's ledger: the same operation is running.
    LedgerInProgress = "ledger_in_progress",
    /// The server's ledger: the outcome is unknown to the server too.
    LedgerUnknown = "ledger_unknown",
    /// The server's ledger: the operation id was used with other input.
    LedgerConflict = "ledger_conflict",
    /// The server's ledger refused the request before any claim (operation id, tenant, validation).
    LedgerRejected = "ledger_rejected",
    /// The stdio server's process exited while the request was in flight: start a fresh process; the
    /// request may have been acted on.
    ProcessExited = "stdio_process_exited",
    /// The stdio server's process had exited before the request was handed to its transport: start a fresh
    /// process; nothing was written.
    ProcessExitedNotSent = "stdio_process_exited_not_sent",
    /// The stdio server's process stopped answering (the attempt timed out, nothing at all came from it since,
    /// and it did not answer a ping either): start a fresh process; the request may have been acted on.
    ProcessUnresponsive = "stdio_process_unresponsive",
    /// The client did not send the attempt (`AttemptOutcome::Withheld`): nothing left, nothing was heard.
    Withheld = "withheld",
}

impl Cause {
    /// What the model is told happened when this row says more than the decision's reason (for a stop
    /// after an unknown delivery, a permanent refusal or the last attempt), or `None`.
    pub const fn words(self) -> Option<&'static str> {
        match self {
            Cause::UrlElicitationRequired => {
                Some("the server needs the user to finish a step in the browser first (a URL elicitation)")
            }
            // `rejected` is said both before any claim and (reason `rolled_back`) after a handler whose writes
            // the store rolled back: the words hold for both.
            Cause::LedgerRejected => Some(
                "the server refused it: before running it (a missing or malformed operation id, no signed-in \
                 tenant, or invalid input), or after its handler failed and the server's transaction undid its \
                 writes — anything the handler did outside that transaction may stand",
            ),
            Cause::HeaderMismatch | Cause::UnsupportedProtocolVersion => Some(
                "the server answered with a header or protocol-version mismatch, which a tool can also relay from \
                 another server after it ran",
            ),
            // Read as unknown only behind a retrying proxy (`Classification::behind_retrying_proxy`).
            Cause::HttpSessionExpired | Cause::HttpSessionUnknown => Some(
                "the server no longer knew the session, an answer a second server behind a retrying proxy gives \
                 after the first one ran the request",
            ),
            Cause::HttpTooManyRetryAfter | Cause::HttpServiceUnavailableRetryAfter => Some(
                "the server asked to wait, an answer a second server behind a retrying proxy gives after the first \
                 one ran the request",
            ),
            Cause::InvalidRequest | Cause::MethodNotFound | Cause::InvalidParams | Cause::MissingClientCapability => {
                Some("the server answered with a protocol error that servers also send after the tool already ran")
            }
            // Not the `Retry-After` rows: those prove a refusal.
            Cause::HttpServiceUnavailable
            | Cause::HttpBadGateway
            | Cause::HttpGatewayTimeout
            | Cause::HttpInternalServerError
            | Cause::HttpOtherServerError
            | Cause::HttpRequestTimeout
            | Cause::HttpConflict
            | Cause::HttpTooManyRequests => Some(
                "the server or a gateway in front of it answered with an error that does not prove the request \
                 was not acted on",
            ),
            Cause::ProcessExited => Some("the server's process exited while the request was in flight"),
            Cause::ProcessUnresponsive => {
                Some("the server's process stopped answering (not even a ping) while the request was in flight")
            }
            _ => None,
        }
    }

    /// What the model is told to do next when this row decides it: after a stop whose status is
    /// `unknown` (`unknown: true`) or `failed`.
    pub const fn next_step(self, unknown: bool) -> Option<&'static str> {
        match (self, unknown) {
            (Cause::UrlElicitationRequired, true) => Some(
                "Ask the user to finish the step the server asked for; then check whether it happened before \
                 calling it again.",
            ),
            (Cause::UrlElicitationRequired, false) => {
                Some("Ask the user to finish the step the server asked for, then call it again.")
            }
            (Cause::LedgerRejected, false) => {
                Some("Fix what the server named and call again with a valid operation id.")
            }
            _ => None,
        }
    }
}

impl Cause {
    /// Whether this row's answer can come from a replica other than the one that ran the request, once a proxy
    /// re-sent it there ([`Classification::behind_retrying_proxy`]): the lost-session rows (a replica that never
    /// saw the session), a plain 400 or 404 (a replica that refuses a request meant for another), and the
    /// `Retry-After` refusals (the last replica's load, not the first's). The rows a replica gives every copy of
    /// the same request alike (a parse error, 401/403/405/413, a failed connect from this client) stand.
    pub const fn replica_may_answer(self) -> bool {
        matches!(
            self,
            Cause::HttpSessionExpired
                | Cause::HttpSessionUnknown
                | Cause::HttpBadRequest
                | Cause::HttpNotFound
                | Cause::HttpTooManyRetryAfter
                | Cause::HttpServiceUnavailableRetryAfter
        )
    }

    /// The recovery step this row of the table asks for, if any. ([`classify`] builds its classifications
    /// from it, so the two cannot disagree; the wasm hot path uses it to name the step without sending it.)
    pub const fn recover(self) -> Option<Recover> {
        match self {
            Cause::InputRequired => Some(Recover::ContinueInput),
            Cause::TaskCreated => Some(Recover::PollTask),
            Cause::HeaderMismatch => Some(Recover::RefreshTools),
            Cause::UnsupportedProtocolVersion => Some(Recover::Renegotiate),
            Cause::HttpSessionExpired | Cause::HttpSessionUnknown => Some(Recover::Reinitialize),
            // A lost stdio process: a fresh process is a re-initialization over a new transport.
            Cause::ProcessExited | Cause::ProcessExitedNotSent | Cause::ProcessUnresponsive => {
                Some(Recover::Reinitialize)
            }
            Cause::HttpUnauthorized => Some(Recover::Reauthenticate),
            Cause::StreamBrokenResumable => Some(Recover::ResumeStream),
            _ => None,
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

    const fn new(verdict: Verdict, delivery: Delivery, cause: Cause) -> Self {
        Classification { verdict, delivery, recover: None, retry_after_ms: None, cause }
    }
    const fn recovering(delivery: Delivery, cause: Cause) -> Self {
        Classification { verdict: Verdict::Recover, delivery, recover: cause.recover(), retry_after_ms: None, cause }
    }
    const fn waiting(mut self, retry_after_ms: Option<u64>) -> Self {
        self.retry_after_ms = retry_after_ms;
        self
    }
}

use Delivery::{NotProcessed, Processed, Unknown};
use Verdict::{Permanent, Transient};

/// Classifies one attempt's outcome under a spec revision. Total: every input has a row.
///
/// **Every row that says [`Delivery::NotProcessed`] cites its proof** (spec text, or documented behaviour of
/// real software), because `not_processed` licenses re-sending an unsafe tool. A row without proof says
/// [`Delivery::Unknown`]. The README's "What proves 'not processed'" table lists every proof.
pub fn classify(outcome: &AttemptOutcome, revision: Revision) -> Classification {
    match *outcome {
        AttemptOutcome::Result { is_error, result_type } => match (result_type, is_error) {
            // An input request and a task are answered by the protocol, not by retry; isError wins over
            // neither because a server that sets both is describing the continuation, not a failure.
            (ResultType::InputRequired, _) => Classification::recovering(Processed, Cause::InputRequired),
            (ResultType::Task, _) => Classification::recovering(Processed, Cause::TaskCreated),
            (ResultType::Complete, true) => Classification::new(Verdict::ToolError, Processed, Cause::ToolError),
            (ResultType::Complete, false) => Classification::new(Verdict::Success, Processed, Cause::Result),
        },
        AttemptOutcome::JsonRpcError { code, mismatch_confirmed } => classify_code(code, mismatch_confirmed, revision),
        AttemptOutcome::Http { status, retry_after_ms, had_session, jsonrpc_code, mismatch_confirmed } => {
            // A lost session first: on a request that carried a session id, the status (and for a 400 the
            // body's -32000) says the session is gone, whatever else the body says (`lost_session`).
            // Otherwise the body of a non-2xx answer is inspected (2026-07-28 streamable-http.mdx: the client
            // SHOULD): a JSON-RPC error code with a meaning of its own in this revision decides the row. A code
            // without one (-32000..-32019, an application code) says less than the status, so the status decides.
            lost_session(status, had_session, jsonrpc_code, revision)
                .or_else(|| {
                    jsonrpc_code
                        .map(|code| classify_code(code, mismatch_confirmed, revision))
                        .filter(|c| c.cause.is_specific())
                })
                .unwrap_or_else(|| classify_http(status, retry_after_ms.is_some(), revision))
                .waiting(retry_after_ms)
        }
        // Proof: the failing step was `connect` or a DNS lookup (JS reports `sent: no` only then), so no
        // byte of the request left this machine.
        AttemptOutcome::Network { sent: Sent::No } => Classification::new(Transient, NotProcessed, Cause::NotSent),
        // Not sent by the client itself: nothing left this machine (what came before still stands: the gate
        // reads the call's `maybe_delivered`).
        AttemptOutcome::Withheld => Classification::new(Transient, NotProcessed, Cause::Withheld),
        // A reset after the request was written, a stored ICMP error on a reused socket (Linux reports
        // EHOSTUNREACH on the next read), a browser's bare TypeError: the request may have arrived.
        AttemptOutcome::Network { sent: Sent::Maybe } => Classification::new(Transient, Unknown, Cause::MaybeSent),
        // A cancellation may arrive after the work completed (cancellation.mdx): a timed-out call is unknown.
        AttemptOutcome::Timeout => Classification::new(Transient, Unknown, Cause::Timeout),
        AttemptOutcome::StreamBroken { event_id_seen, retry_ms } => {
            if event_id_seen && revision.has_sessions() {
                // ≤ 2025-11-25: GET with Last-Event-ID may recover the lost response without a re-send.
                Classification::recovering(Unknown, Cause::StreamBrokenResumable).waiting(retry_ms)
            } else {
                // 2026-07-28: "a broken response stream loses the in-flight request".
                Classification::new(Transient, Unknown, Cause::StreamBroken).waiting(retry_ms)
            }
        }
        // The ledger answered for a keyed tool. Proof for each `not_processed`: our own server half
        // (`withIdempotency`) sends these answers only without running the handler.
        // in progress → this copy did not run; check back later with the same id.
        AttemptOutcome::Ledger { status: LedgerStatus::InProgress, retry_after_ms } => {
            Classification::new(Transient, NotProcessed, Cause::LedgerInProgress).waiting(retry_after_ms)
        }
        // unknown → the server does not know either (a retry with the same id lets it reconcile).
        AttemptOutcome::Ledger { status: LedgerStatus::Unknown, .. } => {
            Classification::new(Transient, Unknown, Cause::LedgerUnknown)
        }
        // conflict → the id belongs to other input; rejected → refused before any claim, or (reason
        // `rolled_back`, the `transaction` option) the handler ran and its writes were rolled back with the claim
        // in the store's own transaction (pkg-template/server/ledger.js `executeAtomically`): its database writes
        // did not take effect (the words say that effects outside the transaction may stand). Not re-sent either
        // way: permanent.
        AttemptOutcome::Ledger { status: LedgerStatus::Conflict, .. } => {
            Classification::new(Permanent, NotProcessed, Cause::LedgerConflict)
        }
        AttemptOutcome::Ledger { status: LedgerStatus::Rejected, .. } => {
            Classification::new(Permanent, NotProcessed, Cause::LedgerRejected)
        }
        AttemptOutcome::Aborted { sent } => Classification::new(
            Verdict::Cancelled,
            if sent == Sent::No { NotProcessed } else { Unknown },
            Cause::Aborted,
        ),
        // stdio (2026-07-28 `basic/transports/stdio.mdx`): when the server process exits, the requests in flight
        // are lost and the client may retry them against a fresh process. Whether one may be re-sent is the
        // gate's (`decide`): the process may have acted on a request it had read before it died, so the delivery
        // is unknown and an unsafe tool stops there.
        AttemptOutcome::ProcessExited { sent: Sent::Maybe } => {
            Classification::recovering(Unknown, Cause::ProcessExited)
        }
        // Proof: JS reports `sent: no` only when the transport had closed (the SDK fired its `onclose` and
        // dropped it) before this attempt handed it the request — the attempt then calls no SDK method at all
        // (pkg-template/client/session.js), so no byte of it reached any process.
        AttemptOutcome::ProcessExited { sent: Sent::No } => {
            Classification::recovering(NotProcessed, Cause::ProcessExitedNotSent)
        }
        // A process that answers nothing — not the request within the attempt timeout, not any other message
        // since it was written, not a `ping` within another attempt timeout — is not serving anyone: replace it
        // like a dead one. Every request gets a response (JSON-RPC 2.0 §5; ≤ 2025-11-25 ping.mdx: "The receiver
        // MUST respond promptly"; 2026-07-28 removed `ping`, so a server of that revision answers -32601 — an
        // answer all the same). The request may have been read before it stopped: unknown. (A live process with
        // a slow tool answers the ping and stays a plain timeout: JS never reports this outcome for it.)
        AttemptOutcome::ProcessUnresponsive => Classification::recovering(Unknown, Cause::ProcessUnresponsive),
    }
}

/// Classifies an outcome when the server's revision is not known (stdio, a transport that hides the
/// negotiated version): each row takes the most conservative reading across every known revision — the
/// least certain delivery, and among equals the oldest revision's row. Never assumes the newest.
///
/// One thing narrows the revisions: a request that carried an `Mcp-Session-Id` went to a server that gave it
/// one, and only revisions up to 2025-11-25 have sessions (2026-07-28 removed them), so such an HTTP answer is
/// read among those revisions only.
pub fn classify_conservatively(outcome: &AttemptOutcome) -> Classification {
    let with_session = matches!(outcome, AttemptOutcome::Http { had_session: true, .. });
    // Revision::ALL is oldest first: among equals the oldest row stays.
    let mut best = classify(outcome, Revision::V2025_06_18);
    for revision in Revision::ALL.into_iter().skip(1).filter(|r| !with_session || r.has_sessions()) {
        let c = classify(outcome, revision);
        if c.delivery.uncertainty() > best.delivery.uncertainty() {
            best = c;
        }
    }
    best
}

/// [`classify`] under a known revision, [`classify_conservatively`] without one.
pub fn classify_under(outcome: &AttemptOutcome, revision: Option<Revision>) -> Classification {
    match revision {
        Some(r) => classify(outcome, r),
        None => classify_conservatively(outcome),
    }
}

impl Cause {
    /// Whether this row gives a JSON-RPC code a meaning of its own (as opposed to "implementation- or
    /// application-defined", or reserved without a meaning): such a code in an HTTP error body decides.
    pub const fn is_specific(self) -> bool {
        !matches!(self, Cause::ImplementationDefined | Cause::ApplicationDefined | Cause::ReservedCode)
    }
}

/// -32020 (2026-07-28): the request's headers disagree with its body.
pub const HEADER_MISMATCH_CODE: i64 = -32020;
/// -32022 (2026-07-28): the server does not speak the request's protocol version.
pub const UNSUPPORTED_PROTOCOL_VERSION_CODE: i64 = -32022;

fn classify_code(code: i64, mismatch_confirmed: bool, revision: Revision) -> Classification {
    let latest = revision >= Revision::V2026_07_28;
    match code {
        // JSON-RPC 2.0 §5.1: "Invalid JSON was received by the server" — a request that could not be parsed
        // was routed to no tool (no server we know sends -32700 for a request it parsed).
        -32700 => Classification::new(Permanent, NotProcessed, Cause::ParseError),
        // -32600 and -32601 are NOT proof: the Python SDK 2.x sends both after a tool ran. It passes an
        // `MCPError` raised inside a tool through unchanged as the tools/call error
        // (src/mcp/server/mcpserver/server.py); its own `NoBackChannelError` is -32600, raised when a tool
        // calls `ctx.elicit`/sampling/roots without a back-channel (JSON-response or stateless mode, every
        // 2026-07-28 request; src/mcp/shared/exceptions.py), and -32601 comes back when the client did not
        // answer a nested request. Permanent (the same request meets the same answer), delivery unknown.
        -32600 => Classification::new(Permanent, Unknown, Cause::InvalidRequest),
        -32601 => Classification::new(Permanent, Unknown, Cause::MethodNotFound),
        // -32602 is NOT proof at any revision. The TS SDK's `Server` (1.32.2, dist/esm/server/index.js, the
        // tools/call wrapper of `setRequestHandler`) runs the handler, then throws -32602 "Invalid tools/call
        // result" when the result fails CallToolResultSchema (a content block of a type it does not know, say)
        // and "Invalid task creation result" for a bad task result: the tool ran. SDK 1.12–1.20 McpServer
        // (2025-06-18) also throws it after the tool ran, when the output fails the outputSchema
        // (src/server/mcp.ts, checked in 1.20.2). The same code also answers an unknown tool or malformed
        // params before dispatch (tools.mdx "Protocol Errors"), but nothing on the wire tells the two apart.
        // Permanent (the same request fails the same way), delivery unknown. Tested end to end in
        // tests/js/with-retry.test.mjs (a tool that ran once, answered -32602, reported unknown).
        -32602 => Classification::new(Permanent, Unknown, Cause::InvalidParams),
        // "The server may have acted before failing"; mcp-remote maps every forwarding failure here.
        -32603 => Classification::new(Transient, Unknown, Cause::InternalError),
        // 2025-06-18 and 2025-11-25 define -32002 only for resources/read ("Resource not found"); on a
        // tools/call no revision gives it a meaning we can prove, so the delivery is unknown (permanent: a
        // missing resource stays missing).
        -32002 if !latest => Classification::new(Permanent, Unknown, Cause::ResourceNotFound),
        // 2025-11-25 elicitation.mdx: the server cannot go on until the user finishes a URL elicitation;
        // "the request was not processed" is not promised, so: permanent, unknown delivery.
        -32042 if revision == Revision::V2025_11_25 => {
            Classification::new(Permanent, Unknown, Cause::UrlElicitationRequired)
        }
        // 2026-07-28 streamable-http.mdx: the server's transport rejects a request whose headers disagree with
        // its body before dispatch (-32020: call tools/list, then retry once) and refuses a version it does not
        // speak (-32022). The code alone is NOT proof: handlers send it too — the Python SDK 2.x maps
        // handler-origin errors to HTTP exactly as transport ones (src/mcp/shared/inbound.py: "consulted for
        // classifier-origin *and* handler-origin errors"), rmcp maps a handler's `ErrorData::header_mismatch`
        // to 400 (transport/streamable_http_server/tower.rs), and a tool that calls another MCP server relays
        // the peer's code after it acted. Proof is the recovery confirming the mismatch (`mismatch_confirmed`):
        // the fresh tools/list changed this tool's `x-mcp-header` declarations (the transport checks the
        // `Mcp-Param-*` headers against them before dispatch), or the error's `supported` versions exclude the
        // one the request carried. Unconfirmed, the step is still taken (a retry-safe call is re-sent after it)
        // but the delivery is unknown: an unsafe tool stops `unknown`.
        HEADER_MISMATCH_CODE if latest => {
            Classification::recovering(if mismatch_confirmed { NotProcessed } else { Unknown }, Cause::HeaderMismatch)
        }
        UNSUPPORTED_PROTOCOL_VERSION_CODE if latest => Classification::recovering(
            if mismatch_confirmed { NotProcessed } else { Unknown },
            Cause::UnsupportedProtocolVersion,
        ),
        // -32021 (a capability the client did not declare) is NOT proof: the TS SDK v2 server runs the tool
        // handler, then checks its `InputRequiredResult` and throws `MissingRequiredClientCapabilityError`
        // (packages/server/src/server/server.ts, 2.4.0); the spec (basic/index.mdx) says "if processing a
        // request requires a capability", not "before dispatch". Permanent, delivery unknown.
        -32021 if latest => Classification::new(Permanent, Unknown, Cause::MissingClientCapability),
        // Python SDK (client side, local): a timeout surfaces as 408 → unknown.
        408 => Classification::new(Transient, Unknown, Cause::SdkRequestTimeout),
        // A positive 32600 is NOT proof. The Python SDK *client* turns an HTTP 404 of a session into a local 32600
        // "Session terminated" — but neither face of this package is that client (the JS face wraps the TS SDK
        // clients, the Rust face rmcp), and the Python SDK 1.x client raised it for every 404, session or not.
        // A 32600 that reaches us came from a server: application-defined, the work may have happened (the row
        // below).
        // 2026-07-28 retired -32002 (now -32602) and -32042 and reserves -32020..-32099 for the
        // specification: a server that sends one gives it no meaning we can rely on.
        -32002 | -32042 if latest => Classification::new(Transient, Unknown, Cause::ReservedCode),
        -32099..=-32020 if latest => Classification::new(Transient, Unknown, Cause::ReservedCode),
        // -32000..-32099: implementation-defined (JSON-RPC 2.0 §5.1); 2026-07-28: "receivers must not assign
        // cross-implementation semantics to them" — the work may have happened.
        -32099..=-32000 => Classification::new(Transient, Unknown, Cause::ImplementationDefined),
        _ => Classification::new(Transient, Unknown, Cause::ApplicationDefined),
    }
}

/// A request that carried a session id met a server that no longer knows the session (≤ 2025-11-25; later
/// revisions have no sessions). Up to 2025-11-25, streamable-http.mdx: a request with a terminated session id
/// gets 404 and the client MUST start a new session — the request was not processed. What real servers send:
/// - 404, whatever the body: the TS SDK's `StreamableHTTPServerTransport` (body -32001 "Session not found"),
///   the Python SDK 2.x and FastMCP (`streamable_http_manager.py`: body **-32600** "Session not found" — so
///   the status decides, not the body's code), rmcp 3.11 (`streamable_http_server/tower.rs`: plain text).
/// - 400 with body -32000: the reference `server-everything` (2026.8.31, `src/transports/streamableHttp.ts`)
///   and servers built from the TS SDK's own examples as they were through 1.20 (`simpleStreamableHttp.ts`,
///   checked in 1.20.2; 1.32's examples answer 404 -32001) look the session id up in their own map before any
///   transport sees the request, and answer an unknown one with 400 `{"code":-32000,"message":"Bad Request: No
///   valid session ID provided"}`; the TS SDK's transport itself answers its other pre-dispatch checks with 400
///   -32000 too ("Server not initialized", "Unsupported protocol version"), which a new session also answers.
///   A second failure on the fresh session is what it is: the recovery is taken once per call.
fn lost_session(
    status: u16,
    had_session: bool,
    jsonrpc_code: Option<i64>,
    revision: Revision,
) -> Option<Classification> {
    if !had_session || !revision.has_sessions() {
        return None;
    }
    match (status, jsonrpc_code) {
        (404, _) => Some(Classification::recovering(NotProcessed, Cause::HttpSessionExpired)),
        (400, Some(-32000)) => Some(Classification::recovering(NotProcessed, Cause::HttpSessionUnknown)),
        _ => None,
    }
}

// Specific rows first, then the class ranges: the overlap is the table's shape.
#[allow(clippy::match_overlapping_arm)]
fn classify_http(status: u16, retry_after: bool, revision: Revision) -> Classification {
    match status {
        // 2026-07-28: NOT proof. The Python SDK 2.x maps errors raised by the handler to HTTP statuses at this
        // revision (src/mcp/shared/inbound.py): a 400 or a 404 can follow a tool that ran. Permanent, unknown.
        400 | 404 if !revision.has_sessions() => Classification::new(
            Permanent,
            Unknown,
            if status == 400 { Cause::HttpBadRequest } else { Cause::HttpNotFound },
        ),
        // Streamable HTTP ≤ 2025-11-25: a missing session id or a bad MCP-Protocol-Version header gets 400, an
        // invalid Origin 403 — checks the transport makes before it dispatches the message.
        400 => Classification::new(Permanent, NotProcessed, Cause::HttpBadRequest),
        // The authorization spec: a request without valid credentials gets 401 before it is handled. The
        // user or the auth provider must act; the call stops (`reauthentication_required`).
        401 => Classification::recovering(NotProcessed, Cause::HttpUnauthorized),
        403 => Classification::new(Permanent, NotProcessed, Cause::HttpForbidden),
        // (A 404 with a session id is a lost session: `lost_session`.) Without a session id, up to
        // 2025-11-25, a 404 is a wrong URL (or a proxy route): nothing there to act.
        404 => Classification::new(Permanent, NotProcessed, Cause::HttpNotFound),
        // streamable-http.mdx: 405 for a method the endpoint does not offer.
        405 => Classification::new(Permanent, NotProcessed, Cause::HttpMethodNotAllowed),
        // 408 is NOT proof: RFC 9110 §15.5.9 describes a request the server did not receive in time, but
        // servers answer 408 at their own request timeout while the work goes on
        // (ballerina-platform/ballerina-library#4102), and nothing MCP-grade says otherwise. Unknown.
        408 => Classification::new(Transient, Unknown, Cause::HttpRequestTimeout),
        // 409 is NOT proof: the idempotency-key draft's 409 concerns requests that carry an `Idempotency-Key`
        // header, which this client never sends; any other 409 is the origin's answer. Unknown.
        409 => Classification::new(Transient, Unknown, Cause::HttpConflict),
        // RFC semantics, not MCP text — RFC 9110 §15.5.14: the server refuses to process a request whose
        // content is larger than it is willing to process.
        413 => Classification::new(Permanent, NotProcessed, Cause::HttpPayloadTooLarge),
        // RFC semantics, not MCP text — RFC 6585 §4 (429) with a Retry-After: a rate limiter refusing before
        // the handler (express-rate-limit, which the TS SDK's auth router uses, sets Retry-After and never
        // calls the next handler; nginx limit_req, Envoy's local rate limit refuse before proxying). Without
        // Retry-After nothing tells a limiter's refusal from an origin's answer after it acted: unknown.
        429 if retry_after => Classification::new(Verdict::Throttled, NotProcessed, Cause::HttpTooManyRetryAfter),
        429 => Classification::new(Verdict::Throttled, Unknown, Cause::HttpTooManyRequests),
        // 5xx: an intermediary may have forwarded the request before it failed — Envoy/Istio answer an
        // upstream reset with 503 (envoyproxy/envoy#14981, istio/istio#13205: "503s cannot be automatically
        // retried due to the risky nature of non-idempotent requests"), Heroku's router sends 503 (H12)
        // while the dyno keeps working, nginx answers a reset with 502 and a timeout with 504, HAProxy
        // 502/503/504. All unknown.
        500 => Classification::new(Transient, Unknown, Cause::HttpInternalServerError),
        502 => Classification::new(Transient, Unknown, Cause::HttpBadGateway),
        // RFC 9110 §15.6.4 + §10.2.3: an overloaded or in-maintenance server MAY send Retry-After with its
        // 503. The proxies above never add one to a 503 they produce after forwarding (Envoy's local
        // replies, Heroku's H12, nginx, HAProxy: checked by the fault zoo for nginx and HAProxy), so a 503
        // with Retry-After is the refusal of a server that did not take the request on.
        503 if retry_after => Classification::new(Transient, NotProcessed, Cause::HttpServiceUnavailableRetryAfter),
        503 => Classification::new(Transient, Unknown, Cause::HttpServiceUnavailable),
        504 => Classification::new(Transient, Unknown, Cause::HttpGatewayTimeout),
        // Any other 4xx: RFC 9110 §15.5 says the client seems to have erred, not that nothing happened.
        // Permanent (the same request meets the same answer), delivery unknown.
        400..=499 => Classification::new(Permanent, Unknown, Cause::HttpOtherClientError),
        500..=599 => Classification::new(Transient, Unknown, Cause::HttpOtherServerError),
        _ => Classification::new(Transient, Unknown, Cause::HttpUnexpected),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cause_names_are_unique_snake_case() {
        let mut names: Vec<&str> = Cause::ALL.iter().map(|c| c.as_str()).collect();
        assert!(names.iter().all(|n| n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')));
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn processed_only_from_results() {
        for code in -33000..-31000 {
            for rev in Revision::ALL {
                assert_ne!(classify_code(code, true, rev).delivery, Processed, "code {code}");
            }
        }
        for status in 0..=999 {
            for rev in Revision::ALL {
                assert_ne!(classify_http(status, true, rev).delivery, Processed, "status {status}");
            }
        }
    }
}
