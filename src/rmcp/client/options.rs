//! `RetryOptions`: what a `RetryClient` is built with.

#[allow(clippy::wildcard_imports)]
use super::*;

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
            status_tool: Some(crate::rmcp::ledger::STATUS_TOOL_NAME.to_string()),
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
    /// [`telemetry`](crate::rmcp::telemetry)).
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
