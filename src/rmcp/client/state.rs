//! What a `RetryClient` knows and reads: its peer, breaker, pending operations, clocks, tools and revision.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<H: ClientHandler> RetryClient<H> {
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

    pub(super) fn now(&self) -> u64 {
        // A monotonic clock, offset so that 0 is never "now".
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX).saturating_add(1)
    }

    pub(super) fn random(&self) -> u64 {
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

    pub(super) async fn tool(&self, name: &str) -> Option<Tool> {
        let known = self.tools.lock().await.as_ref().is_some_and(|t| t.contains_key(name));
        // Without tools/list the tool's safety is the app's override or `unsafe`.
        if !known && self.refresh_tools().await.is_err() {
            return None;
        }
        self.tools.lock().await.as_ref().and_then(|t| t.get(name).cloned())
    }

    pub(super) async fn revision(&self) -> Option<Revision> {
        if self.options.revision.is_some() {
            return self.options.revision;
        }
        let info = self.session.read().await.running.peer().peer_info();
        info.and_then(|i| Revision::from_protocol_version(i.protocol_version.as_str()))
    }
}
