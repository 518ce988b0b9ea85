// The ledger's table in SQL, shared by the SQL stores (SQLite, D1, Postgres): SQLite's statements (the table and
// every statement are the core's, src/ledger/sql.rs, the same the Rust face's stores run, so a JS ledger and a
// Rust ledger share one file or one table), the arguments each statement takes, and a row read back as a record.
export { SQLITE_SQL as SQL } from '../generated/sql.js';

/** The parameters of `insert` (key, then record) and of `update` (record, result, key, expected version). */
export const insertArgs = (key, r) => [key.tenant, key.action, key.operationId, r.state, r.fingerprint, r.leaseUntilMs, r.createdMs, r.expiresMs, r.version];
export const updateArgs = (key, expectedVersion, r, result) => [
  r.state, r.fingerprint, r.leaseUntilMs, r.createdMs, r.expiresMs, r.version, result ?? null, key.tenant, key.action, key.operationId, expectedVersion,
];
export const keyArgs = (key) => [key.tenant, key.action, key.operationId];
/** The parameters of `unresolved` (with `limit`) and `countUnresolved`. */
export const filterArgs = ({ tenant, action } = {}) => [tenant ?? null, tenant ?? null, action ?? null, action ?? null];

/** An unresolved row as `{ key, record }`. */
export const unresolvedRow = (row) => ({ key: { tenant: row.tenant, action: row.action, operationId: row.operation_id }, record: fromRow(row).record });

/** A row back as `{ record, result? }` (integers may arrive as strings or BigInts: made numbers). */
export function fromRow(row) {
  if (!row) return undefined;
  return {
    record: {
      state: row.state,
      fingerprint: row.fingerprint,
      leaseUntilMs: Number(row.lease_until_ms),
      createdMs: Number(row.created_ms),
      expiresMs: Number(row.expires_ms),
      version: Number(row.version),
    },
    ...(row.result == null ? {} : { result: row.result }),
  };
}
