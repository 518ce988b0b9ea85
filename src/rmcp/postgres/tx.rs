//! [`PostgresLedgerStore::transact`]: a handler's own writes and the ledger's record in one transaction, on a
//! connection of the store's own.

#[allow(clippy::wildcard_imports)]
use super::*;

impl PostgresLedgerStore {
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

    /// A [`Transact`] for [`with_idempotency_atomic`](crate::rmcp::transaction::with_idempotency_atomic): `work` gets
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
