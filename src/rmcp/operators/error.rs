//! Why an operator's request was refused: `OperatorError`.

use std::fmt;

#[allow(clippy::wildcard_imports)]
use super::*;

/// What an operator's call refused, or the store's failure.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{LedgerKey, MemoryLedgerStore, OperationLedger, OperatorError};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-never-used".into() };
/// match ledger.release(&key, "checked with the bank: no transfer").await {
///     Err(OperatorError::NotFound) => {} // no record: nothing to release
///     other => panic!("{other:?}"),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub enum OperatorError {
    /// A bad argument (`field`: `reason`, `tenant`, `action`, `limit`, `now_ms`).
    Invalid {
        /// The argument.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// There is no record for the key: nothing to release.
    NotFound,
    /// The core refused the release: the record is resolved, its lease is live, or it is already released.
    Refused(ReleaseRefusal),
    /// The record kept changing under the release (four looks): try again.
    Contended,
    /// The store failed.
    Store(StoreError),
}

impl OperatorError {
    /// The stable snake_case code: the JS refusals' `code` (`not_found`, `resolved`, `lease_live`,
    /// `already_released`, `contended`), `invalid_argument` or `store_unavailable`.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::OperatorError;
    ///
    /// assert_eq!(OperatorError::NotFound.code(), "not_found");
    /// assert_eq!(OperatorError::Contended.code(), "contended");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            OperatorError::Invalid { .. } => "invalid_argument",
            OperatorError::NotFound => "not_found",
            OperatorError::Refused(r) => r.code(),
            OperatorError::Contended => "contended",
            OperatorError::Store(_) => "store_unavailable",
        }
    }
}

impl fmt::Display for OperatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OperatorError::Invalid { field, message } => write!(f, "{field}: {message}"),
            OperatorError::NotFound => f.write_str("there is no ledger record for this key: nothing to release"),
            OperatorError::Refused(ReleaseRefusal::Resolved(s)) => write!(
                f,
                "its outcome is recorded ({}) and is replayed: only an unresolved (pending or unknown) record can be released",
                s.as_str()
            ),
            OperatorError::Refused(ReleaseRefusal::LeaseLive { retry_after_ms }) => write!(
                f,
                "its claim is live for {retry_after_ms} ms more: the operation may be running now. Release it after the lease ends"
            ),
            OperatorError::Refused(ReleaseRefusal::AlreadyReleased) => {
                f.write_str("it is already released: the next call executes")
            }
            OperatorError::Contended => f.write_str("the record keeps changing; try again"),
            OperatorError::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for OperatorError {}

impl From<StoreError> for OperatorError {
    fn from(e: StoreError) -> Self {
        OperatorError::Store(e)
    }
}
