// The ledger's table in SQL, shared by the SQL stores (SQLite, D1, Postgres): its statements in each dialect
// (`ledgerSql`), the arguments each statement takes, and a row read back as a record.
const TABLE = 'mcp_operation_ledger';
const COLUMNS = 'state, fingerprint, lease_until_ms, created_ms, expires_ms, version';
const PURGEABLE_SQL = `state IN ('succeeded', 'failed')`;
const UNRESOLVED_SQL = `state IN ('pending', 'unknown')`;

/**
 * The ledger's SQL in one dialect: `p(i)` writes the i-th parameter (`?` or `$i`), `int` the type of the
 * millisecond and version columns. The partial index holds the purgeable rows alone, ordered by expiry, so
 * a purge reads only what it deletes; unresolved rows are not in it.
 */
export function ledgerSql(p, int, uniqueKey) {
  const ps = (from, n) => Array.from({ length: n }, (_, i) => p(from + i)).join(', ');
  const where = (from) => `tenant = ${p(from)} AND action = ${p(from + 1)} AND operation_id = ${p(from + 2)}`;
  // An optional tenant and action (each given twice: null for any).
  const filter = (from) => `(CAST(${p(from)} AS TEXT) IS NULL OR tenant = ${p(from + 1)}) AND (CAST(${p(from + 2)} AS TEXT) IS NULL OR action = ${p(from + 3)})`;
  return {
    create: `CREATE TABLE IF NOT EXISTS ${TABLE} (
  tenant TEXT NOT NULL, action TEXT NOT NULL, operation_id TEXT NOT NULL,
  state TEXT NOT NULL, fingerprint TEXT NOT NULL,
  lease_until_ms ${int} NOT NULL, created_ms ${int} NOT NULL, expires_ms ${int} NOT NULL,
  version ${int} NOT NULL, result TEXT,
  ${uniqueKey} (tenant, action, operation_id)
)`,
    index: `CREATE INDEX IF NOT EXISTS ${TABLE}_expiry ON ${TABLE} (expires_ms) WHERE ${PURGEABLE_SQL}`,
    insert: `INSERT INTO ${TABLE} (tenant, action, operation_id, ${COLUMNS})
  VALUES (${ps(1, 9)}) ON CONFLICT (tenant, action, operation_id) DO NOTHING`,
    update: `UPDATE ${TABLE} SET state = ${p(1)}, fingerprint = ${p(2)}, lease_until_ms = ${p(3)}, created_ms = ${p(4)}, expires_ms = ${p(5)},
  version = ${p(6)}, result = ${p(7)} WHERE ${where(8)} AND version = ${p(11)}`,
    select: `SELECT ${COLUMNS}, result FROM ${TABLE} WHERE ${where(1)}`,
    purge: `DELETE FROM ${TABLE} WHERE ${PURGEABLE_SQL} AND expires_ms <= ${p(1)}`,
    // Operators' view of what is not resolved: a partial index over unresolved rows alone.
    unresolvedIndex: `CREATE INDEX IF NOT EXISTS ${TABLE}_unresolved ON ${TABLE} (tenant, action, created_ms) WHERE ${UNRESOLVED_SQL}`,
    unresolved: `SELECT tenant, action, operation_id, ${COLUMNS} FROM ${TABLE} WHERE ${UNRESOLVED_SQL} AND ${filter(1)}
  ORDER BY created_ms, tenant, action, operation_id LIMIT ${p(5)}`,
    countUnresolved: `SELECT tenant, action, state, COUNT(*) AS n FROM ${TABLE} WHERE ${UNRESOLVED_SQL} AND ${filter(1)}
  GROUP BY tenant, action, state ORDER BY tenant, action, state`,
  };
}
export const SQL = ledgerSql(() => '?', 'INTEGER', 'UNIQUE');

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
