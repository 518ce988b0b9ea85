//! [`RetryClient`]: an rmcp client peer, made safe to retry — the Rust twin of the npm package's `withRetry`.
//! Every decision (retry or not, how long, what status) is the core [`Engine`]'s; this file observes, waits
//! and acts.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ::rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, CustomRequest,
    InputRequest, InputRequiredResult, InputResponses, MetaObject, NumberOrString, RequestMetaObject, ServerRequest,
    ServerResult, Tool,
};
use ::rmcp::service::{PeerRequestOptions, RequestContext, RunningService};
use ::rmcp::{ClientHandler, Peer, RoleClient, Service, ServiceError};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::classify::{error_outcome_at, response_outcome, result_outcome, NOT_QUEUED};
use super::journal::{Journal, JournalEntry, JournalError, MemoryJournal};
use super::message::{message_for, MessageParts};
use super::session::SessionId;
use super::tasks::{created_task, task_look, TaskLook};
use super::telemetry::{CallSpan, TraceContext};
use crate::retry::{
    operation_id::uuid_v4, safety, AttemptOutcome, BreakerState, CallDriver, CallFinish, CallOptions, CallState, Cause,
    Classification, Decision, Engine, FinalStatus, FinishFacts, FinishNext, Finished, Happened, Next, OperationStatus,
    Policy, Reason, Recover, Revision, Safety, Sent as Delivered, SplitMix64, StatusDriver, StatusHappened, StatusNext,
    TaskStatus, TaskView, ToolFacts,
};

mod attempt;
mod build;
mod call;
mod end;
use end::Ended;
mod options;
mod outcome;
mod resolve;
mod state;

pub use options::RetryOptions;
pub use outcome::{AttemptRecord, CallError, CallOutcome};

/// The error of a fallible step of the Rust face (a reconnect factory, a reconcile or authorize hook): any
/// error that is `Send + Sync`.
///
/// ```
/// use mcp_retry_policy::rmcp::BoxError;
///
/// fn parse_port(text: &str) -> Result<u16, BoxError> {
///     Ok(text.parse::<u16>()?)
/// }
/// assert!(parse_port("8080").is_ok());
/// ```
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

type Connect<H> = Box<
    dyn Fn() -> Pin<Box<dyn Future<Output = Result<RunningService<RoleClient, H>, BoxError>> + Send>> + Send + Sync,
>;

struct Session<H: ClientHandler> {
    running: RunningService<RoleClient, H>,
    generation: u64,
}

/// An rmcp client whose `tools/call` is retried only where a retry is safe — the Rust twin of the npm
/// package's `withRetry`. Make one per server and share it (`Arc`): the retry budget and the circuit breaker
/// are per server. `H` is the session's `ClientHandler` (default `()`), which answers a 2026-07-28 server's
/// input requests.
///
/// ```
/// # use std::sync::Arc;
/// # use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject};
/// # use rmcp::model::{ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool};
/// # use rmcp::service::RequestContext;
/// # use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
/// # #[derive(Clone)]
/// # struct Desk;
/// # impl ServerHandler for Desk {
/// #     fn get_info(&self) -> ServerConfig {
/// #         ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
/// #     }
/// #     async fn list_tools(
/// #         &self,
/// #         _: Option<PaginatedRequestParams>,
/// #         _: RequestContext<RoleServer>,
/// #     ) -> Result<ListToolsResult, ErrorData> {
/// #         let tool = Tool::new("create_ticket", "Open a ticket", Arc::new(JsonObject::new()));
/// #         Ok(ListToolsResult::with_all_items(vec![tool]))
/// #     }
/// #     async fn call_tool(
/// #         &self,
/// #         _: CallToolRequestParams,
/// #         _: RequestContext<RoleServer>,
/// #     ) -> Result<CallToolResponse, ErrorData> {
/// #         Ok(CallToolResult::success(vec![ContentBlock::text("opened T-1")]).into())
/// #     }
/// # }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_retry_policy::rmcp::BoxError> {
/// # // An in-process server over a pipe, so that the example runs.
/// # let (to_server, to_client) = tokio::io::duplex(1 << 16);
/// # tokio::spawn(async move {
/// #     if let Ok(s) = Desk.serve(to_server).await {
/// #         let _ = s.waiting().await;
/// #     }
/// # });
/// # let running = ().serve(to_client).await?;
/// use mcp_retry_policy::retry::{FinalStatus, Safety};
/// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
///
/// // `running`: a connected rmcp client — `().serve(transport).await?`.
/// let client = Arc::new(RetryClient::new(running, RetryOptions::default().tool("create_ticket", Safety::Keyed)));
/// let call = CallToolRequestParams::new("create_ticket")
///     .with_arguments(serde_json::json!({ "title": "Printer on fire" }).as_object().cloned().unwrap_or_default());
/// let outcome = client.call_tool_for(call, Some("tool-call-1")).await?;
/// assert_eq!(outcome.status, FinalStatus::Succeeded);
/// assert!(outcome.operation_id.is_some()); // keyed: one id, journaled before the first send
/// # Ok(())
/// # }
/// ```
pub struct RetryClient<H: ClientHandler = ()> {
    session: tokio::sync::RwLock<Session<H>>,
    connect: Option<Connect<H>>,
    engine: Mutex<Engine>,
    random: Mutex<SplitMix64>,
    tools: tokio::sync::Mutex<Option<HashMap<String, Tool>>>,
    journal: Arc<dyn Journal>,
    options: RetryOptions,
    origin: Instant,
    session_id: Option<SessionId>,
}

struct Op {
    name: String,
    safety: Safety,
    operation_id: Option<String>,
    arguments: Option<serde_json::Map<String, Value>>,
}

struct Sent {
    outcome: AttemptOutcome,
    result: Option<CallToolResult>,
    task: Option<TaskLook>,
    input: Option<InputRequiredResult>,
    error: Option<String>,
}

/// What the next round of a 2026-07-28 multi round-trip call carries: the answers, and the server's
/// `requestState` exactly as it sent it.
#[derive(Clone, Default)]
struct Round {
    responses: Option<InputResponses>,
    request_state: Option<String>,
}

/// Why an input round could not be answered.
struct Unanswered {
    /// No handler for a request's method (the client's handler said `method not found`, or rmcp has no such
    /// input request).
    handler_missing: bool,
    /// The call's deadline passed while the handlers ran.
    timed_out: bool,
    error: Option<String>,
}

/// The kinds of input request the client declared it answers.
#[derive(Clone, Copy)]
struct Answerable {
    elicitation: bool,
    sampling: bool,
    roots: bool,
}

impl Answerable {
    fn any(self) -> bool {
        self.elicitation || self.sampling || self.roots
    }
}

/// `f`, unless the caller cancels first (`None`).
async fn until<F: Future>(cancel: &CancellationToken, f: F) -> Option<F::Output> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        out = f => Some(out),
    }
}

/// What the core's driver needs of a task's look.
fn task_view(t: &TaskLook) -> TaskView {
    TaskView { status: t.status, poll_interval_ms: t.poll_interval_ms }
}

/// The attempt the caller cancelled: `sent` says whether the request may have left.
fn aborted(sent: Delivered) -> AttemptOutcome {
    AttemptOutcome::Aborted { sent }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    // No OS randomness (never seen on the targets this builds for): a clock-derived seed still spreads jitter.
    if getrandom::fill(&mut b).is_err() {
        let t = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        return SplitMix64::new(t as u64).next_u64();
    }
    u64::from_le_bytes(b)
}

/// A new operation id: a UUID v4 from 16 bytes of OS randomness (what [`RetryClient`] gives a keyed call
/// whose arguments carry none).
///
/// ```
/// use mcp_retry_policy::rmcp::new_operation_id;
///
/// let id = new_operation_id()?;
/// assert_eq!(id.len(), 36); // 8-4-4-4-12 hex digits
/// # Ok::<(), mcp_retry_policy::rmcp::JournalError>(())
/// ```
pub fn new_operation_id() -> Result<String, JournalError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| JournalError::new(format!("no randomness for an operation id: {e}")))?;
    Ok(uuid_v4(b))
}

fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
