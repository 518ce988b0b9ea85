//! The Postgres ledger store (feature `postgres`): the npm package's `PostgresLedgerStore` table and statements
//! (`pkg-template/server/postgres.js`: SQLite's schema with BIGINT milliseconds and the key as the primary key),
//! so a JS ledger and a Rust ledger can share one table. `INSERT … ON CONFLICT DO NOTHING` makes a claim atomic
//! across processes and machines, `UPDATE … WHERE version = $n` every update (under READ COMMITTED a concurrent
//! update of the same version waits, then finds the version changed: one wins). Durability is the server's.

use tokio_postgres::{Client, NoTls};

use super::ledger::{sql_int as int, sql_uint as uint, LedgerKey, LedgerStore, StoreError, StoreFuture, StoredRecord};
use crate::ledger::record::{Record, RecordState};

// Run in one implicit transaction; the advisory lock serializes creators (two sessions running CREATE TABLE IF
// NOT EXISTS at once can otherwise fail with a unique violation in the catalog), as the JS store does.
const SETUP: &str = "SELECT pg_advisory_xact_lock(hashtext('mcp_operation_ledger'));
CREATE TABLE IF NOT EXISTS mcp_operation_ledger (
  tenant TEXT NOT NULL, action TEXT NOT NULL, operation_id TEXT NOT NULL,
  state TEXT NOT NULL, fingerprint TEXT NOT NULL,
  lease_until_ms BIGINT NOT NULL, created_ms BIGINT NOT NULL, expires_ms BIGINT NOT NULL,
  version BIGINT NOT NULL, result TEXT,
  PRIMARY KEY (tenant, action, operation_id)
);
CREATE INDEX IF NOT EXISTS mcp_operation_ledger_expiry ON mcp_operation_ledger (expires_ms) WHERE state IN ('succeeded', 'failed');
CREATE INDEX IF NOT EXISTS mcp_operation_ledger_unresolved ON mcp_operation_ledger (tenant, action, created_ms) WHERE state IN ('pending', 'unknown');";
const INSERT: &str = "INSERT INTO mcp_operation_ledger (tenant, action, operation_id, state, fingerprint, lease_until_ms, created_ms, expires_ms, version)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (tenant, action, operation_id) DO NOTHING";
const UPDATE: &str = "UPDATE mcp_operation_ledger SET state = $1, fingerprint = $2, lease_until_ms = $3, created_ms = $4, expires_ms = $5,
  version = $6, result = $7 WHERE tenant = $8 AND action = $9 AND operation_id = $10 AND version = $11";
const SELECT: &str = "SELECT state, fingerprint, lease_until_ms, created_ms, expires_ms, version, result FROM mcp_operation_ledger WHERE tenant = $1 AND action = $2 AND operation_id = $3";
const PURGE: &str = "DELETE FROM mcp_operation_ledger WHERE state IN ('succeeded', 'failed') AND expires_ms <= $1";

/// The Postgres ledger store over one `tokio_postgres::Client`.
pub struct PostgresLedgerStore {
    client: Client,
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
    pub async fn connect(config: &str) -> Result<Self, StoreError> {
        let (client, connection) = tokio_postgres::connect(config, NoTls).await.map_err(err)?;
        tokio::spawn(async move {
            // The connection ends when the client is dropped or the server goes away; calls then fail.
            let _ = connection.await;
        });
        Self::new(client).await
    }

    /// Over a connected client: creates the table and its indexes if missing.
    pub async fn new(client: Client) -> Result<Self, StoreError> {
        client.batch_execute(SETUP).await.map_err(err)?;
        Ok(PostgresLedgerStore { client })
    }
}

impl LedgerStore for PostgresLedgerStore {
    fn get<'a>(&'a self, key: &'a LedgerKey) -> StoreFuture<'a, Option<StoredRecord>> {
        Box::pin(async move {
            storable(&[&key.tenant, &key.action, &key.operation_id])?;
            let row =
                self.client.query_opt(SELECT, &[&key.tenant, &key.action, &key.operation_id]).await.map_err(err)?;
            let Some(row) = row else { return Ok(None) };
            let state: String = row.try_get(0).map_err(err)?;
            let state: RecordState =
                state.parse().map_err(|()| StoreError(format!("a row with an unknown state {state:?}")))?;
            let record = Record {
                state,
                fingerprint: row.try_get(1).map_err(err)?,
                lease_until_ms: uint(row.try_get(2).map_err(err)?),
                created_ms: uint(row.try_get(3).map_err(err)?),
                expires_ms: uint(row.try_get(4).map_err(err)?),
                version: uint(row.try_get(5).map_err(err)?),
            };
            Ok(Some(StoredRecord { record, result: row.try_get(6).map_err(err)? }))
        })
    }

    fn insert<'a>(&'a self, key: &'a LedgerKey, r: &'a Record) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            storable(&[&key.tenant, &key.action, &key.operation_id])?;
            let (lease, created, expires, version) =
                (int(r.lease_until_ms), int(r.created_ms), int(r.expires_ms), int(r.version));
            let n = self
                .client
                .execute(
                    INSERT,
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
                .await
                .map_err(err)?;
            Ok(n == 1)
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
            let (lease, created, expires, version, expected) =
                (int(r.lease_until_ms), int(r.created_ms), int(r.expires_ms), int(r.version), int(expected));
            let n = self
                .client
                .execute(
                    UPDATE,
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
                .await
                .map_err(err)?;
            Ok(n == 1)
        })
    }

    fn purge(&self, now_ms: u64) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let now = int(now_ms);
            self.client.execute(PURGE, &[&now]).await.map_err(err)
        })
    }
}
