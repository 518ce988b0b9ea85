//! The Rust face over [rmcp](https://docs.rs/rmcp), the official Rust MCP SDK (feature `rmcp`, native targets
//! only): the same promise as the npm package's `withRetry`, from the same core.
//!
//! [`RetryClient`] wraps a connected rmcp client. Each `tools/call` attempt is observed ([`classify`](mod@classify):
//! rmcp's errors → the core's [`AttemptOutcome`](crate::retry::AttemptOutcome)), and the core's
//! [`Engine`](crate::retry::Engine) decides: a tool is re-sent after an unknown delivery only when it is
//! read-only, idempotent or keyed (annotations count only for a trusted server); a keyed tool carries one
//! operation id, journaled before the first send; a lost session is re-initialized through the factory you
//! give. The [`CallOutcome`] is `succeeded | tool_error | failed | pending | unknown`, with the core's reasons
//! and words ([`message`](mod@message)).
//!
//! On the server side, [`with_idempotency`] runs an rmcp tool handler behind an [`OperationLedger`]: a repeat
//! with the same tenant, action, operation id and input returns the first result. Stores implement
//! [`LedgerStore`]: [`MemoryLedgerStore`], `SqliteLedgerStore` (feature `sqlite`) and `PostgresLedgerStore`
//! (feature `postgres`), on the npm package's own tables; [`StatusTool`] is the `operation_status` tool, for
//! the tenant the request's authentication gives (never the arguments). See `examples/rmcp-server`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use mcp_retry_policy::retry::{FinalStatus, Safety};
//! use mcp_retry_policy::rmcp::{RetryClient, RetryOptions};
//! use rmcp::model::CallToolRequestParams;
//! use rmcp::transport::StreamableHttpClientTransport;
//! use rmcp::ServiceExt;
//!
//! let url = "http://127.0.0.1:8080/mcp";
//! let connect = move || ().serve(StreamableHttpClientTransport::from_uri(url));
//! let client = RetryClient::new(connect().await?, RetryOptions::default().tool("create_ticket", Safety::Keyed))
//!     .reconnect(connect);
//! let args = serde_json::json!({ "title": "printer on fire" });
//! let call = CallToolRequestParams::new("create_ticket").with_arguments(args.as_object().cloned().unwrap_or_default());
//! let outcome = client.call_tool(call).await?;
//! match outcome.status {
//!     FinalStatus::Succeeded | FinalStatus::ToolError => println!("{:?}", outcome.result),
//!     // Failed, Unknown, Pending: tell the model what happened, in the core's words.
//!     _ => println!("{}", outcome.message),
//! }
//! # Ok(()) }
//! ```

pub mod classify;
pub mod client;
mod file_journal;
pub mod http_date;
pub mod journal;
pub mod lease;
pub mod ledger;
pub mod message;
pub mod operators;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod session;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod status;
pub mod tasks;
pub mod telemetry;
pub mod transaction;

pub use client::{new_operation_id, AttemptRecord, BoxError, CallError, CallOutcome, RetryClient, RetryOptions};
pub use journal::{FileJournal, Journal, JournalEntry, JournalError, MemoryJournal};
pub use ledger::{
    unstored_result, with_idempotency, with_idempotency_claimed, Begin, HandlerClaim, IdempotencyOptions, LedgerEvent,
    LedgerKey, LedgerStore, MaxResultBytesError, MemoryLedgerStore, OperationLedger, OperationLedgerBuilder,
    OutcomeUnknown, Reconcile, ReconcileFuture, ReconcileRequest, Reconciled, StoreError, StoreFuture, StoredRecord,
    DEFAULT_MAX_RESULT_BYTES, RESULT_NOT_STORED, STATUS_TOOL_NAME,
};
pub use message::{message_for, MessageParts};
pub use operators::{OperatorError, Released, ReleasedAll, UnresolvedCount, UnresolvedFilter, UnresolvedRecord};
#[cfg(feature = "postgres")]
pub use postgres::PostgresLedgerStore;
pub use session::{http_client, SessionId, SessionIdClient};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteLedgerStore;
pub use status::{status_tool, Authorize, AuthorizeFuture, StatusAsk, StatusTool};
pub use telemetry::TraceContext;
/// What a caller cancels a call with ([`RetryClient::call_tool_cancellable`]): tokio-util's, as rmcp's own.
///
/// ```
/// use mcp_retry_policy::rmcp::CancellationToken;
///
/// let cancel = CancellationToken::new();
/// let for_the_stop_button = cancel.clone();
/// for_the_stop_button.cancel();
/// assert!(cancel.is_cancelled());
/// ```
pub use tokio_util::sync::CancellationToken;
pub use transaction::{with_idempotency_atomic, Atomic, Transact, TxFailure, TxFuture, TxPlan};
