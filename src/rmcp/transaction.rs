//! The write and its record in one transaction — the Rust twin of the JS ledger's `executeAtomically` and
//! `withIdempotency`'s `transaction: true`: where the business data lives in the ledger's database, the claim,
//! the handler's own writes and the `succeeded`/`failed` record commit together, or none of them does. No
//! pending claim is ever visible, so a crash before the commit leaves neither the write nor a record (the next
//! call with the id executes) and never an `unknown`. Nor is there a lease to lose: the claim's version (its
//! fence) is checked inside the transaction, by the claim's own compare-and-set and by the record's over it, so
//! a run another request got ahead of rolls back without running (its claim does not apply) and no stale owner
//! commits; a concurrent claim of the key waits for the transaction's end (SQLite's write lock, up to the
//! store's busy timeout; Postgres's row and unique-index locks), then finds it resolved.
//!
//! The ledger decides (the core's `admit`, `claim`, `finish`, the reconcile hook on an unresolved record);
//! the store runs the transaction through a [`Transact`]: `SqliteLedgerStore::transact` (the handler gets the
//! `rusqlite::Connection` inside `BEGIN IMMEDIATE`, and runs synchronously) or `PostgresLedgerStore::transact`
//! (the handler gets a `tokio_postgres::Transaction` on a connection of the store's own, and may await).

use std::future::Future;
use std::pin::Pin;

use ::rmcp::model::{CallToolResult, JsonObject};

use super::ledger::{
    Begin, Halt, IdempotencyOptions, LedgerEvent, LedgerKey, LedgerStore, OperationLedger, Seen, StoreError,
};
use crate::ledger::look::{Look, LookEvent, LookMode, LookStep};
use crate::ledger::record::{finish, Record, RecordState};

/// One transaction to run: the key, the claim to write first (insert when [`TxPlan::expected_version`] is
/// `None`, else replace that version; if that does not apply — another request got there first — roll back
/// and answer `Ok(None)` without running the handler), then the handler, then the record
/// ([`TxPlan::record_for`]) over the claim, then commit.
///
/// The plan a [`Transact`] carries out (its methods, in the order they are used):
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{LedgerStore, MemoryLedgerStore, OperationLedger, StoreError, Transact, TxFailure, TxFuture, TxPlan};
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// /// A transaction on a memory store — not atomic, to show the steps; a real store runs them in one database
/// /// transaction (as `SqliteLedgerStore::transact` and `PostgresLedgerStore::transact` do).
/// struct Steps<'s> {
///     store: &'s MemoryLedgerStore,
/// }
///
/// impl Transact for Steps<'_> {
///     fn transact<'a>(&'a mut self, plan: &'a TxPlan) -> TxFuture<'a> {
///         Box::pin(async move {
///             if !plan.is_for(self.store) {
///                 return Err(TxFailure::Store(StoreError("not the ledger's store".into())));
///             }
///             // 1. The claim: an insert, or a replace of the version the ledger read.
///             let claimed = match plan.expected_version() {
///                 None => self.store.insert(plan.key(), plan.claim()).await,
///                 Some(v) => self.store.replace(plan.key(), v, plan.claim(), None).await,
///             };
///             if !claimed.map_err(TxFailure::Store)? {
///                 return Ok(None); // another request got there first: nothing ran
///             }
///             // 2. The handler's own writes (here: none), and its result.
///             let result = CallToolResult::success(vec![ContentBlock::text("opened T-1")]);
///             // 3. The record over the claim; 4. commit.
///             let (record, text) = plan.record_for(&result);
///             let version = plan.claim().version;
///             self.store.replace(plan.key(), version, &record, text.as_deref()).await.map_err(TxFailure::Store)?;
///             Ok(Some(result))
///         })
///     }
/// }
///
/// let store = Arc::new(MemoryLedgerStore::new());
/// let ledger = OperationLedger::new(store.clone());
/// # let _ = (ledger, Steps { store: &store });
/// ```
pub struct TxPlan {
    key: LedgerKey,
    claim: Record,
    expected: Option<u64>,
    ledger: OperationLedger,
}

impl TxPlan {
    /// The key.
    pub fn key(&self) -> &LedgerKey {
        &self.key
    }

    /// The pending claim to write first (its version is the fencing token).
    pub fn claim(&self) -> &Record {
        &self.claim
    }

    /// The version the claim replaces; `None`: insert it (no row yet).
    pub fn expected_version(&self) -> Option<u64> {
        self.expected
    }

    /// The record (and the result text) to write over the claim for the handler's `result`: `failed` for an
    /// error result, else `succeeded` (the core's `finish`, on the ledger's clock now); a result longer than
    /// the ledger's `max_result_bytes` is a note ([`OperationLedger::result_text`](super::OperationLedger::result_text)).
    pub fn record_for(&self, result: &CallToolResult) -> (Record, Option<String>) {
        let state = if result.is_error == Some(true) { RecordState::Failed } else { RecordState::Succeeded };
        let done = finish(&self.claim, state, self.ledger.now_ms(), self.ledger.config());
        (done, Some(self.ledger.result_text(&self.key, state, result)))
    }

    /// Whether `store` is the ledger's own store (a transaction on another one would not hold the ledger's
    /// record): the stores check it before they begin.
    pub fn is_for(&self, store: &dyn LedgerStore) -> bool {
        std::ptr::addr_eq(std::sync::Arc::as_ptr(self.ledger.store()), store as *const dyn LedgerStore)
    }
}

/// How a transaction failed.
///
/// ```
/// use mcp_retry_policy::rmcp::{StoreError, TxFailure};
///
/// fn after_commit(answered: Result<(), String>) -> Result<(), TxFailure> {
///     // No answer to COMMIT: it may have committed (the record tells afterwards).
///     answered.map_err(TxFailure::CommitUnknown)
/// }
/// assert!(matches!(after_commit(Err("connection reset".into())), Err(TxFailure::CommitUnknown(_))));
/// # let _ = TxFailure::Store(StoreError("down".into()));
/// ```
#[derive(Debug)]
pub enum TxFailure {
    /// The store failed before the handler ran: nothing was done.
    Store(StoreError),
    /// The handler failed (or the record could not be written after it): everything was rolled back.
    RolledBack(String),
    /// The commit did not answer: it may have committed (the record tells: the status lookup, or the next
    /// call, replays it if it did).
    CommitUnknown(String),
}

/// What [`Transact::transact`] returns: `Ok(Some(result))` committed with its record, `Ok(None)` the claim did
/// not apply (nothing ran, nothing committed: look again).
///
/// ```
/// use mcp_retry_policy::rmcp::{Transact, TxFuture, TxPlan};
///
/// /// A transaction that never gets its claim (another request always got there first).
/// struct Late;
///
/// impl Transact for Late {
///     fn transact<'a>(&'a mut self, _plan: &'a TxPlan) -> TxFuture<'a> {
///         Box::pin(std::future::ready(Ok(None)))
///     }
/// }
/// # let _ = Late;
/// ```
pub type TxFuture<'a> = Pin<Box<dyn Future<Output = Result<Option<CallToolResult>, TxFailure>> + Send + 'a>>;

/// A store's transaction with the handler inside it (see the module docs).
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{LedgerStore, MemoryLedgerStore, OperationLedger, StoreError, Transact, TxFailure, TxFuture, TxPlan};
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// /// A transaction on a memory store — not atomic, to show the steps; a real store runs them in one database
/// /// transaction (as `SqliteLedgerStore::transact` and `PostgresLedgerStore::transact` do).
/// struct Steps<'s> {
///     store: &'s MemoryLedgerStore,
/// }
///
/// impl Transact for Steps<'_> {
///     fn transact<'a>(&'a mut self, plan: &'a TxPlan) -> TxFuture<'a> {
///         Box::pin(async move {
///             if !plan.is_for(self.store) {
///                 return Err(TxFailure::Store(StoreError("not the ledger's store".into())));
///             }
///             // 1. The claim: an insert, or a replace of the version the ledger read.
///             let claimed = match plan.expected_version() {
///                 None => self.store.insert(plan.key(), plan.claim()).await,
///                 Some(v) => self.store.replace(plan.key(), v, plan.claim(), None).await,
///             };
///             if !claimed.map_err(TxFailure::Store)? {
///                 return Ok(None); // another request got there first: nothing ran
///             }
///             // 2. The handler's own writes (here: none), and its result.
///             let result = CallToolResult::success(vec![ContentBlock::text("opened T-1")]);
///             // 3. The record over the claim; 4. commit.
///             let (record, text) = plan.record_for(&result);
///             let version = plan.claim().version;
///             self.store.replace(plan.key(), version, &record, text.as_deref()).await.map_err(TxFailure::Store)?;
///             Ok(Some(result))
///         })
///     }
/// }
///
/// use mcp_retry_policy::rmcp::{with_idempotency_atomic, IdempotencyOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Arc::new(MemoryLedgerStore::new());
/// let ledger = OperationLedger::new(store.clone());
/// let args = serde_json::json!({ "title": "Printer on fire", "operation_id": "op-0001-abcd" });
/// let answer = with_idempotency_atomic(&ledger, &IdempotencyOptions::new("open_ticket"), Some("alice"), args.as_object().unwrap(), Steps { store: &store }).await;
/// assert_ne!(answer.is_error, Some(true));
/// # Ok(()) }
/// ```
pub trait Transact: Send {
    /// Runs `plan` in one store transaction.
    fn transact<'a>(&'a mut self, plan: &'a TxPlan) -> TxFuture<'a>;
}

/// What [`OperationLedger::execute_atomically`] made of a write.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{LedgerStore, MemoryLedgerStore, OperationLedger, StoreError, Transact, TxFailure, TxFuture, TxPlan};
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// /// A transaction on a memory store — not atomic, to show the steps; a real store runs them in one database
/// /// transaction (as `SqliteLedgerStore::transact` and `PostgresLedgerStore::transact` do).
/// struct Steps<'s> {
///     store: &'s MemoryLedgerStore,
/// }
///
/// impl Transact for Steps<'_> {
///     fn transact<'a>(&'a mut self, plan: &'a TxPlan) -> TxFuture<'a> {
///         Box::pin(async move {
///             if !plan.is_for(self.store) {
///                 return Err(TxFailure::Store(StoreError("not the ledger's store".into())));
///             }
///             // 1. The claim: an insert, or a replace of the version the ledger read.
///             let claimed = match plan.expected_version() {
///                 None => self.store.insert(plan.key(), plan.claim()).await,
///                 Some(v) => self.store.replace(plan.key(), v, plan.claim(), None).await,
///             };
///             if !claimed.map_err(TxFailure::Store)? {
///                 return Ok(None); // another request got there first: nothing ran
///             }
///             // 2. The handler's own writes (here: none), and its result.
///             let result = CallToolResult::success(vec![ContentBlock::text("opened T-1")]);
///             // 3. The record over the claim; 4. commit.
///             let (record, text) = plan.record_for(&result);
///             let version = plan.claim().version;
///             self.store.replace(plan.key(), version, &record, text.as_deref()).await.map_err(TxFailure::Store)?;
///             Ok(Some(result))
///         })
///     }
/// }
/// use mcp_retry_policy::rmcp::{Atomic, LedgerKey};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Arc::new(MemoryLedgerStore::new());
/// let ledger = OperationLedger::new(store.clone());
/// let key = LedgerKey { tenant: "alice".into(), action: "open_ticket".into(), operation_id: "op-0001-abcd".into() };
/// let mut tx = Steps { store: &store };
/// match ledger.execute_atomically(&key, "input-fingerprint", &mut tx).await? {
///     Atomic::Executed(result) => println!("committed with its record: {result:?}"),
///     Atomic::RolledBack(why) => println!("rolled back: {why}"),
///     Atomic::CommitUnknown(why) => println!("may have committed: {why}"),
///     Atomic::Answer(begin) => println!("the key was used before: {begin:?}"),
/// }
/// assert!(matches!(ledger.execute_atomically(&key, "input-fingerprint", &mut tx).await?, Atomic::Answer(_)));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub enum Atomic {
    /// Committed with its record: the handler's result.
    Executed(CallToolResult),
    /// The handler failed: its writes were rolled back with the claim (what it did outside the transaction may
    /// stand).
    RolledBack(String),
    /// The commit did not answer: it may have committed.
    CommitUnknown(String),
    /// A key already used: the ledger's answer (`Replay`, `Conflict`, `InProgress`, `Unknown`; never `Execute`).
    Answer(Begin),
}

impl OperationLedger {
    /// Runs a write whose effects all commit in the store's own transaction, together with its record (the
    /// JS `executeAtomically`). An unresolved record is asked of the reconcile hook first, as in
    /// [`begin`](OperationLedger::begin); only a `not_done` answer lets it run. A store failure before the
    /// handler ran is an `Err` (told as [`LedgerEvent::StoreError`]: `begin` or `transaction`).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{LedgerStore, MemoryLedgerStore, OperationLedger, StoreError, Transact, TxFailure, TxFuture, TxPlan};
    /// use rmcp::model::{CallToolResult, ContentBlock};
    ///
    /// /// A transaction on a memory store — not atomic, to show the steps; a real store runs them in one database
    /// /// transaction (as `SqliteLedgerStore::transact` and `PostgresLedgerStore::transact` do).
    /// struct Steps<'s> {
    ///     store: &'s MemoryLedgerStore,
    /// }
    ///
    /// impl Transact for Steps<'_> {
    ///     fn transact<'a>(&'a mut self, plan: &'a TxPlan) -> TxFuture<'a> {
    ///         Box::pin(async move {
    ///             if !plan.is_for(self.store) {
    ///                 return Err(TxFailure::Store(StoreError("not the ledger's store".into())));
    ///             }
    ///             // 1. The claim: an insert, or a replace of the version the ledger read.
    ///             let claimed = match plan.expected_version() {
    ///                 None => self.store.insert(plan.key(), plan.claim()).await,
    ///                 Some(v) => self.store.replace(plan.key(), v, plan.claim(), None).await,
    ///             };
    ///             if !claimed.map_err(TxFailure::Store)? {
    ///                 return Ok(None); // another request got there first: nothing ran
    ///             }
    ///             // 2. The handler's own writes (here: none), and its result.
    ///             let result = CallToolResult::success(vec![ContentBlock::text("opened T-1")]);
    ///             // 3. The record over the claim; 4. commit.
    ///             let (record, text) = plan.record_for(&result);
    ///             let version = plan.claim().version;
    ///             self.store.replace(plan.key(), version, &record, text.as_deref()).await.map_err(TxFailure::Store)?;
    ///             Ok(Some(result))
    ///         })
    ///     }
    /// }
    /// use mcp_retry_policy::rmcp::{Atomic, LedgerKey};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = Arc::new(MemoryLedgerStore::new());
    /// let ledger = OperationLedger::new(store.clone());
    /// let key = LedgerKey { tenant: "alice".into(), action: "open_ticket".into(), operation_id: "op-0001-abcd".into() };
    /// let done = ledger.execute_atomically(&key, "input-fingerprint", &mut Steps { store: &store }).await?;
    /// assert!(matches!(done, Atomic::Executed(_)));
    /// # Ok(()) }
    /// ```
    pub async fn execute_atomically(
        &self,
        key: &LedgerKey,
        fingerprint: &str,
        transact: &mut dyn Transact,
    ) -> Result<Atomic, StoreError> {
        // One look through the core's driver; its claim is written by the transaction, around the handler.
        let mut look = Look::new(LookMode::Atomic);
        let mut seen = Seen::default();
        let mut step = LookStep::Read;
        loop {
            let halted = self.advance(key, fingerprint, &mut look, step, &mut seen).await.inspect_err(|e| {
                self.emit(LedgerEvent::StoreError { during: "begin", key: Some(key.clone()), error: e.to_string() })
            })?;
            let (claim, expected) = match halted {
                Halt::Done(end) => return Ok(Atomic::Answer(seen.begin(end, None))),
                Halt::Claim { claim, expected } => (claim, expected),
            };
            let plan = TxPlan { key: key.clone(), claim, expected, ledger: self.clone() };
            match transact.transact(&plan).await {
                Ok(Some(result)) => return Ok(Atomic::Executed(result)),
                // Another request committed first: the driver reads again (its record is replayed).
                Ok(None) => {
                    step = look.step(LookEvent::Wrote(false), seen.record(), fingerprint, self.now_ms(), self.config())
                }
                Err(TxFailure::RolledBack(e)) => return Ok(Atomic::RolledBack(e)),
                Err(TxFailure::CommitUnknown(e)) => return Ok(Atomic::CommitUnknown(e)),
                Err(TxFailure::Store(e)) => {
                    self.emit(LedgerEvent::StoreError {
                        during: "transaction",
                        key: Some(key.clone()),
                        error: e.to_string(),
                    });
                    return Err(e);
                }
            }
        }
    }
}

/// [`with_idempotency`](super::with_idempotency) with the handler's writes and the record in one store
/// transaction (the JS `transaction: true`): `transact` is the store's transaction with your handler inside,
/// e.g. `store.transact(|tx| { tx.execute(…)?; Ok(result) })` on the ledger's `SqliteLedgerStore` (a
/// transaction on another store is refused: nothing runs). A handler that fails is rolled back and answered
/// `rejected` with reason `rolled_back` (its database writes were undone; the same id may be sent again); a commit that
/// does not answer is `unknown` for that call.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{with_idempotency_atomic, IdempotencyOptions, OperationLedger, SqliteLedgerStore};
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let file = std::env::temp_dir().join(format!("doc-atomic-{}.db", std::process::id()));
/// let store = Arc::new(SqliteLedgerStore::open(&file)?);
/// rusqlite::Connection::open(&file)?
///     .execute_batch("CREATE TABLE IF NOT EXISTS tickets (operation_id TEXT PRIMARY KEY, title TEXT NOT NULL)")?;
/// let ledger = OperationLedger::new(store.clone());
///
/// let args = serde_json::json!({ "title": "Printer on fire", "operation_id": "op-0001-abcd" });
/// let id = "op-0001-abcd".to_string();
/// // The ticket row and the ledger's record commit together, or neither does.
/// let work = store.transact(|tx| {
///     tx.execute("INSERT INTO tickets (operation_id, title) VALUES (?, ?)", [&id, "Printer on fire"])?;
///     Ok(CallToolResult::success(vec![ContentBlock::text("opened")]))
/// });
/// let answer = with_idempotency_atomic(&ledger, &IdempotencyOptions::new("open_ticket"), Some("alice"), args.as_object().unwrap(), work).await;
/// assert_ne!(answer.is_error, Some(true));
/// # drop((ledger, store));
/// # let _ = std::fs::remove_file(&file);
/// # Ok(()) }
/// ```
pub async fn with_idempotency_atomic(
    ledger: &OperationLedger,
    options: &IdempotencyOptions,
    tenant: Option<&str>,
    arguments: &JsonObject,
    transact: impl Transact,
) -> CallToolResult {
    let (result, kind) = super::ledger::atomic(ledger, options, tenant, arguments, transact).await;
    super::ledger::count_answer(&options.action, kind);
    result
}
