//! The operators' side of the Rust ledger — the twin of the npm package's `operators.js`: the listings of
//! unresolved records ([`OperationLedger::unresolved`], [`OperationLedger::count_unresolved`]), an operator's
//! [`OperationLedger::release`] (one record) and [`OperationLedger::release_all`] (many, with one reason), and
//! [`OperationLedger::purge`]. The rules are the core's ([`crate::ledger::record::release`]); this module does
//! the store I/O, with the same version checks as every other write.

use std::fmt;

use serde_json::json;

use super::ledger::{LedgerKey, OperationLedger, StoreError};
use crate::ledger::record::{release, Record, RecordState, ReleaseRefusal};

/// The largest `limit` of an unresolved listing (the JS `unresolved`'s bound).
///
/// ```
/// use mcp_retry_policy::rmcp::operators::{DEFAULT_UNRESOLVED_LIMIT, MAX_UNRESOLVED_LIMIT};
/// use mcp_retry_policy::rmcp::UnresolvedFilter;
///
/// assert_eq!(UnresolvedFilter::any().limit, DEFAULT_UNRESOLVED_LIMIT);
/// let widest = UnresolvedFilter::any().limit(MAX_UNRESOLVED_LIMIT);
/// # let _ = widest;
/// ```
pub const MAX_UNRESOLVED_LIMIT: u32 = 10_000;
/// The default `limit` of an unresolved listing.
///
/// ```
/// use mcp_retry_policy::rmcp::operators::DEFAULT_UNRESOLVED_LIMIT;
///
/// assert_eq!(DEFAULT_UNRESOLVED_LIMIT, 100);
/// ```
pub const DEFAULT_UNRESOLVED_LIMIT: u32 = 100;

/// Which unresolved records to list or count: a tenant and/or an action (each `None` for any), and at most
/// `limit` records (1 to [`MAX_UNRESOLVED_LIMIT`]; counts ignore it).
///
/// ```
/// use mcp_retry_policy::rmcp::UnresolvedFilter;
///
/// // Alice's unresolved `pay` records, the 20 oldest.
/// let filter = UnresolvedFilter::any().tenant("alice").action("pay").limit(20);
/// assert_eq!(filter.limit, 20);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnresolvedFilter {
    /// Only this tenant's records (non-empty), or every tenant's.
    pub tenant: Option<String>,
    /// Only this action's records (non-empty), or every action's.
    pub action: Option<String>,
    /// At most this many records, oldest first.
    pub limit: u32,
}

impl Default for UnresolvedFilter {
    fn default() -> Self {
        UnresolvedFilter { tenant: None, action: None, limit: DEFAULT_UNRESOLVED_LIMIT }
    }
}

impl UnresolvedFilter {
    /// Every tenant and action, the default limit (100).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::UnresolvedFilter;
    ///
    /// let every = UnresolvedFilter::any();
    /// assert_eq!((every.tenant, every.action, every.limit), (None, None, 100));
    /// ```
    pub fn any() -> Self {
        Self::default()
    }

    /// Only `tenant`'s records.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::UnresolvedFilter;
    ///
    /// let alices = UnresolvedFilter::any().tenant("alice");
    /// assert_eq!(alices.tenant.as_deref(), Some("alice"));
    /// ```
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// Only `action`'s records.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::UnresolvedFilter;
    ///
    /// let payments = UnresolvedFilter::any().action("pay");
    /// assert_eq!(payments.action.as_deref(), Some("pay"));
    /// ```
    pub fn action(mut self, action: impl Into<String>) -> Self {
        self.action = Some(action.into());
        self
    }

    /// At most `limit` records.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::UnresolvedFilter;
    ///
    /// // Checked when it is used: a limit of 0 (or over 10,000) is refused there, naming `limit`.
    /// let ten = UnresolvedFilter::any().limit(10);
    /// assert_eq!(ten.limit, 10);
    /// ```
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = limit;
        self
    }

    /// Whether `key` is one this filter selects (its tenant and action; not the limit).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::{LedgerKey, UnresolvedFilter};
    ///
    /// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// assert!(UnresolvedFilter::any().tenant("alice").matches(&key));
    /// assert!(!UnresolvedFilter::any().action("refund").matches(&key));
    /// ```
    pub fn matches(&self, key: &LedgerKey) -> bool {
        self.tenant.as_ref().map_or(true, |t| *t == key.tenant)
            && self.action.as_ref().map_or(true, |a| *a == key.action)
    }

    /// The filter the stores get, or what is wrong with it (the JS checks: a given tenant or action is
    /// non-empty; the limit is 1 to 10,000 when `with_limit`).
    fn checked(&self, with_limit: bool) -> Result<&Self, OperatorError> {
        for (field, v) in [("tenant", &self.tenant), ("action", &self.action)] {
            if v.as_ref().is_some_and(String::is_empty) {
                return Err(OperatorError::Invalid {
                    field,
                    message: format!("{field} must be a non-empty string, or left out for any"),
                });
            }
        }
        if with_limit && !(1..=MAX_UNRESOLVED_LIMIT).contains(&self.limit) {
            return Err(OperatorError::Invalid {
                field: "limit",
                message: format!("limit must be a whole number from 1 to {MAX_UNRESOLVED_LIMIT} ({})", self.limit),
            });
        }
        Ok(self)
    }
}

/// An unresolved record and its key, as the listing gives it.
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
/// for listed in ledger.unresolved(&UnresolvedFilter::any()).await? {
///     println!("{} {} {}: {}", listed.key.tenant, listed.key.action, listed.key.operation_id, listed.record.state.as_str());
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnresolvedRecord {
    /// Where it lives.
    pub key: LedgerKey,
    /// The record (`pending` or `unknown`).
    pub record: Record,
}

/// How many unresolved records one (tenant, action) holds.
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
/// for c in ledger.count_unresolved(&UnresolvedFilter::any()).await? {
///     println!("{} {}: {} pending, {} unknown", c.tenant, c.action, c.pending, c.unknown); // alice pay: 0 pending, 1 unknown
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnresolvedCount {
    /// The tenant.
    pub tenant: String,
    /// The action.
    pub action: String,
    /// Its `pending` records.
    pub pending: u64,
    /// Its `unknown` records.
    pub unknown: u64,
}

/// Folds `(tenant, action, state, n)` rows (ordered by tenant and action) into counts.
pub(crate) fn fold_counts(rows: impl IntoIterator<Item = (String, String, RecordState, u64)>) -> Vec<UnresolvedCount> {
    let mut out: Vec<UnresolvedCount> = Vec::new();
    for (tenant, action, state, n) in rows {
        let i = match out.iter().position(|c| c.tenant == tenant && c.action == action) {
            Some(i) => i,
            None => {
                out.push(UnresolvedCount { tenant, action, pending: 0, unknown: 0 });
                out.len().saturating_sub(1)
            }
        };
        if let Some(c) = out.get_mut(i) {
            match state {
                RecordState::Pending => c.pending = c.pending.saturating_add(n),
                RecordState::Unknown => c.unknown = c.unknown.saturating_add(n),
                _ => {}
            }
        }
    }
    out
}

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
