//! How one rmcp `tools/call` attempt ended, in the core's vocabulary ([`AttemptOutcome`]) — the Rust twin of the
//! npm package's `client/attempt.js`. Observation only: the meaning of each outcome is the core's
//! ([`classify`](crate::retry::classify())), never decided here.
//!
//! Sources are rmcp 3.11.0 (`src/service.rs`, `src/transport/streamable_http_client.rs`,
//! `src/transport/common/reqwest/streamable_http_client.rs`) and reqwest 0.13. **Every row that can lead to
//! `not_processed` cites what proves the request did not reach the server**; any error without such proof is
//! read as "maybe sent", which the core classifies `unknown`.
//!
//! | rmcp error | outcome | why |
//! |---|---|---|
//! | the request was never queued (`send_request_with_option` returned `Err`) | network, not sent | rmcp returns before its `tx.send` to the service loop succeeds (`Peer::send_request_with_option_and_subscription`): nothing was handed to the transport |
//! | `ServiceError::McpError(e)` | JSON-RPC error `e.code` | the server's JSON-RPC error object, from a 2xx answer or a non-2xx JSON body (the reqwest client turns a non-2xx body holding a JSON-RPC error into that message, the status dropped) |
//! | `ServiceError::Timeout` | timeout | our own per-attempt timer (`PeerRequestOptions::timeout`; rmcp then sends `notifications/cancelled`) |
//! | `StreamableHttpError::HttpStatus { status, retry_after }` | HTTP `status`, `Retry-After` in delta-seconds or as an HTTP date ([`http_date`](mod@super::http_date)) | the reqwest client's 429/5xx without a JSON-RPC body |
//! | `StreamableHttpError::SessionExpired` | HTTP 404 on a request with a session id | the reqwest client returns it only for a 404 answer to a POST that carried `Mcp-Session-Id` (`session_was_attached`) |
//! | `StreamableHttpError::AuthRequired` | HTTP 401 | a 401 with `WWW-Authenticate` |
//! | `StreamableHttpError::InsufficientScope` | HTTP 403 | a 403 with `WWW-Authenticate` |
//! | `StreamableHttpError::UnexpectedServerResponse("HTTP <status>: …")` | HTTP `<status>` | any other non-2xx answer without a JSON-RPC body (the reqwest client's message format) |
//! | `StreamableHttpError::Client(e)`, `e.is_connect()` and an `io::ErrorKind::ConnectionRefused` in its sources | network, not sent | reqwest says the failure is in connecting (`is_connect`), and the connection was refused (`ECONNREFUSED`, reported by `connect(2)`): the TCP handshake failed, so no byte of the request was written — the same proof as `attempt.js`'s `ECONNREFUSED` at `connect` |
//! | any other error (a reset, a body cut mid-way, `TransportClosed` after queueing, `SessionRecoveryTimeout` — rmcp: "the server may have processed the POST" —, `ReinitializationFailed`, `UnexpectedResponse`, …) | network, maybe sent | no proof the server did not act |

use std::error::Error as StdError;
use std::time::{SystemTime, UNIX_EPOCH};

use ::rmcp::model::{CallToolResult, ServerResult};
use ::rmcp::transport::streamable_http_client::StreamableHttpError;
use ::rmcp::ServiceError;

use super::http_date::parse_http_date;
use super::tasks::created_task;
use crate::retry::{AttemptOutcome, LedgerStatus, ResultType, Sent};
use crate::vocab::LEDGER_META_KEY;

/// The longest server-given wait read from a `Retry-After` or a ledger hint: a day (as `attempt.js`).
///
/// ```
/// use mcp_retry_policy::rmcp::classify::{retry_after_ms, MAX_HINT_MS};
///
/// assert_eq!(retry_after_ms("999999999"), Some(MAX_HINT_MS)); // a day at most
/// ```
pub const MAX_HINT_MS: u64 = 86_400_000;

/// The outcome of an attempt whose request could not even be queued: nothing was sent.
///
/// ```
/// use mcp_retry_policy::retry::{AttemptOutcome, Sent};
/// use mcp_retry_policy::rmcp::classify::NOT_QUEUED;
///
/// assert_eq!(NOT_QUEUED, AttemptOutcome::Network { sent: Sent::No });
/// ```
pub const NOT_QUEUED: AttemptOutcome = AttemptOutcome::Network { sent: Sent::No };

/// The outcome of an attempt that returned a result (or the server ledger's answer in its place).
///
/// ```
/// use mcp_retry_policy::retry::{AttemptOutcome, ResultType};
/// use mcp_retry_policy::rmcp::classify::result_outcome;
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// let said_no = CallToolResult::error(vec![ContentBlock::text("no such customer")]);
/// assert_eq!(result_outcome(&said_no), AttemptOutcome::Result { is_error: true, result_type: ResultType::Complete });
/// ```
pub fn result_outcome(result: &CallToolResult) -> AttemptOutcome {
    let is_error = result.is_error == Some(true);
    if is_error {
        if let Some(ledger) = result.meta.as_ref().and_then(|m| m.get(LEDGER_META_KEY)) {
            let status = ledger.get("status").and_then(|s| s.as_str());
            if let Some(status) = LedgerStatus::ALL.into_iter().find(|l| Some(l.as_str()) == status) {
                let retry_after_ms =
                    ledger.get("retryAfterMs").and_then(serde_json::Value::as_u64).filter(|ms| *ms <= MAX_HINT_MS);
                return AttemptOutcome::Ledger { status, retry_after_ms };
            }
        }
    }
    AttemptOutcome::Result { is_error, result_type: ResultType::Complete }
}

/// The outcome of an answer to `tools/call`: a complete result, a 2026-07-28 input request, or a created task.
///
/// ```
/// use mcp_retry_policy::retry::{AttemptOutcome, ResultType};
/// use mcp_retry_policy::rmcp::classify::response_outcome;
/// use rmcp::model::{CallToolResult, ServerResult};
///
/// let answer = ServerResult::CallToolResult(CallToolResult::success(vec![]));
/// assert_eq!(response_outcome(&answer), AttemptOutcome::Result { is_error: false, result_type: ResultType::Complete });
/// ```
pub fn response_outcome(response: &ServerResult) -> AttemptOutcome {
    match response {
        ServerResult::CallToolResult(r) => result_outcome(r),
        ServerResult::InputRequiredResult(_) => {
            AttemptOutcome::Result { is_error: false, result_type: ResultType::InputRequired }
        }
        ServerResult::CreateTaskResult(_) => AttemptOutcome::Result { is_error: false, result_type: ResultType::Task },
        // A 2025-11-25 created task (`{ task: { taskId, status } }`), which rmcp 3.11 has no type for.
        ServerResult::CustomResult(_) if created_task(response).is_some() => {
            AttemptOutcome::Result { is_error: false, result_type: ResultType::Task }
        }
        // A JSON-RPC response of another shape: the server answered, but not as a tool result. Nothing proves
        // the tool did not run.
        _ => AttemptOutcome::Network { sent: Sent::Maybe },
    }
}

/// The outcome of an attempt that was queued and then failed (the request may have left), a `Retry-After`
/// date read against the wall clock now.
///
/// ```
/// use std::time::Duration;
/// use mcp_retry_policy::retry::AttemptOutcome;
/// use mcp_retry_policy::rmcp::classify::error_outcome;
/// use rmcp::ServiceError;
///
/// let timed_out = ServiceError::Timeout { timeout: Duration::from_secs(30) };
/// assert_eq!(error_outcome(&timed_out), AttemptOutcome::Timeout); // the core reads it as unknown
/// ```
pub fn error_outcome(error: &ServiceError) -> AttemptOutcome {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0));
    error_outcome_at(error, now)
}

/// [`error_outcome`], a `Retry-After` date read against `now_unix_ms` (milliseconds since the Unix epoch).
///
/// ```
/// use mcp_retry_policy::retry::{AttemptOutcome, Sent};
/// use mcp_retry_policy::rmcp::classify::error_outcome_at;
/// use rmcp::ServiceError;
///
/// // The transport closed after the request was queued: it may have been sent.
/// let closed = error_outcome_at(&ServiceError::TransportClosed, 1_700_000_000_000);
/// assert_eq!(closed, AttemptOutcome::Network { sent: Sent::Maybe });
/// ```
pub fn error_outcome_at(error: &ServiceError, now_unix_ms: u64) -> AttemptOutcome {
    const MAYBE: AttemptOutcome = AttemptOutcome::Network { sent: Sent::Maybe };
    match error {
        ServiceError::McpError(e) => {
            AttemptOutcome::JsonRpcError { code: i64::from(e.code.0), mismatch_confirmed: false }
        }
        ServiceError::Timeout { .. } => AttemptOutcome::Timeout,
        ServiceError::TransportSend(dynamic) => {
            match dynamic.error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                Some(http) => http_outcome(http, now_unix_ms),
                None => MAYBE,
            }
        }
        _ => MAYBE,
    }
}

fn http(status: u16, retry_after_ms: Option<u64>, had_session: bool) -> AttemptOutcome {
    AttemptOutcome::Http { status, retry_after_ms, had_session, jsonrpc_code: None, mismatch_confirmed: false }
}

fn http_outcome(error: &StreamableHttpError<reqwest::Error>, now_unix_ms: u64) -> AttemptOutcome {
    match error {
        StreamableHttpError::HttpStatus(s) => {
            http(s.status, s.retry_after.as_deref().and_then(|v| retry_after_ms_at(v, now_unix_ms)), false)
        }
        StreamableHttpError::SessionExpired => http(404, None, true),
        StreamableHttpError::AuthRequired(_) => http(401, None, false),
        StreamableHttpError::InsufficientScope(_) => http(403, None, false),
        StreamableHttpError::UnexpectedServerResponse(text) => match status_in(text) {
            Some(status) => http(status, None, false),
            None => AttemptOutcome::Network { sent: Sent::Maybe },
        },
        StreamableHttpError::Client(e) if refused_at_connect(e) => AttemptOutcome::Network { sent: Sent::No },
        _ => AttemptOutcome::Network { sent: Sent::Maybe },
    }
}

/// `"HTTP 400 Bad Request: …"` → 400 (the reqwest client's `UnexpectedServerResponse` for a non-2xx answer).
fn status_in(text: &str) -> Option<u16> {
    let rest = text.strip_prefix("HTTP ")?;
    let digits = rest.get(..3)?;
    let status: u16 = digits.parse().ok()?;
    let after = rest.get(3..)?;
    ((100..=999).contains(&status) && (after.starts_with(' ') || after.starts_with(':'))).then_some(status)
}

/// Whether reqwest failed in connecting, with the connection refused: no byte of the request was written.
fn refused_at_connect(error: &reqwest::Error) -> bool {
    if !error.is_connect() {
        return false;
    }
    let mut source: Option<&(dyn StdError + 'static)> = error.source();
    for _ in 0..8 {
        let Some(e) = source else { return false };
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = e.source();
    }
    false
}

/// `Retry-After` → milliseconds from `now_unix_ms` (at most [`MAX_HINT_MS`]), as the JS `parseRetryAfter`:
/// delta-seconds, or an HTTP date in any of the three formats RFC 9110 §5.6.7 has a recipient accept (a date
/// already past is 0: come back now). Anything else is no `Retry-After` (the core then reads the answer as one
/// without it, the more cautious row).
///
/// ```
/// use mcp_retry_policy::rmcp::classify::retry_after_ms_at;
///
/// let now = 784_111_767_000; // Sun, 06 Nov 1994 08:49:27 GMT
/// assert_eq!(retry_after_ms_at("Sun, 06 Nov 1994 08:49:37 GMT", now), Some(10_000));
/// assert_eq!(retry_after_ms_at("120", now), Some(120_000));
/// assert_eq!(retry_after_ms_at("soon", now), None);
/// ```
pub fn retry_after_ms_at(value: &str, now_unix_ms: u64) -> Option<u64> {
    match retry_after_ms(value) {
        Some(ms) => Some(ms),
        None => parse_http_date(value, now_unix_ms).map(|at| at.saturating_sub(now_unix_ms).min(MAX_HINT_MS)),
    }
}

/// `Retry-After` in delta-seconds → milliseconds (at most [`MAX_HINT_MS`]); an HTTP date is
/// [`retry_after_ms_at`]'s.
///
/// ```
/// use mcp_retry_policy::rmcp::classify::retry_after_ms;
///
/// assert_eq!(retry_after_ms("3"), Some(3_000));
/// assert_eq!(retry_after_ms("-1"), None);
/// ```
pub fn retry_after_ms(value: &str) -> Option<u64> {
    let s = value.trim();
    if s.is_empty() || s.len() > 12 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = s.parse().ok()?;
    Some(secs.saturating_mul(1000).min(MAX_HINT_MS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_text() {
        assert_eq!(status_in("HTTP 400 Bad Request: nope"), Some(400));
        assert_eq!(status_in("HTTP 413: x"), Some(413));
        assert_eq!(status_in("HTTP 4000: x"), None);
        assert_eq!(status_in("invalid www-authenticate header value"), None);
    }

    #[test]
    fn retry_after() {
        assert_eq!(retry_after_ms("3"), Some(3000));
        assert_eq!(retry_after_ms(" 0 "), Some(0));
        assert_eq!(retry_after_ms("99999999999"), Some(MAX_HINT_MS));
        assert_eq!(retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(retry_after_ms("-1"), None);
    }

    #[test]
    fn retry_after_as_a_date() {
        // 2015-10-21T07:28:00Z, MDN's example, in the three formats; `now` is fixed, never the clock.
        const AT: u64 = 1_445_412_480_000;
        for date in ["Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed Oct 21 07:28:00 2015"] {
            assert_eq!(retry_after_ms_at(date, AT - 90_000), Some(90_000), "{date}");
            // Already past: come back now (0), not "no Retry-After".
            assert_eq!(retry_after_ms_at(date, AT + 5_000), Some(0), "{date}");
            assert_eq!(retry_after_ms_at(date, AT), Some(0), "{date}");
            // Far ahead: capped at a day, as delta-seconds are.
            assert_eq!(retry_after_ms_at(date, AT - 2 * MAX_HINT_MS), Some(MAX_HINT_MS), "{date}");
        }
        assert_eq!(retry_after_ms_at("120", AT), Some(120_000));
        for garbage in ["", "soon", "Wed, 21 Oct 2015 07:28:00 PST", "2015-10-21T07:28:00Z", "1.5", "-1"] {
            assert_eq!(retry_after_ms_at(garbage, AT), None, "{garbage:?}");
        }
    }

    #[test]
    fn mcp_errors_and_timeouts() {
        let e = ServiceError::McpError(::rmcp::model::ErrorData::internal_error("x", None));
        assert_eq!(error_outcome(&e), AttemptOutcome::JsonRpcError { code: -32603, mismatch_confirmed: false });
        let t = ServiceError::Timeout { timeout: std::time::Duration::from_millis(5) };
        assert_eq!(error_outcome(&t), AttemptOutcome::Timeout);
        assert_eq!(error_outcome(&ServiceError::TransportClosed), AttemptOutcome::Network { sent: Sent::Maybe });
    }
}
