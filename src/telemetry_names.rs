//! Every telemetry name the faces write — span attributes, span events, metrics — stated once. The JS face
//! imports them from the generated `names.js` (`TEL_STATUS`, …; no JS file spells one); the Rust face's
//! `tracing` macros must spell their fields as identifiers, so `tests/telemetry_names.rs` reads its sources and
//! fails on a name that is not here, or a name here that its face does not write.
//!
//! The OpenTelemetry names follow the semantic conventions for MCP (`mcp.*`, `gen_ai.*`, `error.type`,
//! `http.request.resend_count`, `rpc.response.status_code`, the `mcp.client.operation.duration` histogram); the
//! rest are this library's own (`mcp_retry_policy.*`). Pure data: no binding, clock or randomness.

/// Which face writes a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Faces {
    /// Both the JS and the Rust face.
    Both,
    /// The JS face only.
    Js,
    /// The Rust (rmcp) face only.
    Rust,
}

impl Faces {
    /// Whether the JS face writes it.
    pub const fn js(self) -> bool {
        matches!(self, Faces::Both | Faces::Js)
    }

    /// Whether the Rust face writes it.
    pub const fn rust(self) -> bool {
        matches!(self, Faces::Both | Faces::Rust)
    }
}

/// One name: the suffix of its JS constant (`TEL_…`), the name, who writes it, and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TelemetryName {
    /// The JS constant is `TEL_` + this.
    pub constant: &'static str,
    /// The name as written.
    pub name: &'static str,
    /// Which faces write it.
    pub faces: Faces,
    /// What it is.
    pub what: &'static str,
}

const fn n(constant: &'static str, name: &'static str, faces: Faces, what: &'static str) -> TelemetryName {
    TelemetryName { constant, name, faces, what }
}

/// Every name, grouped by where it is written.
pub const TELEMETRY_NAMES: [TelemetryName; 32] = [
    // The tool call's span and its attempts' (the MCP conventions).
    n("METHOD_NAME", "mcp.method.name", Faces::Both, "span attribute: `tools/call`"),
    n("TOOL_NAME", "gen_ai.tool.name", Faces::Both, "span attribute: the tool"),
    n("OPERATION_NAME", "gen_ai.operation.name", Faces::Both, "span attribute: `execute_tool`"),
    n("SESSION_ID", "mcp.session.id", Faces::Both, "span attribute: the MCP session"),
    n("PROTOCOL_VERSION", "mcp.protocol.version", Faces::Both, "span attribute: the negotiated revision"),
    n("ERROR_TYPE", "error.type", Faces::Both, "span and histogram attribute: why it did not succeed"),
    n("RESEND_COUNT", "http.request.resend_count", Faces::Both, "attempt span attribute: from the second attempt"),
    n("RPC_STATUS_CODE", "rpc.response.status_code", Faces::Both, "attempt span attribute: the JSON-RPC code"),
    n("OPERATION_DURATION", "mcp.client.operation.duration", Faces::Both, "histogram (s): one per attempt"),
    // This library's own, on the call's span.
    n("SAFETY", "mcp_retry_policy.safety", Faces::Both, "call span attribute: how safe a re-send is"),
    n("OPERATION_ID", "mcp_retry_policy.operation_id", Faces::Both, "call span attribute: the write's id"),
    n("STATUS", "mcp_retry_policy.status", Faces::Both, "call span attribute: how the call ended"),
    n("REASON", "mcp_retry_policy.reason", Faces::Both, "call span attribute and retry event: why"),
    n("ATTEMPTS", "mcp_retry_policy.attempts", Faces::Both, "call span attribute: how many attempts"),
    n("ATTEMPT", "mcp_retry_policy.attempt", Faces::Rust, "attempt span attribute: which attempt (1-based)"),
    n("DURATION_MS", "mcp_retry_policy.duration_ms", Faces::Rust, "attempt span attribute: how long it took"),
    n("DURATION_EVENT", "mcp_retry_policy.operation.duration", Faces::Rust, "event carrying the histogram"),
    n("RETRY", "mcp_retry_policy.retry", Faces::Both, "span event: a retry decision"),
    n("DELAY_MS", "mcp_retry_policy.delay_ms", Faces::Both, "retry and task event attribute: the wait"),
    n("CAUSE", "mcp_retry_policy.cause", Faces::Both, "retry event attribute: the classification's cause"),
    n("RECOVER", "mcp_retry_policy.recover", Faces::Both, "retry event attribute: the recovery step"),
    n("TASK", "mcp_retry_policy.task", Faces::Rust, "span event: a look at a created task"),
    n("TASK_ID", "mcp_retry_policy.task_id", Faces::Rust, "task event attribute: the task"),
    n("TASK_STATUS", "mcp_retry_policy.task_status", Faces::Rust, "task event attribute: its status"),
    n("JOURNAL_UNRESOLVED", "mcp_retry_policy.journal.unresolved", Faces::Js, "gauge: unresolved journal entries"),
    // The ledger's.
    n("LEDGER_ACTION", "mcp_retry_policy.ledger.action", Faces::Both, "ledger metric attribute: the tool"),
    n("LEDGER_ANSWER", "mcp_retry_policy.ledger.answer", Faces::Both, "ledger answer attribute (Rust: its event)"),
    n("LEDGER_ANSWERS", "mcp_retry_policy.ledger.answers", Faces::Both, "counter: the ledger's answers"),
    n("LEDGER_INCIDENT", "mcp_retry_policy.ledger.incident", Faces::Both, "incident attribute (Rust: its event)"),
    n("LEDGER_INCIDENTS", "mcp_retry_policy.ledger.incidents", Faces::Both, "counter: the ledger's incidents"),
    n("LEDGER_STATE", "mcp_retry_policy.ledger.state", Faces::Js, "unresolved gauge attribute: the state"),
    n("LEDGER_UNRESOLVED", "mcp_retry_policy.ledger.unresolved", Faces::Js, "gauge: unresolved ledger records"),
];
