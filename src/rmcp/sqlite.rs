//! The SQLite ledger store (feature `sqlite`): the npm package's `SqliteLedgerStore` table and statements
//! (`crate::ledger::sql`, which the JS stores run too), so a JS ledger and a Rust ledger can share one file. The
//! UNIQUE (tenant, action, operation_id) constraint makes a claim atomic across processes; the version column
//! makes every update a compare-and-set. WAL mode, `synchronous=FULL` (every committed claim and finish
//! survives a power cut), as the JS store's default durability.
//!
//! [`SqliteLedgerStore::transact`] runs a handler's own writes and the ledger's record in one `BEGIN IMMEDIATE`
//! transaction on the store's connection ([`with_idempotency_atomic`](super::transaction::with_idempotency_atomic)).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use ::rmcp::model::CallToolResult;
use rusqlite::{params, Connection, OptionalExtension};

use super::client::BoxError;
use super::ledger::{
    ready, sql_int as int, sql_uint as uint, LedgerKey, LedgerStore, StoreError, StoreFuture, StoredRecord,
};
use super::operators::{fold_counts, UnresolvedCount, UnresolvedFilter, UnresolvedRecord};
use super::transaction::{Transact, TxFailure, TxFuture, TxPlan};
use crate::ledger::record::{Record, RecordState};
use crate::ledger::sql::{self, LedgerSql};

// The table and statements are the core's (`crate::ledger::sql`), the same the JS stores run.
const SQL: LedgerSql = sql::SQLITE;

/// The SQLite ledger store.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{OperationLedger, SqliteLedgerStore};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // A file the JS `SqliteLedgerStore` can share (the same table and statements).
/// let path = std::env::temp_dir().join(format!("doc-sqlite-{}.db", std::process::id()));
/// let ledger = OperationLedger::new(Arc::new(SqliteLedgerStore::open(&path)?));
/// # drop(ledger);
/// # let _ = std::fs::remove_file(&path);
/// # Ok(()) }
/// ```
pub struct SqliteLedgerStore {
    db: Mutex<Connection>,
}

fn err(e: rusqlite::Error) -> StoreError {
    StoreError(e.to_string())
}

impl SqliteLedgerStore {
    /// Opens (or creates) the database file and the table.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{OperationLedger, SqliteLedgerStore};
    ///
    /// let path = std::env::temp_dir().join(format!("doc-ledger-{}.db", std::process::id()));
    /// let ledger = OperationLedger::new(Arc::new(SqliteLedgerStore::open(&path).unwrap()));
    /// # let _ = (ledger, std::fs::remove_file(&path));
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::new(Connection::open(path).map_err(err)?)
    }

    /// Over an open connection: WAL mode, `synchronous=FULL`, the table and its indexes.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{OperationLedger, SqliteLedgerStore};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // An in-memory database: a ledger for tests, gone with the connection.
    /// let store = SqliteLedgerStore::new(rusqlite::Connection::open_in_memory()?)?;
    /// let ledger = OperationLedger::new(Arc::new(store));
    /// # let _ = ledger;
    /// # Ok(()) }
    /// ```
    pub fn new(db: Connection) -> Result<Self, StoreError> {
        // `journal_mode` answers a row: read it (an in-memory database stays `memory`).
        let _mode: String = db.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(err)?;
        db.execute_batch("PRAGMA synchronous = FULL").map_err(err)?;
        db.busy_timeout(std::time::Duration::from_secs(10)).map_err(err)?;
        db.execute_batch(&format!("{};\n{};\n{};", SQL.create, SQL.index, SQL.unresolved_index)).map_err(err)?;
        Ok(SqliteLedgerStore { db: Mutex::new(db) })
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn parse_state(state: &str) -> Result<RecordState, StoreError> {
    state.parse().map_err(|()| StoreError(format!("a row with an unknown state {state:?}")))
}

/// A record from its columns (the integers: lease, created, expires, version).
fn record_of(
    state: &str,
    fingerprint: String,
    [lease, created, expires, version]: [i64; 4],
) -> Result<Record, StoreError> {
    let state: RecordState =
        state.parse().map_err(|()| StoreError(format!("a row with an unknown state {state:?}")))?;
    Ok(Record {
        state,
        fingerprint,
        lease_until_ms: uint(lease),
        created_ms: uint(created),
        expires_ms: uint(expires),
        version: uint(version),
    })
}

fn insert_on(db: &Connection, key: &LedgerKey, r: &Record) -> Result<bool, rusqlite::Error> {
    let n = db.execute(
        SQL.insert,
        params![
            key.tenant,
            key.action,
            key.operation_id,
            r.state.as_str(),
            r.fingerprint,
            int(r.lease_until_ms),
            int(r.created_ms),
            int(r.expires_ms),
            int(r.version)
        ],
    )?;
    Ok(n == 1)
}

fn update_on(
    db: &Connection,
    key: &LedgerKey,
    expected: u64,
    r: &Record,
    result: Option<&str>,
) -> Result<bool, rusqlite::Error> {
    let n = db.execute(
        SQL.update,
        params![
            r.state.as_str(),
            r.fingerprint,
            int(r.lease_until_ms),
            int(r.created_ms),
            int(r.expires_ms),
            int(r.version),
            result,
            key.tenant,
            key.action,
            key.operation_id,
            int(expected)
        ],
    )?;
    Ok(n == 1)
}

/// Rolls back the transaction open on `db`, if one still is (a failed statement may have ended it).
fn roll_back(db: &Connection) {
    if !db.is_autocommit() {
        let _ = db.execute_batch("ROLLBACK");
    }
}

impl SqliteLedgerStore {
    fn get_now(&self, key: &LedgerKey) -> Result<Option<StoredRecord>, StoreError> {
        let db = self.db();
        let row = db
            .query_row(SQL.select, params![key.tenant, key.action, key.operation_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, Option<String>>(6)?,
                ))
            })
            .optional()
            .map_err(err)?;
        let Some((state, fingerprint, lease, created, expires, version, result)) = row else { return Ok(None) };
        Ok(Some(StoredRecord { record: record_of(&state, fingerprint, [lease, created, expires, version])?, result }))
    }

    fn purge_now(&self, now_ms: u64) -> Result<u64, StoreError> {
        // The SQL says what `ledger::purgeable` says: resolved and expired, never unresolved or released.
        let n = self.db().execute(SQL.purge, params![int(now_ms)]).map_err(err)?;
        Ok(u64::try_from(n).unwrap_or(u64::MAX))
    }

    fn unresolved_now(&self, f: &UnresolvedFilter) -> Result<Vec<UnresolvedRecord>, StoreError> {
        let db = self.db();
        let mut st = db.prepare_cached(SQL.unresolved).map_err(err)?;
        let rows = st
            .query_map(params![f.tenant, f.tenant, f.action, f.action, i64::from(f.limit)], |r| {
                Ok((
                    LedgerKey { tenant: r.get(0)?, action: r.get(1)?, operation_id: r.get(2)? },
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    [r.get::<_, i64>(5)?, r.get::<_, i64>(6)?, r.get::<_, i64>(7)?, r.get::<_, i64>(8)?],
                ))
            })
            .map_err(err)?;
        let mut out = Vec::new();
        for row in rows {
            let (key, state, fingerprint, ints) = row.map_err(err)?;
            out.push(UnresolvedRecord { key, record: record_of(&state, fingerprint, ints)? });
        }
        Ok(out)
    }

    fn count_unresolved_now(&self, f: &UnresolvedFilter) -> Result<Vec<UnresolvedCount>, StoreError> {
        let db = self.db();
        let mut st = db.prepare_cached(SQL.count_unresolved).map_err(err)?;
        let rows = st
            .query_map(params![f.tenant, f.tenant, f.action, f.action], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?))
            })
            .map_err(err)?;
        let mut out = Vec::new();
        for row in rows {
            let (tenant, action, state, n) = row.map_err(err)?;
            out.push((tenant, action, parse_state(&state)?, uint(n)));
        }
        Ok(fold_counts(out))
    }

    /// A [`Transact`] for [`with_idempotency_atomic`](super::transaction::with_idempotency_atomic): `work`
    /// gets this store's connection inside the transaction and writes the handler's rows through it; its
    /// result is recorded with them. It runs synchronously, holding the connection: the store's other calls
    /// wait meanwhile (SQLite has one writer per file; keep slow calls out of it). `work` must not end the
    /// transaction itself (`COMMIT`/`ROLLBACK`): that is answered as a commit whose outcome is unknown (whether
    /// `work` then returns a result or an error; so is an error after SQLite ended the transaction on its
    /// own); nor
    /// call this store (its connection is held: the call would wait for ever). Unlike the JS store, there is
    /// no `transactionTimeoutMs`: a synchronous handler cannot be stopped from outside.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{with_idempotency_atomic, IdempotencyOptions, OperationLedger, SqliteLedgerStore};
    /// use rmcp::model::{CallToolResult, ContentBlock};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = Arc::new(SqliteLedgerStore::new(rusqlite::Connection::open_in_memory()?)?);
    /// let ledger = OperationLedger::new(store.clone());
    /// let args = serde_json::json!({ "title": "Printer on fire", "operation_id": "op-0001-abcd" });
    /// let work = store.transact(|tx| {
    ///     // The handler's writes, on the store's own connection, inside its transaction.
    ///     tx.execute_batch("CREATE TABLE IF NOT EXISTS tickets (title TEXT NOT NULL)")?;
    ///     tx.execute("INSERT INTO tickets (title) VALUES (?)", ["Printer on fire"])?;
    ///     Ok(CallToolResult::success(vec![ContentBlock::text(format!("opened T-{}", tx.last_insert_rowid()))]))
    /// });
    /// let answer = with_idempotency_atomic(&ledger, &IdempotencyOptions::new("open_ticket"), Some("alice"), args.as_object().unwrap(), work).await;
    /// assert_ne!(answer.is_error, Some(true));
    /// # Ok(()) }
    /// ```
    pub fn transact<W>(&self, work: W) -> SqliteTransact<'_, W>
    where
        W: FnMut(&Connection) -> Result<CallToolResult, BoxError> + Send,
    {
        SqliteTransact { store: self, work }
    }

    /// One write and its record in one `BEGIN IMMEDIATE` transaction (other processes on the file wait, up to
    /// the busy timeout): the claim, `work`, the record over the claim, `COMMIT`.
    fn transaction(
        &self,
        plan: &TxPlan,
        work: &mut dyn FnMut(&Connection) -> Result<CallToolResult, BoxError>,
    ) -> Result<Option<CallToolResult>, TxFailure> {
        if !plan.is_for(self) {
            return Err(TxFailure::Store(StoreError("a transaction on a store that is not the ledger's".into())));
        }
        let (key, claim) = (plan.key(), plan.claim());
        let db = self.db();
        db.execute_batch("BEGIN IMMEDIATE").map_err(|e| TxFailure::Store(err(e)))?;
        let won = match plan.expected_version() {
            None => insert_on(&db, key, claim),
            Some(v) => update_on(&db, key, v, claim, None),
        };
        match won {
            Ok(true) => {}
            Ok(false) => {
                roll_back(&db);
                return Ok(None);
            }
            Err(e) => {
                roll_back(&db);
                return Err(TxFailure::Store(err(e)));
            }
        }
        let result = match work(&db) {
            Ok(r) => r,
            // The transaction already ended before the handler's error (it ran COMMIT itself, or SQLite rolled
            // back on its own and the handler went on writing in autocommit): no rollback undoes what it wrote
            // since, nor the claim it may have committed. Not proof of "nothing took effect": unknown.
            Err(e) if db.is_autocommit() => {
                return Err(TxFailure::CommitUnknown(format!("{e} (after the handler's transaction had ended)")));
            }
            Err(e) => {
                roll_back(&db);
                return Err(TxFailure::RolledBack(e.to_string()));
            }
        };
        if db.is_autocommit() {
            return Err(TxFailure::CommitUnknown("the handler ended the transaction itself".into()));
        }
        let (record, text) = plan.record_for(&result);
        match update_on(&db, key, claim.version, &record, text.as_deref()) {
            Ok(true) => {}
            Ok(false) => {
                roll_back(&db);
                return Err(TxFailure::RolledBack(
                    "the claim changed inside its own transaction (was the row written by the handler?)".into(),
                ));
            }
            Err(e) => {
                roll_back(&db);
                return Err(TxFailure::RolledBack(e.to_string()));
            }
        }
        match db.execute_batch("COMMIT") {
            Ok(()) => Ok(Some(result)),
            // SQLite ended the transaction without saying whether it committed (an I/O error, say).
            Err(e) if db.is_autocommit() => Err(TxFailure::CommitUnknown(e.to_string())),
            // Still open (busy): nothing committed.
            Err(e) => {
                roll_back(&db);
                Err(TxFailure::RolledBack(e.to_string()))
            }
        }
    }
}

/// [`SqliteLedgerStore::transact`]'s [`Transact`]: the store and the handler.
///
/// ```
/// use mcp_retry_policy::rmcp::{SqliteLedgerStore, Transact};
/// use rmcp::model::CallToolResult;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = SqliteLedgerStore::new(rusqlite::Connection::open_in_memory()?)?;
/// fn is_transact(_: &impl Transact) {}
/// is_transact(&store.transact(|_tx| Ok(CallToolResult::success(vec![]))));
/// # Ok(()) }
/// ```
pub struct SqliteTransact<'s, W> {
    store: &'s SqliteLedgerStore,
    work: W,
}

impl<W> Transact for SqliteTransact<'_, W>
where
    W: FnMut(&Connection) -> Result<CallToolResult, BoxError> + Send,
{
    fn transact<'a>(&'a mut self, plan: &'a TxPlan) -> TxFuture<'a> {
        Box::pin(std::future::ready(self.store.transaction(plan, &mut self.work)))
    }
}

/// Each call runs at once on the caller's thread (a short blocking SQLite call, as the JS store's
/// better-sqlite3 does), then answers a ready future.
impl LedgerStore for SqliteLedgerStore {
    fn get<'a>(&'a self, key: &'a LedgerKey) -> StoreFuture<'a, Option<StoredRecord>> {
        ready(self.get_now(key))
    }

    fn insert<'a>(&'a self, key: &'a LedgerKey, record: &'a Record) -> StoreFuture<'a, bool> {
        ready(insert_on(&self.db(), key, record).map_err(err))
    }

    fn replace<'a>(
        &'a self,
        key: &'a LedgerKey,
        expected: u64,
        record: &'a Record,
        result: Option<&'a str>,
    ) -> StoreFuture<'a, bool> {
        ready(update_on(&self.db(), key, expected, record, result).map_err(err))
    }

    fn purge(&self, now_ms: u64) -> StoreFuture<'_, u64> {
        ready(self.purge_now(now_ms))
    }

    fn unresolved<'a>(&'a self, filter: &'a UnresolvedFilter) -> StoreFuture<'a, Vec<UnresolvedRecord>> {
        ready(self.unresolved_now(filter))
    }

    fn count_unresolved<'a>(&'a self, filter: &'a UnresolvedFilter) -> StoreFuture<'a, Vec<UnresolvedCount>> {
        ready(self.count_unresolved_now(filter))
    }
}
