//! One attempt and what it needs: the tool's facts, the driver's step, a fresh session, the request itself,
//! an input round's answers, a task's RPCs.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<H: ClientHandler> RetryClient<H> {
    /// Step 1: the tool's safety as the core judges it, and for a keyed tool (or one whose schema declares the
    /// operation-id argument) the operation id — created once per intended call, journaled before the first
    /// send, reused on every retry.
    pub(super) async fn resolve_tool(
        &self,
        params: &CallToolRequestParams,
        intent: Option<&str>,
    ) -> Result<Op, CallError> {
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
            self.options.status_tool.as_deref() == Some(name.as_str()) || name == crate::rmcp::ledger::STATUS_TOOL_NAME;
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
    pub(super) fn drive(&self, driver: &mut CallDriver, state: &mut CallState, happened: Happened<'_>) -> Next {
        let (now, random) = (self.now(), self.random());
        driver.next(&mut lock(&self.engine), state, happened, now, random)
    }

    pub(super) async fn reinitialize(&self, seen: u64) -> Result<(), BoxError> {
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
    pub(super) async fn run_attempt(
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
    pub(super) async fn answerable(&self) -> Answerable {
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
    pub(super) async fn gather_input(
        &self,
        input: Option<InputRequiredResult>,
        deadline_ms: u64,
    ) -> Result<Round, Unanswered> {
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
    pub(super) async fn task_rpc(
        &self,
        method: &'static str,
        task_id: &str,
        timeout_ms: u64,
    ) -> Result<ServerResult, String> {
        let peer = self.peer().await;
        let params = serde_json::json!({ "taskId": task_id });
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let options = PeerRequestOptions::with_timeout(Duration::from_millis(timeout_ms.max(1)));
        let handle = peer.send_request_with_option(request, options).await.map_err(|e| e.to_string())?;
        handle.await_response().await.map_err(|e| e.to_string())
    }
}
