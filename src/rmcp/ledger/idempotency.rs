//! `with_idempotency`: a tool handler behind the ledger, and the replies it answers with (the core's words).

#[allow(clippy::wildcard_imports)]
use super::*;

/// How [`with_idempotency`] reads a call.
///
/// ```
/// use mcp_retry_policy::rmcp::IdempotencyOptions;
///
/// // The records of `create_ticket` calls, keyed by their `operation_id` argument.
/// let options = IdempotencyOptions::new("create_ticket");
/// assert_eq!((options.action.as_str(), options.operation_id_argument.as_str()), ("create_ticket", "operation_id"));
/// ```
#[derive(Clone, Debug)]
pub struct IdempotencyOptions {
    /// The action the records are kept under (usually the tool's name).
    pub action: String,
    /// The argument that carries the operation id (default `operation_id`).
    pub operation_id_argument: String,
}

impl IdempotencyOptions {
    /// Options for `action` (the records are kept under it: usually the tool's name), with the default
    /// operation-id argument, `operation_id`.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::IdempotencyOptions;
    ///
    /// let options = IdempotencyOptions::new("create_ticket");
    /// assert_eq!(options.operation_id_argument, "operation_id");
    /// ```
    pub fn new(action: impl Into<String>) -> Self {
        IdempotencyOptions { action: action.into(), operation_id_argument: "operation_id".into() }
    }

    /// Another argument that carries the operation id (the client's `operation_id_argument` must match).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::IdempotencyOptions;
    ///
    /// let options = IdempotencyOptions::new("transfer").operation_id_argument("idempotency_key");
    /// assert_eq!(options.operation_id_argument, "idempotency_key");
    /// ```
    pub fn operation_id_argument(mut self, name: impl Into<String>) -> Self {
        self.operation_id_argument = name.into();
        self
    }
}

/// What a handler may answer besides a result: it cannot say whether its write took effect (a downstream
/// timeout after submission). The ledger records `unknown`, never success or a clean failure; the message is
/// shown to the model.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{with_idempotency, IdempotencyOptions, MemoryLedgerStore, OperationLedger, OutcomeUnknown};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
/// let answer = with_idempotency(&ledger, &IdempotencyOptions::new("pay"), Some("alice"), args.as_object().unwrap(), || async {
///     // The bank took the transfer, then the connection dropped: it may or may not have committed.
///     Err(OutcomeUnknown("the bank did not answer after the transfer was sent".into()))
/// })
/// .await;
/// assert_eq!(answer.is_error, Some(true)); // told as unknown; the record stays unknown, never run again
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct OutcomeUnknown(pub String);

pub(crate) fn reply(
    status: &str,
    operation_id: Option<&str>,
    text: String,
    extra: Map<String, Value>,
) -> CallToolResult {
    let mut body = Map::new();
    body.insert("status".into(), json!(status));
    if let Some(id) = operation_id {
        body.insert("operationId".into(), json!(id));
    }
    body.extend(extra);
    let mut meta = MetaObject(JsonObject::new());
    meta.0.insert(LEDGER_META_KEY.to_string(), Value::Object(body));
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    r.meta = Some(meta);
    r
}

/// The ledger's reply `kind` (the core's status, reason and words, `crate::ledger::reply`) for `operation_id`,
/// its words filled from `fill`, with `extra` under the ledger's `_meta` key beside them.
pub(crate) fn ledger_reply(
    kind: Reply,
    operation_id: Option<&str>,
    fill: Fill<'_>,
    extra: Map<String, Value>,
) -> CallToolResult {
    let mut body = Map::new();
    if let Some(reason) = kind.reason() {
        body.insert("reason".into(), json!(reason));
    }
    body.extend(extra);
    let text = kind.words(&Fill { id: operation_id.unwrap_or_default(), ..fill });
    reply(kind.status(), operation_id, text, body)
}

pub(crate) fn unknown_reply(operation_id: &str, arg: &str, why: Option<&str>) -> CallToolResult {
    let fill = Fill { arg, why: why.unwrap_or_default(), ..Fill::default() };
    ledger_reply(Reply::Unknown, Some(operation_id), fill, Map::new())
}

pub(crate) fn store_down(operation_id: &str, arg: &str) -> CallToolResult {
    ledger_reply(Reply::StoreDown, Some(operation_id), Fill { arg, ..Fill::default() }, Map::new())
}

pub(super) fn replayed(text: Option<&str>, state: RecordState, operation_id: &str) -> CallToolResult {
    let parsed = text.and_then(|t| serde_json::from_str::<CallToolResult>(t).ok());
    parsed.unwrap_or_else(|| unstored_result(state, operation_id, "the stored text is not a result"))
}

/// The `_meta` status of a note stored in place of a result (the JS `unstoredResult`'s).
///
/// ```
/// use mcp_retry_policy::rmcp::{RESULT_NOT_STORED, STATUS_TOOL_NAME};
/// use mcp_retry_policy::vocab::LEDGER_META_KEY;
/// use rmcp::model::CallToolResult;
///
/// /// Whether a replayed answer is the note in place of a result the ledger could not keep.
/// fn is_note(r: &CallToolResult) -> bool {
///     let meta = r.meta.as_ref().and_then(|m| m.get(LEDGER_META_KEY));
///     meta.and_then(|m| m.get("status")).and_then(|s| s.as_str()) == Some(RESULT_NOT_STORED)
/// }
/// # let _ = (is_note, STATUS_TOOL_NAME);
/// ```
pub const RESULT_NOT_STORED: &str = "result_not_stored";

/// The default [`OperationLedger::max_result_bytes`]: 1 MiB of result text per record (the JS default).
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, DEFAULT_MAX_RESULT_BYTES};
///
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// assert_eq!(ledger.max_result_bytes(), DEFAULT_MAX_RESULT_BYTES);
/// ```
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1 << 20;
pub(super) const MAX_RESULT_BYTES_LIMIT: usize = 1 << 30;

/// [`OperationLedgerBuilder::max_result_bytes`] out of range (1 … 1 GiB), as [`OperationLedgerBuilder::build`]
/// tells it.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{MaxResultBytesError, MemoryLedgerStore, OperationLedger};
///
/// let refused = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(0).build();
/// assert_eq!(refused.err(), Some(MaxResultBytesError { bytes: 0 }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxResultBytesError {
    /// The refused value.
    pub bytes: usize,
}

impl fmt::Display for MaxResultBytesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "max_result_bytes must be 1 … {MAX_RESULT_BYTES_LIMIT} bytes, not {}", self.bytes)
    }
}

impl std::error::Error for MaxResultBytesError {}

/// A note stored (and replayed) in place of a result that could not be stored (the JS `unstoredResult`):
/// `state` says how the operation ended (`failed`: an error result), `_meta` carries `status`
/// `result_not_stored`, the state, the operation id and the reason.
///
/// ```
/// use mcp_retry_policy::ledger::record::RecordState;
/// use mcp_retry_policy::rmcp::unstored_result;
///
/// let note = unstored_result(RecordState::Succeeded, "op-0001-abcd", "it is longer than 1 MiB");
/// assert_eq!(note.is_error, Some(false)); // it succeeded: only its result is gone
/// ```
pub fn unstored_result(state: RecordState, operation_id: &str, why: &str) -> CallToolResult {
    let failed = state == RecordState::Failed;
    let ended = if failed { "ran and reported an error" } else { "succeeded" };
    let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
        "The operation {operation_id} {ended}; its result could not be stored ({why}), so it cannot be shown again. It has taken effect: do not repeat it with a new operation id."
    ))]);
    r.is_error = Some(failed);
    let mut body = Map::new();
    body.insert("status".into(), json!(RESULT_NOT_STORED));
    body.insert("state".into(), json!(state.as_str()));
    body.insert("operationId".into(), json!(operation_id));
    body.insert("reason".into(), json!(why));
    let mut meta = MetaObject(JsonObject::new());
    meta.0.insert(LEDGER_META_KEY.to_string(), Value::Object(body));
    r.meta = Some(meta);
    r
}

/// Runs `handler` behind `ledger` for one `tools/call`: a replayed write (same tenant, action, operation id and
/// input) returns its first outcome instead of running again. `tenant` is the authenticated principal (from
/// the request's authentication, never the arguments); `arguments` the call's. The checks before any claim
/// (operation id, tenant, fingerprint) answer `rejected`; the ledger's own answers carry
/// `_meta["dev.mcp-retry-policy/ledger"]` as the JS ledger's do, which [`RetryClient`](crate::rmcp::RetryClient) and
/// `withRetry` read. An unresolved record is asked of the ledger's reconcile hook; it runs again only when
/// the hook answers [`Reconciled::NotDone`].
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{with_idempotency, IdempotencyOptions, MemoryLedgerStore, OperationLedger};
/// use rmcp::model::{CallToolResult, ContentBlock};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// let options = IdempotencyOptions::new("create_ticket");
/// let call = serde_json::json!({ "title": "Printer on fire", "operation_id": "0b6f3c1e-8d2a-4f7e-9c3b-2a1d5e6f7a8b" });
/// let arguments = call.as_object().unwrap();
/// let mut runs = 0;
/// for _ in 0..2 {
///     // In `ServerHandler::call_tool`: the tenant from the request's authentication.
///     let answer = with_idempotency(&ledger, &options, Some("alice"), arguments, || async {
///         runs += 1; // the write itself
///         Ok(CallToolResult::success(vec![ContentBlock::text("opened T-1")]))
///     })
///     .await;
///     assert_ne!(answer.is_error, Some(true));
/// }
/// assert_eq!(runs, 1); // the repeat replayed the first outcome
/// # }
/// ```
pub async fn with_idempotency<F, Fut>(
    ledger: &OperationLedger,
    options: &IdempotencyOptions,
    tenant: Option<&str>,
    arguments: &JsonObject,
    handler: F,
) -> CallToolResult
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<CallToolResult, OutcomeUnknown>>,
{
    with_idempotency_claimed(ledger, options, tenant, arguments, |_| handler()).await
}

/// [`with_idempotency`] whose handler gets its [`HandlerClaim`] (the JS `claimOf(extra)`): the key, the fencing
/// token to pass downstream (so that a stale writer can be refused there too), and
/// [`HandlerClaim::until_lost`] to stop when the claim can no longer be kept (`lease_lost`: another run may take
/// over).
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{with_idempotency_claimed, HandlerClaim, IdempotencyOptions, MemoryLedgerStore, OperationLedger, OutcomeUnknown};
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
/// let answer = with_idempotency_claimed(&ledger, &IdempotencyOptions::new("pay"), Some("alice"), args.as_object().unwrap(), |claim: HandlerClaim| async move {
///     // Pass the fence downstream: a store that keeps the highest fence it saw refuses a stale writer.
///     let fence = claim.fence();
///     if let Some(why) = claim.lost() {
///         return Err(OutcomeUnknown(format!("not committed: the claim was lost ({why})")));
///     }
///     Ok(CallToolResult::success(vec![ContentBlock::text(format!("paid (fence {fence})"))]))
/// })
/// .await;
/// assert_ne!(answer.is_error, Some(true));
/// # Ok(()) }
/// ```
pub async fn with_idempotency_claimed<F, Fut>(
    ledger: &OperationLedger,
    options: &IdempotencyOptions,
    tenant: Option<&str>,
    arguments: &JsonObject,
    handler: F,
) -> CallToolResult
where
    F: FnOnce(HandlerClaim) -> Fut,
    Fut: Future<Output = Result<CallToolResult, OutcomeUnknown>>,
{
    let (result, kind) = super::write::idempotent(ledger, options, tenant, arguments, handler).await;
    super::write::count_answer(&options.action, kind);
    result
}

/// The status tool's default name (the same as the JS `registerStatusTool`'s).
///
/// ```
/// use mcp_retry_policy::rmcp::{status_tool, STATUS_TOOL_NAME};
///
/// assert_eq!(STATUS_TOOL_NAME, "operation_status");
/// assert_eq!(status_tool().name, STATUS_TOOL_NAME);
/// ```
pub const STATUS_TOOL_NAME: &str = crate::ledger::status_tool::NAME;
