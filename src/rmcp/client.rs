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
    operation_id::uuid_v4, safety, AttemptOutcome, BreakerState, CallDriver, CallOptions, CallState, Cause,
    Classification, Decision, Engine, FinalStatus, Happened, Next, OperationStatus, Policy, Reason, Recover, Revision,
    Safety, Sent as Delivered, SplitMix64, StatusDriver, StatusHappened, StatusNext, TaskStatus, TaskView, ToolFacts,
};

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

/// How a [`RetryClient`] treats a server and its tools.
///
/// ```
/// use mcp_retry_policy::retry::Safety;
/// use mcp_retry_policy::rmcp::RetryOptions;
///
/// let options = RetryOptions::default()
///     .trusted(true) // this server's annotations (and an `operation_id` in a schema) count
///     .tool("send_email", Safety::Unsafe); // a per-tool override wins
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct RetryOptions {
    /// The retry policy (attempts, backoff, timeouts, budget, breaker).
    pub policy: Policy,
    /// Whether the server's tool annotations are believed (`false`: every tool is unsafe unless overridden; the
    /// spec: "clients MUST consider tool annotations to be untrusted unless they come from trusted servers").
    pub trusted: bool,
    /// Per-tool safety that wins over anything the server says.
    pub tools: HashMap<String, Safety>,
    /// The argument that carries the operation id (default `operation_id`).
    pub operation_id_argument: String,
    /// The server's spec revision, when the app knows it better than the negotiated `protocolVersion`.
    pub revision: Option<Revision>,
    /// This server's identity in the journal (e.g. its URL), so entries are not confused across servers.
    pub server: Option<String>,
    /// The jitter seed (default: drawn from the OS). Same seed, same delays.
    pub seed: Option<u64>,
    /// Whether a journal entry keeps the call's arguments (default `true`).
    pub journal_arguments: bool,
    /// The server's status tool (default `operation_status`, the ledger's), or `None`: a keyed write that ends
    /// `unknown` or `pending` is looked up there — never re-sent — when the server lists it.
    pub status_tool: Option<String>,
    /// Tools always asked to run as a 2025-11-25 task (`params.task`), each with the ttl (ms) to ask for, if
    /// any. rmcp 3.11's `Tool` does not carry `execution.taskSupport`, so a tool that requires it is named here.
    pub task_tools: HashMap<String, Option<u64>>,
    /// The app's propagator for the W3C trace context each attempt carries in `params._meta` (the JS layer's
    /// `propagation.inject`); without it nothing is injected.
    pub trace_context: Option<TraceContext>,
    /// The server sits behind a proxy that may retry a POST on another replica (Envoy/Istio's default retry
    /// policy, nginx `proxy_next_upstream … non_idempotent`): a lost session and a 429/503 with `Retry-After`
    /// still recover but no longer prove "not processed" for an unsafe tool (default `false`;
    /// `Engine::set_behind_retrying_proxy`).
    pub behind_retrying_proxy: bool,
}

impl Default for RetryOptions {
    fn default() -> Self {
        RetryOptions {
            policy: Policy::default(),
            trusted: false,
            tools: HashMap::new(),
            operation_id_argument: "operation_id".to_string(),
            revision: None,
            server: None,
            seed: None,
            journal_arguments: true,
            status_tool: Some(super::ledger::STATUS_TOOL_NAME.to_string()),
            task_tools: HashMap::new(),
            trace_context: None,
            behind_retrying_proxy: false,
        }
    }
}

impl RetryOptions {
    /// Believe (or not) the server's tool annotations — and an `operation_id` its tools' input schemas declare,
    /// which makes such a tool keyed (default `false`: untrusted, every tool is `unsafe` unless overridden).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// // Your own server, or one you vet: its annotations and schemas count.
    /// let options = RetryOptions::default().trusted(true);
    /// assert!(options.trusted);
    /// ```
    pub fn trusted(mut self, trusted: bool) -> Self {
        self.trusted = trusted;
        self
    }

    /// Overrides one tool's safety: it wins over anything the server says, trusted or not.
    ///
    /// ```
    /// use mcp_retry_policy::retry::Safety;
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// let options = RetryOptions::default()
    ///     .tool("search_tickets", Safety::ReadOnly) // retried after any failure
    ///     .tool("create_ticket", Safety::Keyed) // one operation id per intended call, re-sent with it
    ///     .tool("send_email", Safety::Unsafe); // never re-sent once it may have left
    /// assert_eq!(options.tools.get("create_ticket"), Some(&Safety::Keyed));
    /// ```
    pub fn tool(mut self, name: impl Into<String>, safety: Safety) -> Self {
        self.tools.insert(name.into(), safety);
        self
    }

    /// Says the server sits behind a proxy that may retry a POST on another replica
    /// ([`RetryOptions::behind_retrying_proxy`]).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// // An Envoy/Istio mesh with its default retry policy in front of the server.
    /// let options = RetryOptions::default().behind_retrying_proxy(true);
    /// assert!(options.behind_retrying_proxy);
    /// ```
    pub fn behind_retrying_proxy(mut self, on: bool) -> Self {
        self.behind_retrying_proxy = on;
        self
    }

    /// The retry policy (attempts, backoff, timeouts, budget, breaker): [`Policy::default`], a [`Policy`] you
    /// fill in, or one [`Policy::new`] checked from [`PolicyOptions`](crate::retry::PolicyOptions).
    ///
    /// ```
    /// use mcp_retry_policy::retry::{Policy, PolicyOptions};
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// # fn main() -> Result<(), mcp_retry_policy::retry::PolicyError> {
    /// let policy = Policy::new(&PolicyOptions {
    ///     max_attempts: Some(5),
    ///     attempt_timeout_ms: Some(10_000),
    ///     total_timeout_ms: Some(60_000),
    ///     ..PolicyOptions::default()
    /// })?;
    /// let options = RetryOptions::default().policy(policy);
    /// assert_eq!(options.policy.max_attempts, 5);
    /// # Ok(()) }
    /// ```
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The server's identity in the journal (e.g. its URL), so that one journal can serve several servers.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// let options = RetryOptions::default().server("https://tickets.example.com/mcp");
    /// assert_eq!(options.server.as_deref(), Some("https://tickets.example.com/mcp"));
    /// ```
    pub fn server(mut self, server: impl Into<String>) -> Self {
        self.server = Some(server.into());
        self
    }

    /// The jitter seed (default: drawn from the OS). Same seed, same delays: for tests.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// let options = RetryOptions::default().seed(42);
    /// assert_eq!(options.seed, Some(42));
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Asks tool `name` to run as a task (2025-11-25 `params.task`, with `ttl_ms` if given): a created task is
    /// followed to its end within the call's deadline, never sent again. An answer that creates a task is
    /// followed whether or not it was asked for.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// let options = RetryOptions::default().task("render_report", Some(600_000)); // keep it 10 min
    /// assert_eq!(options.task_tools.get("render_report"), Some(&Some(600_000)));
    /// ```
    pub fn task(mut self, name: impl Into<String>, ttl_ms: Option<u64>) -> Self {
        self.task_tools.insert(name.into(), ttl_ms);
        self
    }

    /// Injects each attempt's W3C trace context into its `params._meta` through `propagator` (module
    /// [`telemetry`](super::telemetry)).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::{RetryOptions, TraceContext};
    ///
    /// // With tracing-opentelemetry: `propagator.inject_context(&span.context(), carrier)`.
    /// let propagator = TraceContext::new(|_span, carrier| {
    ///     carrier.insert("traceparent".into(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into());
    /// });
    /// let options = RetryOptions::default().trace_context(propagator);
    /// assert!(options.trace_context.is_some());
    /// ```
    pub fn trace_context(mut self, propagator: TraceContext) -> Self {
        self.trace_context = Some(propagator);
        self
    }

    /// The argument that carries the operation id (default `operation_id`; the server's must match).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// let options = RetryOptions::default().operation_id_argument("idempotency_key");
    /// assert_eq!(options.operation_id_argument, "idempotency_key");
    /// ```
    pub fn operation_id_argument(mut self, name: impl Into<String>) -> Self {
        self.operation_id_argument = name.into();
        self
    }

    /// The server's spec revision, when the app knows it better than the negotiated `protocolVersion`.
    ///
    /// ```
    /// use mcp_retry_policy::retry::Revision;
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// let options = RetryOptions::default().revision(Revision::V2025_06_18);
    /// assert_eq!(options.revision, Some(Revision::V2025_06_18));
    /// ```
    pub fn revision(mut self, revision: Revision) -> Self {
        self.revision = Some(revision);
        self
    }

    /// Whether a journal entry keeps the call's arguments (default `true`; `false` when they hold secrets the
    /// journal file should not).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// let options = RetryOptions::default().journal_arguments(false);
    /// assert!(!options.journal_arguments);
    /// ```
    pub fn journal_arguments(mut self, keep: bool) -> Self {
        self.journal_arguments = keep;
        self
    }

    /// The server's status tool (default `Some("operation_status")`, the ledger's), or `None` for none: a
    /// keyed write that ends `unknown` or `pending` is looked up there — never re-sent — when the server lists
    /// it.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::RetryOptions;
    ///
    /// let options = RetryOptions::default().status_tool(Some("ticket_status".to_string()));
    /// assert_eq!(options.status_tool.as_deref(), Some("ticket_status"));
    /// let without = RetryOptions::default().status_tool(None);
    /// assert_eq!(without.status_tool, None);
    /// ```
    pub fn status_tool(mut self, name: Option<String>) -> Self {
        self.status_tool = name;
        self
    }
}

/// One attempt of a call, as it went ([`CallOutcome::attempts`]).
///
/// ```
/// use mcp_retry_policy::rmcp::CallOutcome;
///
/// fn log_attempts(outcome: &CallOutcome) {
///     for a in &outcome.attempts {
///         // e.g. "attempt 1: 31 ms, cause connection_reset, decision Retry { delay_ms: 180, .. }"
///         println!("attempt {}: {} ms, cause {}, decision {:?}", a.attempt, a.duration_ms, a.classification.cause.as_str(), a.decision);
///     }
/// }
/// # let _ = log_attempts;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptRecord {
    /// 1 for the first.
    pub attempt: u32,
    /// How long it took.
    pub duration_ms: u64,
    /// How it ended, in the core's vocabulary.
    pub outcome: AttemptOutcome,
    /// What the core made of it.
    pub classification: Classification,
    /// What the core decided next.
    pub decision: Decision,
}

/// How a call ended ([`RetryClient::call_tool`]): the same `CallOutcome` as the npm package's. Match on
/// [`status`](Self::status) ([`FinalStatus`] lives in `mcp_retry_policy::retry`); [`message`](Self::message)
/// is what to tell the model when it did not simply succeed.
///
/// ```
/// use mcp_retry_policy::retry::FinalStatus;
/// use mcp_retry_policy::rmcp::CallOutcome;
/// use rmcp::model::CallToolResult;
///
/// /// What the model gets back for one tool call.
/// fn for_the_model(outcome: CallOutcome) -> CallToolResult {
///     match (outcome.status, outcome.result) {
///         // The tool answered (a success, or the tool's own error): its result, as is.
///         (FinalStatus::Succeeded | FinalStatus::ToolError, Some(result)) => result,
///         // Failed (not done), unknown (may or may not have happened), pending (still running): the words.
///         _ => CallToolResult::error(vec![rmcp::model::ContentBlock::text(outcome.message)]),
///     }
/// }
/// # let _ = for_the_model;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutcome {
    /// `succeeded | tool_error | failed | pending | unknown` — `unknown` is never reported as either of the others.
    pub status: FinalStatus,
    /// Why (the core's reason).
    pub reason: Reason,
    /// The tool.
    pub tool: String,
    /// The tool's safety, as judged for this call.
    pub safety: Safety,
    /// The operation id every attempt carried (keyed tools).
    pub operation_id: Option<String>,
    /// The tool's result, when it answered (`succeeded`, `tool_error`).
    pub result: Option<CallToolResult>,
    /// The last attempt's error, when the call did not get an answer from the tool.
    pub error: Option<String>,
    /// Every attempt.
    pub attempts: Vec<AttemptRecord>,
    /// The id of the task the call created, when the server ran it as one (a `pending` call's task is still
    /// running: look at it later with `tasks/get`).
    pub task_id: Option<String>,
    /// What the model is told (the core's words).
    pub message: String,
}

/// Why a call could not be made at all ([`RetryClient::call_tool`]'s `Err`): nothing was sent.
///
/// ```
/// use mcp_retry_policy::rmcp::CallError;
///
/// fn explain(e: &CallError) -> &'static str {
///     match e {
///         CallError::Journal(_) => "the operation id could not be journaled: try again later",
///         CallError::IntentReused { .. } => "a bug: this intent already names another call",
///         CallError::OperationIdReused { .. } => "a bug: this operation id belongs to another call",
///     }
/// }
/// # let _ = explain;
/// ```
#[derive(Debug)]
pub enum CallError {
    /// The journal could not record the operation id: the write was not sent.
    Journal(JournalError),
    /// The intent already names a call of another tool or another server.
    IntentReused {
        /// The intent.
        intent: String,
        /// The tool it names.
        tool: String,
    },
    /// The operation id the arguments carry is already journaled for a call of another tool or another
    /// server: a call of its own must not share (and settle) that operation.
    OperationIdReused {
        /// The operation id.
        operation_id: String,
        /// The tool it was journaled for.
        tool: String,
    },
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Journal(e) => write!(f, "{e}; the call was not sent"),
            CallError::IntentReused { intent, tool } => write!(
                f,
                "intent {intent:?} already names a call of {tool}: give each intended call its own intent; the call was not sent"
            ),
            CallError::OperationIdReused { operation_id, tool } => write!(
                f,
                "operation id {operation_id:?} is already journaled for a call of {tool}: give each call its own operation id; the call was not sent"
            ),
        }
    }
}

impl std::error::Error for CallError {}

impl From<JournalError> for CallError {
    fn from(e: JournalError) -> Self {
        CallError::Journal(e)
    }
}

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

impl<H: ClientHandler> RetryClient<H> {
    /// Wraps a connected rmcp client (`().serve(transport).await?`). Without [`RetryClient::reconnect`], a lost
    /// session cannot be re-initialized by the wrapper (rmcp's Streamable HTTP transport re-initializes an
    /// expired session on its own once); the call then stops as the engine decides.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use mcp_retry_policy::retry::{FinalStatus, Safety};
    /// use mcp_retry_policy::rmcp::{FileJournal, RetryClient, RetryOptions};
    /// use rmcp::{model::CallToolRequestParams, transport::StreamableHttpClientTransport, ServiceExt};
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), mcp_retry_policy::rmcp::BoxError> {
    /// let connect = || ().serve(StreamableHttpClientTransport::from_uri("http://127.0.0.1:8080/mcp"));
    /// let client = RetryClient::new(connect().await?, RetryOptions::default().tool("create_ticket", Safety::Keyed))
    ///     .journal(Arc::new(FileJournal::open("journal.jsonl")?))
    ///     .reconnect(connect);
    /// let call = CallToolRequestParams::new("create_ticket")
    ///     .with_arguments(serde_json::json!({ "title": "Printer on fire" }).as_object().cloned().unwrap_or_default());
    /// let outcome = client.call_tool_for(call, Some("tool-call-1")).await?; // the model's tool-call id
    /// if outcome.status != FinalStatus::Succeeded {
    ///     println!("{}", outcome.message); // e.g. unknown: it may or may not have happened
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(client: RunningService<RoleClient, H>, options: RetryOptions) -> Self {
        let seed = options.seed.unwrap_or_else(random_u64);
        RetryClient {
            session: tokio::sync::RwLock::new(Session { running: client, generation: 0 }),
            connect: None,
            engine: Mutex::new({
                let mut engine = Engine::new(options.policy);
                engine.set_behind_retrying_proxy(options.behind_retrying_proxy);
                engine
            }),
            random: Mutex::new(SplitMix64::new(seed)),
            tools: tokio::sync::Mutex::new(None),
            journal: Arc::new(MemoryJournal::new()),
            options,
            origin: Instant::now(),
            session_id: None,
        }
    }

    /// Where the transport's session id is kept ([`SessionIdClient`](super::SessionIdClient)), for the spans'
    /// `mcp.session.id`: the same [`SessionId`] the transport's `SessionIdClient` was given. (Needs a live server.)
    ///
    /// ```no_run
    /// use mcp_retry_policy::rmcp::{http_client, RetryClient, RetryOptions, SessionId, SessionIdClient};
    /// use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    /// use rmcp::transport::StreamableHttpClientTransport;
    /// use rmcp::ServiceExt;
    ///
    /// # async fn demo() -> Result<(), mcp_retry_policy::rmcp::BoxError> {
    /// let ids = SessionId::default();
    /// let http = SessionIdClient::new(http_client()?, ids.clone());
    /// let config = StreamableHttpClientTransportConfig::with_uri("http://127.0.0.1:8080/mcp");
    /// let running = ().serve(StreamableHttpClientTransport::with_client(http, config)).await?;
    /// let client = RetryClient::new(running, RetryOptions::default()).session_id(ids);
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    pub fn session_id(mut self, id: SessionId) -> Self {
        self.session_id = Some(id);
        self
    }

    /// Where operation ids are kept (default: [`MemoryJournal`], lost with the process). A
    /// [`FileJournal`](super::FileJournal) keeps them across restarts: the same intent gets the same id.
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
    /// use mcp_retry_policy::rmcp::{FileJournal, RetryClient, RetryOptions};
    ///
    /// let path = std::env::temp_dir().join(format!("doc-journal-{}.jsonl", std::process::id()));
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default()).journal(Arc::new(FileJournal::open(&path)?));
    /// # let _ = (client, std::fs::remove_file(&path));
    /// # Ok(())
    /// # }
    /// ```
    pub fn journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.journal = journal;
        self
    }

    /// How to connect again (a new transport, a new session) when the engine asks for a re-initialization: a
    /// factory of connected clients, called again for each new session. (Needs a live server.)
    ///
    /// ```no_run
    /// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
    /// use rmcp::transport::StreamableHttpClientTransport;
    /// use rmcp::ServiceExt;
    ///
    /// # async fn demo() -> Result<(), mcp_retry_policy::rmcp::BoxError> {
    /// let connect = || ().serve(StreamableHttpClientTransport::from_uri("http://127.0.0.1:8080/mcp"));
    /// let client = RetryClient::new(connect().await?, RetryOptions::default()).reconnect(connect);
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    pub fn reconnect<F, Fut, E>(mut self, connect: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<RunningService<RoleClient, H>, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        self.connect = Some(Box::new(move || {
            let fut = connect();
            Box::pin(async move { fut.await.map_err(Into::into) })
        }));
        self
    }

    /// The journal (to look an operation id up, or list what is unresolved across servers).
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
    /// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
    ///
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default());
    /// assert!(client.journal_ref().pending()?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn journal_ref(&self) -> &Arc<dyn Journal> {
        &self.journal
    }

    /// The current session's peer (for requests other than `tools/call`, which are not retried).
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
    /// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
    ///
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default());
    /// let tools = client.peer().await.list_all_tools().await?;
    /// assert_eq!(tools.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn peer(&self) -> Peer<RoleClient> {
        self.session.read().await.running.peer().clone()
    }

    /// The server's circuit breaker state (`None` when the policy has no breaker).
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
    /// use mcp_retry_policy::retry::BreakerState;
    /// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
    ///
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default());
    /// assert!(matches!(client.breaker_state(), Some(BreakerState::Closed)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn breaker_state(&self) -> Option<BreakerState> {
        lock(&self.engine).breaker_state()
    }

    /// Journaled operations whose outcome is not known to be final, for this server (its
    /// [`RetryOptions::server`], or entries without one): what a restarted agent looks at before it acts again.
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
    /// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
    ///
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default().server("https://tickets.example.com/mcp"));
    /// for entry in client.pending_operations()? {
    ///     println!("{} {} is unresolved: look it up before calling again", entry.tool, entry.operation_id);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn pending_operations(&self) -> Result<Vec<JournalEntry>, JournalError> {
        let mine = self.options.server.as_deref();
        Ok(self.journal.pending()?.into_iter().filter(|e| e.server.is_none() || e.server.as_deref() == mine).collect())
    }

    fn now(&self) -> u64 {
        // A monotonic clock, offset so that 0 is never "now".
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX).saturating_add(1)
    }

    fn random(&self) -> u64 {
        lock(&self.random).next_u64()
    }

    /// Lists the server's tools again (the wrapper lists them once, and again when the engine asks: call this
    /// after a `notifications/tools/list_changed`).
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
    /// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
    ///
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default());
    /// client.refresh_tools().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn refresh_tools(&self) -> Result<(), ServiceError> {
        let peer = self.peer().await;
        let list = peer.list_all_tools().await?;
        *self.tools.lock().await = Some(list.into_iter().map(|t| (t.name.to_string(), t)).collect());
        Ok(())
    }

    async fn tool(&self, name: &str) -> Option<Tool> {
        let known = self.tools.lock().await.as_ref().is_some_and(|t| t.contains_key(name));
        // Without tools/list the tool's safety is the app's override or `unsafe`.
        if !known && self.refresh_tools().await.is_err() {
            return None;
        }
        self.tools.lock().await.as_ref().and_then(|t| t.get(name).cloned())
    }

    async fn revision(&self) -> Option<Revision> {
        if self.options.revision.is_some() {
            return self.options.revision;
        }
        let info = self.session.read().await.running.peer().peer_info();
        info.and_then(|i| Revision::from_protocol_version(i.protocol_version.as_str()))
    }

    /// Step 1: the tool's safety as the core judges it, and for a keyed tool (or one whose schema declares the
    /// operation-id argument) the operation id — created once per intended call, journaled before the first
    /// send, reused on every retry.
    async fn resolve_tool(&self, params: &CallToolRequestParams, intent: Option<&str>) -> Result<Op, CallError> {
        let name = params.name.to_string();
        let tool = self.tool(&name).await;
        let arg = self.options.operation_id_argument.as_str();
        let declares = tool.as_ref().is_some_and(|t| {
            t.input_schema.get("properties").and_then(Value::as_object).is_some_and(|p| p.contains_key(arg))
        });
        let annotations = tool.as_ref().and_then(|t| t.annotations.as_ref());
        let facts = ToolFacts {
            read_only_hint: annotations.and_then(|a| a.read_only_hint),
            destructive_hint: annotations.and_then(|a| a.destructive_hint),
            idempotent_hint: annotations.and_then(|a| a.idempotent_hint),
            declares_operation_id: declares,
        };
        // The status tool is a lookup by this package's own protocol: read-only on a trusted server unless the app
        // says otherwise, and never keyed — its `operation_id` names another call's operation, not one of its own
        // (also when the wrapper was told not to ask it, `status_tool: None`, and the app calls it by hand). A name
        // proves nothing on an untrusted server (any server may call a write `operation_status`): there it is what
        // the app says, else `unsafe`.
        let is_status =
            self.options.status_tool.as_deref() == Some(name.as_str()) || name == super::ledger::STATUS_TOOL_NAME;
        let by_name = (is_status && self.options.trusted).then_some(Safety::ReadOnly);
        let override_ = self.options.tools.get(&name).copied().or(by_name);
        let safety = safety(&facts, self.options.trusted, override_);
        let mut arguments = params.arguments.clone();
        let mut operation_id = None;
        if (safety == Safety::Keyed || declares) && !is_status {
            let args = arguments.get_or_insert_with(Default::default);
            let given = args.get(arg).and_then(Value::as_str).map(str::to_string);
            let id = match given {
                Some(id) => id,
                None => new_operation_id()?,
            };
            let entry = self.journal.begin(JournalEntry {
                operation_id: id,
                tool: name.clone(),
                server: self.options.server.clone(),
                intent: intent.map(str::to_string),
                arguments: self.options.journal_arguments.then(|| args.clone()),
                settled: None,
                created_at_ms: wall_ms(),
                settled_at_ms: None,
            })?;
            let other_server = entry.server.is_some() && entry.server != self.options.server;
            if entry.tool != name || other_server {
                // The id (or the intent) names a call of another tool or server: this call would share its
                // operation id, and settle that entry with its own status. Refused; nothing is sent.
                return Err(match intent {
                    Some(intent) if entry.intent.as_deref() == Some(intent) => {
                        CallError::IntentReused { intent: intent.to_string(), tool: entry.tool }
                    }
                    _ => CallError::OperationIdReused { operation_id: entry.operation_id, tool: entry.tool },
                });
            }
            args.insert(arg.to_string(), Value::String(entry.operation_id.clone()));
            operation_id = Some(entry.operation_id);
        }
        Ok(Op { name, safety, operation_id, arguments })
    }

    /// Closes the session and connects again — unless someone already replaced the session `seen` came from.
    /// One step of the core's call driver, at the client's clock with fresh random bits.
    fn drive(&self, driver: &mut CallDriver, state: &mut CallState, happened: Happened<'_>) -> Next {
        let (now, random) = (self.now(), self.random());
        driver.next(&mut lock(&self.engine), state, happened, now, random)
    }

    async fn reinitialize(&self, seen: u64) -> Result<(), BoxError> {
        let Some(connect) = self.connect.as_ref() else {
            return Err("no reconnect factory: pass RetryClient::reconnect".into());
        };
        let mut session = self.session.write().await;
        if session.generation != seen {
            return Ok(());
        }
        let fresh = connect().await?;
        let old = std::mem::replace(&mut session.running, fresh);
        session.generation = session.generation.saturating_add(1);
        drop(session);
        old.cancellation_token().cancel();
        *self.tools.lock().await = None;
        Ok(())
    }

    /// Step 2: the recovery step the engine asked for, then one `tools/call` with the attempt's timeout,
    /// observed, not judged.
    async fn run_attempt(
        &self,
        op: &Op,
        params: &CallToolRequestParams,
        round: Option<&Round>,
        timeout_ms: u64,
        recover: Option<Recover>,
        cancel: &CancellationToken,
    ) -> Sent {
        let (peer, generation) = {
            let s = self.session.read().await;
            (s.running.peer().clone(), s.generation)
        };
        let step: Result<(), BoxError> = match recover {
            Some(Recover::Reinitialize | Recover::Renegotiate) => self.reinitialize(generation).await,
            Some(Recover::RefreshTools) => self.refresh_tools().await.map_err(Into::into),
            // A session whose transport is already gone cannot carry the call: connect first (nothing sent yet).
            _ if peer.is_transport_closed() && self.connect.is_some() => self.reinitialize(generation).await,
            _ => Ok(()),
        };
        if let Err(e) = step {
            // The recovery step failed: the call itself never left.
            return Sent { outcome: NOT_QUEUED, result: None, task: None, input: None, error: Some(e.to_string()) };
        }
        let peer = self.peer().await;
        let mut request = params.clone();
        request.arguments.clone_from(&op.arguments);
        if let Some(round) = round {
            request.input_responses.clone_from(&round.responses);
            request.request_state.clone_from(&round.request_state);
        }
        let call = match self.options.task_tools.get(op.name.as_str()) {
            // Asked as a task: rmcp 3.11 has no `params.task` (2025-11-25), so the same request is sent with it.
            Some(ttl) => {
                let mut params = match serde_json::to_value(&request) {
                    Ok(Value::Object(p)) => p,
                    _ => serde_json::Map::new(),
                };
                let task = ttl.map_or_else(|| serde_json::json!({}), |ttl| serde_json::json!({ "ttl": ttl }));
                params.insert("task".into(), task);
                ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(Value::Object(params))))
            }
            None => ClientRequest::CallToolRequest(CallToolRequest::new(request)),
        };
        let mut options = PeerRequestOptions::with_timeout(Duration::from_millis(timeout_ms.max(1)));
        // The attempt's W3C trace context (this runs in the attempt's span), unprefixed in `params._meta`.
        if let Some(propagator) = &self.options.trace_context {
            let carrier = propagator.carrier(&tracing::Span::current());
            if !carrier.is_empty() {
                let meta = carrier.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
                options.meta = Some(RequestMetaObject(MetaObject(meta)));
            }
        }
        if cancel.is_cancelled() {
            return Sent { outcome: aborted(Delivered::No), result: None, task: None, input: None, error: None };
        }
        let handle = match peer.send_request_with_option(call, options).await {
            Ok(h) => h,
            // Not queued: rmcp returned before handing the request to its service loop (classify.rs).
            Err(e) => {
                return Sent { outcome: NOT_QUEUED, result: None, task: None, input: None, error: Some(e.to_string()) }
            }
        };
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        let Some(response) = until(cancel, handle.await_response()).await else {
            // The caller cancelled while the request was out: tell the server (notifications/cancelled, as rmcp
            // does on its own timeout); it may have acted.
            let why = CancelledNotificationParam::new(Some(id), Some("cancelled by the caller".into()));
            let _ = peer.notify_cancelled(why).await;
            return Sent { outcome: aborted(Delivered::Maybe), result: None, task: None, input: None, error: None };
        };
        match response {
            Ok(response) => {
                let outcome = response_outcome(&response);
                let task = created_task(&response);
                let (result, input) = match response {
                    ServerResult::CallToolResult(r) => (Some(r), None),
                    ServerResult::InputRequiredResult(i) => (None, Some(i)),
                    _ => (None, None),
                };
                Sent { outcome, result, task, input, error: None }
            }
            Err(e) => {
                let outcome = error_outcome_at(&e, wall_ms());
                Sent { outcome, result: None, task: None, input: None, error: Some(e.to_string()) }
            }
        }
    }

    /// Which kinds of input request the session's client can answer: those its `ClientHandler::get_info`
    /// declares a capability for (`elicitation`, `sampling`, `roots`) — what it told the server it handles.
    async fn answerable(&self) -> Answerable {
        let info = ClientHandler::get_info(self.session.read().await.running.service());
        let caps = &info.capabilities;
        Answerable {
            elicitation: caps.elicitation.is_some(),
            sampling: caps.sampling.is_some(),
            roots: caps.roots.is_some(),
        }
    }

    /// Answers one `input_required` result's `inputRequests` through the client's own handler (the
    /// `ClientHandler` the session runs: `create_message`, `create_elicitation`, `list_roots`), all at once,
    /// before `deadline_ms` — only when the client declared the capability for every request's kind:
    /// otherwise nothing is asked of the handler and nothing is sent (`handler_missing`; rmcp's default
    /// handlers would decline an elicitation *to the server*, an answer the app never gave). Mechanics only:
    /// whether to continue is the engine's (`continue_input`, `input_unanswered`).
    async fn gather_input(&self, input: Option<InputRequiredResult>, deadline_ms: u64) -> Result<Round, Unanswered> {
        let input = input.unwrap_or_else(|| InputRequiredResult::new(None, None));
        let left = Duration::from_millis(deadline_ms.saturating_sub(self.now()));
        let answerable = self.answerable().await;
        let mut requests = Vec::new();
        for (key, request) in input.input_requests.unwrap_or_default() {
            let request = match request {
                InputRequest::CreateMessage(r) if answerable.sampling => ServerRequest::CreateMessageRequest(r),
                InputRequest::Elicitation(r) if answerable.elicitation => ServerRequest::ElicitRequest(r),
                InputRequest::ListRoots(r) if answerable.roots => ServerRequest::ListRootsRequest(r),
                // Not declared (or a kind rmcp has no request for): no handler for it, the round is not sent.
                _ => return Err(Unanswered { handler_missing: true, timed_out: false, error: None }),
            };
            requests.push((key, request));
        }
        let session = self.session.read().await;
        // Every request of the round at once (the JS layer's Promise.all): the first that fails ends the round
        // and drops the others (try_join_all), as the deadline does.
        let answers = futures_util::future::try_join_all(requests.into_iter().map(|(key, request)| {
            let id = NumberOrString::String(key.as_str().into());
            let context = RequestContext::new(id, session.running.peer().clone());
            let answering = session.running.service().handle_request(request, context);
            async move {
                match answering.await {
                    Ok(answer) => match serde_json::to_value(&answer) {
                        Ok(value) => Ok((key, value)),
                        Err(e) => {
                            Err(Unanswered { handler_missing: false, timed_out: false, error: Some(e.to_string()) })
                        }
                    },
                    Err(e) => {
                        // rmcp's default handler for a method the app did not implement: no handler.
                        let missing = e.code == ::rmcp::model::ErrorCode::METHOD_NOT_FOUND;
                        Err(Unanswered { handler_missing: missing, timed_out: false, error: Some(e.to_string()) })
                    }
                }
            }
        }));
        let responses: InputResponses = match tokio::time::timeout(left, answers).await {
            Ok(answered) => answered?.into_iter().collect(),
            Err(_) => return Err(Unanswered { handler_missing: false, timed_out: true, error: None }),
        };
        Ok(Round { responses: (!responses.is_empty()).then_some(responses), request_state: input.request_state })
    }

    /// One `tasks/*` request about `task_id` (sent as rmcp sends any request; the answer read in either shape).
    async fn task_rpc(&self, method: &'static str, task_id: &str, timeout_ms: u64) -> Result<ServerResult, String> {
        let peer = self.peer().await;
        let params = serde_json::json!({ "taskId": task_id });
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let options = PeerRequestOptions::with_timeout(Duration::from_millis(timeout_ms.max(1)));
        let handle = peer.send_request_with_option(request, options).await.map_err(|e| e.to_string())?;
        handle.await_response().await.map_err(|e| e.to_string())
    }

    /// Asks the status tool about `operation_id` after a call that ended `before`, as the core's status driver
    /// says (`retry::resolve`: asked only for an open end, an `in_progress` answer looked at again with the
    /// engine's waits until `deadline_ms`): the final status, the reason and the recorded result — or `None`
    /// when nothing was learned (no status tool listed, no usable answer, no time left).
    async fn resolve_status(
        &self,
        tool: &str,
        operation_id: &str,
        before: (FinalStatus, Reason),
        deadline_ms: u64,
        cancel: &CancellationToken,
    ) -> Option<(FinalStatus, Reason, Option<CallToolResult>)> {
        let name = self.options.status_tool.clone()?;
        if name == tool || self.tool(&name).await.is_none() {
            return None;
        }
        let mut driver = StatusDriver::new(&lock(&self.engine), Some(before), deadline_ms, self.now());
        let mut happened = StatusHappened::Start;
        let mut recorded = None;
        loop {
            let (now, random) = (self.now(), self.random());
            let next = driver.next(&lock(&self.engine), happened, now, random, None);
            happened = match next {
                StatusNext::Done(end) => {
                    let Decision::Stop { status, reason } = end? else { return None };
                    let keeps = matches!(status, FinalStatus::Succeeded | FinalStatus::ToolError);
                    return Some((status, reason, recorded.filter(|_| keeps)));
                }
                StatusNext::Wait { delay_ms } => {
                    let waited = until(cancel, tokio::time::sleep(Duration::from_millis(delay_ms))).await;
                    if waited.is_some() {
                        StatusHappened::Waited
                    } else {
                        StatusHappened::Cancelled
                    }
                }
                StatusNext::Ask => {
                    let mut args = serde_json::Map::new();
                    args.insert("action".into(), Value::String(tool.to_string()));
                    args.insert("operation_id".into(), Value::String(operation_id.to_string()));
                    let ask = CallToolRequestParams::new(name.clone()).with_arguments(args);
                    let answer = Box::pin(self.call_tool(ask)).await.ok();
                    let sc = answer
                        .and_then(|a| a.result.filter(|_| a.status == FinalStatus::Succeeded))
                        .and_then(|r| r.structured_content)
                        .filter(|sc| sc.get("operation_id").and_then(Value::as_str) == Some(operation_id));
                    let said = sc.as_ref().and_then(|sc| sc.get("status")).and_then(Value::as_str);
                    let status = OperationStatus::ALL.into_iter().find(|s| Some(s.as_str()) == said);
                    let sc = sc.filter(|_| status.is_some());
                    recorded = sc
                        .as_ref()
                        .and_then(|sc| sc.get("result"))
                        .and_then(|r| serde_json::from_value::<CallToolResult>(r.clone()).ok());
                    let retry_after_ms = sc.as_ref().and_then(|sc| sc.get("retryAfterMs")).and_then(Value::as_u64);
                    StatusHappened::Answered { status, retry_after_ms }
                }
            };
        }
    }

    /// Calls a tool, retrying only where the core says a retry is safe. The outcome says what happened, in the
    /// core's words; `Err` only when nothing was sent (the journal failed, an intent reused).
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
    /// use mcp_retry_policy::retry::FinalStatus;
    /// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
    ///
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default());
    /// let outcome = client.call_tool(CallToolRequestParams::new("create_ticket")).await?;
    /// match outcome.status {
    ///     FinalStatus::Succeeded | FinalStatus::ToolError => println!("{:?}", outcome.result),
    ///     // Failed, Unknown, Pending: tell the model what happened, in the core's words.
    ///     _ => println!("{}", outcome.message),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool(&self, params: CallToolRequestParams) -> Result<CallOutcome, CallError> {
        self.call_tool_for(params, None).await
    }

    /// [`RetryClient::call_tool`] for one intended call named by `intent` (e.g. the model's tool-call id): a
    /// second call with the same intent reuses the first one's operation id, across restarts with a
    /// persistent journal.
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
    /// use mcp_retry_policy::retry::Safety;
    /// use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
    ///
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default().tool("create_ticket", Safety::Keyed));
    /// let call = CallToolRequestParams::new("create_ticket");
    /// let first = client.call_tool_for(call.clone(), Some("tool-call-1")).await?;
    /// let again = client.call_tool_for(call, Some("tool-call-1")).await?; // the model asked twice
    /// assert_eq!(first.operation_id, again.operation_id); // one intended call, one operation id
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool_for(
        &self,
        params: CallToolRequestParams,
        intent: Option<&str>,
    ) -> Result<CallOutcome, CallError> {
        self.call_tool_cancellable(params, intent, &CancellationToken::new()).await
    }

    /// [`RetryClient::call_tool_for`] that the caller can cancel (the JS `signal`): once `cancel` fires, no
    /// attempt is sent again and the engine says what the call is — `failed` (`aborted`) when nothing may have
    /// left, `unknown` once a request was out (it is told `notifications/cancelled`). A call that created a
    /// task cancels it (`tasks/cancel`) and ends `unknown`: the task may have run in part. A keyed write's
    /// status tool is not asked after a cancel.
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
    /// use mcp_retry_policy::retry::{FinalStatus, Reason};
    /// use mcp_retry_policy::rmcp::{CancellationToken, RetryClient, RetryOptions};
    ///
    /// // `running`: a connected rmcp client — `().serve(transport).await?`.
    /// let client = RetryClient::new(running, RetryOptions::default());
    /// let cancel = CancellationToken::new();
    /// cancel.cancel(); // e.g. the user pressed stop before the call went out
    /// let outcome = client.call_tool_cancellable(CallToolRequestParams::new("create_ticket"), None, &cancel).await?;
    /// assert_eq!((outcome.status, outcome.reason), (FinalStatus::Failed, Reason::Aborted)); // nothing was sent
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool_cancellable(
        &self,
        params: CallToolRequestParams,
        intent: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CallOutcome, CallError> {
        let version = self.session.read().await.running.peer().peer_info().map(|i| i.protocol_version.to_string());
        let session = self.session_id.as_ref().and_then(SessionId::get);
        let mut telemetry = CallSpan::new(&params.name, version.as_deref(), session);
        let span = telemetry.span.clone();
        let outcome = self.call_traced(params, intent, &mut telemetry, cancel).instrument(span).await;
        match &outcome {
            Ok(o) => telemetry.end(o.status, o.reason, o.attempts.len(), &o.message),
            Err(e) => {
                let kind = match e {
                    CallError::Journal(_) => "journal",
                    CallError::IntentReused { .. } => "intent_reused",
                    CallError::OperationIdReused { .. } => "operation_id_reused",
                };
                telemetry.fail(kind, &e.to_string());
            }
        }
        outcome
    }

    async fn call_traced(
        &self,
        params: CallToolRequestParams,
        intent: Option<&str>,
        telemetry: &mut CallSpan,
        cancel: &CancellationToken,
    ) -> Result<CallOutcome, CallError> {
        let op = self.resolve_tool(&params, intent).await?;
        telemetry.resolved(op.safety, op.operation_id.as_deref());
        let revision = self.revision().await;
        // Input rounds are answered through the session's ClientHandler, for the kinds of request the client
        // declared a capability for (the JS `answersInput`): the engine decides whether to continue.
        let answers_input = self.answerable().await.any();
        let mut state = lock(&self.engine).begin_with(self.now(), CallOptions { answers_input });
        // The loop is the core's (`retry::drive`): this carries out what it says and feeds back what happened.
        let mut driver = CallDriver::new(op.safety, revision);
        let mut round: Option<Round> = None;
        let mut input = None;
        let mut attempts = Vec::new();
        let mut result = None;
        let mut task = None;
        let mut last_error = None;
        let start = if cancel.is_cancelled() { Happened::Cancelled } else { Happened::Start };
        let mut next = self.drive(&mut driver, &mut state, start);
        // The task the call created, once the driver follows it (its id and the server's last look).
        let mut following: Option<TaskLook> = None;
        let mut told_end = false; // the task's last word went to telemetry already
        let decision = loop {
            next = match next {
                Next::Done(decision) => match task.take() {
                    // The server created a task: the driver follows it if the call ended on it (never re-sending
                    // the call); otherwise it answers the same end again.
                    Some(created) => {
                        let view = task_view(&created);
                        following = Some(created);
                        self.drive(&mut driver, &mut state, Happened::TaskCreated(view))
                    }
                    None => break decision,
                },
                Next::PollTask { delay_ms, status } => {
                    if let Some(t) = &following {
                        telemetry.task(&t.task_id, status.as_str(), Some(delay_ms));
                    }
                    let waited = until(cancel, tokio::time::sleep(Duration::from_millis(delay_ms))).await.is_some();
                    self.drive(&mut driver, &mut state, if waited { Happened::Waited } else { Happened::Cancelled })
                }
                Next::LookAtTask { timeout_ms } => {
                    // (Told only after `TaskCreated`, which set `following`; else: cancel, the driver ends it.)
                    let Some(t) = following.as_mut() else {
                        next = self.drive(&mut driver, &mut state, Happened::Cancelled);
                        continue;
                    };
                    let happened = match until(cancel, self.task_rpc("tasks/get", &t.task_id, timeout_ms)).await {
                        None => Happened::Cancelled,
                        Some(Ok(answer)) => match task_look(&answer, &t.task_id) {
                            Some(look) => {
                                let view = task_view(&look);
                                *t = look;
                                Happened::TaskLooked(view)
                            }
                            None => {
                                last_error = Some("tasks/get answered something that is not this task".into());
                                Happened::TaskLookFailed
                            }
                        },
                        Some(Err(e)) => {
                            last_error = Some(e);
                            Happened::TaskLookFailed
                        }
                    };
                    self.drive(&mut driver, &mut state, happened)
                }
                Next::FetchTaskResult { timeout_ms } => {
                    // (Told only after `TaskCreated`, which set `following`; else: cancel, the driver ends it.)
                    let Some(t) = following.as_mut() else {
                        next = self.drive(&mut driver, &mut state, Happened::Cancelled);
                        continue;
                    };
                    // A look that carried the result (SEP-2663 `completed`) is its answer.
                    let fetched = match t.result.take() {
                        Some(inline) => Some(Ok(inline)),
                        None => {
                            until(cancel, self.task_rpc("tasks/result", &t.task_id, timeout_ms)).await.map(
                                |a| match a {
                                    Ok(ServerResult::CallToolResult(r)) => Ok(r),
                                    Ok(_) => {
                                        Err("tasks/result answered something that is not a tool result".to_string())
                                    }
                                    Err(e) => Err(e),
                                },
                            )
                        }
                    };
                    match fetched {
                        None => self.drive(&mut driver, &mut state, Happened::Cancelled),
                        Some(Ok(r)) => {
                            let status =
                                if t.status == TaskStatus::InputRequired { TaskStatus::Completed } else { t.status };
                            telemetry.task(&t.task_id, status.as_str(), None);
                            told_end = true;
                            let outcome = result_outcome(&r);
                            result = Some(r);
                            self.drive(&mut driver, &mut state, Happened::TaskResult(&outcome))
                        }
                        Some(Err(e)) => {
                            last_error = Some(e);
                            self.drive(&mut driver, &mut state, Happened::TaskResultFailed)
                        }
                    }
                }
                Next::CancelTask { timeout_ms } => {
                    let Some(t) = following.as_ref() else {
                        next = self.drive(&mut driver, &mut state, Happened::TaskCancelAnswered);
                        continue;
                    };
                    // The caller cancelled: cancel the task; the driver says what the call is then.
                    let answer = self.task_rpc("tasks/cancel", &t.task_id, timeout_ms).await;
                    let status = answer.as_ref().ok().and_then(|a| task_look(a, &t.task_id)).map(|t| t.status.as_str());
                    telemetry.task(&t.task_id, status.unwrap_or("cancel_failed"), None);
                    told_end = true;
                    if let Err(e) = answer {
                        last_error = Some(e);
                    }
                    self.drive(&mut driver, &mut state, Happened::TaskCancelAnswered)
                }
                Next::Wait { delay_ms, reason, recover, held } => {
                    // A held attempt (open breaker, empty budget) or a backoff; cancelled during it: nothing sent.
                    let cause = driver.last_step().filter(|_| !held).map(|s| s.classification.cause.as_str());
                    telemetry.retry(delay_ms, reason, cause, recover);
                    let waited = until(cancel, tokio::time::sleep(Duration::from_millis(delay_ms))).await.is_some();
                    self.drive(&mut driver, &mut state, if waited { Happened::Waited } else { Happened::Cancelled })
                }
                Next::GatherInput => {
                    // The next round carries the answers; the first phase is never sent again.
                    let deadline_ms = state.deadline_ms;
                    let happened = match until(cancel, self.gather_input(input.take(), deadline_ms)).await {
                        None => Happened::Cancelled, // cancelled while the handlers ran: the round was not sent
                        Some(Ok(next_round)) => {
                            round = Some(next_round);
                            Happened::InputGathered
                        }
                        Some(Err(unanswered)) => {
                            if unanswered.error.is_some() {
                                last_error = unanswered.error;
                            }
                            let (timed_out, handler_missing) = (unanswered.timed_out, unanswered.handler_missing);
                            Happened::InputUnanswered { timed_out, handler_missing }
                        }
                    };
                    self.drive(&mut driver, &mut state, happened)
                }
                Next::Send { admission, recover } => {
                    let started = self.now();
                    let n = u32::try_from(attempts.len()).unwrap_or(u32::MAX).saturating_add(1);
                    let session = self.session_id.as_ref().and_then(SessionId::get);
                    let attempt_span = telemetry.attempt(n, session.as_deref());
                    let sent = self
                        .run_attempt(&op, &params, round.as_ref(), admission.timeout_ms, recover, cancel)
                        .instrument(attempt_span.clone())
                        .await;
                    result = sent.result;
                    task = sent.task;
                    input = sent.input;
                    if sent.error.is_some() {
                        last_error = sent.error;
                    }
                    let next = self.drive(&mut driver, &mut state, Happened::Sent(&sent.outcome));
                    let now = self.now();
                    // The session the request went on (a re-initialization in this attempt's recovery step changed it).
                    if let Some(id) = self.session_id.as_ref().and_then(SessionId::get) {
                        attempt_span.record("mcp.session.id", id.as_str());
                    }
                    if let Some(step) = driver.last_step() {
                        let took = now.saturating_sub(started);
                        telemetry.attempt_ended(&attempt_span, &sent.outcome, &step.classification, took);
                        attempts.push(AttemptRecord {
                            attempt: n,
                            duration_ms: took,
                            outcome: sent.outcome,
                            classification: step.classification,
                            decision: step.decision,
                        });
                    }
                    drop(attempt_span);
                    next
                }
            };
        };
        if let (Some(t), false) = (&following, told_end) {
            telemetry.task(&t.task_id, t.status.as_str(), None); // the status the call ended on
        }
        let task_id = following.map(|t| t.task_id);
        let (mut status, mut reason) = match decision {
            Decision::Stop { status, reason } => (status, reason),
            // `decide` never ends a loop with a retry; read one as what it would mean if it did.
            Decision::Retry { reason, .. } => (FinalStatus::Unknown, reason),
        };
        // A keyed write whose outcome is not known: ask the server's status tool, within the call's deadline,
        // before answering. The write itself is never sent again to find out.
        if let (Some(id), false) = (op.operation_id.as_deref(), cancel.is_cancelled()) {
            if let Some((s, r, found)) =
                self.resolve_status(&op.name, id, (status, reason), state.deadline_ms, cancel).await
            {
                // The status answer's result, or none when it could not be read: never the last attempt's
                // answer (the ledger's in_progress / unknown) passed off as the write's.
                (status, reason, result) = (s, r, found);
            }
        }
        let breaker_open_for_ms = match lock(&self.engine).breaker_state() {
            Some(BreakerState::Open { .. }) => self.options.policy.breaker.map(|b| b.open_ms),
            _ => None,
        };
        let cause: Option<Cause> = attempts.last().map(|a: &AttemptRecord| a.classification.cause);
        let message = message_for(&MessageParts {
            tool: &op.name,
            status,
            reason,
            cause,
            operation_id: op.operation_id.as_deref(),
            operation_id_argument: &self.options.operation_id_argument,
            breaker_open_for_ms,
        });
        let answered = matches!(status, FinalStatus::Succeeded | FinalStatus::ToolError | FinalStatus::Pending);
        let outcome = CallOutcome {
            status,
            reason,
            tool: op.name,
            safety: op.safety,
            operation_id: op.operation_id,
            result: result.filter(|_| answered),
            error: last_error.filter(|_| !matches!(status, FinalStatus::Succeeded | FinalStatus::ToolError)),
            attempts,
            task_id,
            message,
        };
        if let Some(id) = &outcome.operation_id {
            // A journal that fails here leaves the entry in flight: pending_operations() lists it.
            let _ = self.journal.settle(id, outcome.status, wall_ms());
        }
        Ok(outcome)
    }
}
