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
import { typeError } from '../errors.js';
import { UNRESOLVED, checkNowMs, copyRecord, foldCounts, keyError, keyString, purgeable, resultError } from './store-common.js';
import { SQL, filterArgs, fromRow, insertArgs, keyArgs, unresolvedRow, updateArgs } from './sql-rows.js';

export { CommitUnknown, checkNowMs, foldCounts, keyError, resultError } from './store-common.js';
export { DurableObjectLedgerStore } from './durable-object-store.js';
export { SqliteLedgerStore } from './sqlite-store.js';
export { filterArgs, fromRow, insertArgs, keyArgs, unresolvedRow, updateArgs } from './sql-rows.js';

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

