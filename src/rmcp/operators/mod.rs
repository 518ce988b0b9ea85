//! The operators' side of the Rust ledger — the twin of the npm package's `operators.js`: the listings of
//! unresolved records ([`OperationLedger::unresolved`], [`OperationLedger::count_unresolved`]), an operator's
//! [`OperationLedger::release`] (one record) and [`OperationLedger::release_all`] (many, with one reason), and
//! [`OperationLedger::purge`]. The rules are the core's ([`crate::ledger::record::release`]); this module does
//! the store I/O, with the same version checks as every other write.

use serde_json::json;

use super::ledger::{LedgerKey, OperationLedger, StoreError};
use crate::ledger::record::{release, Record, RecordState, ReleaseRefusal};

mod error;
mod filter;

pub use error::OperatorError;
pub(crate) use filter::fold_counts;
pub use filter::{UnresolvedCount, UnresolvedFilter, UnresolvedRecord, DEFAULT_UNRESOLVED_LIMIT, MAX_UNRESOLVED_LIMIT};

/// A release that took effect.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::ledger::record::RecordState;
/// use mcp_retry_policy::rmcp::{LedgerKey, MemoryLedgerStore, OperationLedger};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
/// # let opts = mcp_retry_policy::rmcp::IdempotencyOptions::new("pay");
/// # let _ = mcp_retry_policy::rmcp::with_idempotency(&ledger, &opts, Some("alice"), args.as_object().unwrap(), || async {
/// #     Err(mcp_retry_policy::rmcp::OutcomeUnknown("the bank did not answer".into()))
/// # })
/// # .await;
/// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
/// let released = ledger.release(&key, "checked with the bank: no transfer").await?;
/// assert_eq!((released.previous_state, released.record.state), (RecordState::Unknown, RecordState::Released));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Released {
    /// The state it was released from (`pending` or `unknown`).
    pub previous_state: RecordState,
    /// The record as stored now (`released`).
    pub record: Record,
}

/// What [`OperationLedger::release_all`] did.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, UnresolvedFilter};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
/// # let opts = mcp_retry_policy::rmcp::IdempotencyOptions::new("pay");
/// # let _ = mcp_retry_policy::rmcp::with_idempotency(&ledger, &opts, Some("alice"), args.as_object().unwrap(), || async {
/// #     Err(mcp_retry_policy::rmcp::OutcomeUnknown("the bank did not answer".into()))
/// # })
/// # .await;
/// let done = ledger.release_all(&UnresolvedFilter::any().tenant("alice"), "the outage of 2 May: nothing reached the bank").await?;
/// assert_eq!((done.released.len(), done.refused.len()), (1, 0));
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
pub struct ReleasedAll {
    /// The keys released.
    pub released: Vec<LedgerKey>,
    /// The keys refused, with the refusal's code (`lease_live`, …).
    pub refused: Vec<(LedgerKey, &'static str)>,
}

fn reason_checked(reason: &str, what: &str) -> Result<(), OperatorError> {
    if reason.trim().is_empty() {
        return Err(OperatorError::Invalid {
            field: "reason",
            message: format!(
                "{what} needs a reason: a non-empty string saying how you know the operation did not happen"
            ),
        });
    }
    Ok(())
}

impl OperationLedger {
    /// The unresolved records (`pending`, `unknown`) `filter` selects, oldest first, at most `filter.limit`:
    /// what waits for the reconcile hook or a [`release`](OperationLedger::release). A store without the
    /// listing answers a [`StoreError`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, UnresolvedFilter};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// # let opts = mcp_retry_policy::rmcp::IdempotencyOptions::new("pay");
    /// # let _ = mcp_retry_policy::rmcp::with_idempotency(&ledger, &opts, Some("alice"), args.as_object().unwrap(), || async {
    /// #     Err(mcp_retry_policy::rmcp::OutcomeUnknown("the bank did not answer".into()))
    /// # })
    /// # .await;
    /// let listed = ledger.unresolved(&UnresolvedFilter::any().tenant("alice")).await?;
    /// assert_eq!(listed.len(), 1);
    /// assert_eq!(listed[0].record.state.as_str(), "unknown");
    /// # Ok(()) }
    /// ```
    pub async fn unresolved(&self, filter: &UnresolvedFilter) -> Result<Vec<UnresolvedRecord>, OperatorError> {
        let f = filter.checked(true)?;
        Ok(self.store().unresolved(f).await?)
    }

    /// How many unresolved records each (tenant, action) `filter` selects holds (its limit is not used).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, UnresolvedFilter};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// # let opts = mcp_retry_policy::rmcp::IdempotencyOptions::new("pay");
    /// # let _ = mcp_retry_policy::rmcp::with_idempotency(&ledger, &opts, Some("alice"), args.as_object().unwrap(), || async {
    /// #     Err(mcp_retry_policy::rmcp::OutcomeUnknown("the bank did not answer".into()))
    /// # })
    /// # .await;
    /// let counts = ledger.count_unresolved(&UnresolvedFilter::any()).await?;
    /// assert_eq!((counts[0].tenant.as_str(), counts[0].action.as_str(), counts[0].unknown), ("alice", "pay", 1));
    /// # Ok(()) }
    /// ```
    pub async fn count_unresolved(&self, filter: &UnresolvedFilter) -> Result<Vec<UnresolvedCount>, OperatorError> {
        let f = filter.checked(false)?;
        Ok(self.store().count_unresolved(f).await?)
    }

    /// Deletes the resolved records (`succeeded`, `failed`) that expired at or before `now_ms` (default: the
    /// ledger's clock) and answers how many went; never an unresolved or released one.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// # let opts = mcp_retry_policy::rmcp::IdempotencyOptions::new("pay");
    /// # let _ = mcp_retry_policy::rmcp::with_idempotency(&ledger, &opts, Some("alice"), args.as_object().unwrap(), || async {
    /// #     Err(mcp_retry_policy::rmcp::OutcomeUnknown("the bank did not answer".into()))
    /// # })
    /// # .await;
    /// // e.g. hourly: the expired replays go; the unknown record stays (unresolved records never expire).
    /// let deleted = ledger.purge(None).await?;
    /// assert_eq!(deleted, 0);
    /// # Ok(()) }
    /// ```
    pub async fn purge(&self, now_ms: Option<u64>) -> Result<u64, StoreError> {
        self.store().purge(now_ms.unwrap_or_else(|| self.now_ms())).await
    }

    /// An operator's way out for an unresolved record (`unknown`, or `pending` whose lease ran out) when the
    /// reconcile hook cannot tell: after checking by hand that the write did **not** take effect, release it,
    /// and the next call with the key executes. `reason` (required) is kept in the store beside the released
    /// record (`{"released":{"reason","previousState","atMs"}}`, as the JS ledger writes it). Refused:
    /// [`OperatorError::NotFound`], [`OperatorError::Refused`] (resolved, a live lease, already released),
    /// [`OperatorError::Contended`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{LedgerKey, MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// # let opts = mcp_retry_policy::rmcp::IdempotencyOptions::new("pay");
    /// # let _ = mcp_retry_policy::rmcp::with_idempotency(&ledger, &opts, Some("alice"), args.as_object().unwrap(), || async {
    /// #     Err(mcp_retry_policy::rmcp::OutcomeUnknown("the bank did not answer".into()))
    /// # })
    /// # .await;
    /// // Checked by hand that the transfer never reached the bank: let the key run again.
    /// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// ledger.release(&key, "checked with the bank: no transfer op-0001-abcd").await?;
    /// assert!(ledger.release(&key, "again").await.is_err()); // already released
    /// # Ok(()) }
    /// ```
    pub async fn release(&self, key: &LedgerKey, reason: &str) -> Result<Released, OperatorError> {
        reason_checked(reason, "release")?;
        for _ in 0..4 {
            let now = self.now_ms();
            let Some(stored) = self.store().get(key).await? else { return Err(OperatorError::NotFound) };
            let released = release(&stored.record, now, self.config()).map_err(OperatorError::Refused)?;
            let previous_state = stored.record.state;
            // The JS ledger's text, key order included (reason, previousState, atMs).
            let note = format!(
                "{{\"released\":{{\"reason\":{},\"previousState\":\"{}\",\"atMs\":{now}}}}}",
                json!(reason),
                previous_state.as_str()
            );
            if self.store().replace(key, stored.record.version, &released, Some(&note)).await? {
                return Ok(Released { previous_state, record: released });
            }
            // The record changed under us (a reconcile, a finish): look again.
        }
        Err(OperatorError::Contended)
    }

    /// Releases, with one `reason`, the unresolved records `filter` selects — at most `filter.limit` of them,
    /// oldest first — after you checked that none of them took effect. Each goes through
    /// [`release`](OperationLedger::release) (a live lease is refused, never released).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, UnresolvedFilter};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// # let opts = mcp_retry_policy::rmcp::IdempotencyOptions::new("pay");
    /// # let _ = mcp_retry_policy::rmcp::with_idempotency(&ledger, &opts, Some("alice"), args.as_object().unwrap(), || async {
    /// #     Err(mcp_retry_policy::rmcp::OutcomeUnknown("the bank did not answer".into()))
    /// # })
    /// # .await;
    /// let done = ledger.release_all(&UnresolvedFilter::any().action("pay"), "the bank confirmed none of these arrived").await?;
    /// for (key, code) in &done.refused {
    ///     println!("{} kept: {code}", key.operation_id); // e.g. lease_live
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn release_all(&self, filter: &UnresolvedFilter, reason: &str) -> Result<ReleasedAll, OperatorError> {
        reason_checked(reason, "release_all")?;
        let mut out = ReleasedAll::default();
        for UnresolvedRecord { key, .. } in self.unresolved(filter).await? {
            match self.release(&key, reason).await {
                Ok(_) => out.released.push(key),
                Err(OperatorError::Store(e)) => return Err(OperatorError::Store(e)),
                Err(e) => out.refused.push((key, e.code())),
            }
        }
        Ok(out)
    }
}
