//! The classification table: what one attempt's outcome means, per spec revision.
//!
//! Every row cites the fact it rests on (spec text or the documented behaviour of real software, beside the
//! row; the README's "What proves 'not processed'" table lists them). The question each row answers is
//! *did the server act on the request?* — [`Delivery`] — and *what could make a re-send succeed?* —
//! [`Verdict`]. Whether a re-send is *allowed* is not decided here but in [`decide`](mod@super::decide), from
//! the delivery and the tool's [`Safety`](super::Safety).

mod cause;
mod kinds;

pub use cause::Cause;
pub use kinds::{Classification, Delivery, Recover, Verdict, ATTEMPT_REQUESTS};

use super::outcome::{AttemptOutcome, LedgerStatus, ResultType, Revision, Sent};

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
