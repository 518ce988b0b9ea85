//! Tasks: a `tools/call` the server answers with a created task — read here, followed by
//! [`RetryClient`](super::RetryClient) (`tasks/get` with the engine's waits, then `tasks/result`), never sent
//! again. The Rust twin of the npm package's `client/tasks.js`; observation only: every wait and every end is
//! the core's ([`Engine::poll`](crate::retry::Engine::poll), [`decide_task_end`](crate::retry::decide_task_end)).
//!
//! Two wire shapes are read, since rmcp 3.11 types the newer one only:
//!
//! | answer | 2025-11-25 tasks (the TS SDK's) | the Tasks extension, SEP-2663 (rmcp 3.11's types) |
//! |---|---|---|
//! | `tools/call` created a task | `{ task: { taskId, status, pollInterval? } }` — rmcp has no type for it: a `CustomResult` | `CreateTaskResult` (`resultType: "task"`, the task inlined) |
//! | `tasks/get` | `{ taskId, status, pollInterval? }` — rmcp reads a `working` one as a `GetTaskResult` (dropping `pollInterval`, its field is `pollIntervalMs`), a terminal one as a `CustomResult` | `GetTaskResult`, a `completed` one carrying the tool's result |
//! | the tool's result | `tasks/result` → a `CallToolResult` | inline in `tasks/get` |
//!
//! A look without an interval keeps the last one the server gave (rmcp drops the 2025-11-25 `pollInterval`
//! from a typed `working` answer; the created task's stays the hint).

use ::rmcp::model::{CallToolResult, CustomResult, ServerResult, TaskPayload, TaskStatus as RmcpTaskStatus};
use serde_json::Value;

use crate::retry::TaskStatus;

/// What is known of a task the call created, from its last look.
///
/// ```
/// use mcp_retry_policy::retry::TaskStatus;
/// use mcp_retry_policy::rmcp::tasks::created_task;
/// use rmcp::model::{CustomResult, ServerResult};
///
/// let answer = ServerResult::CustomResult(CustomResult(serde_json::json!({
///     "task": { "taskId": "t-1", "status": "working", "pollInterval": 500 }
/// })));
/// let look = created_task(&answer).expect("a created task");
/// assert_eq!((look.task_id.as_str(), look.status, look.poll_interval_ms), ("t-1", TaskStatus::Working, Some(500)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TaskLook {
    /// The server's id for it.
    pub task_id: String,
    /// Its status at the last look.
    pub status: TaskStatus,
    /// The interval the server asked clients to look at it with (ms), if it gave one.
    pub poll_interval_ms: Option<u64>,
    /// The tool's result, when the look carried it (SEP-2663 `completed`).
    pub result: Option<CallToolResult>,
}

fn core_status(s: RmcpTaskStatus) -> Option<TaskStatus> {
    match s {
        RmcpTaskStatus::Working => Some(TaskStatus::Working),
        RmcpTaskStatus::InputRequired => Some(TaskStatus::InputRequired),
        RmcpTaskStatus::Completed => Some(TaskStatus::Completed),
        RmcpTaskStatus::Failed => Some(TaskStatus::Failed),
        RmcpTaskStatus::Cancelled => Some(TaskStatus::Cancelled),
        // A status rmcp knows and this crate does not: not a look it can read.
        _ => None,
    }
}

/// A 2025-11-25 task object (`{ taskId, status, pollInterval? }`), if `v` is one.
fn task_object(v: &Value) -> Option<TaskLook> {
    let task_id = v.get("taskId").and_then(Value::as_str).filter(|id| !id.is_empty())?;
    let status = v.get("status").and_then(Value::as_str)?;
    let status = TaskStatus::ALL.into_iter().find(|s| s.as_str() == status)?;
    let poll_interval_ms = v.get("pollInterval").and_then(Value::as_u64);
    Some(TaskLook { task_id: task_id.to_string(), status, poll_interval_ms, result: None })
}

/// The task a `tools/call` answer created, if it is one (either shape).
///
/// ```
/// use mcp_retry_policy::rmcp::tasks::created_task;
/// use rmcp::model::{CallToolResult, ServerResult};
///
/// let plain = ServerResult::CallToolResult(CallToolResult::success(vec![]));
/// assert_eq!(created_task(&plain), None); // an answer, not a task
/// ```
pub fn created_task(response: &ServerResult) -> Option<TaskLook> {
    match response {
        ServerResult::CreateTaskResult(r) => Some(TaskLook {
            task_id: r.task.task_id.clone(),
            status: core_status(r.task.status)?,
            poll_interval_ms: r.task.poll_interval_ms,
            result: None,
        })
        .filter(|t| !t.task_id.is_empty()),
        ServerResult::CustomResult(CustomResult(v)) => task_object(v.get("task")?),
        _ => None,
    }
}

/// A `tasks/get` answer about `task_id`, if it is one (either shape; another task's is not).
///
/// ```
/// use mcp_retry_policy::retry::TaskStatus;
/// use mcp_retry_policy::rmcp::tasks::task_look;
/// use rmcp::model::{CustomResult, ServerResult};
///
/// let answer = ServerResult::CustomResult(CustomResult(serde_json::json!({ "taskId": "t-1", "status": "completed" })));
/// assert_eq!(task_look(&answer, "t-1").map(|l| l.status), Some(TaskStatus::Completed));
/// assert_eq!(task_look(&answer, "t-2"), None); // another task's answer
/// ```
pub fn task_look(response: &ServerResult, task_id: &str) -> Option<TaskLook> {
    let look = match response {
        ServerResult::GetTaskResult(g) => {
            let result = match &g.task.payload {
                TaskPayload::Completed { result } => {
                    serde_json::from_value::<CallToolResult>(Value::Object(result.clone())).ok()
                }
                _ => None,
            };
            TaskLook {
                task_id: g.task.task.task_id.clone(),
                status: core_status(g.task.status())?,
                poll_interval_ms: g.task.task.poll_interval_ms,
                result,
            }
        }
        ServerResult::CustomResult(CustomResult(v)) => task_object(v)?,
        _ => return None,
    };
    (look.task_id == task_id).then_some(look)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server_result(v: Value) -> ServerResult {
        serde_json::from_value(v).unwrap_or_else(|e| ServerResult::CustomResult(CustomResult(json!(e.to_string()))))
    }

    #[test]
    fn a_2025_11_25_created_task_and_its_looks() {
        // What the TS SDK 1.32 server sends (InMemoryTaskStore).
        let created = server_result(json!({ "task": {
            "taskId": "t-1", "status": "working", "ttl": 60000, "pollInterval": 100,
            "createdAt": "2026-12-02T04:00:00.000Z", "lastUpdatedAt": "2026-12-02T04:00:00.000Z" } }));
        let t = created_task(&created);
        assert_eq!(
            t.map(|t| (t.task_id, t.status, t.poll_interval_ms)),
            Some(("t-1".into(), TaskStatus::Working, Some(100)))
        );
        let working = server_result(json!({ "taskId": "t-1", "status": "working", "ttl": 60000, "pollInterval": 100,
            "createdAt": "2026-12-02T04:00:00.000Z", "lastUpdatedAt": "2026-12-02T04:00:00.000Z" }));
        assert_eq!(task_look(&working, "t-1").map(|t| t.status), Some(TaskStatus::Working));
        assert_eq!(task_look(&working, "t-2"), None, "another task's look is not this one's");
        let done = server_result(json!({ "taskId": "t-1", "status": "completed", "ttl": 60000,
            "createdAt": "2026-12-02T04:00:00.000Z", "lastUpdatedAt": "2026-12-02T04:00:01.000Z" }));
        assert_eq!(task_look(&done, "t-1").map(|t| (t.status, t.result)), Some((TaskStatus::Completed, None)));
        let cancelled = server_result(json!({ "taskId": "t-1", "status": "cancelled", "statusMessage": "stopped",
            "createdAt": "x", "lastUpdatedAt": "y", "ttl": null }));
        assert_eq!(task_look(&cancelled, "t-1").map(|t| t.status), Some(TaskStatus::Cancelled));
    }

    #[test]
    fn a_sep_2663_task_carries_its_result() {
        let created = server_result(json!({ "resultType": "task", "taskId": "t-9", "status": "working",
            "createdAt": "x", "lastUpdatedAt": "y", "ttlMs": null, "pollIntervalMs": 250 }));
        assert_eq!(created_task(&created).map(|t| t.poll_interval_ms), Some(Some(250)));
        let done = server_result(json!({ "resultType": "complete", "taskId": "t-9", "status": "completed",
            "createdAt": "x", "lastUpdatedAt": "y", "ttlMs": null,
            "result": { "content": [{ "type": "text", "text": "ok" }] } }));
        let look = task_look(&done, "t-9");
        assert_eq!(look.as_ref().map(|t| t.status), Some(TaskStatus::Completed));
        assert!(look.and_then(|t| t.result).is_some());
    }

    #[test]
    fn what_is_not_a_task() {
        for v in [
            json!({ "content": [] }),
            json!({ "task": { "taskId": "", "status": "working" } }),
            json!({ "task": { "taskId": "t", "status": "sleeping" } }),
            json!({ "task": "t" }),
            json!({}),
        ] {
            assert_eq!(created_task(&server_result(v.clone())), None, "{v}");
        }
    }
}
