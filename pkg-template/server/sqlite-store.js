// The SQLite ledger store (better-sqlite3): the shared table (sql-rows.js) in WAL mode, each statement atomic,
// and `transaction` (BEGIN IMMEDIATE, bounded by `transactionTimeoutMs`, the handler's `tx` guarded). The store
// contract is stated once, in stores.js.
import { rangeError, typeError } from '../errors.js';
import { guarded, withTimeout } from './sqlite-guard.js';
import { CommitUnknown, checkNowMs, foldCounts, keyError, resultError } from './store-common.js';
import { SQL, filterArgs, fromRow, insertArgs, keyArgs, unresolvedRow, updateArgs } from './sql-rows.js';

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
