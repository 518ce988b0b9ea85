//! The Postgres ledger store (feature `postgres`): the npm package's `PostgresLedgerStore` table and statements
//! (`crate::ledger::sql`, which the JS store runs too: SQLite's schema with BIGINT milliseconds, the key as the
//! primary key), so a JS ledger and a Rust ledger can share one table. `INSERT … ON CONFLICT DO NOTHING` makes a claim atomic
//! across processes and machines, `UPDATE … WHERE version = $n` every update (under READ COMMITTED a concurrent
//! update of the same version waits, then finds the version changed: one wins). Durability is the server's.
//!
//! [`PostgresLedgerStore::transact`] runs a handler's own writes and the ledger's record in one transaction on a
//! connection of the store's own (not the shared client's, whose other calls would join it):
//! [`with_idempotency_atomic`](super::transaction::with_idempotency_atomic).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};

use ::rmcp::model::CallToolResult;
use tokio_postgres::{Client, GenericClient, NoTls, Transaction};

use super::client::BoxError;
use super::ledger::{sql_int as int, sql_uint as uint, LedgerKey, LedgerStore, StoreError, StoreFuture, StoredRecord};
use super::operators::{fold_counts, UnresolvedCount, UnresolvedFilter, UnresolvedRecord};
use super::transaction::{Transact, TxFailure, TxFuture, TxPlan};
use crate::ledger::record::{Record, RecordState};
use crate::ledger::sql::{self, LedgerSql, POSTGRES_SETUP_LOCK};

// The table and statements are the core's (`crate::ledger::sql`), the same the JS stores run.
const SQL: LedgerSql = sql::POSTGRES;

mod tx;
pub use tx::{PgWork, PostgresTransact};

/// The table and its indexes, in one implicit transaction: the advisory lock serializes creators (two sessions
/// running `CREATE TABLE IF NOT EXISTS` at once can otherwise fail with a unique violation in the catalog), as
/// the JS store does.
fn setup() -> String {
    format!("{POSTGRES_SETUP_LOCK};\n{};\n{};\n{};", SQL.create, SQL.index, SQL.unresolved_index)
}

/// How many idle transaction connections the store keeps.
const IDLE_CONNECTIONS: usize = 4;

/// The Postgres ledger store over one `tokio_postgres::Client` (and, when made with
/// [`connect`](PostgresLedgerStore::connect), connections of its own for transactions).
///
/// ```no_run
/// // Needs a live PostgreSQL server.
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{OperationLedger, PostgresLedgerStore};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let store = PostgresLedgerStore::connect("host=127.0.0.1 port=5432 user=app dbname=app").await?;
/// let ledger = OperationLedger::new(Arc::new(store)); // shares `mcp_operation_ledger` with the JS PostgresLedgerStore
/// # let _ = ledger;
/// # Ok(()) }
/// ```
pub struct PostgresLedgerStore {
    client: Client,
    config: Option<String>,
    idle: Mutex<Vec<Client>>,
}

fn err(e: tokio_postgres::Error) -> StoreError {
    StoreError(e.to_string())
}

/// Postgres text cannot keep a NUL: such a key or result is refused (as the JS store refuses it).
fn storable(parts: &[&str]) -> Result<(), StoreError> {
    if parts.iter().any(|p| p.contains('\0')) {
        return Err(StoreError("a NUL in a key or result: Postgres text cannot keep it exactly".into()));
    }
    Ok(())
}

impl PostgresLedgerStore {
    /// Connects (`config`: a libpq-style string, e.g. `host=127.0.0.1 port=5432 user=app dbname=app`), drives
    /// the connection on a tokio task, and creates the table and its indexes if missing.
    /// The same `config` opens the transactions' connections ([`transact`](PostgresLedgerStore::transact)).
    ///
    /// ```no_run
    /// // Needs a live PostgreSQL server.
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{OperationLedger, PostgresLedgerStore};
    ///
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = Arc::new(PostgresLedgerStore::connect("host=db.internal user=app dbname=app").await?);
    /// let ledger = OperationLedger::new(store.clone());
    /// # let _ = ledger;
    /// # Ok(()) }
    /// ```
    pub async fn connect(config: &str) -> Result<Self, StoreError> {
        let mut store = Self::new(open(config).await?).await?;
        store.config = Some(config.to_string());
        Ok(store)
    }

    /// Over a connected client: creates the table and its indexes if missing. Such a store has no config to
    /// open the transactions' connections with: [`transact`](PostgresLedgerStore::transact) is refused.
    ///
    /// ```no_run
    /// // Needs a live PostgreSQL server.
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{OperationLedger, PostgresLedgerStore};
    ///
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let (client, connection) = tokio_postgres::connect("host=127.0.0.1 user=app dbname=app", tokio_postgres::NoTls).await?;
    /// tokio::spawn(connection); // drive it
    /// let store = PostgresLedgerStore::new(client).await?; // no transactions: make it with `connect` for those
    /// let ledger = OperationLedger::new(Arc::new(store));
    /// # let _ = ledger;
    /// # Ok(()) }
    /// ```
    pub async fn new(client: Client) -> Result<Self, StoreError> {
        client.batch_execute(&setup()).await.map_err(err)?;
        Ok(PostgresLedgerStore { client, config: None, idle: Mutex::new(Vec::new()) })
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Client>> {
        self.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

async fn open(config: &str) -> Result<Client, StoreError> {
    let (client, connection) = tokio_postgres::connect(config, NoTls).await.map_err(err)?;
    tokio::spawn(async move {
        // The connection ends when the client is dropped or the server goes away; calls then fail.
        let _ = connection.await;
    });
    Ok(client)
}

async fn insert_on(c: &impl GenericClient, key: &LedgerKey, r: &Record) -> Result<bool, tokio_postgres::Error> {
    let (lease, created, expires, version) =
        (int(r.lease_until_ms), int(r.created_ms), int(r.expires_ms), int(r.version));
    let n = c
        .execute(
            SQL.insert,
            &[
                &key.tenant,
                &key.action,
                &key.operation_id,
                &r.state.as_str(),
                &r.fingerprint,
                &lease,
                &created,
                &expires,
                &version,
            ],
        )
        .await?;
    Ok(n == 1)
}

async fn update_on(
    c: &impl GenericClient,
    key: &LedgerKey,
    expected: u64,
    r: &Record,
    result: Option<&str>,
) -> Result<bool, tokio_postgres::Error> {
    let (lease, created, expires, version, expected) =
        (int(r.lease_until_ms), int(r.created_ms), int(r.expires_ms), int(r.version), int(expected));
    let n = c
        .execute(
            SQL.update,
            &[
                &r.state.as_str(),
                &r.fingerprint,
                &lease,
                &created,
                &expires,
                &version,
                &result,
                &key.tenant,
                &key.action,
                &key.operation_id,
                &expected,
            ],
        )
        .await?;
    Ok(n == 1)
}

fn row_state(state: &str) -> Result<RecordState, StoreError> {
    state.parse().map_err(|()| StoreError(format!("a row with an unknown state {state:?}")))
}

/// The record in a row's six record columns from `from` on (state, fingerprint, lease, created, expires, version).
fn record_at(row: &tokio_postgres::Row, from: usize) -> Result<Record, StoreError> {
    let at = |i: usize| from.saturating_add(i);
    let int = |i: usize| row.try_get::<_, i64>(at(i)).map(uint).map_err(err);
    let state: String = row.try_get(from).map_err(err)?;
    Ok(Record {
        state: row_state(&state)?,
        fingerprint: row.try_get(at(1)).map_err(err)?,
        lease_until_ms: int(2)?,
        created_ms: int(3)?,
        expires_ms: int(4)?,
        version: int(5)?,
    })
}

impl LedgerStore for PostgresLedgerStore {
    fn get<'a>(&'a self, key: &'a LedgerKey) -> StoreFuture<'a, Option<StoredRecord>> {
        Box::pin(async move {
            storable(&[&key.tenant, &key.action, &key.operation_id])?;
            let row =
                self.client.query_opt(SQL.select, &[&key.tenant, &key.action, &key.operation_id]).await.map_err(err)?;
            let Some(row) = row else { return Ok(None) };
            Ok(Some(StoredRecord { record: record_at(&row, 0)?, result: row.try_get(6).map_err(err)? }))
        })
    }

    fn insert<'a>(&'a self, key: &'a LedgerKey, r: &'a Record) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            storable(&[&key.tenant, &key.action, &key.operation_id])?;
            insert_on(&self.client, key, r).await.map_err(err)
        })
    }

    fn replace<'a>(
        &'a self,
        key: &'a LedgerKey,
        expected: u64,
        r: &'a Record,
        result: Option<&'a str>,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            storable(&[&key.tenant, &key.action, &key.operation_id, result.unwrap_or_default()])?;
            update_on(&self.client, key, expected, r, result).await.map_err(err)
        })
    }

    fn purge(&self, now_ms: u64) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let now = int(now_ms);
            self.client.execute(SQL.purge, &[&now]).await.map_err(err)
        })
    }

    fn unresolved<'a>(&'a self, f: &'a UnresolvedFilter) -> StoreFuture<'a, Vec<UnresolvedRecord>> {
        Box::pin(async move {
            let limit = i64::from(f.limit);
            let rows = self
                .client
                .query(SQL.unresolved, &[&f.tenant, &f.tenant, &f.action, &f.action, &limit])
                .await
                .map_err(err)?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let key = LedgerKey {
                    tenant: row.try_get(0).map_err(err)?,
                    action: row.try_get(1).map_err(err)?,
                    operation_id: row.try_get(2).map_err(err)?,
                };
                out.push(UnresolvedRecord { key, record: record_at(&row, 3)? });
            }
            Ok(out)
        })
    }

    fn count_unresolved<'a>(&'a self, f: &'a UnresolvedFilter) -> StoreFuture<'a, Vec<UnresolvedCount>> {
        Box::pin(async move {
            let rows = self
                .client
                .query(SQL.count_unresolved, &[&f.tenant, &f.tenant, &f.action, &f.action])
                .await
                .map_err(err)?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let state: String = row.try_get(2).map_err(err)?;
                let n: i64 = row.try_get(3).map_err(err)?;
                out.push((row.try_get(0).map_err(err)?, row.try_get(1).map_err(err)?, row_state(&state)?, uint(n)));
            }
            Ok(fold_counts(out))
        })
    }
}
