//! What an operator's listing selects (`UnresolvedFilter`: a tenant, an action, a limit) and what it answers
//! (`UnresolvedRecord`, `UnresolvedCount`).

#[allow(clippy::wildcard_imports)]
use super::*;

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
    pub(super) fn checked(&self, with_limit: bool) -> Result<&Self, OperatorError> {
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
