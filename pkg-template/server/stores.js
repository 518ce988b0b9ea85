// Ledger stores. One contract (tests/support/ledger-store-contract.mjs runs it against each):
//
//   get(key) → { record, result? } | undefined
//   insert(key, record) → true if stored, false if a record for the key already exists   (atomic)
//   replace(key, expectedVersion, record, result?) → true if the stored version matched     (atomic)
//   purge(nowMs) → how many resolved records (succeeded, failed) with expiresMs <= nowMs it deleted
//   transaction(key, expectedVersion, claim, work) → true if committed, false if the claim lost   (optional)
//
// `transaction` (SQLite, Postgres, D1, Durable Object; not memory) runs one write whose effects commit with
// its record: in one store transaction it writes `claim` (insert when `expectedVersion` is null, else
// replace that version; if that does not apply — another request got there first — it rolls back and
// resolves false without calling `work`), then awaits `work(tx)` (`tx`: the store's own transaction handle,
// which the handler writes through) for `{ record, result }`, replaces the claim with them and commits. If
// `work` throws, everything rolls back and the error is rethrown; a commit that fails without saying whether
// it committed throws `CommitUnknown` (its `cause`: the store's error).
//
// `key` = { tenant, action, operationId }; `record` = the core's LedgerRecord; `result` = opaque text (a
// string) that the ledger wrote — the encoded result to replay — kept beside the record and given back
// unchanged; `replace` without one leaves the row without one. Stores never encode or decode results: the
// ledger does, once, the same way for every store. KV stores are not ledger stores: eventual consistency
// cannot make a claim atomic.
//
// `purge` never deletes an unresolved record (pending, unknown), however long ago it expired: an operation
// whose outcome is not known must not disappear silently (its key would then execute again). Released
// records (an operator's `release`, with its reason) are kept too: only `succeeded` and `failed` go.
import { rangeError, typeError } from '../errors.js';
import { guarded, withTimeout } from './sqlite-guard.js';
import { CommitUnknown, UNRESOLVED, checkNowMs, copyRecord, foldCounts, keyError, keyString, purgeable, resultError } from './store-common.js';

export { CommitUnknown, checkNowMs, foldCounts, keyError, resultError } from './store-common.js';
export { DurableObjectLedgerStore } from './durable-object-store.js';

/** In memory: for tests and single-process servers. A Map makes each operation atomic. */
export class MemoryLedgerStore {
  #rows = new Map();

  async get(key) {
    keyError(key);
    const row = this.#rows.get(keyString(key));
    return row && { record: copyRecord(row.record), ...(row.result !== undefined ? { result: row.result } : {}) };
  }

  async insert(key, record) {
    keyError(key);
    const k = keyString(key);
    if (this.#rows.has(k)) return false;
    this.#rows.set(k, { record: copyRecord(record) });
    return true;
  }

  async replace(key, expectedVersion, record, result) {
    keyError(key);
    resultError(result);
    const k = keyString(key);
    const row = this.#rows.get(k);
    if (!row || row.record.version !== expectedVersion) return false;
    this.#rows.set(k, { record: copyRecord(record), result });
    return true;
  }

  /** Deletes the resolved records (succeeded, failed) that expired at or before `nowMs`; never an unresolved one. */
  async purge(nowMs) {
    checkNowMs(nowMs);
    let removed = 0;
    for (const [k, row] of this.#rows) {
      if (purgeable(row.record, nowMs)) {
        this.#rows.delete(k);
        removed++;
      }
    }
    return removed;
  }

  /** The unresolved records (pending, unknown) of `tenant`/`action` (each optional), oldest first, at most `limit`. */
  async unresolved(filter = {}) {
    return this.#unresolvedRows(filter).slice(0, filter.limit ?? Infinity);
  }

  /** How many unresolved records each (tenant, action) holds: `[{ tenant, action, pending, unknown }]`. */
  async countUnresolved(filter = {}) {
    return foldCounts(this.#unresolvedRows(filter).map(({ key, record }) => ({ ...key, state: record.state, n: 1 })));
  }

  #unresolvedRows({ tenant, action } = {}) {
    const rows = [];
    for (const [k, row] of this.#rows) {
      const [t, a, operationId] = JSON.parse(k);
      if (!UNRESOLVED.has(row.record.state) || (tenant !== undefined && t !== tenant) || (action !== undefined && a !== action)) continue;
      rows.push({ key: { tenant: t, action: a, operationId }, record: copyRecord(row.record) });
    }
    return rows.sort((x, y) => x.record.createdMs - y.record.createdMs);
  }

  /** Rows held (for tests). */
  get size() {
    return this.#rows.size;
  }
}

// ── SQL stores: SQLite, D1 and Postgres share the schema and the statements ────────────────────────────

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
const SQL = ledgerSql(() => '?', 'INTEGER', 'UNIQUE');

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

const DURABILITY = { full: 2, normal: 1 };
const SYNCHRONOUS_EXTRA = 3;

/** The default `transactionTimeoutMs`: 10 s. */
const DEFAULT_TRANSACTION_TIMEOUT_MS = 10_000;

function sqliteOptions(options) {
  if (options === undefined) return { durability: 'full', timeoutMs: DEFAULT_TRANSACTION_TIMEOUT_MS };
  if (options === null || typeof options !== 'object') throw typeError('options', 'SqliteLedgerStore options must be an object ({ durability, transactionTimeoutMs })');
  for (const k of Object.keys(options)) {
    if (k !== 'durability' && k !== 'transactionTimeoutMs') throw typeError(k, `${k} is not a known option of SqliteLedgerStore (durability, transactionTimeoutMs)`, 'unknown_option');
  }
  const { durability = 'full', transactionTimeoutMs: t = DEFAULT_TRANSACTION_TIMEOUT_MS } = options;
  if (typeof durability !== 'string') throw typeError('durability', `durability must be 'full' or 'normal', not ${typeof durability}`);
  if (!Object.hasOwn(DURABILITY, durability)) throw rangeError('durability', `durability must be 'full' or 'normal', not ${JSON.stringify(durability)}`);
  if (typeof t !== 'number') throw typeError('transactionTimeoutMs', `transactionTimeoutMs must be a number of milliseconds, not ${typeof t}`);
  if (!Number.isInteger(t) || t < 1 || t > 3_600_000) throw rangeError('transactionTimeoutMs', `transactionTimeoutMs must be whole milliseconds from 1 to 3600000 (${t})`);
  return { durability, timeoutMs: t };
}

/**
 * SQLite through `better-sqlite3`: `new SqliteLedgerStore(db, { durability })` with an open `Database`. The
 * UNIQUE (tenant, action, operation_id) constraint makes the claim atomic across processes sharing the file;
 * the version makes updates atomic.
 *
 * The store runs the file in WAL mode (one fsync per committed transaction instead of rollback's two, and
 * readers never block the writer), with a `durability`:
 * - `'full'` (default): `synchronous=FULL`. Every committed claim and finish survives a power cut.
 * - `'normal'`: `synchronous=NORMAL` in WAL mode. A power cut may lose the last committed transactions but
 *   never corrupts the file. A lost claim means its operation can run again after the cut (a lost finish
 *   leaves it pending, then reconciled): choose it only where that is acceptable.
 *
 * It sets only what you did not set otherwise: `journal_mode` is switched to WAL only from SQLite's default
 * rollback journal (`delete`); any mode you chose (wal, truncate, persist, memory, off) is kept. `synchronous`
 * is the store's `durability` (set it through the option, not on the connection), except that an `EXTRA`
 * you set is kept (it is stronger than both). `'normal'` on a file outside WAL mode (you chose another
 * journal) is refused: there NORMAL can corrupt the file on a power cut. In-memory databases survive
 * nothing either way. Bad options: `TypeError`/`RangeError` with `code` and `field`.
 */
export class SqliteLedgerStore {
  #db;
  #get;
  #insert;
  #update;
  #purge;
  #timeoutMs;
  // The transaction open on this connection (a promise that settles when it ends): while it is open, the
  // store's other statements wait, or they would run inside it and see its uncommitted claim.
  #open = null;

  constructor(db, options) {
    if (!db || typeof db.prepare !== 'function' || typeof db.exec !== 'function') {
      throw typeError('db', 'SqliteLedgerStore needs a better-sqlite3 Database');
    }
    const { durability, timeoutMs } = sqliteOptions(options);
    this.#timeoutMs = timeoutMs;
    const pragma = (name) => Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0];
    let mode = String(pragma('journal_mode')).toLowerCase();
    if (mode === 'delete') mode = String(Object.values(db.prepare('PRAGMA journal_mode = WAL').get())[0]).toLowerCase();
    const onDisk = db.prepare('PRAGMA database_list').all().some((d) => d.name === 'main' && d.file);
    if (durability === 'normal' && onDisk && mode !== 'wal') {
      throw rangeError('durability', `durability 'normal' needs WAL mode, and this database keeps journal_mode=${mode}: with that journal, synchronous=NORMAL can corrupt the file on a power cut`);
    }
    // Set after the switch: SQLite builds may lower synchronous when WAL starts (SQLITE_DEFAULT_WAL_SYNCHRONOUS).
    if (Number(pragma('synchronous')) !== SYNCHRONOUS_EXTRA) db.exec(`PRAGMA synchronous = ${DURABILITY[durability]}`);
    db.exec(SQL.create);
    db.exec(SQL.index);
    db.exec(SQL.unresolvedIndex);
    this.#db = db;
    this.#get = db.prepare(SQL.select);
    this.#insert = db.prepare(SQL.insert);
    this.#update = db.prepare(SQL.update);
    this.#purge = db.prepare(SQL.purge);
  }

  async get(key) {
    keyError(key);
    while (this.#open) await this.#open;
    return fromRow(this.#get.get(...keyArgs(key)));
  }

  async insert(key, record) {
    keyError(key);
    while (this.#open) await this.#open;
    return this.#insert.run(...insertArgs(key, record)).changes === 1;
  }

  async replace(key, expectedVersion, record, result) {
    keyError(key);
    resultError(result);
    while (this.#open) await this.#open;
    return this.#update.run(...updateArgs(key, expectedVersion, record, result)).changes === 1;
  }

  /** Deletes the resolved records that expired at or before `nowMs` (through the expiry index); never an unresolved one. */
  async purge(nowMs) {
    checkNowMs(nowMs);
    while (this.#open) await this.#open;
    return this.#purge.run(nowMs).changes;
  }

  /** The unresolved records of `tenant`/`action` (each optional), oldest first, at most `limit` (through the partial index). */
  async unresolved(filter = {}) {
    while (this.#open) await this.#open;
    return this.#db.prepare(SQL.unresolved).all(...filterArgs(filter), filter.limit ?? -1).map(unresolvedRow);
  }

  /** How many unresolved records each (tenant, action) holds: `[{ tenant, action, pending, unknown }]`. */
  async countUnresolved(filter = {}) {
    while (this.#open) await this.#open;
    return foldCounts(this.#db.prepare(SQL.countUnresolved).all(...filterArgs(filter)));
  }

  /**
   * One write and its record in one SQLite transaction (`BEGIN IMMEDIATE`: other processes on the file
   * wait for it, up to the connection's busy timeout). `work(tx)` gets the Database this store was made
   * with, behind a guard, and writes through it, synchronously or across awaits; the ledger's own statements
   * wait until the transaction ends — at most `transactionTimeoutMs` (default 10 s): a longer one is rolled
   * back (`TransactionTimeout`, answered `rolled_back`) and the guard refuses every later call through `tx`
   * (and through statements prepared with it), so a handler still running writes nothing outside it. Your other code on the same connection does not: a statement it runs while the
   * handler awaits joins the transaction (commits or rolls back with it), as with any transaction held
   * open across an await on one better-sqlite3 connection.
   */
  async transaction(key, expectedVersion, claim, work) {
    keyError(key);
    while (this.#open) await this.#open;
    let end;
    this.#open = new Promise((resolve) => { end = resolve; });
    const db = this.#db;
    const live = { open: true };
    try {
      db.exec('BEGIN IMMEDIATE');
      try {
        const won = expectedVersion === null
          ? this.#insert.run(...insertArgs(key, claim)).changes === 1
          : this.#update.run(...updateArgs(key, expectedVersion, claim, undefined)).changes === 1;
        if (!won) {
          db.exec('ROLLBACK');
          return false;
        }
        const { record, result } = await withTimeout(work(guarded(db, live)), this.#timeoutMs);
        resultError(result);
        if (this.#update.run(...updateArgs(key, claim.version, record, result)).changes !== 1) {
          throw new Error('the claim changed inside its own transaction (was the row written by the handler?)');
        }
      } catch (e) {
        // Still open: rolled back here, nothing took effect. Already ended inside the handler (it ran COMMIT
        // through `tx`, or SQLite rolled back on its own and later writes ran in autocommit): what stands is not
        // known — never answered "rolled back", which tells the caller nothing took effect.
        if (!db.inTransaction) throw new CommitUnknown(e);
        db.exec('ROLLBACK');
        throw e;
      }
      try {
        db.exec('COMMIT');
      } catch (e) {
        if (!db.inTransaction) throw new CommitUnknown(e);
        db.exec('ROLLBACK'); // SQLite left it open (busy): nothing committed
        throw e;
      }
      return true;
    } finally {
      live.open = false;
      this.#open = null;
      end();
    }
  }
}

/**
 * Cloudflare D1 (pass the binding). Same schema and guarantees as SQLite (D1 manages its own journal). Call
 * `await store.ready` once: it creates the table and its expiry index.
 */
export class D1LedgerStore {
  #db;

  constructor(db) {
    if (!db || typeof db.prepare !== 'function') throw typeError('db', 'D1LedgerStore needs a D1 database binding');
    this.#db = db;
    this.ready = db.prepare(SQL.create).run().then(() => db.prepare(SQL.index).run()).then(() => db.prepare(SQL.unresolvedIndex).run());
  }

  async #run(sql, args) {
    await this.ready;
    return this.#db.prepare(sql).bind(...args).run();
  }

  async get(key) {
    keyError(key);
    await this.ready;
    return fromRow(await this.#db.prepare(SQL.select).bind(...keyArgs(key)).first());
  }

  async insert(key, record) {
    keyError(key);
    return (await this.#run(SQL.insert, insertArgs(key, record))).meta.changes === 1;
  }

  async replace(key, expectedVersion, record, result) {
    keyError(key);
    resultError(result);
    return (await this.#run(SQL.update, updateArgs(key, expectedVersion, record, result))).meta.changes === 1;
  }

  /** Deletes the resolved records that expired at or before `nowMs`; never an unresolved one. */
  async purge(nowMs) {
    checkNowMs(nowMs);
    return (await this.#run(SQL.purge, [nowMs])).meta.changes;
  }

  /** The unresolved records of `tenant`/`action` (each optional), oldest first, at most `limit`. */
  async unresolved(filter = {}) {
    await this.ready;
    const { results } = await this.#db.prepare(SQL.unresolved).bind(...filterArgs(filter), filter.limit ?? -1).all();
    return results.map(unresolvedRow);
  }

  /** How many unresolved records each (tenant, action) holds. */
  async countUnresolved(filter = {}) {
    await this.ready;
    return foldCounts((await this.#db.prepare(SQL.countUnresolved).bind(...filterArgs(filter)).all()).results);
  }

  /**
   * One write and its record in one D1 batch (D1 runs a batch as one transaction). D1 has no transaction a
   * handler can hold open, so `work(tx)` runs first and hands its writes over as prepared statements,
   * `tx.add(...statements)` (`tx.db` is the binding, for reads and for preparing them); then one batch
   * writes the claim, stops if it did not apply (another request got there first: nothing of this batch
   * commits and the other's outcome is replayed), runs the statements and writes the record. Two
   * concurrent first calls may both run the handler; only one commits its statements.
   */
  async transaction(key, expectedVersion, claim, work) {
    keyError(key);
    await this.ready;
    const db = this.#db;
    const statements = [];
    const tx = Object.freeze({
      db,
      add: (...more) => {
        for (const st of more) {
          if (!st || typeof st.bind !== 'function') throw typeError('statement', 'tx.add takes D1 prepared statements (db.prepare(sql).bind(...))');
          statements.push(st);
        }
      },
    });
    const { record, result } = await work(tx);
    resultError(result);
    const claimed = expectedVersion === null
      ? db.prepare(SQL.insert).bind(...insertArgs(key, claim))
      : db.prepare(SQL.update).bind(...updateArgs(key, expectedVersion, claim, undefined));
    try {
      await db.batch([
        claimed,
        db.prepare(D1_CLAIM_APPLIED),
        ...statements,
        db.prepare(SQL.update).bind(...updateArgs(key, claim.version, record, result)),
      ]);
      return true;
    } catch (e) {
      // The batch rolled back, or did not say. The record tells which: changed → another request (or this
      // batch after all) committed: replay it; unchanged → nothing of this batch committed.
      const now = await this.get(key);
      const unchanged = expectedVersion === null ? now === undefined : now?.record.version === expectedVersion;
      if (!unchanged) return false;
      throw e;
    }
  }
}

// Stops a D1 batch (and rolls it back) when the claim before it changed no row: json() of text that is not
// JSON raises an error, and CASE evaluates only the branch it takes.
const D1_CLAIM_APPLIED = `SELECT CASE WHEN changes() = 1 THEN 1 ELSE json('the ledger claim did not apply') END`;

