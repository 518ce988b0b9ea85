//! Telemetry for [`RetryClient`](super::RetryClient) through [`tracing`] — the Rust twin of the npm package's
//! `client/telemetry.js`, with the same names (the OpenTelemetry semantic conventions for MCP, status:
//! Development). Without a subscriber nothing is recorded; with `tracing-opentelemetry` the spans become
//! OpenTelemetry spans (`otel.name`, `otel.kind`, `otel.status_code`, `otel.status_message` are its fields).
//! Observation only: every value is the engine's (its outcome, classification, decision) or the call's.
//!
//! | what | span / event (target `mcp_retry_policy`) | fields |
//! |---|---|---|
//! | a span per tool call | `tools/call` (`otel.name` `tools/call {tool}`, `otel.kind` `client`) | `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name` = `execute_tool`, `mcp.protocol.version`, `mcp.session.id` (with a [`SessionId`](super::SessionId)), `mcp_retry_policy.safety` / `.operation_id`; at its end `mcp_retry_policy.status` / `.reason` / `.attempts`, and `error.type` and `otel.status_code` = `ERROR` when it did not succeed (a `pending` call is not an error) |
//! | a child span per attempt | `tools/call`, the same MCP fields | `mcp_retry_policy.attempt` (1-based), `http.request.resend_count` from the second, `mcp_retry_policy.duration_ms`; `error.type` (the JSON-RPC code — also `rpc.response.status_code` —, the HTTP status, `tool_error`, or the classification's cause) |
//! | an event per attempt, in its span: the histogram `mcp.client.operation.duration` (s) | `mcp_retry_policy.operation.duration` | `histogram.mcp.client.operation.duration` (seconds, f64: `tracing-opentelemetry`'s `MetricsLayer` records it as that histogram, the other fields as its attributes), `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`, `mcp.protocol.version`, `error.type` when the attempt failed — no `mcp.session.id` (high-cardinality: on spans, not metrics, as the JS layer) |
//! | an event per retry decision, in the call span | `mcp_retry_policy.retry` | `mcp_retry_policy.delay_ms`, `.reason`, `.cause`, `.recover` |
//! | an event per look at a created task, in the call span | `mcp_retry_policy.task` | `mcp_retry_policy.task_id`, `.task_status` (`cancel_failed` when a `tasks/cancel` got no answer), `.delay_ms` (when it looks again) |
//!
//! The W3C trace context of each attempt goes in its request's `params._meta` (`traceparent`, `tracestate`,
//! `baggage`, unprefixed, as the conventions and SEP-414 say) through the app's own propagator: a
//! [`TraceContext`] in [`RetryOptions::trace_context`](super::RetryOptions::trace_context), called with the
//! attempt's span (with `tracing-opentelemetry`: `propagator.inject_context(&span.context(), carrier)`).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tracing::field::Empty;
use tracing::{Level, Span};

use crate::retry::{AttemptOutcome, Classification, FinalStatus, Reason, Recover, Safety};

/// The target of every span and event.
///
/// ```
/// use mcp_retry_policy::rmcp::telemetry::TARGET;
///
/// // e.g. an `EnvFilter` directive: `mcp_retry_policy=info`.
/// let directive = format!("{TARGET}=info");
/// assert_eq!(directive, "mcp_retry_policy=info");
/// ```
pub const TARGET: &str = "mcp_retry_policy";
const METHOD: &str = "tools/call";

type Inject = dyn Fn(&Span, &mut HashMap<String, String>) + Send + Sync;

/// The app's propagator: writes the W3C trace context of an attempt's span (`traceparent`, and `tracestate`,
/// `baggage` if it has them) into a carrier, which becomes the request's `params._meta` entries.
///
/// ```
/// use mcp_retry_policy::rmcp::{RetryOptions, TraceContext};
///
/// // With tracing-opentelemetry and the OpenTelemetry SDK's W3C propagator:
/// //     TraceContextPropagator::new().inject_context(&span.context(), carrier)
/// let propagator = TraceContext::new(|_span, carrier| {
///     carrier.insert("traceparent".into(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into());
/// });
/// let options = RetryOptions::default().trace_context(propagator);
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct TraceContext(Arc<Inject>);

impl TraceContext {
    /// A propagator from `inject(span, carrier)`.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::TraceContext;
    ///
    /// let none = TraceContext::new(|_span, _carrier| {}); // writes nothing: no `_meta` entries
    /// # let _ = none;
    /// ```
    pub fn new(inject: impl Fn(&Span, &mut HashMap<String, String>) + Send + Sync + 'static) -> Self {
        TraceContext(Arc::new(inject))
    }

    /// The carrier for `span`'s request (empty when the propagator writes nothing, e.g. no active trace).
    pub(crate) fn carrier(&self, span: &Span) -> HashMap<String, String> {
        let mut carrier = HashMap::new();
        (self.0)(span, &mut carrier);
        carrier
    }
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TraceContext(..)")
    }
}

/// The span of one tool call.
pub(crate) struct CallSpan {
    pub(crate) span: Span,
    tool: String,
    protocol_version: Option<String>,
    session_id: Option<String>,
    last_error_type: Option<String>,
}

impl CallSpan {
    /// A tool call begins.
    pub(crate) fn new(tool: &str, protocol_version: Option<&str>, session_id: Option<String>) -> Self {
        let span = tracing::span!(
            target: TARGET,
            Level::INFO,
            "tools/call",
            otel.name = %format_args!("{METHOD} {tool}"),
            otel.kind = "client",
            mcp.method.name = METHOD,
            gen_ai.tool.name = tool,
            gen_ai.operation.name = "execute_tool",
            mcp.protocol.version = protocol_version,
            mcp.session.id = session_id.as_deref(),
            mcp_retry_policy.safety = Empty,
            mcp_retry_policy.operation_id = Empty,
            mcp_retry_policy.status = Empty,
            mcp_retry_policy.reason = Empty,
            mcp_retry_policy.attempts = Empty,
            error.type = Empty,
            otel.status_code = Empty,
            otel.status_message = Empty,
        );
        CallSpan {
            span,
            tool: tool.to_string(),
            protocol_version: protocol_version.map(str::to_string),
            session_id,
            last_error_type: None,
        }
    }

    /// The tool's safety and operation id, once judged.
    pub(crate) fn resolved(&self, safety: Safety, operation_id: Option<&str>) {
        self.span.record("mcp_retry_policy.safety", safety.as_str());
        if let Some(id) = operation_id {
            self.span.record("mcp_retry_policy.operation_id", id);
        }
    }

    /// Attempt `n` (1-based) on session `session_id` (a re-initialization changes it): its span, a child of
    /// the call's.
    pub(crate) fn attempt(&self, n: u32, session_id: Option<&str>) -> Span {
        let resend = n.checked_sub(1).filter(|r| *r > 0);
        tracing::span!(
            target: TARGET,
            parent: &self.span,
            Level::INFO,
            "tools/call",
            otel.name = %format_args!("{METHOD} {}", self.tool),
            otel.kind = "client",
            mcp.method.name = METHOD,
            gen_ai.tool.name = self.tool.as_str(),
            gen_ai.operation.name = "execute_tool",
            mcp.protocol.version = self.protocol_version.as_deref(),
            mcp.session.id = session_id.or(self.session_id.as_deref()),
            mcp_retry_policy.attempt = n,
            http.request.resend_count = resend,
            mcp_retry_policy.duration_ms = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            otel.status_code = Empty,
            otel.status_message = Empty,
        )
    }

    /// How attempt `span` ended (the engine's outcome and classification) and how long it took.
    pub(crate) fn attempt_ended(
        &mut self,
        span: &Span,
        outcome: &AttemptOutcome,
        classification: &Classification,
        duration_ms: u64,
    ) {
        span.record("mcp_retry_policy.duration_ms", duration_ms);
        let error_type = attempt_error_type(outcome, classification);
        // The histogram, one per attempt (each is one MCP request), as the JS layer records it.
        tracing::event!(
            name: "mcp_retry_policy.operation.duration",
            target: TARGET,
            parent: span,
            Level::INFO,
            histogram.mcp.client.operation.duration = Duration::from_millis(duration_ms).as_secs_f64(),
            mcp.method.name = METHOD,
            gen_ai.tool.name = self.tool.as_str(),
            gen_ai.operation.name = "execute_tool",
            mcp.protocol.version = self.protocol_version.as_deref(),
            error.type = error_type.as_deref(),
        );
        if let Some(error_type) = error_type {
            span.record("error.type", error_type.as_str());
            if let AttemptOutcome::JsonRpcError { code, .. } = outcome {
                span.record("rpc.response.status_code", code.to_string().as_str());
            }
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_message", classification.cause.as_str());
            self.last_error_type = Some(error_type);
        }
    }

    /// The engine decided to retry: an event in the call span.
    pub(crate) fn retry(&self, delay_ms: u64, reason: Reason, cause: Option<&str>, recover: Option<Recover>) {
        tracing::event!(
            name: "mcp_retry_policy.retry",
            target: TARGET,
            parent: &self.span,
            Level::INFO,
            mcp_retry_policy.delay_ms = delay_ms,
            mcp_retry_policy.reason = reason.as_str(),
            mcp_retry_policy.cause = cause,
            mcp_retry_policy.recover = recover.map(Recover::as_str),
        );
    }

    /// A look at the task the call created: its status, and the wait before the next look, if there is one.
    pub(crate) fn task(&self, task_id: &str, status: &str, delay_ms: Option<u64>) {
        tracing::event!(
            name: "mcp_retry_policy.task",
            target: TARGET,
            parent: &self.span,
            Level::INFO,
            mcp_retry_policy.task_id = task_id,
            mcp_retry_policy.task_status = status,
            mcp_retry_policy.delay_ms = delay_ms,
        );
    }

    /// The call's outcome.
    pub(crate) fn end(&self, status: FinalStatus, reason: Reason, attempts: usize, message: &str) {
        self.span.record("mcp_retry_policy.status", status.as_str());
        self.span.record("mcp_retry_policy.reason", reason.as_str());
        self.span.record("mcp_retry_policy.attempts", u64::try_from(attempts).unwrap_or(u64::MAX));
        // Not an error: a success, and a write still in progress (pending).
        if !matches!(status, FinalStatus::Succeeded | FinalStatus::Pending) {
            let error_type = match status {
                FinalStatus::ToolError => "tool_error",
                _ => self.last_error_type.as_deref().unwrap_or(reason.as_str()),
            };
            self.span.record("error.type", error_type);
            self.span.record("otel.status_code", "ERROR");
            self.span.record("otel.status_message", message);
        }
    }

    /// The call could not be made (nothing was sent): `kind` is the error's kind.
    pub(crate) fn fail(&self, kind: &str, message: &str) {
        self.span.record("error.type", kind);
        self.span.record("otel.status_code", "ERROR");
        self.span.record("otel.status_message", message);
    }
}

/// The attempt's `error.type`: none for a clean result; `tool_error`; the JSON-RPC code; the HTTP status; else
/// the classification's cause.
fn attempt_error_type(outcome: &AttemptOutcome, classification: &Classification) -> Option<String> {
    match outcome {
        AttemptOutcome::Result { is_error, .. } => is_error.then(|| "tool_error".to_string()),
        AttemptOutcome::JsonRpcError { code, .. } => Some(code.to_string()),
        AttemptOutcome::Http { status, .. } => Some(status.to_string()),
        _ => Some(classification.cause.as_str().to_string()),
    }
}
