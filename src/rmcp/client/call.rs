//! `call_tool` and its faces: the call loop, carrying out the core's call driver.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<H: ClientHandler> RetryClient<H> {
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

    pub(super) async fn call_traced(
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
        let end = Ended { decision, deadline_ms: state.deadline_ms, attempts, result, error: last_error, task_id };
        Ok(self.end_call(op, end, cancel).await)
    }
}
