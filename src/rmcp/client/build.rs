//! Making a `RetryClient`: over a connected rmcp client, with its session id, journal and reconnect.

#[allow(clippy::wildcard_imports)]
use super::*;

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

    /// Where the transport's session id is kept ([`SessionIdClient`](crate::rmcp::SessionIdClient)), for the spans'
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
    /// [`FileJournal`](crate::rmcp::FileJournal) keeps them across restarts: the same intent gets the same id.
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
}
