// The Postgres ledger store. Node only: the node entries export it (server.node.js, node.js); the browser and
// workerd entries do not. The package never imports `pg`: the pool you pass is all this store uses.
import { rangeError, typeError } from '../errors.js';
import {
  CommitUnknown, checkNowMs, filterArgs, foldCounts, fromRow, insertArgs, keyArgs, keyError, resultError, unresolvedRow, updateArgs,
} from './stores.js';
// The table and statements are the core's (src/ledger/sql.rs), the same the Rust face's store runs.
import { POSTGRES_SETUP_LOCK, POSTGRES_SQL as SQL } from '../generated/sql.js';

// One implicit transaction (a multi-statement query without BEGIN: on an error it rolls back and leaves the
// pooled connection clean). The advisory lock serializes creators: two sessions running CREATE TABLE IF NOT
// EXISTS at once can otherwise fail with a unique violation in the catalog.
const SETUP = `${POSTGRES_SETUP_LOCK};\n${SQL.create};\n${SQL.index};\n${SQL.unresolvedIndex}`;
// Named statements: each pooled connection parses and plans them once.
const statement = (name, text) => (values) => ({ name: `mcp_ledger_${name}`, text, values });
const GET = statement('get', SQL.select);
const INSERT = statement('insert', SQL.insert);
const UPDATE = statement('update', SQL.update);
const PURGE = statement('purge', SQL.purge);
const UNRESOLVED = statement('unresolved', SQL.unresolved);
const COUNT_UNRESOLVED = statement('count_unresolved', SQL.countUnresolved);

/** Text Postgres cannot keep exactly: a NUL (refused by TEXT) or a lone surrogate (it would become U+FFFD). */
const unstorable = (s) => s.includes('\0') || !s.isWellFormed();

/** A result text this store can keep exactly (the shared type check, then Postgres text's own limits). */
function pgResultError(result) {
  resultError(result);
  if (result !== undefined && unstorable(result)) {
    throw rangeError('result', 'the result text has a NUL or a lone surrogate, which Postgres text cannot keep exactly');
  }
}

function pgKeyError(key) {
  keyError(key);
  for (const field of ['tenant', 'action', 'operationId']) {
    if (unstorable(key[field])) throw rangeError('key', `the key's ${field} has a NUL or a lone surrogate, which Postgres text cannot keep exactly`);
  }
}

/**
 * PostgreSQL through `pg` (node-postgres): `new PostgresLedgerStore(pool)` with a `pg.Pool` (an optional peer
 * dependency: install `pg` 8 yourself). The schema is SQLite's with BIGINT milliseconds and the key as the
 * primary key; `INSERT … ON CONFLICT DO NOTHING` makes the claim atomic across processes and machines, and
 * `UPDATE … WHERE version = $n` the updates (under READ COMMITTED a concurrent update of the same version
 * waits, then finds the version changed: one wins). A partial index on `expires_ms` over succeeded/failed
 * rows serves `purge`. Durability is the server's (`synchronous_commit`, `fsync`): with its defaults a
 * committed claim or finish survives a power cut.
 *
 * Like D1, `await store.ready` once: it creates the table and the index if missing (safe when several
 * processes start at once). Every method waits for it too; if it failed (the server was down), the next
 * call tries again. Keys whose strings hold a NUL or a lone surrogate are refused (`RangeError`,
 * `field: 'key'`): Postgres text cannot keep them exactly.
 */
export class PostgresLedgerStore {
  #pool;
  #ready;

  constructor(pool) {
    if (!pool || typeof pool.query !== 'function') {
      throw typeError('pool', 'PostgresLedgerStore needs a pg Pool');
    }
    this.#pool = pool;
    void this.ready;
  }

  /** Resolves once the table and its expiry index exist. */
  get ready() {
    if (!this.#ready) {
      const setup = this.#pool.query(SETUP).then(() => undefined);
      // Handled here (no unhandled rejection if nobody awaits); whoever awaits still sees the failure.
      setup.catch(() => {
        if (this.#ready === setup) this.#ready = undefined;
      });
      this.#ready = setup;
    }
    return this.#ready;
  }

  async #query(q) {
    await this.ready;
    return this.#pool.query(q);
  }

  async get(key) {
    pgKeyError(key);
    return fromRow((await this.#query(GET(keyArgs(key)))).rows[0]);
  }

  async insert(key, record) {
    pgKeyError(key);
    return (await this.#query(INSERT(insertArgs(key, record)))).rowCount === 1;
  }

  async replace(key, expectedVersion, record, result) {
    pgKeyError(key);
    pgResultError(result);
    return (await this.#query(UPDATE(updateArgs(key, expectedVersion, record, result)))).rowCount === 1;
  }

  /**
   * One write and its record in one Postgres transaction on a connection of the pool: `work(client)` gets
   * that `PoolClient` (inside `BEGIN`) and writes through it. The claim is written first, so a concurrent
   * first call of the same key waits on its row until this one commits, then replays it. A kill of the
   * process (or of the connection) before `COMMIT` rolls everything back on the server.
   */
  async transaction(key, expectedVersion, claim, work) {
    pgKeyError(key);
    await this.ready;
    const client = await this.#pool.connect();
    let broken;
    try {
      await client.query('BEGIN');
      try {
        const claimed = expectedVersion === null
          ? await client.query(INSERT(insertArgs(key, claim)))
          : await client.query(UPDATE(updateArgs(key, expectedVersion, claim, undefined)));
        if (claimed.rowCount !== 1) {
          await client.query('ROLLBACK');
          return false;
        }
        const { record, result } = await work(client);
        pgResultError(result);
        if ((await client.query(UPDATE(updateArgs(key, claim.version, record, result)))).rowCount !== 1) {
          throw new Error('the claim changed inside its own transaction (was the row written by the handler?)');
        }
      } catch (e) {
        try {
          await client.query('ROLLBACK');
        } catch (r) {
          broken = r; // the connection is gone: the server rolls back what it had
          throw e;
        }
        // The claim was written inside the transaction: still there after the rollback, the transaction had
        // ended inside the handler (it ran COMMIT on `client`) and what it wrote stands — not known, never
        // answered "rolled back".
        const row = await client.query(GET(keyArgs(key))).catch(() => undefined);
        const now = fromRow(row?.rows?.[0]);
        if (row === undefined || now?.record?.version === claim.version) throw new CommitUnknown(e);
        throw e;
      }
      try {
        await client.query('COMMIT');
      } catch (e) {
        // The server answered with an error (a SQLSTATE: a serialization failure, say): it rolled back.
        // No answer (the connection broke): it may have committed.
        if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) throw e;
        broken = e;
        throw new CommitUnknown(e);
      }
      return true;
    } finally {
      client.release(broken);
    }
  }

  /** Deletes the resolved records that expired at or before `nowMs` (through the expiry index); never an unresolved one. */
  async purge(nowMs) {
    checkNowMs(nowMs);
    return (await this.#query(PURGE([nowMs]))).rowCount;
  }

  /** The unresolved records of `tenant`/`action` (each optional), oldest first, at most `limit` (through the partial index). */
  async unresolved(filter = {}) {
    return (await this.#query(UNRESOLVED([...filterArgs(filter), filter.limit ?? null]))).rows.map(unresolvedRow);
  }

  /** How many unresolved records each (tenant, action) holds: `[{ tenant, action, pending, unknown }]`. */
  async countUnresolved(filter = {}) {
    return foldCounts((await this.#query(COUNT_UNRESOLVED(filterArgs(filter)))).rows);
  }
}
