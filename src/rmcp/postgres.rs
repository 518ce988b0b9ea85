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

    /// A connection for one transaction: an idle one, or a new one.
    async fn tx_client(&self) -> Result<Client, StoreError> {
        loop {
            let Some(c) = self.idle().pop() else { break };
            if !c.is_closed() {
                return Ok(c);
            }
        }
        let Some(config) = &self.config else {
            return Err(StoreError(
                "this PostgresLedgerStore was made over a client: make it with connect(config) to run transactions"
                    .into(),
            ));
        };
        open(config).await
    }

    /// A [`Transact`] for [`with_idempotency_atomic`](super::transaction::with_idempotency_atomic): `work` gets
    /// the `tokio_postgres::Transaction` (inside `BEGIN`, on a connection of this store's own) and writes the
    /// handler's rows through it; its result is recorded with them. The claim is written first, so a concurrent
    /// first call of the same key waits on its row until this one commits, then replays it. A kill of the
    /// process (or of the connection) before `COMMIT` rolls everything back on the server. Write `work` as
    /// `|tx| Box::pin(async move { tx.execute(…).await?; Ok(result) })`.
    ///
    /// ```no_run
    /// // Needs a live PostgreSQL server.
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{with_idempotency_atomic, IdempotencyOptions, OperationLedger, PostgresLedgerStore};
    /// use rmcp::model::{CallToolResult, ContentBlock};
    ///
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = Arc::new(PostgresLedgerStore::connect("host=127.0.0.1 user=app dbname=app").await?);
    /// let ledger = OperationLedger::new(store.clone());
    /// let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// let work = store.transact(|tx| {
    ///     Box::pin(async move {
    ///         tx.execute("UPDATE accounts SET balance = balance - 5 WHERE id = 1", &[]).await?;
    ///         Ok(CallToolResult::success(vec![ContentBlock::text("paid")]))
    ///     })
    /// });
    /// let answer = with_idempotency_atomic(&ledger, &IdempotencyOptions::new("pay"), Some("alice"), args.as_object().unwrap(), work).await;
    /// # let _ = answer;
    /// # Ok(()) }
    /// ```
    pub fn transact<W>(&self, work: W) -> PostgresTransact<'_, W>
    where
        W: for<'t> FnMut(&'t Transaction<'t>) -> PgWork<'t> + Send,
    {
        PostgresTransact { store: self, work }
    }

    async fn transaction<W>(&self, plan: &TxPlan, work: &mut W) -> Result<Option<CallToolResult>, TxFailure>
    where
        W: for<'t> FnMut(&'t Transaction<'t>) -> PgWork<'t> + Send,
    {
        if !plan.is_for(self) {
            return Err(TxFailure::Store(StoreError("a transaction on a store that is not the ledger's".into())));
        }
        let key = plan.key();
        storable(&[&key.tenant, &key.action, &key.operation_id]).map_err(TxFailure::Store)?;
        let mut client = self.tx_client().await.map_err(TxFailure::Store)?;
        let outcome = run(&mut client, plan, work).await;
        // A connection that broke (or whose commit did not answer) is not kept.
        if !client.is_closed() && !matches!(outcome, Err(TxFailure::CommitUnknown(_))) {
            let mut idle = self.idle();
            if idle.len() < IDLE_CONNECTIONS {
                idle.push(client);
            }
        }
        outcome
    }
}

/// What a Postgres transaction's handler returns: a boxed future borrowing the transaction.
///
/// ```
/// use mcp_retry_policy::rmcp::postgres::PgWork;
/// use rmcp::model::CallToolResult;
///
/// fn debit<'t>(tx: &'t tokio_postgres::Transaction<'t>) -> PgWork<'t> {
///     Box::pin(async move {
///         tx.execute("UPDATE accounts SET balance = balance - 5 WHERE id = 1", &[]).await?;
///         Ok(CallToolResult::success(vec![]))
///     })
/// }
/// # let _ = debit;
/// ```
pub type PgWork<'t> = Pin<Box<dyn Future<Output = Result<CallToolResult, BoxError>> + Send + 't>>;

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

/// The transaction itself: the claim, the handler, the record over the claim, `COMMIT`.
async fn run<W>(client: &mut Client, plan: &TxPlan, work: &mut W) -> Result<Option<CallToolResult>, TxFailure>
where
    W: for<'t> FnMut(&'t Transaction<'t>) -> PgWork<'t> + Send,
{
    let (key, claim) = (plan.key(), plan.claim());
    let store = |e: tokio_postgres::Error| TxFailure::Store(err(e));
    let tx = client.transaction().await.map_err(store)?;
    // (A Transaction dropped before commit rolls back.)
    let won = match plan.expected_version() {
        None => insert_on(&tx, key, claim).await,
        Some(v) => update_on(&tx, key, v, claim, None).await,
    }
    .map_err(store)?;
    if !won {
        let _ = tx.rollback().await;
        return Ok(None);
    }
    // This transaction's id (the claim's write assigned it), to tell later whether the handler ended it.
    let ours: i64 = tx.query_one("SELECT txid_current()", &[]).await.map_err(store)?.try_get(0).map_err(store)?;
    let result = match work(&tx).await {
        Ok(r) => r,
        Err(e) => {
            // Still in this transaction? `txid_current_if_assigned()` (PostgreSQL ≥ 10) is this one's id while
            // it is open. A handler that ran COMMIT itself committed the claim and its writes, and what it did
            // after ran in autocommit (another transaction, or none): no rollback undoes it — unknown. A probe
            // that fails (an aborted transaction refuses it, a broken connection) leaves the rollback's reading.
            let probe = tx.query_one("SELECT txid_current_if_assigned()", &[]).await;
            let now = probe.ok().map(|row| row.try_get::<_, Option<i64>>(0));
            if matches!(now, Some(Ok(id)) if id != Some(ours)) {
                return Err(TxFailure::CommitUnknown(format!("{e} (after the handler's transaction had ended)")));
            }
            let _ = tx.rollback().await;
            return Err(TxFailure::RolledBack(e.to_string()));
        }
    };
    let (record, text) = plan.record_for(&result);
    if let Err(e) = storable(&[text.as_deref().unwrap_or_default()]) {
        let _ = tx.rollback().await;
        return Err(TxFailure::RolledBack(e.to_string()));
    }
    match update_on(&tx, key, claim.version, &record, text.as_deref()).await {
        Ok(true) => {}
        Ok(false) => {
            let _ = tx.rollback().await;
            return Err(TxFailure::RolledBack(
                "the claim changed inside its own transaction (was the row written by the handler?)".into(),
            ));
        }
        Err(e) => {
            let _ = tx.rollback().await;
            return Err(TxFailure::RolledBack(e.to_string()));
        }
    }
    match tx.commit().await {
        Ok(()) => Ok(Some(result)),
        // The server answered with an error (a SQLSTATE: a serialization failure, say): it rolled back.
        Err(e) if e.code().is_some() => Err(TxFailure::RolledBack(e.to_string())),
        // No answer (the connection broke): it may have committed.
        Err(e) => Err(TxFailure::CommitUnknown(e.to_string())),
    }
}

/// [`PostgresLedgerStore::transact`]'s [`Transact`]: the store and the handler.
///
/// ```no_run
/// // Needs a live PostgreSQL server.
/// use mcp_retry_policy::rmcp::{PostgresLedgerStore, Transact};
/// use rmcp::model::CallToolResult;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let store = PostgresLedgerStore::connect("host=127.0.0.1 user=app dbname=app").await?;
/// fn is_transact(_: &impl Transact) {}
/// is_transact(&store.transact(|_tx| Box::pin(async { Ok(CallToolResult::success(vec![])) })));
/// # Ok(()) }
/// ```
pub struct PostgresTransact<'s, W> {
    store: &'s PostgresLedgerStore,
    work: W,
}

impl<W> Transact for PostgresTransact<'_, W>
where
    W: for<'t> FnMut(&'t Transaction<'t>) -> PgWork<'t> + Send,
{
    fn transact<'a>(&'a mut self, plan: &'a TxPlan) -> TxFuture<'a> {
        Box::pin(self.store.transaction(plan, &mut self.work))
    }
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
