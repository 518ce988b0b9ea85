//! The server face over rmcp: an operation ledger for tool handlers, so that a replayed write returns its first
//! outcome — the Rust twin of the npm package's `OperationLedger` + `withIdempotency` (the status tool:
//! [`StatusTool`](super::status::StatusTool)). Every
//! rule (admit, claim, finish, lookup) is the core's ([`crate::ledger::record`]); the fingerprint is the core's
//! RFC 8785 + SHA-256 ([`mod@crate::ledger::fingerprint`]), byte for byte the JS ledger's; the stores keep the JS
//! stores' table, so both ledgers can share one database.
//!
//! A running handler's claim is renewed every third of its lease ([`OperationLedger::hold`]; a claim that cannot
//! be kept is told, `lease_lost`). A result too large to keep is recorded as a note with the state it ended in
//! ([`OperationLedgerBuilder::max_result_bytes`]). When an outcome is
//! not known — a claim whose lease ran out (its process died), or an `unknown` record ([`crate::ledger::Admission::Reconcile`])
//! — the ledger asks your reconcile hook ([`OperationLedgerBuilder::reconcile`], the JS `reconcile` option) and
//! records its answer with a version check; without a hook, or while the hook cannot tell, the record is
//! answered `unknown` and never executed again. An operator's [`release`](OperationLedger::release) (module
//! [`operators`](super::operators)) lets the key run again. A handler whose writes live in the ledger's own
//! database can commit them with its record in one transaction ([`with_idempotency_atomic`](super::transaction::with_idempotency_atomic)).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use ::rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject};
use serde_json::{json, Map, Value};

use super::client::BoxError;
pub use super::lease::HandlerClaim;
use super::lease::LiveClaims;
use super::operators::{fold_counts, UnresolvedCount, UnresolvedFilter, UnresolvedRecord};
use super::telemetry::TARGET;
use crate::ledger::fingerprint::fingerprint;
use crate::ledger::look::{Look, LookEnd, LookEvent, LookMode, LookStep, ReconcileVerdict};
use crate::ledger::record::{
    finish, keep_alive_ms, valid_operation_id, LedgerConfig, Lookup, Record, RecordState, IN_PROGRESS_POLL_MS,
};
use crate::ledger::reply::{Fill, Reply};
use crate::retry::LedgerStatus;
use crate::vocab::LEDGER_META_KEY;

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

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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

type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// What the reconcile hook is asked about: a record whose outcome is not known (a `pending` claim whose lease
/// ran out, or `unknown`), with its key and whatever result text the row holds.
///
/// ```
/// use mcp_retry_policy::rmcp::{BoxError, ReconcileRequest, Reconciled};
///
/// // A hook: the downstream system is asked by the operation id the write carried.
/// async fn reconcile(asked: ReconcileRequest) -> Result<Reconciled, BoxError> {
///     println!("{} {} {} ended {}?", asked.key.tenant, asked.key.action, asked.key.operation_id, asked.record.state.as_str());
///     Ok(Reconciled::Unknown)
/// }
/// # let _ = reconcile;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconcileRequest {
    /// Where it lives (tenant, action, operation id).
    pub key: LedgerKey,
    /// The stored record (`pending` past its lease, or `unknown`).
    pub record: Record,
    /// The stored result text, if any.
    pub result: Option<String>,
}

/// The reconcile hook's answer (the JS hook's `{ status, result? }`).
///
/// ```
/// use mcp_retry_policy::rmcp::Reconciled;
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// fn answer(found: Option<&str>, still_possible: bool) -> Reconciled {
///     match (found, still_possible) {
///         (Some(ticket), _) => Reconciled::Succeeded(CallToolResult::success(vec![ContentBlock::text(ticket)])),
///         (None, false) => Reconciled::NotDone, // provably not done, and it cannot happen any more: run it
///         (None, true) => Reconciled::Unknown,  // cannot tell yet: never run again, answered unknown
///     }
/// }
/// assert_eq!(answer(None, true), Reconciled::Unknown);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Reconciled {
    /// It took effect: this result is recorded (`succeeded`) and replayed from now on.
    Succeeded(CallToolResult),
    /// It ran and failed: this error result is recorded (`failed`) and replayed from now on.
    Failed(CallToolResult),
    /// It provably did not happen and cannot happen any more: nothing is recorded, and the call that asked
    /// claims the key and executes it (the only way an unresolved record runs again, besides an operator's
    /// release).
    NotDone,
    /// The hook cannot tell (yet): the record stays as it is, answered `unknown`.
    Unknown,
}

/// What a reconcile hook returns: a boxed future (so that the hook can be a trait object).
///
/// ```
/// use mcp_retry_policy::rmcp::{Reconcile, ReconcileFuture, ReconcileRequest, Reconciled};
///
/// struct Nothing;
///
/// impl Reconcile for Nothing {
///     fn reconcile<'a>(&'a self, _asked: &'a ReconcileRequest) -> ReconcileFuture<'a> {
///         Box::pin(async { Ok(Reconciled::Unknown) })
///     }
/// }
/// # let _ = Nothing;
/// ```
pub type ReconcileFuture<'a> = Pin<Box<dyn Future<Output = Result<Reconciled, BoxError>> + Send + 'a>>;

/// The reconcile hook ([`OperationLedgerBuilder::reconcile`]): asked when an outcome is not known. An `Err` is
/// told to the event observer (`reconcile_error`) and counts as [`Reconciled::Unknown`]. A closure
/// `Fn(ReconcileRequest) -> impl Future<Output = Result<Reconciled, BoxError>>` is one.
///
/// A hook with state of its own (a client of the downstream API), as a type:
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, Reconcile, ReconcileFuture, ReconcileRequest, Reconciled};
///
/// struct AskTheBank {
///     base_url: String,
/// }
///
/// impl Reconcile for AskTheBank {
///     fn reconcile<'a>(&'a self, asked: &'a ReconcileRequest) -> ReconcileFuture<'a> {
///         Box::pin(async move {
///             // e.g. GET {base_url}/transfers?idempotency_key={operation_id}
///             let _ = (&self.base_url, &asked.key.operation_id);
///             Ok(Reconciled::Unknown)
///         })
///     }
/// }
///
/// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
///     .reconcile(AskTheBank { base_url: "https://bank.example.com".into() })
///     .build()?;
/// # let _ = ledger;
/// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
/// ```
pub trait Reconcile: Send + Sync {
    /// Finds out what happened to `asked`'s operation.
    fn reconcile<'a>(&'a self, asked: &'a ReconcileRequest) -> ReconcileFuture<'a>;
}

impl<F, Fut> Reconcile for F
where
    F: Fn(ReconcileRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Reconciled, BoxError>> + Send + 'static,
{
    fn reconcile<'a>(&'a self, asked: &'a ReconcileRequest) -> ReconcileFuture<'a> {
        Box::pin(self(asked.clone()))
    }
}

/// What operators must know (the JS `onEvent` events this face has), told to [`OperationLedgerBuilder::on_event`].
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{LedgerEvent, MemoryLedgerStore, OperationLedger};
///
/// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
///     .on_event(|event| match event {
///         LedgerEvent::LeaseLost { key, reason, .. } => eprintln!("{}: claim lost ({reason})", key.operation_id),
///         other => eprintln!("ledger: {} {:?}", other.kind(), other.key()),
///     })
///     .build()?;
/// # let _ = ledger;
/// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LedgerEvent {
    /// The reconcile hook failed (`Err`): answered as if it said `unknown`.
    ReconcileError {
        /// The key asked about.
        key: LedgerKey,
        /// The hook's error, as text.
        error: String,
    },
    /// A finish found its claim no longer the record's (its lease was lost and the record changed hands):
    /// the outcome was not recorded.
    LateFinish {
        /// The key.
        key: LedgerKey,
        /// The claim's version.
        version: u64,
        /// The state that was not recorded.
        state: RecordState,
    },
    /// The store failed during `during`: `begin` (the admission: a read or the claim), `renew` (a running
    /// claim's renewal), `finish`, `status`, `transaction` (before the handler ran) or `commit` (no answer: it
    /// may have committed).
    StoreError {
        /// The step.
        during: &'static str,
        /// The key, if one.
        key: Option<LedgerKey>,
        /// The store's error, as text.
        error: String,
    },
    /// A result was not stored (it could not be encoded, it is longer than the ledger's
    /// [`max_result_bytes`](OperationLedgerBuilder::max_result_bytes), or the store refused it): the record ends
    /// in `state` with a note in place of the result (a `result_not_stored` answer), never left pending.
    ResultNotStored {
        /// The key.
        key: LedgerKey,
        /// The state the record ended in.
        state: RecordState,
        /// Why the result was not stored.
        why: String,
    },
    /// A running handler's claim could not be kept ([`OperationLedger::hold`]): `reason` is `record_changed`
    /// (another run claimed the key after the lease ended) or `not_renewed` (no renewal won before the give-up
    /// point, a third of the lease before its end, on the local monotonic clock: the store failed or hung, the
    /// process was paused, its wall clock stopped). Another run may take over; if one does, this run's finish is
    /// refused (`late_finish`). Until the handler returns, a repeat in this process still hears `in_progress`.
    LeaseLost {
        /// The key.
        key: LedgerKey,
        /// The fencing token: the version the claim was made with.
        fence: u64,
        /// `record_changed` or `not_renewed`.
        reason: &'static str,
    },
    /// A renewal came late (past two thirds of the lease: the process stalled) but still held the claim: the
    /// lease is too short for this process.
    LeaseLate {
        /// The key.
        key: LedgerKey,
        /// The fencing token.
        fence: u64,
        /// How much of the lease was left when the renewal was made (0: none).
        left_ms: u64,
    },
    /// The status tool's [`Authorize`](super::status::Authorize) hook failed: answered as a refusal
    /// (`not_found`).
    AuthorizeError {
        /// The key asked about.
        key: LedgerKey,
        /// The hook's error, as text.
        error: String,
    },
    /// A handler failed inside its transaction (`during`: `transaction`): everything was rolled back.
    HandlerError {
        /// The step.
        during: &'static str,
        /// The key.
        key: LedgerKey,
        /// The handler's error, as text.
        error: String,
    },
}

impl LedgerEvent {
    /// The key the event is about, if one.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::{LedgerEvent, LedgerKey};
    ///
    /// let key = LedgerKey { tenant: "t".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// let event = LedgerEvent::ReconcileError { key: key.clone(), error: "timeout".into() };
    /// assert_eq!(event.key(), Some(&key));
    /// ```
    pub fn key(&self) -> Option<&LedgerKey> {
        match self {
            LedgerEvent::ReconcileError { key, .. }
            | LedgerEvent::LateFinish { key, .. }
            | LedgerEvent::ResultNotStored { key, .. }
            | LedgerEvent::LeaseLost { key, .. }
            | LedgerEvent::LeaseLate { key, .. }
            | LedgerEvent::AuthorizeError { key, .. }
            | LedgerEvent::HandlerError { key, .. } => Some(key),
            LedgerEvent::StoreError { key, .. } => key.as_ref(),
        }
    }

    /// The JS event's `type`: `reconcile_error`, `late_finish`, `store_error`, `result_not_stored`,
    /// `lease_lost`, `lease_late`, `authorize_error`, `handler_error`.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::LedgerEvent;
    ///
    /// let event = LedgerEvent::StoreError { during: "finish", key: None, error: "disk full".into() };
    /// assert_eq!(event.kind(), "store_error");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            LedgerEvent::ResultNotStored { .. } => "result_not_stored",
            LedgerEvent::LeaseLost { .. } => "lease_lost",
            LedgerEvent::LeaseLate { .. } => "lease_late",
            LedgerEvent::AuthorizeError { .. } => "authorize_error",
            LedgerEvent::ReconcileError { .. } => "reconcile_error",
            LedgerEvent::LateFinish { .. } => "late_finish",
            LedgerEvent::StoreError { .. } => "store_error",
            LedgerEvent::HandlerError { .. } => "handler_error",
        }
    }
}

type Observer = Arc<dyn Fn(&LedgerEvent) + Send + Sync>;

/// The operation ledger over a store.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{with_idempotency, IdempotencyOptions, MemoryLedgerStore, OperationLedger};
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // One ledger per server (cheap to clone: clones share the store and what this process holds).
/// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).build()?;
/// let args = serde_json::json!({ "title": "Printer on fire", "operation_id": "op-0001-abcd" });
/// let answer = with_idempotency(&ledger, &IdempotencyOptions::new("create_ticket"), Some("alice"), args.as_object().unwrap(), || async {
///     Ok(CallToolResult::success(vec![ContentBlock::text("opened T-1")]))
/// })
/// .await;
/// assert_ne!(answer.is_error, Some(true));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OperationLedger {
    store: Arc<dyn LedgerStore>,
    config: LedgerConfig,
    now: Clock,
    actions: Arc<Mutex<Vec<String>>>,
    reconcile: Option<Arc<dyn Reconcile>>,
    observer: Option<Observer>,
    max_result_bytes: usize,
    // The claims this process holds now (`hold`, until its handler returns): the in-process guard — never
    // reconciled here. Each key's entry is the hold that listed it (the JS `live` map's `ClaimHold`).
    pub(super) live: Arc<LiveClaims>,
}

/// Builds an [`OperationLedger`] ([`OperationLedger::builder`]; the JS `new OperationLedger({ … })`'s options):
/// every setter takes the builder and returns it, and [`build`](Self::build) checks the settings once, at the
/// end — a setting out of range never breaks the chain.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
///
/// let too_small = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(0).build();
/// assert_eq!(too_small.err().map(|e| e.bytes), Some(0)); // the error names the refused value
/// ```
#[must_use = "a builder does nothing until `build()`"]
pub struct OperationLedgerBuilder {
    store: Arc<dyn LedgerStore>,
    config: LedgerConfig,
    now: Clock,
    reconcile: Option<Arc<dyn Reconcile>>,
    observer: Option<Observer>,
    max_result_bytes: usize,
}

impl fmt::Debug for OperationLedgerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OperationLedgerBuilder")
            .field("config", &self.config)
            .field("reconcile", &self.reconcile.is_some())
            .field("on_event", &self.observer.is_some())
            .field("max_result_bytes", &self.max_result_bytes)
            .finish_non_exhaustive()
    }
}

impl OperationLedgerBuilder {
    /// The TTL of a resolved record and the lease of a claim ([`LedgerConfig::new`] checks that the TTL is at
    /// least the lease; default 24 h and 60 s).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use mcp_retry_policy::ledger::record::LedgerConfig;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
    ///     .config(LedgerConfig::new(3_600_000, 10_000)?) // an hour's replays, a 10 s lease renewed every ~3 s
    ///     .build()?;
    /// assert_eq!(ledger.config().ttl_ms, 3_600_000);
    /// # Ok(()) }
    /// ```
    pub fn config(mut self, config: LedgerConfig) -> Self {
        self.config = config;
        self
    }

    /// Another clock (ms since the Unix epoch; default the wall clock), e.g. a fixed one in tests.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).clock(|| 1_000_000).build()?;
    /// assert_eq!(ledger.now_ms(), 1_000_000);
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn clock(mut self, now: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        self.now = Arc::new(now);
        self
    }

    /// The reconcile hook (the JS `reconcile` option): asked when an outcome is not known — a claim whose
    /// lease ran out (its run's renewals stopped), or an `unknown` record — by a call of the same key
    /// ([`begin`](OperationLedger::begin)) and by the status lookup ([`status`](OperationLedger::status));
    /// never while this process holds a live claim on the key. Its answer is recorded with a version check
    /// (the record changed meanwhile → look again): [`Reconciled::Succeeded`] / [`Reconciled::Failed`] are
    /// recorded and replayed, [`Reconciled::NotDone`] lets the asking call execute, [`Reconciled::Unknown`]
    /// (or an `Err`) changes nothing.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{BoxError, MemoryLedgerStore, OperationLedger, ReconcileRequest, Reconciled};
    /// use rmcp::model::{CallToolResult, ContentBlock};
    ///
    /// // Where the write would have landed: here, a set of the operation ids the ticket system holds.
    /// let tickets: Arc<std::collections::HashSet<String>> = Arc::new(["0b6f3c1e-8d2a".to_string()].into());
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
    ///     .reconcile(move |asked: ReconcileRequest| {
    ///         let found = tickets.contains(&asked.key.operation_id);
    ///         std::future::ready(Ok::<_, BoxError>(if found {
    ///             Reconciled::Succeeded(CallToolResult::success(vec![ContentBlock::text("opened")]))
    ///         } else {
    ///             Reconciled::Unknown // no proof either way: it is never run again
    ///         }))
    ///     })
    ///     .build()?;
    /// # let _ = ledger;
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn reconcile(mut self, hook: impl Reconcile + 'static) -> Self {
        self.reconcile = Some(Arc::new(hook));
        self
    }

    /// An observer of what operators must know ([`LedgerEvent`]; the JS `onEvent`). Each event is also counted
    /// through `tracing`, with or without an observer.
    ///
    /// ```
    /// # use std::sync::{Arc, Mutex};
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
    ///     .on_event(move |e| log.lock().unwrap().push(e.kind()))
    ///     .build()?;
    /// # let _ = ledger;
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn on_event(mut self, observer: impl Fn(&LedgerEvent) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// The largest result text (UTF-8 bytes, 1 … 1 GiB; default 1 MiB) a record keeps (the JS
    /// `maxResultBytes`): a longer one is recorded as a note saying so, with the state the operation ended in
    /// ([`LedgerEvent::ResultNotStored`]). Checked by [`build`](Self::build).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(256 * 1024).build()?;
    /// assert_eq!(ledger.max_result_bytes(), 262_144);
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// The ledger, or what is out of range ([`max_result_bytes`](Self::max_result_bytes) outside 1 … 1 GiB:
    /// the error names the value).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).build()?;
    /// # let _ = ledger;
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn build(self) -> Result<OperationLedger, MaxResultBytesError> {
        checked_max_result_bytes(self.max_result_bytes)?;
        Ok(self.assemble())
    }

    /// The ledger, the settings taken as they are (the defaults are valid).
    fn assemble(self) -> OperationLedger {
        OperationLedger {
            store: self.store,
            config: self.config,
            now: self.now,
            actions: Arc::default(),
            reconcile: self.reconcile,
            observer: self.observer,
            max_result_bytes: self.max_result_bytes,
            live: Arc::default(),
        }
    }
}

fn checked_max_result_bytes(bytes: usize) -> Result<usize, MaxResultBytesError> {
    if (1..=MAX_RESULT_BYTES_LIMIT).contains(&bytes) {
        Ok(bytes)
    } else {
        Err(MaxResultBytesError { bytes })
    }
}

/// What the ledger made of a write ([`OperationLedger::begin`]).
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::ledger::fingerprint;
/// use mcp_retry_policy::ledger::record::RecordState;
/// use mcp_retry_policy::rmcp::{Begin, LedgerKey, MemoryLedgerStore, OperationLedger};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
/// let input = fingerprint(r#"{"amount":5}"#)?;
/// match ledger.begin(&key, &input).await? {
///     Begin::Execute(claim) => {
///         // Run the write, then record how it ended (with the claim, its fence).
///         ledger.finish(&key, &claim, RecordState::Succeeded, Some(r#"{"content":[]}"#)).await?;
///     }
///     Begin::Replay { result, .. } => println!("the first outcome again: {result:?}"),
///     Begin::InProgress { retry_after_ms } => println!("running: check back in {retry_after_ms} ms"),
///     Begin::Conflict => println!("this id was used with other input"),
///     Begin::Unknown => println!("not known whether it happened: never run again"),
/// }
/// // The same key and input again: its first outcome.
/// assert!(matches!(ledger.begin(&key, &input).await?, Begin::Replay { state: RecordState::Succeeded, .. }));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Begin {
    /// Run it: this claim is yours; [`OperationLedger::finish`] with it.
    Execute(Record),
    /// Its first outcome, to return again (or the one the reconcile hook found).
    Replay {
        /// How it ended.
        state: RecordState,
        /// The stored result text.
        result: Option<String>,
    },
    /// The same operation is running now.
    InProgress {
        /// When to check back.
        retry_after_ms: u64,
    },
    /// The id was used with other input.
    Conflict,
    /// Its outcome is not known (an `unknown` record, or a claim whose lease ran out) and the reconcile hook
    /// (if any) could not tell: never run again here.
    Unknown,
}

/// Where [`OperationLedger::advance`] stopped: the look ended, or a claim is to be written.
pub(crate) enum Halt {
    /// The look is over.
    Done(LookEnd),
    /// Write this claim (insert, or replace version `expected`), then feed back whether it won.
    Claim { claim: Record, expected: Option<u64> },
}

/// What the face holds between a look's steps (the driver keeps no record).
#[derive(Default)]
pub(crate) struct Seen {
    /// The row read last.
    stored: Option<StoredRecord>,
    /// The reconcile hook's result, until it is written.
    found: Option<CallToolResult>,
    /// The result text just recorded for the hook's answer (`Some(text)`), replayed instead of the stored one.
    reconciled: Option<Option<String>>,
}

impl Seen {
    pub(crate) fn record(&self) -> Option<&Record> {
        self.stored.as_ref().map(|s| &s.record)
    }

    /// The result text a replay returns: the one just reconciled, else the stored one.
    fn result(&mut self) -> Option<String> {
        match self.reconciled.take() {
            Some(text) => text,
            None => self.stored.as_mut().and_then(|s| s.result.take()),
        }
    }

    /// `begin`'s answer for a look's end (`claim`: the one written, when it won).
    pub(crate) fn begin(&mut self, end: LookEnd, claim: Option<Record>) -> Begin {
        match (end, claim) {
            (LookEnd::Execute { .. }, Some(claim)) => Begin::Execute(claim),
            (LookEnd::Replay(state), _) => Begin::Replay { state, result: self.result() },
            (LookEnd::InProgress { retry_after_ms }, _) => Begin::InProgress { retry_after_ms },
            (LookEnd::Conflict, _) => Begin::Conflict,
            (LookEnd::Execute { .. } | LookEnd::Unknown | LookEnd::NotFound | LookEnd::NotDone, _) => Begin::Unknown,
        }
    }
}

fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl OperationLedger {
    /// A ledger over `store` with the defaults: the core's TTL (24 h) and lease (60 s), the wall clock, no
    /// reconcile hook, no event observer, results kept up to 1 MiB. Anything else: [`OperationLedger::builder`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, DEFAULT_MAX_RESULT_BYTES};
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// assert_eq!(ledger.max_result_bytes(), DEFAULT_MAX_RESULT_BYTES);
    /// assert_eq!(ledger.config().lease_ms, 60_000);
    /// ```
    pub fn new(store: Arc<dyn LedgerStore>) -> Self {
        OperationLedger::builder(store).assemble()
    }

    /// A builder for a ledger over `store` with other settings (the JS `new OperationLedger({ … })`'s options):
    /// each setter takes and returns the builder, and [`build`](OperationLedgerBuilder::build) checks them all
    /// at once.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::ledger::record::LedgerConfig;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, ReconcileRequest, Reconciled};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
    ///     .config(LedgerConfig::new(7 * 86_400_000, 30_000)?) // keep results a week, a 30 s lease
    ///     // Asked about a write whose outcome is not known: look it up where it would have landed.
    ///     .reconcile(|_asked: ReconcileRequest| std::future::ready(Ok(Reconciled::Unknown)))
    ///     .on_event(|e| eprintln!("ledger: {}", e.kind()))
    ///     .max_result_bytes(64 * 1024)
    ///     .build()?;
    /// assert_eq!(ledger.max_result_bytes(), 65_536);
    /// # Ok(()) }
    /// ```
    pub fn builder(store: Arc<dyn LedgerStore>) -> OperationLedgerBuilder {
        OperationLedgerBuilder {
            store,
            config: LedgerConfig::default(),
            now: Arc::new(wall_ms),
            reconcile: None,
            observer: None,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
        }
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`config`](OperationLedgerBuilder::config)`(config)`.
    #[deprecated(note = "use `OperationLedger::builder(store).config(config).build()`")]
    pub fn with_config(mut self, config: LedgerConfig) -> Self {
        self.config = config;
        self
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`clock`](OperationLedgerBuilder::clock)`(now)`.
    #[deprecated(note = "use `OperationLedger::builder(store).clock(now).build()`")]
    pub fn with_clock(mut self, now: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        self.now = Arc::new(now);
        self
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`reconcile`](OperationLedgerBuilder::reconcile)`(hook)`.
    #[deprecated(note = "use `OperationLedger::builder(store).reconcile(hook).build()`")]
    pub fn with_reconcile(mut self, hook: impl Reconcile + 'static) -> Self {
        self.reconcile = Some(Arc::new(hook));
        self
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`on_event`](OperationLedgerBuilder::on_event)`(observer)`.
    #[deprecated(note = "use `OperationLedger::builder(store).on_event(observer).build()`")]
    pub fn on_event(mut self, observer: impl Fn(&LedgerEvent) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`max_result_bytes`](OperationLedgerBuilder::max_result_bytes)`(bytes)`,
    /// checked by [`build`](OperationLedgerBuilder::build) (this one's `Result` broke the chain).
    #[deprecated(note = "use `OperationLedger::builder(store).max_result_bytes(bytes).build()`")]
    pub fn with_max_result_bytes(mut self, bytes: usize) -> Result<Self, MaxResultBytesError> {
        self.max_result_bytes = checked_max_result_bytes(bytes)?;
        Ok(self)
    }

    /// The largest result text a record keeps ([`OperationLedgerBuilder::max_result_bytes`]).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(4096).build()?;
    /// assert_eq!(ledger.max_result_bytes(), 4096);
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn max_result_bytes(&self) -> usize {
        self.max_result_bytes
    }

    /// The text to store for `result`, which ended in `state`: its JSON, or — when it cannot be encoded or is
    /// longer than [`max_result_bytes`](Self::max_result_bytes) — a note saying so and why (told as
    /// [`LedgerEvent::ResultNotStored`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::ledger::record::RecordState;
    /// use mcp_retry_policy::rmcp::{LedgerKey, MemoryLedgerStore, OperationLedger};
    /// use rmcp::model::{CallToolResult, ContentBlock};
    ///
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(100).build()?;
    /// let key = LedgerKey { tenant: "t".into(), action: "report".into(), operation_id: "op-0001-abcd".into() };
    /// let big = CallToolResult::success(vec![ContentBlock::text("x".repeat(500))]);
    /// let text = ledger.result_text(&key, RecordState::Succeeded, &big);
    /// assert!(text.contains("result_not_stored")); // the note, in place of 500 bytes
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn result_text(&self, key: &LedgerKey, state: RecordState, result: &CallToolResult) -> String {
        match serde_json::to_string(result) {
            Ok(text) => self.checked_text(key, state, text),
            Err(e) => self.not_stored(key, state, format!("encoding it failed: {e}")),
        }
    }

    /// `text` if it fits [`max_result_bytes`](Self::max_result_bytes), else the note.
    fn checked_text(&self, key: &LedgerKey, state: RecordState, text: String) -> String {
        if text.len() <= self.max_result_bytes {
            return text;
        }
        let why = format!("it is longer than the ledger's max_result_bytes, {} bytes", self.max_result_bytes);
        self.not_stored(key, state, why)
    }

    fn not_stored(&self, key: &LedgerKey, state: RecordState, why: String) -> String {
        let note = unstored_result(state, &key.operation_id, &why);
        self.emit(LedgerEvent::ResultNotStored { key: key.clone(), state, why });
        serde_json::to_string(&note).unwrap_or_default()
    }

    /// The store.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let purged = ledger.store().purge(ledger.now_ms()).await?;
    /// assert_eq!(purged, 0);
    /// # Ok(()) }
    /// ```
    pub fn store(&self) -> &Arc<dyn LedgerStore> {
        &self.store
    }

    /// The settings.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// assert_eq!((ledger.config().ttl_ms, ledger.config().lease_ms), (86_400_000, 60_000));
    /// ```
    pub fn config(&self) -> &LedgerConfig {
        &self.config
    }

    /// The ledger's clock, now.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// assert!(ledger.now_ms() > 1_700_000_000_000); // the wall clock, ms since the Unix epoch
    /// ```
    pub fn now_ms(&self) -> u64 {
        (self.now)()
    }

    /// Tells the observer, and counts the incident through [`tracing`] (the JS `mcp_retry_policy.ledger.incidents`
    /// counter): an event `mcp_retry_policy.ledger.incident` with `monotonic_counter.mcp_retry_policy.ledger.incidents`,
    /// the event's kind and its action (not the tenant, not the error text).
    pub(crate) fn emit(&self, event: LedgerEvent) {
        tracing::event!(
            name: "mcp_retry_policy.ledger.incident",
            target: TARGET,
            tracing::Level::WARN,
            monotonic_counter.mcp_retry_policy.ledger.incidents = 1_u64,
            mcp_retry_policy.ledger.incident = event.kind(),
            mcp_retry_policy.ledger.action = event.key().map(|k| k.action.as_str()),
        );
        if let Some(o) = &self.observer {
            o(&event);
        }
    }

    /// A live claim of this process on `key` whose handler still runs here — its renewals given up on or not —
    /// and whose record is still the one it holds (pending, at its version; the JS `ClaimHold.holds`): in
    /// progress, never reconciled. A claim another run took (a new version) is not this process's any more.
    fn held(&self, key: &LedgerKey, record: &Record) -> Option<u64> {
        let mine = lock(&self.live).get(key).is_some_and(|live| live.version == record.version);
        (record.state == RecordState::Pending && mine).then(|| IN_PROGRESS_POLL_MS.min(keep_alive_ms(&self.config)))
    }

    /// Admits a write with input `fingerprint`: one look through the core's driver (`crate::ledger::look`), this
    /// face carrying out its steps — the store's reads and writes, the in-process guard, the reconcile hook.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::ledger::fingerprint;
    /// use mcp_retry_policy::rmcp::{Begin, LedgerKey, MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// assert!(matches!(ledger.begin(&key, &fingerprint(r#"{"amount":5}"#)?).await?, Begin::Execute(_)));
    /// // While the first runs, the same key: in progress; other input under the same id: a conflict.
    /// assert!(matches!(ledger.begin(&key, &fingerprint(r#"{"amount":5}"#)?).await?, Begin::InProgress { .. }));
    /// assert_eq!(ledger.begin(&key, &fingerprint(r#"{"amount":6}"#)?).await?, Begin::Conflict);
    /// # Ok(()) }
    /// ```
    pub async fn begin(&self, key: &LedgerKey, fingerprint: &str) -> Result<Begin, StoreError> {
        let mut look = Look::new(LookMode::Claim);
        let mut seen = Seen::default();
        let mut step = LookStep::Read;
        loop {
            match self.advance(key, fingerprint, &mut look, step, &mut seen).await? {
                Halt::Done(end) => return Ok(seen.begin(end, None)),
                Halt::Claim { claim, expected } => {
                    let won = match expected {
                        None => self.store.insert(key, &claim).await?,
                        Some(v) => self.store.replace(key, v, &claim, None).await?,
                    };
                    step = look.step(LookEvent::Wrote(won), seen.record(), fingerprint, (self.now)(), &self.config);
                    if let LookStep::Done(end) = step {
                        return Ok(seen.begin(end, Some(claim)));
                    }
                }
            }
        }
    }

    /// Carries out `look`'s steps from `step` until it ends or asks for a claim to be written (`Halt::Claim`:
    /// written here by `begin`, in the store's transaction by `execute_atomically`). `seen` keeps what the face
    /// holds between steps: the record read last and the result text it replays.
    pub(crate) async fn advance(
        &self,
        key: &LedgerKey,
        fingerprint: &str,
        look: &mut Look,
        mut step: LookStep,
        seen: &mut Seen,
    ) -> Result<Halt, StoreError> {
        loop {
            let event = match step {
                LookStep::Done(end) => return Ok(Halt::Done(end)),
                LookStep::WriteClaim { claim, expected } => return Ok(Halt::Claim { claim, expected }),
                LookStep::Read => {
                    seen.stored = self.store.get(key).await?;
                    seen.reconciled = None;
                    let same_input = seen.stored.as_ref().is_some_and(|s| s.record.fingerprint == fingerprint);
                    LookEvent::Read { same_input }
                }
                LookStep::AskHeld => LookEvent::Held(seen.record().and_then(|r| self.held(key, r))),
                LookStep::AskReconcile => LookEvent::Reconciled(self.ask_reconcile(key, seen).await),
                LookStep::WriteReconciled { record, state } => {
                    let text = seen.found.take().map(|result| self.result_text(key, state, &result));
                    let expected = seen.record().map_or(0, |r| r.version);
                    let won = self.store.replace(key, expected, &record, text.as_deref()).await?;
                    seen.reconciled = Some(text);
                    LookEvent::Wrote(won)
                }
            };
            step = look.step(event, seen.record(), fingerprint, (self.now)(), &self.config);
        }
    }

    /// Asks the reconcile hook about the record read last (none: unknown; its `Err` told, and unknown). The
    /// result of a resolved answer is kept in `seen` for the write that records it.
    async fn ask_reconcile(&self, key: &LedgerKey, seen: &mut Seen) -> ReconcileVerdict {
        let (Some(hook), Some(stored)) = (&self.reconcile, &seen.stored) else { return ReconcileVerdict::Unknown };
        let asked = ReconcileRequest { key: key.clone(), record: stored.record.clone(), result: stored.result.clone() };
        match hook.reconcile(&asked).await {
            Err(e) => {
                self.emit(LedgerEvent::ReconcileError { key: key.clone(), error: e.to_string() });
                ReconcileVerdict::Unknown
            }
            Ok(Reconciled::Unknown) => ReconcileVerdict::Unknown,
            Ok(Reconciled::NotDone) => ReconcileVerdict::NotDone,
            Ok(Reconciled::Succeeded(r)) => {
                seen.found = Some(r);
                ReconcileVerdict::Resolved(RecordState::Succeeded)
            }
            Ok(Reconciled::Failed(r)) => {
                seen.found = Some(r);
                ReconcileVerdict::Resolved(RecordState::Failed)
            }
        }
    }

    /// Records how an executed write ended (the core's `finish`); `false` when the claim was lost (another
    /// claim replaced it: this run's outcome is not written over it; told as [`LedgerEvent::LateFinish`]).
    /// A result text longer than [`max_result_bytes`](Self::max_result_bytes), or one the store refuses (an
    /// `Err` on the write: too large for it, say), is recorded as a note with the state it ended in, never
    /// left pending ([`LedgerEvent::ResultNotStored`]); an `Err` is returned only when the note's write fails
    /// too.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::ledger::record::RecordState;
    /// use mcp_retry_policy::rmcp::{Begin, LedgerKey, MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// let Begin::Execute(claim) = ledger.begin(&key, "input-fingerprint").await? else { unreachable!() };
    /// // The downstream call timed out after it was sent: not known whether it took effect.
    /// assert!(ledger.finish(&key, &claim, RecordState::Unknown, None).await?);
    /// # Ok(()) }
    /// ```
    pub async fn finish(
        &self,
        key: &LedgerKey,
        claimed: &Record,
        state: RecordState,
        result: Option<&str>,
    ) -> Result<bool, StoreError> {
        let text = result.map(|t| self.checked_text(key, state, t.to_string()));
        self.finish_text(key, claimed, state, text).await
    }

    /// [`finish`](Self::finish) with a text already checked ([`result_text`](Self::result_text)).
    pub(crate) async fn finish_text(
        &self,
        key: &LedgerKey,
        claimed: &Record,
        state: RecordState,
        text: Option<String>,
    ) -> Result<bool, StoreError> {
        let done = finish(claimed, state, (self.now)(), &self.config);
        let ok = match self.store.replace(key, claimed.version, &done, text.as_deref()).await {
            Ok(ok) => ok,
            Err(e) if text.is_some() && state != RecordState::Unknown => {
                self.emit(LedgerEvent::StoreError { during: "finish", key: Some(key.clone()), error: e.to_string() });
                // The store refused the result: the outcome is recorded with a note instead.
                let note = self.not_stored(key, state, "the store refused it".into());
                self.store.replace(key, claimed.version, &done, Some(&note)).await?
            }
            Err(e) => return Err(e),
        };
        if !ok {
            self.emit(LedgerEvent::LateFinish { key: key.clone(), version: claimed.version, state });
        }
        Ok(ok)
    }

    /// What the ledger knows about `key`, read-only (the core's `lookup`; nothing is claimed or executed):
    /// the status tool's answer — `(status, result, retry_after_ms)`. An outcome not known is asked of the
    /// reconcile hook (its resolved answer is recorded; `not_done` is answered, nothing recorded); without
    /// one, or while it cannot tell, `unknown`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{LedgerKey, MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// let (status, result, retry_after_ms) = ledger.status(&key).await?;
    /// assert_eq!((status, result, retry_after_ms), ("not_found", None, None));
    /// # Ok(()) }
    /// ```
    pub async fn status(&self, key: &LedgerKey) -> Result<(&'static str, Option<String>, Option<u64>), StoreError> {
        let mut look = Look::new(LookMode::Status);
        let mut seen = Seen::default();
        let end = match self.advance(key, "", &mut look, LookStep::Read, &mut seen).await? {
            Halt::Done(end) => end,
            Halt::Claim { .. } => LookEnd::Unknown, // a status look never claims (the driver's tests)
        };
        Ok(match end {
            LookEnd::Replay(state) => (state.as_str(), seen.result(), None),
            LookEnd::InProgress { retry_after_ms } => ("in_progress", None, Some(retry_after_ms)),
            LookEnd::NotFound => (Lookup::NotFound.as_str(), None, None),
            LookEnd::NotDone => (Lookup::NotDone.as_str(), None, None),
            LookEnd::Execute { .. } | LookEnd::Conflict | LookEnd::Unknown => ("unknown", None, None),
        })
    }

    fn add_action(&self, action: &str) {
        let mut a = lock(&self.actions);
        if !a.iter().any(|x| x == action) {
            a.push(action.to_string());
        }
    }

    /// The action `operation_id` is recorded under for `tenant`: the asked one, else the one registered action
    /// that holds it; `Err(())` when several do (ambiguous).
    pub(crate) async fn locate(
        &self,
        tenant: &str,
        action: &str,
        operation_id: &str,
    ) -> Result<Option<Result<String, ()>>, StoreError> {
        let key = |a: &str| LedgerKey { tenant: tenant.into(), action: a.into(), operation_id: operation_id.into() };
        if self.store.get(&key(action)).await?.is_some() {
            return Ok(Some(Ok(action.to_string())));
        }
        let actions = lock(&self.actions).clone();
        let mut found = Vec::new();
        for a in actions.iter().filter(|a| *a != action) {
            if self.store.get(&key(a)).await?.is_some() {
                found.push(a.clone());
            }
        }
        Ok(match found.len() {
            0 => None,
            1 => found.pop().map(Ok),
            _ => Some(Err(())),
        })
    }
}

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

fn one(k: &str, v: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(k.into(), v);
    m
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

fn replayed(text: Option<&str>, state: RecordState, operation_id: &str) -> CallToolResult {
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
const MAX_RESULT_BYTES_LIMIT: usize = 1 << 30;

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

/// The checks before any claim (operation id, tenant, fingerprint): the key and the input's fingerprint, or
/// the `rejected` answer.
pub(crate) fn prepared(
    ledger: &OperationLedger,
    options: &IdempotencyOptions,
    tenant: Option<&str>,
    arguments: &JsonObject,
) -> Result<(LedgerKey, String), CallToolResult> {
    let arg = options.operation_id_argument.as_str();
    ledger.add_action(&options.action);
    let Some(operation_id) = arguments.get(arg).and_then(Value::as_str).filter(|id| valid_operation_id(id)) else {
        return Err(ledger_reply(Reply::InvalidOperationId, None, Fill { arg, ..Fill::default() }, Map::new()));
    };
    let Some(tenant) = tenant.filter(|t| !t.is_empty()) else {
        return Err(ledger_reply(Reply::Unauthenticated, Some(operation_id), Fill::default(), Map::new()));
    };
    let key = LedgerKey { tenant: tenant.into(), action: options.action.clone(), operation_id: operation_id.into() };
    let mut input = arguments.clone();
    input.remove(arg);
    match serde_json::to_string(&input)
        .map_err(|e| e.to_string())
        .and_then(|t| fingerprint(&t).map_err(|e| e.to_string()))
    {
        Ok(p) => Ok((key, p)),
        Err(why) => {
            let fill = Fill { why: &why, ..Fill::default() };
            Err(ledger_reply(Reply::Unfingerprintable, Some(operation_id), fill, Map::new()))
        }
    }
}

/// The answer for an admission that does not execute here (a replay, a conflict, …); `None` for `Execute`.
pub(crate) fn answer_begin(begin: Begin, operation_id: &str, arg: &str) -> Option<CallToolResult> {
    Some(match begin {
        Begin::Execute(_) => return None,
        Begin::Replay { state, result } => replayed(result.as_deref(), state, operation_id),
        Begin::Conflict => {
            ledger_reply(Reply::Conflict, Some(operation_id), Fill { arg, ..Fill::default() }, Map::new())
        }
        Begin::InProgress { retry_after_ms } => ledger_reply(
            Reply::InProgress,
            Some(operation_id),
            Fill { arg, ..Fill::default() },
            one("retryAfterMs", json!(retry_after_ms)),
        ),
        Begin::Unknown => unknown_reply(operation_id, arg, None),
    })
}

/// Runs `handler` behind `ledger` for one `tools/call`: a replayed write (same tenant, action, operation id and
/// input) returns its first outcome instead of running again. `tenant` is the authenticated principal (from
/// the request's authentication, never the arguments); `arguments` the call's. The checks before any claim
/// (operation id, tenant, fingerprint) answer `rejected`; the ledger's own answers carry
/// `_meta["dev.mcp-retry-policy/ledger"]` as the JS ledger's do, which [`RetryClient`](super::RetryClient) and
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
    let (result, replayed) = idempotent(ledger, options, tenant, arguments, handler).await;
    count_answer(&options.action, &result, replayed);
    result
}

/// [`with_idempotency`]'s answer, and whether it is a replay.
async fn idempotent<F, Fut>(
    ledger: &OperationLedger,
    options: &IdempotencyOptions,
    tenant: Option<&str>,
    arguments: &JsonObject,
    handler: F,
) -> (CallToolResult, bool)
where
    F: FnOnce(HandlerClaim) -> Fut,
    Fut: Future<Output = Result<CallToolResult, OutcomeUnknown>>,
{
    let arg = options.operation_id_argument.as_str();
    let (key, print) = match prepared(ledger, options, tenant, arguments) {
        Ok(p) => p,
        Err(refused) => return (refused, false),
    };
    let operation_id = key.operation_id.as_str();
    let claimed = match ledger.begin(&key, &print).await {
        Err(e) => {
            ledger.emit(LedgerEvent::StoreError { during: "begin", key: Some(key.clone()), error: e.to_string() });
            return (store_down(operation_id, arg), false);
        }
        Ok(Begin::Execute(claimed)) => claimed,
        Ok(other) => {
            let replayed = matches!(other, Begin::Replay { .. });
            let answer =
                answer_begin(other, operation_id, arg).unwrap_or_else(|| unknown_reply(operation_id, arg, None));
            return (answer, replayed);
        }
    };
    let fence = claimed.version;
    let (ran, claimed) =
        ledger.hold_with(&key, claimed, |standing| handler(HandlerClaim::new(key.clone(), fence, standing))).await;
    let (state, result) = match ran {
        Ok(r) => (if r.is_error == Some(true) { RecordState::Failed } else { RecordState::Succeeded }, r),
        Err(OutcomeUnknown(why)) => (RecordState::Unknown, unknown_reply(operation_id, arg, Some(&why))),
    };
    let text = if state == RecordState::Unknown { None } else { Some(ledger.result_text(&key, state, &result)) };
    // A failed or lost finish leaves the record pending: after its lease it is reconciled (or answered
    // unknown). The caller still gets the truth now.
    if let Err(e) = ledger.finish_text(&key, &claimed, state, text).await {
        ledger.emit(LedgerEvent::StoreError { during: "finish", key: Some(key.clone()), error: e.to_string() });
    }
    (result, false)
}

/// Counts one answer of the ledger through [`tracing`] (the JS `mcp_retry_policy.ledger.answers` counter): an
/// event `mcp_retry_policy.ledger.answer` whose `monotonic_counter.mcp_retry_policy.ledger.answers` field
/// `tracing-opentelemetry`'s `MetricsLayer` turns into that counter, with the answer kind (`execute`, `replay`,
/// `conflict`, `in_progress`, `unknown`, `rejected`, `rolled_back`) and the action — not the tenant.
pub(crate) fn count_answer(action: &str, result: &CallToolResult, replayed: bool) {
    let meta = result.meta.as_ref().and_then(|m| m.get(LEDGER_META_KEY));
    let field = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str);
    let kind = match field("status") {
        Some(s) if s == LedgerStatus::Rejected.as_str() && field("reason") == Some("rolled_back") => "rolled_back",
        Some(s) if s != RESULT_NOT_STORED => s,
        _ if replayed => "replay",
        _ => "execute",
    };
    tracing::event!(
        name: "mcp_retry_policy.ledger.answer",
        target: TARGET,
        tracing::Level::INFO,
        monotonic_counter.mcp_retry_policy.ledger.answers = 1_u64,
        mcp_retry_policy.ledger.answer = kind,
        mcp_retry_policy.ledger.action = action,
    );
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
