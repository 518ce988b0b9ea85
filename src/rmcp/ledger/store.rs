//! A ledger's keys, records and stores: the `LedgerStore` contract and the in-memory store.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Where a record lives: the authenticated tenant, the action (the tool), the operation id.
///
/// ```
/// use mcp_retry_policy::rmcp::LedgerKey;
///
/// // The tenant from the request's authentication, the action, the caller's operation id.
/// let key = LedgerKey { tenant: "alice".into(), action: "create_ticket".into(), operation_id: "op-0001-abcd".into() };
/// # let _ = key;
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LedgerKey {
    /// The authenticated principal (never from the tool's arguments).
    pub tenant: String,
    /// The action.
    pub action: String,
    /// The caller's operation id.
    pub operation_id: String,
}

/// A stored row: the record and the result text to replay (the result's JSON, kept as given).
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{LedgerKey, LedgerStore, MemoryLedgerStore, OperationLedger};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Arc::new(MemoryLedgerStore::new());
/// let ledger = OperationLedger::new(store.clone());
/// let key = LedgerKey { tenant: "alice".into(), action: "create_ticket".into(), operation_id: "op-0001-abcd".into() };
/// ledger.begin(&key, "input-fingerprint").await?; // claims it: a pending record
/// let row = store.get(&key).await?.expect("the claim");
/// assert_eq!(row.record.state.as_str(), "pending");
/// assert_eq!(row.result, None);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRecord {
    /// The core's record.
    pub record: Record,
    /// The encoded result, if one was stored.
    pub result: Option<String>,
}

/// A store failed.
///
/// ```
/// use mcp_retry_policy::rmcp::StoreError;
///
/// let e = StoreError("connection refused".into());
/// assert_eq!(e.to_string(), "ledger store: connection refused");
/// ```
#[derive(Debug)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ledger store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// What a store's operation returns: a boxed future (so that a store can be a trait object, and a network
/// store like Postgres can await its driver).
///
/// ```
/// use mcp_retry_policy::rmcp::{StoreError, StoreFuture};
///
/// // What a network store's method returns: its driver's future, boxed.
/// fn count_rows<'a>(rows: &'a [u8]) -> StoreFuture<'a, u64> {
///     Box::pin(async move { u64::try_from(rows.len()).map_err(|e| StoreError(e.to_string())) })
/// }
/// # let _ = count_rows;
/// ```
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// The store contract (the JS stores' `get`/`insert`/`replace`/`purge`/`unresolved`/`countUnresolved`):
/// `insert` and `replace` are atomic; `purge` never deletes an unresolved (`pending`, `unknown`) or `released`
/// record. The listings have a default that refuses (a store that cannot list: a [`StoreError`]).
///
/// A store of your own — here one that counts the reads of another store; a real one keeps the rows in its
/// database, with `insert` and `replace` atomic there:
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use mcp_retry_policy::ledger::record::Record;
/// use mcp_retry_policy::rmcp::{LedgerKey, LedgerStore, MemoryLedgerStore, OperationLedger, StoreFuture, StoredRecord};
///
/// #[derive(Default)]
/// struct Counted {
///     inner: MemoryLedgerStore,
///     reads: AtomicU64,
/// }
///
/// impl LedgerStore for Counted {
///     fn get<'a>(&'a self, key: &'a LedgerKey) -> StoreFuture<'a, Option<StoredRecord>> {
///         self.reads.fetch_add(1, Ordering::Relaxed);
///         self.inner.get(key)
///     }
///     fn insert<'a>(&'a self, key: &'a LedgerKey, record: &'a Record) -> StoreFuture<'a, bool> {
///         self.inner.insert(key, record)
///     }
///     fn replace<'a>(
///         &'a self,
///         key: &'a LedgerKey,
///         expected_version: u64,
///         record: &'a Record,
///         result: Option<&'a str>,
///     ) -> StoreFuture<'a, bool> {
///         self.inner.replace(key, expected_version, record, result)
///     }
///     fn purge(&self, now_ms: u64) -> StoreFuture<'_, u64> {
///         self.inner.purge(now_ms)
///     }
///     // `unresolved` and `count_unresolved` default to a refusal; the operators' listings need them.
/// }
///
/// let ledger = OperationLedger::new(Arc::new(Counted::default()));
/// # let _ = ledger;
/// ```
pub trait LedgerStore: Send + Sync {
    /// The row for `key`.
    fn get<'a>(&'a self, key: &'a LedgerKey) -> StoreFuture<'a, Option<StoredRecord>>;
    /// Stores `record` if no row exists for `key`; `false` if one does.
    fn insert<'a>(&'a self, key: &'a LedgerKey, record: &'a Record) -> StoreFuture<'a, bool>;
    /// Replaces the row if its version is `expected_version`; `false` otherwise. `result: None` leaves the
    /// row without one.
    fn replace<'a>(
        &'a self,
        key: &'a LedgerKey,
        expected_version: u64,
        record: &'a Record,
        result: Option<&'a str>,
    ) -> StoreFuture<'a, bool>;
    /// Deletes the resolved records (`succeeded`, `failed`) that expired at or before `now_ms`.
    fn purge(&self, now_ms: u64) -> StoreFuture<'_, u64>;
    /// The unresolved records (`pending`, `unknown`) of the filter's tenant and action, ordered by
    /// `created_ms` (then tenant, action, operation id), at most `filter.limit`.
    fn unresolved<'a>(&'a self, filter: &'a UnresolvedFilter) -> StoreFuture<'a, Vec<UnresolvedRecord>> {
        let _ = filter;
        ready(Err(StoreError("this store cannot list unresolved records".into())))
    }
    /// How many unresolved records each (tenant, action) of the filter holds, ordered by tenant and action.
    fn count_unresolved<'a>(&'a self, filter: &'a UnresolvedFilter) -> StoreFuture<'a, Vec<UnresolvedCount>> {
        let _ = filter;
        ready(Err(StoreError("this store cannot count unresolved records".into())))
    }
}

/// In memory: for tests and single-process servers.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
///
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new())); // lost with the process
/// # let _ = ledger;
/// ```
#[derive(Default)]
pub struct MemoryLedgerStore {
    rows: Mutex<HashMap<LedgerKey, StoredRecord>>,
}

impl MemoryLedgerStore {
    /// An empty store.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::MemoryLedgerStore;
    ///
    /// let store = MemoryLedgerStore::new();
    /// # let _ = store;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl MemoryLedgerStore {
    fn insert_now(&self, key: &LedgerKey, record: &Record) -> bool {
        let mut rows = lock(&self.rows);
        if rows.contains_key(key) {
            return false;
        }
        rows.insert(key.clone(), StoredRecord { record: record.clone(), result: None });
        true
    }

    fn replace_now(&self, key: &LedgerKey, expected: u64, record: &Record, result: Option<&str>) -> bool {
        let mut rows = lock(&self.rows);
        match rows.get_mut(key) {
            Some(row) if row.record.version == expected => {
                *row = StoredRecord { record: record.clone(), result: result.map(str::to_string) };
                true
            }
            _ => false,
        }
    }

    fn purge_now(&self, now_ms: u64) -> u64 {
        let mut rows = lock(&self.rows);
        let before = rows.len();
        rows.retain(|_, r| !purgeable(&r.record, now_ms));
        u64::try_from(before.saturating_sub(rows.len())).unwrap_or(u64::MAX)
    }

    fn unresolved_now(&self, filter: &UnresolvedFilter) -> Vec<UnresolvedRecord> {
        let rows = lock(&self.rows);
        let mut out: Vec<UnresolvedRecord> = rows
            .iter()
            .filter(|(k, r)| r.record.state.is_unresolved() && filter.matches(k))
            .map(|(k, r)| UnresolvedRecord { key: k.clone(), record: r.record.clone() })
            .collect();
        // The SQL stores' order: created, then the key.
        out.sort_by(|x, y| {
            (x.record.created_ms, &x.key.tenant, &x.key.action, &x.key.operation_id).cmp(&(
                y.record.created_ms,
                &y.key.tenant,
                &y.key.action,
                &y.key.operation_id,
            ))
        });
        out
    }
}

/// A future that is already done (the memory and SQLite stores answer at once).
///
/// ```
/// use mcp_retry_policy::rmcp::ledger::ready;
/// use mcp_retry_policy::rmcp::StoreFuture;
///
/// // A store whose calls answer at once (an in-process map, a blocking SQLite call) returns a ready future.
/// fn purge_nothing<'a>(_now_ms: u64) -> StoreFuture<'a, u64> {
///     ready(Ok(0))
/// }
/// # let _ = purge_nothing;
/// ```
pub fn ready<'a, T: Send + 'a>(value: Result<T, StoreError>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl LedgerStore for MemoryLedgerStore {
    fn get<'a>(&'a self, key: &'a LedgerKey) -> StoreFuture<'a, Option<StoredRecord>> {
        ready(Ok(lock(&self.rows).get(key).cloned()))
    }

    fn insert<'a>(&'a self, key: &'a LedgerKey, record: &'a Record) -> StoreFuture<'a, bool> {
        ready(Ok(self.insert_now(key, record)))
    }

    fn replace<'a>(
        &'a self,
        key: &'a LedgerKey,
        expected: u64,
        record: &'a Record,
        result: Option<&'a str>,
    ) -> StoreFuture<'a, bool> {
        ready(Ok(self.replace_now(key, expected, record, result)))
    }

    fn purge(&self, now_ms: u64) -> StoreFuture<'_, u64> {
        ready(Ok(self.purge_now(now_ms)))
    }

    fn unresolved<'a>(&'a self, filter: &'a UnresolvedFilter) -> StoreFuture<'a, Vec<UnresolvedRecord>> {
        let mut rows = self.unresolved_now(filter);
        rows.truncate(usize::try_from(filter.limit).unwrap_or(usize::MAX));
        ready(Ok(rows))
    }

    fn count_unresolved<'a>(&'a self, filter: &'a UnresolvedFilter) -> StoreFuture<'a, Vec<UnresolvedCount>> {
        let mut rows: Vec<_> =
            self.unresolved_now(filter).into_iter().map(|u| (u.key.tenant, u.key.action, u.record.state, 1)).collect();
        rows.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
        ready(Ok(fold_counts(rows)))
    }
}

/// A millisecond count or a version as the SQL stores keep it (a signed 64-bit integer, as the JS stores write
/// them); past `i64::MAX` it saturates.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn sql_int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A stored integer back (a negative one, which no ledger writes, reads as 0).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn sql_uint(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// Whether a purge at `now_ms` may delete `record`: resolved and expired (never unresolved or released).
///
/// ```
/// use mcp_retry_policy::ledger::record::{Record, RecordState};
/// use mcp_retry_policy::rmcp::ledger::purgeable;
///
/// let done = Record { state: RecordState::Succeeded, fingerprint: "f".into(), lease_until_ms: 0, created_ms: 0, expires_ms: 1_000, version: 2 };
/// assert!(purgeable(&done, 1_000));
/// assert!(!purgeable(&Record { state: RecordState::Unknown, ..done }, 1_000)); // unresolved: never
/// ```
pub fn purgeable(record: &Record, now_ms: u64) -> bool {
    matches!(record.state, RecordState::Succeeded | RecordState::Failed) && record.expires_ms <= now_ms
}
