//! What JS observed on one attempt, in the core's vocabulary, and the spec revision it was observed under.

use core::fmt;
use core::str::FromStr;

/// An MCP specification revision. Several classification rules differ between them (sessions and
/// resumability exist up to 2025-11-25; -32020/-32021/-32022 exist from 2026-07-28 on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Revision {
    /// `2025-06-18`.
    V2025_06_18,
    /// `2025-11-25`.
    V2025_11_25,
    /// `2026-07-28`: no sessions, no resumability, `resultType` on results.
    V2026_07_28,
}

impl Revision {
    /// The newest revision this crate knows; the default when a server's revision is not known.
    pub const LATEST: Revision = Revision::V2026_07_28;
    /// Every revision this crate knows, oldest first.
    pub const ALL: [Revision; 3] = [Revision::V2025_06_18, Revision::V2025_11_25, Revision::V2026_07_28];

    /// The revision's date string, as sent in `protocolVersion`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether Streamable HTTP sessions (`Mcp-Session-Id`) and SSE resumability exist in this revision.
    pub const fn has_sessions(self) -> bool {
        matches!(self, Revision::V2025_06_18 | Revision::V2025_11_25)
    }

    /// Whether a `tools/call` carries the `Mcp-Param-*` headers of the tool's `x-mcp-header` arguments (2026-07-28:
    /// a server refuses a call without them with -32020).
    pub const fn has_param_headers(self) -> bool {
        matches!(self, Revision::V2026_07_28)
    }

    /// Whether list results carry a cache lifetime (`ttlMs`, 2026-07-28 caching): a list without one is stale at
    /// once, and a client re-fetches it before trusting its annotations again.
    pub const fn caches_lists(self) -> bool {
        matches!(self, Revision::V2026_07_28)
    }

    /// The revision for a negotiated `protocolVersion`. Versions older than 2025-06-18 behave like it;
    /// dates between two known revisions behave like the older one; anything newer like [`Revision::LATEST`].
    /// Returns `None` for a string that is not a `YYYY-MM-DD` date.
    pub fn from_protocol_version(version: &str) -> Option<Revision> {
        let b = version.as_bytes();
        let shape_ok = b.len() == 10
            && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() });
        if !shape_ok {
            return None;
        }
        let n = b
            .iter()
            .filter(|c| c.is_ascii_digit())
            .fold(0u32, |n, c| n.wrapping_mul(10).wrapping_add(u32::from(c.wrapping_sub(b'0'))));
        Some(Revision::from_date(n))
    }

    /// The revision a date written as the number `YYYYMMDD` behaves as: dates between known revisions
    /// behave like the older one, dates before the first like the first.
    pub const fn from_date(yyyymmdd: u32) -> Revision {
        if yyyymmdd >= 20_260_728 {
            Revision::V2026_07_28
        } else if yyyymmdd >= 20_251_125 {
            Revision::V2025_11_25
        } else {
            Revision::V2025_06_18
        }
    }
}

impl Default for Revision {
    fn default() -> Self {
        Revision::LATEST
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Revision {
    type Err = ();
    /// Parses exactly one of the known revision strings.
    fn from_str(s: &str) -> Result<Self, ()> {
        Revision::ALL.into_iter().find(|r| r.as_str() == s).ok_or(())
    }
}

/// Whether a request that failed at the network level left this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sent {
    /// Provably not sent: connection refused, DNS failure, aborted before the request was written.
    No,
    /// May have been sent: a reset after the request was written, a browser's bare `TypeError`.
    Maybe,
}

impl Sent {
    /// Every value, in declaration order (the order of the packed codes).
    pub const ALL: [Sent; 2] = [Sent::No, Sent::Maybe];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Sent::No => "no",
            Sent::Maybe => "maybe",
        }
    }
}

/// The `resultType` of a 2026-07-28 result (absent before: `Complete`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ResultType {
    /// A finished result.
    #[default]
    Complete,
    /// The server needs input; the client answers by re-sending the request with it (a continuation).
    InputRequired,
    /// The server created a task; the work goes on and is polled, not re-sent.
    Task,
}

impl ResultType {
    /// Every result type, in declaration order (the order of the packed codes).
    pub const ALL: [ResultType; 3] = [ResultType::Complete, ResultType::InputRequired, ResultType::Task];

    /// The stable snake_case name (the `resultType` value on the wire).
    pub const fn as_str(self) -> &'static str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => "task",
        }
    }
}

/// How one `tools/call` attempt ended, as JS observed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AttemptOutcome {
    /// A JSON-RPC result arrived: the tool ran.
    Result {
        /// The result's `isError`.
        is_error: bool,
        /// The result's `resultType`.
        result_type: ResultType,
    },
    /// A JSON-RPC error object arrived (or an SDK raised one locally).
    JsonRpcError {
        /// The error's `code`.
        code: i64,
        /// For -32020 (header mismatch) and -32022 (unsupported protocol version): the client checked that the
        /// mismatch the code names is real — the tool list fetched after it changed this tool's `x-mcp-header`
        /// declarations (-32020), or the error's `supported` versions exclude the one the request carried
        /// (-32022). Without that check the code proves nothing: a tool that calls another MCP server may relay
        /// the peer's code after it acted. Ignored for every other code.
        mismatch_confirmed: bool,
    },
    /// A non-2xx HTTP response (the SDK raised it as a transport error).
    Http {
        /// The HTTP status.
        status: u16,
        /// `Retry-After`, already converted to milliseconds from now.
        retry_after_ms: Option<u64>,
        /// Whether the request carried an `Mcp-Session-Id`.
        had_session: bool,
        /// The `error.code` of a JSON-RPC error object in the response body, if the body held one
        /// (2026-07-28 `streamable-http.mdx`: the client SHOULD inspect the body of a non-2xx answer;
        /// -32020/-32021/-32022 arrive inside 4xx answers).
        jsonrpc_code: Option<i64>,
        /// [`AttemptOutcome::JsonRpcError::mismatch_confirmed`], for the `jsonrpc_code` in the body.
        mismatch_confirmed: bool,
    },
    /// The network failed before any response.
    Network {
        /// Whether the request may have left this machine.
        sent: Sent,
    },
    /// Our own per-attempt timer fired: the request was sent and no answer came in time.
    Timeout,
    /// The response stream broke after the request was sent.
    StreamBroken {
        /// Whether the server gave an SSE event id on this stream (resumption may be possible).
        event_id_seen: bool,
        /// The SSE `retry` field, if the server sent one, in milliseconds.
        retry_ms: Option<u64>,
    },
    /// The caller aborted.
    Aborted {
        /// Whether the request may have left this machine before the abort.
        sent: Sent,
    },
    /// The server's operation ledger answered instead of the tool (an `isError` result whose
    /// `_meta["dev.mcp-retry-policy/ledger"]` names the status).
    Ledger {
        /// What the ledger said.
        status: LedgerStatus,
        /// When to check back, for `in_progress`.
        retry_after_ms: Option<u64>,
    },
    /// The stdio server's process exited (a crash, an OOM kill, a signal): its transport closed.
    ProcessExited {
        /// [`Sent::Maybe`]: the request was in flight — written to the process, or on its way — when the
        /// transport closed. [`Sent::No`]: the transport had closed before this attempt handed it the request.
        sent: Sent,
    },
    /// The stdio server's process stopped answering: the attempt timed out, the process sent no message at all
    /// since the request was written, and it did not answer a `ping` within the attempt timeout either. (A
    /// process that sent anything since, or answered the ping, is a slow tool: a [`AttemptOutcome::Timeout`].)
    ProcessUnresponsive,
    /// The client did not send this attempt: the step it was admitted for cannot be taken here (a broken stream
    /// whose session is gone since cannot be resumed — its `Last-Event-ID` would replay another request's answer
    /// on the new session). Nothing left the machine and nothing was heard from the server: the breaker does not
    /// count it (a probe frees its slot), and the call goes on as the gate says for what came before (an unsafe
    /// tool whose stream broke stays unknown; a retry-safe one is sent again).
    Withheld,
}

/// What a server's operation ledger can answer instead of running the tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LedgerStatus {
    /// The same operation is running now; this copy was not run.
    InProgress,
    /// The operation's outcome is not known to the server either.
    Unknown,
    /// The operation id was already used with other input; nothing was run.
    Conflict,
    /// The ledger refused the request before any claim (a missing or malformed operation id, no
    /// authenticated tenant, input that failed validation): nothing was done; or the handler ran, failed, and
    /// the store rolled its writes back with the claim in one transaction (reason `rolled_back`): what it did
    /// outside that transaction may stand.
    Rejected,
}

impl LedgerStatus {
    /// Every status, in declaration order (the order of the packed codes).
    pub const ALL: [LedgerStatus; 4] =
        [LedgerStatus::InProgress, LedgerStatus::Unknown, LedgerStatus::Conflict, LedgerStatus::Rejected];

    /// The stable snake_case name (the `status` under the ledger's `_meta` key).
    pub const fn as_str(self) -> &'static str {
        match self {
            LedgerStatus::InProgress => "in_progress",
            LedgerStatus::Unknown => "unknown",
            LedgerStatus::Conflict => "conflict",
            LedgerStatus::Rejected => "rejected",
        }
    }
}
