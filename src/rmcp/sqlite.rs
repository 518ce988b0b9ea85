//! The SQLite ledger store (feature `sqlite`): the npm package's `SqliteLedgerStore` table and statements
//! (`pkg-template/server/stores.js`, `ledgerSql`), so a JS ledger and a Rust ledger can share one file. The
//! UNIQUE (tenant, action, operation_id) constraint makes a claim atomic across processes; the version column
//! makes every update a compare-and-set. WAL mode, `synchronous=FULL` (every committed claim and finish
//! survives a power cut), as the JS store's default durability.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension};

use super::ledger::{
    ready, sql_int as int, sql_uint as uint, LedgerKey, LedgerStore, StoreError, StoreFuture, StoredRecord,
};
use crate::ledger::record::{Record, RecordState};

const CREATE: &str = "CREATE TABLE IF NOT EXISTS mcp_operation_ledger (
  tenant TEXT NOT NULL, action TEXT NOT NULL, operation_id TEXT NOT NULL,
  state TEXT NOT NULL, fingerprint TEXT NOT NULL,
  lease_until_ms INTEGER NOT NULL, created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
  version INTEGER NOT NULL, result TEXT,
  UNIQUE (tenant, action, operation_id)
)";
const INDEX: &str = "CREATE INDEX IF NOT EXISTS mcp_operation_ledger_expiry ON mcp_operation_ledger (expires_ms) WHERE state IN ('succeeded', 'failed')";
const UNRESOLVED_INDEX: &str = "CREATE INDEX IF NOT EXISTS mcp_operation_ledger_unresolved ON mcp_operation_ledger (tenant, action, created_ms) WHERE state IN ('pending', 'unknown')";
const INSERT: &str = "INSERT INTO mcp_operation_ledger (tenant, action, operation_id, state, fingerprint, lease_until_ms, created_ms, expires_ms, version)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, action, operation_id) DO NOTHING";
const UPDATE: &str =
    "UPDATE mcp_operation_ledger SET state = ?, fingerprint = ?, lease_until_ms = ?, created_ms = ?, expires_ms = ?,
  version = ?, result = ? WHERE tenant = ? AND action = ? AND operation_id = ? AND version = ?";
const SELECT: &str = "SELECT state, fingerprint, lease_until_ms, created_ms, expires_ms, version, result FROM mcp_operation_ledger WHERE tenant = ? AND action = ? AND operation_id = ?";
const PURGE: &str = "DELETE FROM mcp_operation_ledger WHERE state IN ('succeeded', 'failed') AND expires_ms <= ?";

/// The SQLite ledger store.
pub struct SqliteLedgerStore {
    db: Mutex<Connection>,
}

fn err(e: rusqlite::Error) -> StoreError {
    StoreError(e.to_string())
}

impl SqliteLedgerStore {
    /// Opens (or creates) the database file and the table.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::new(Connection::open(path).map_err(err)?)
    }

    /// Over an open connection: WAL mode, `synchronous=FULL`, the table and its indexes.
    pub fn new(db: Connection) -> Result<Self, StoreError> {
        // `journal_mode` answers a row: read it (an in-memory database stays `memory`).
        let _mode: String = db.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(err)?;
        db.execute_batch("PRAGMA synchronous = FULL").map_err(err)?;
        db.busy_timeout(std::time::Duration::from_secs(10)).map_err(err)?;
        db.execute_batch(&format!("{CREATE};\n{INDEX};\n{UNRESOLVED_INDEX};")).map_err(err)?;
        Ok(SqliteLedgerStore { db: Mutex::new(db) })
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl SqliteLedgerStore {
    fn get_now(&self, key: &LedgerKey) -> Result<Option<StoredRecord>, StoreError> {
        let db = self.db();
        let row = db
            .query_row(SELECT, params![key.tenant, key.action, key.operation_id], |r| {
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
        let state: RecordState =
            state.parse().map_err(|()| StoreError(format!("a row with an unknown state {state:?}")))?;
        let record = Record {
            state,
            fingerprint,
            lease_until_ms: uint(lease),
            created_ms: uint(created),
            expires_ms: uint(expires),
            version: uint(version),
        };
        Ok(Some(StoredRecord { record, result }))
    }

    fn insert_now(&self, key: &LedgerKey, r: &Record) -> Result<bool, StoreError> {
        let n = self
            .db()
            .execute(
                INSERT,
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
            )
            .map_err(err)?;
        Ok(n == 1)
    }

    fn replace_now(
        &self,
        key: &LedgerKey,
        expected: u64,
        r: &Record,
        result: Option<&str>,
    ) -> Result<bool, StoreError> {
        let n = self
            .db()
            .execute(
                UPDATE,
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
            )
            .map_err(err)?;
        Ok(n == 1)
    }

    fn purge_now(&self, now_ms: u64) -> Result<u64, StoreError> {
        // The SQL says what `ledger::purgeable` says: resolved and expired, never unresolved or released.
        let n = self.db().execute(PURGE, params![int(now_ms)]).map_err(err)?;
        Ok(u64::try_from(n).unwrap_or(u64::MAX))
    }
}

/// Each call runs at once on the caller's thread (a short blocking SQLite call, as the JS store's
/// better-sqlite3 does), then answers a ready future.
impl LedgerStore for SqliteLedgerStore {
    fn get<'a>(&'a self, key: &'a LedgerKey) -> StoreFuture<'a, Option<StoredRecord>> {
        ready(self.get_now(key))
    }

    fn insert<'a>(&'a self, key: &'a LedgerKey, record: &'a Record) -> StoreFuture<'a, bool> {
        ready(self.insert_now(key, record))
    }

    fn replace<'a>(
        &'a self,
        key: &'a LedgerKey,
        expected: u64,
        record: &'a Record,
        result: Option<&'a str>,
    ) -> StoreFuture<'a, bool> {
        ready(self.replace_now(key, expected, record, result))
    }

    fn purge(&self, now_ms: u64) -> StoreFuture<'_, u64> {
        ready(self.purge_now(now_ms))
    }
}
