//! How a call ends when its own attempts did not say, each a table on one screen: what the server's status
//! tool answered about a write ([`decide_status`]), how a followed task ended without a result to read
//! ([`decide_task_end`]) or with a result the engine would not stop on ([`decide_task_result`]), and which
//! failed `tools/list` is recovered from ([`decide_list_recovery`]). Pure and total, like [`decide`](super::decide()): the JS layer asks these and acts; it never picks a status or a
//! reason of its own.

use super::classify::{Cause, Recover};
use super::decide::{Decision, FinalStatus, Reason};

/// What the server's status tool (`registerStatusTool`, over the operation ledger) answers about an
/// operation. The codes are the order of the ledger's `OPERATION_STATUSES` (checked in the tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperationStatus {
    /// The ledger has no record of the operation id.
    NotFound,
    /// The ledger recorded that the write did not take effect (released, or refused before it ran).
    NotDone,
    /// The write is still running.
    InProgress,
    /// The write ran and succeeded (its result recorded).
    Succeeded,
    /// The write ran and the tool said no (`isError: true` recorded).
    Failed,
    /// The ledger does not know the outcome either (a handler that crashed mid-way, a lost lease).
    Unknown,
}

impl OperationStatus {
    /// Every answer, in declaration order (the order of the `as u8` codes).
    pub const ALL: [OperationStatus; 6] = [
        OperationStatus::NotFound,
        OperationStatus::NotDone,
        OperationStatus::InProgress,
        OperationStatus::Succeeded,
        OperationStatus::Failed,
        OperationStatus::Unknown,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            OperationStatus::NotFound => "not_found",
            OperationStatus::NotDone => "not_done",
            OperationStatus::InProgress => "in_progress",
            OperationStatus::Succeeded => "succeeded",
            OperationStatus::Failed => "failed",
            OperationStatus::Unknown => "unknown",
        }
    }
}

/// What a call whose outcome was open (`unknown` or `pending`: `before`, the engine's stop) ends as, given the
/// status tool's `answer` (`None`: it could not be asked, or gave no usable answer).
///
/// | answer | status | reason |
/// |---|---|---|
/// | succeeded | succeeded | resolved_by_status |
/// | failed | tool_error | resolved_by_status |
/// | not_done | failed | resolved_by_status |
/// | in_progress | pending | status_in_progress |
/// | not_found | **unknown** | status_not_found |
/// | unknown | **unknown** | status_unknown |
/// | no answer | `before`'s, or **unknown** | `before`'s, or status_not_asked |
///
/// `not_done` is the server's own record that the write did not take effect, the one proof that licenses
/// `failed`. `not_found` may be a request still on its way or a purged record: never `failed`. An end the
/// call already knows (`succeeded`, `tool_error`, `failed`) is never replaced by an answer.
pub fn decide_status(answer: Option<OperationStatus>, before: Option<(FinalStatus, Reason)>) -> Decision {
    use OperationStatus as A;
    if let Some((status, reason)) = before {
        if !matches!(status, FinalStatus::Unknown | FinalStatus::Pending) {
            return Decision::stop(status, reason);
        }
    }
    let (status, reason) = match answer {
        Some(A::Succeeded) => (FinalStatus::Succeeded, Reason::ResolvedByStatus),
        Some(A::Failed) => (FinalStatus::ToolError, Reason::ResolvedByStatus),
        Some(A::NotDone) => (FinalStatus::Failed, Reason::ResolvedByStatus),
        Some(A::InProgress) => (FinalStatus::Pending, Reason::StatusInProgress),
        Some(A::NotFound) => (FinalStatus::Unknown, Reason::StatusNotFound),
        Some(A::Unknown) => (FinalStatus::Unknown, Reason::StatusUnknown),
        None => before.unwrap_or((FinalStatus::Unknown, Reason::StatusNotAsked)),
    };
    Decision::stop(status, reason)
}

/// A task's status (2025-11-25 tasks): the codes are this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// Still running.
    Working,
    /// Waiting for input the client gives through `tasks/result`.
    InputRequired,
    /// Finished: the tool's result is held for `tasks/result`.
    Completed,
    /// Finished with the tool's error.
    Failed,
    /// Cancelled before it finished (by the server, or by another client).
    Cancelled,
}

impl TaskStatus {
    /// Every status, in declaration order (the order of the `as u8` codes).
    pub const ALL: [TaskStatus; 5] = [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    /// The stable snake_case name (the spec's).
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// What a followed task's `status` means for the call when no result the engine stopped on is at hand (none
/// fetched, or `tasks/result` failed).
///
/// | task | decision |
/// |---|---|
/// | working, input_required | not ended: follow on ([`Recover::PollTask`], [`Reason::StillRunning`]; `poll` says when) |
/// | completed | succeeded, task_result_unavailable |
/// | failed | tool_error, task_result_unavailable |
/// | cancelled | **unknown**, task_cancelled |
///
/// The task's own terminal status is the server's word on how the tool ended; `cancelled` may come after some
/// of the tool ran, so it is `unknown`, never `failed`.
pub fn decide_task_end(status: TaskStatus) -> Decision {
    match status {
        TaskStatus::Working | TaskStatus::InputRequired => {
            Decision::Retry { delay_ms: 0, recover: Some(Recover::PollTask), reason: Reason::StillRunning }
        }
        TaskStatus::Completed => Decision::stop(FinalStatus::Succeeded, Reason::TaskResultUnavailable),
        TaskStatus::Failed => Decision::stop(FinalStatus::ToolError, Reason::TaskResultUnavailable),
        TaskStatus::Cancelled => Decision::stop(FinalStatus::Unknown, Reason::TaskCancelled),
    }
}

/// What a followed task's call ends as when `tasks/result` gave a result and the engine, reading it like any
/// result, would not stop on it (`decision`, the engine's for that result; `cause`, the result's cause): a
/// retry means "send the call again", which a created task never is. The task's own terminal status does not
/// speak then: the result the task ended with says the operation's outcome is open — the server ledger's
/// error-flagged answer, run as a task.
///
/// | the engine on the result | decision |
/// |---|---|
/// | a stop | that stop |
/// | a retry, the ledger's `in_progress` | **pending**, status_in_progress (the same operation is still running) |
/// | a retry, the ledger's `unknown` | **unknown**, status_unknown |
/// | any other retry | **unknown**, the retry's reason |
///
/// Never `succeeded`, `tool_error` or `failed`: the task completed, but not with the tool's answer.
pub fn decide_task_result(cause: Cause, decision: Decision) -> Decision {
    match decision {
        Decision::Stop { .. } => decision,
        Decision::Retry { reason, .. } => match cause {
            Cause::LedgerInProgress => Decision::stop(FinalStatus::Pending, Reason::StatusInProgress),
            Cause::LedgerUnknown => Decision::stop(FinalStatus::Unknown, Reason::StatusUnknown),
            _ => Decision::stop(FinalStatus::Unknown, reason),
        },
    }
}

/// Whether a failed `tools/list` (a read) is tried again, from the engine's decision about it: only a session
/// lost before the first call is recovered from — re-initialize (or renegotiate) once, then list again.
/// Without the list a call would go out knowing nothing of its tool (unsafe, and without the operation id a
/// keyed tool needs). Any other retry is not followed: the list stays unknown (an `unknown` stop with the
/// retry's reason), and the tool's safety is then the app's override or `unsafe`.
pub fn decide_list_recovery(decision: Decision) -> Decision {
    match decision {
        Decision::Retry { recover: Some(Recover::Reinitialize | Recover::Renegotiate), .. } => decision,
        Decision::Retry { reason, .. } => Decision::stop(FinalStatus::Unknown, reason),
        stop @ Decision::Stop { .. } => stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_ledgers_and_the_specs() {
        let names: Vec<&str> = OperationStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, crate::ledger::OPERATION_STATUSES);
        for (i, s) in OperationStatus::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "{s:?}");
        }
        for (i, s) in TaskStatus::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "{s:?}");
        }
    }
}
