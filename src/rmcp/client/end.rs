//! A call's end: the core's `CallFinish` carried out (the status tool asked about an open keyed write within the
//! call's deadline, the journal entry settled), then the outcome assembled with the model's words.

#[allow(clippy::wildcard_imports)]
use super::*;

/// What the call loop hands its end.
pub(super) struct Ended {
    pub(super) decision: Decision,
    pub(super) deadline_ms: u64,
    pub(super) attempts: Vec<AttemptRecord>,
    pub(super) result: Option<CallToolResult>,
    pub(super) error: Option<String>,
    pub(super) task_id: Option<String>,
}

impl<H: ClientHandler> RetryClient<H> {
    /// The call's end and its outcome.
    pub(super) async fn end_call(&self, op: Op, ended: Ended, cancel: &CancellationToken) -> CallOutcome {
        let Ended { decision, deadline_ms, attempts, mut result, error: last_error, task_id } = ended;
        // The call's end is the core's: ask the server's status tool about an open keyed write (within the
        // call's deadline; the write itself is never sent again to find out), settle the journal entry, answer.
        let facts = FinishFacts {
            keyed: op.operation_id.is_some(),
            may_resolve: self.options.status_tool.is_some(),
            cancelled: cancel.is_cancelled(),
        };
        let mut finish = CallFinish::new(decision, facts);
        let mut happened = Finished::Start;
        let (status, reason) = loop {
            happened = match (finish.next(happened), op.operation_id.as_deref()) {
                (FinishNext::Resolve { status, reason }, Some(id)) => {
                    let found = self.resolve_status(&op.name, id, (status, reason), deadline_ms, cancel).await;
                    // The status answer's result, or none when it could not be read: never the last attempt's
                    // answer (the ledger's in_progress / unknown) passed off as the write's.
                    found.map(|(s, r, answer)| {
                        result = answer;
                        Decision::stop(s, r)
                    })
                }
                .map_or(Finished::Resolved(None), |d| Finished::Resolved(Some(d))),
                (FinishNext::Settle { status }, Some(id)) => {
                    // A journal that fails here leaves the entry in flight: pending_operations() lists it.
                    let _ = self.journal.settle(id, status, wall_ms());
                    Finished::Settled
                }
                (FinishNext::End { status, reason, .. }, _) => break (status, reason),
                // Only a keyed call is told to resolve or settle; without an id there is nothing to do either with.
                (FinishNext::Resolve { .. }, None) => Finished::Resolved(None),
                (FinishNext::Settle { .. }, None) => Finished::Settled,
            };
        };
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
        CallOutcome {
            status,
            reason,
            tool: op.name,
            safety: op.safety,
            operation_id: op.operation_id,
            // What the outcome carries is the core's rule, by status.
            result: result.filter(|_| status.carries_result()),
            error: last_error.filter(|_| !status.tool_answered()),
            attempts,
            task_id,
            message,
        }
    }
}
