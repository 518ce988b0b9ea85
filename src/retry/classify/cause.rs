//! Why an outcome was classified the way it was: the rows of the table by their stable names, their words for
//! the model, what each recovers with.

use super::Recover;

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
    /// re-sent it there ([`Classification::behind_retrying_proxy`](super::Classification::behind_retrying_proxy)): the lost-session rows (a replica that never
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

    /// The recovery step this row of the table asks for, if any. ([`classify`](super::classify) builds its classifications
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

impl Cause {
    /// Whether this row gives a JSON-RPC code a meaning of its own (as opposed to "implementation- or
    /// application-defined", or reserved without a meaning): such a code in an HTTP error body decides.
    pub const fn is_specific(self) -> bool {
        !matches!(self, Cause::ImplementationDefined | Cause::ApplicationDefined | Cause::ReservedCode)
    }
}
