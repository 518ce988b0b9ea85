//! An open end closed through the status tool (the core's status driver).

#[allow(clippy::wildcard_imports)]
use super::*;

impl<H: ClientHandler> RetryClient<H> {
    /// Asks the status tool about `operation_id` after a call that ended `before`, as the core's status driver
    /// says (`retry::resolve`: asked only for an open end, an `in_progress` answer looked at again with the
    /// engine's waits until `deadline_ms`): the final status, the reason and the recorded result — or `None`
    /// when nothing was learned (no status tool listed, no usable answer, no time left).
    pub(super) async fn resolve_status(
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
                    let keeps = status.tool_answered();
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
}
