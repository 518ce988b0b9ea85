// The Durable Object ledger store: a Durable Object's storage (`ctx.storage`), with an expiry index for purge.
import { rangeError, typeError } from '../errors.js';
import { PURGEABLE, UNRESOLVED, checkNowMs, foldCounts, keyError, keyString, purgeable, resultError } from './store-common.js';

// ── Durable Object ─────────────────────────────────────────────────────────────────────────────────────

const ROW = 'ledger:';
// The expiry index: one key per resolved row, `ledger-expiry:<expiresMs, 16 digits>:<key>` → the row's key,
// so a purge lists exactly the expired entries in order. Written with the row, in the same transaction.
const EXPIRY = 'ledger-expiry:';
// Set once every row written before the index existed has its entry (see #indexOlderRows).
const INDEXED = 'ledger-expiry-indexed';
const BATCH = 64; // index entries per purge transaction: at most 128 keys deleted per call

const rowKey = (key) => `${ROW}${keyString(key)}`;
// Rounded up so that an entry listed as expired is never ahead of its row; clamped to the safe integers.
const expiryKey = (k, record) => `${EXPIRY}${String(Math.min(Math.max(0, Math.ceil(Number(record.expiresMs) || 0)), Number.MAX_SAFE_INTEGER)).padStart(16, '0')}:${k}`;
const indexed = (record) => PURGEABLE.has(record?.state);

/** Moves row `k`'s expiry index entry from the `before` record's to the `after` record's (same transaction). */
async function reindex(txn, k, before, after) {
  const was = indexed(before) ? expiryKey(k, before) : undefined;
  const now = indexed(after) ? expiryKey(k, after) : undefined;
  if (was === now) return;
  if (was) await txn.delete(was);
  if (now) await txn.put(now, k);
}

function everyMsError(everyMs) {
  if (typeof everyMs !== 'number') throw typeError('everyMs', `everyMs must be a number of milliseconds, not ${typeof everyMs}`);
  if (!Number.isFinite(everyMs)) throw rangeError('everyMs', `everyMs must be finite, not ${everyMs}`, 'not_finite');
  if (!Number.isInteger(everyMs) || everyMs < 1) throw rangeError('everyMs', `everyMs must be a whole number of milliseconds, at least 1 (${everyMs})`, 'too_small');
  if (everyMs > 31_536_000_000) throw rangeError('everyMs', `everyMs must be at most a year, 31536000000 (${everyMs})`, 'too_large');
}

/**
 * A Durable Object's storage (`ctx.storage`). The object runs one event at a time and each check-and-write
 * runs in a storage transaction, so the claim is atomic. Resolved rows carry an entry in an expiry index
 * (beside them, same transaction), so `purge` reads only expired entries.
 *
 * To purge on a timer, let the object's alarm do it (an object has one alarm: if yours does other work too,
 * call `purge(Date.now())` from it yourself instead):
 * ```js
 * export class Ledger extends DurableObject {
 *   constructor(ctx, env) {
 *     super(ctx, env);
 *     this.store = new DurableObjectLedgerStore(ctx.storage);
 *     ctx.blockConcurrencyWhile(() => this.store.scheduleAlarm(3_600_000)); // first purge within the hour
 *   }
 *   async alarm() {
 *     await this.store.purgeOnAlarm(3_600_000); // purge now, then again in an hour
 *   }
 * }
 * ```
 */
export class DurableObjectLedgerStore {
  #storage;

  constructor(storage) {
    if (!storage || typeof storage.get !== 'function' || typeof storage.transaction !== 'function') {
      throw typeError('storage', 'DurableObjectLedgerStore needs a Durable Object storage (ctx.storage)');
    }
    this.#storage = storage;
  }

  async get(key) {
    keyError(key);
    const row = await this.#storage.get(rowKey(key));
    return row && { record: row.record, ...(row.result !== undefined ? { result: row.result } : {}) };
  }

  async insert(key, record) {
    keyError(key);
    const k = rowKey(key);
    return this.#storage.transaction(async (txn) => {
      if ((await txn.get(k)) !== undefined) return false;
      await txn.put(k, { record });
      if (indexed(record)) await txn.put(expiryKey(k, record), k);
      return true;
    });
  }

  async replace(key, expectedVersion, record, result) {
    keyError(key);
    resultError(result);
    const k = rowKey(key);
    return this.#storage.transaction(async (txn) => {
      const row = await txn.get(k);
      if (!row || row.record.version !== expectedVersion) return false;
      await txn.put(k, result === undefined ? { record } : { record, result });
      await reindex(txn, k, row.record, record);
      return true;
    });
  }

  /**
   * One write and its record in one storage transaction: `work(txn)` gets the transaction
   * (`ctx.storage.transaction`'s `txn`) and writes through it; the claim, those writes and the record commit
   * together, or nothing does (a throw rolls back).
   */
  async transaction(key, expectedVersion, claim, work) {
    keyError(key);
    const k = rowKey(key);
    return this.#storage.transaction(async (txn) => {
      const row = await txn.get(k);
      if (expectedVersion === null ? row !== undefined : row?.record.version !== expectedVersion) return false;
      const { record, result } = await work(txn);
      resultError(result);
      await txn.put(k, result === undefined ? { record } : { record, result });
      await reindex(txn, k, row?.record, record);
      return true;
    });
  }

  /**
   * Deletes the resolved records that expired at or before `nowMs`, by the expiry index, in transactions of
   * up to 64 rows; never an unresolved one (each row is read again before it goes).
   */
  async purge(nowMs) {
    checkNowMs(nowMs);
    await this.#indexOlderRows();
    const end = expiryKey('', { expiresMs: nowMs + 1 });
    let removed = 0;
    for (;;) {
      const n = await this.#storage.transaction(async (txn) => {
        const entries = await txn.list({ start: EXPIRY, end, limit: BATCH });
        if (entries.size === 0) return -1;
        const rows = await txn.get([...new Set(entries.values())]);
        const doomed = [...rows].filter(([, row]) => purgeable(row?.record, nowMs)).map(([k]) => k);
        // Stale entries (the row was replaced, or resolved later with a later expiry) go too; the row stays.
        await txn.delete([...entries.keys(), ...doomed]);
        return doomed.length;
      });
      if (n < 0) return removed;
      removed += n;
    }
  }

  /**
   * Sets the object's alarm to `nowMs + everyMs` unless one is set already. Resolves to the alarm's time.
   * Call it from the constructor (in `blockConcurrencyWhile`) and purge from `alarm()` with `purgeOnAlarm`.
   */
  async scheduleAlarm(everyMs, nowMs = Date.now()) {
    everyMsError(everyMs);
    checkNowMs(nowMs);
    this.#alarms();
    const set = await this.#storage.getAlarm();
    if (set !== null && set !== undefined) return set;
    await this.#storage.setAlarm(nowMs + everyMs);
    return nowMs + everyMs;
  }

  /** For the object's `alarm()`: purges what expired by `nowMs`, then sets the next alarm `everyMs` later. Resolves to the count purged. */
  async purgeOnAlarm(everyMs, nowMs = Date.now()) {
    everyMsError(everyMs);
    checkNowMs(nowMs);
    this.#alarms();
    const removed = await this.purge(nowMs);
    await this.#storage.setAlarm(nowMs + everyMs);
    return removed;
  }

  #alarms() {
    if (typeof this.#storage.getAlarm !== 'function' || typeof this.#storage.setAlarm !== 'function') {
      throw typeError('storage', 'this storage has no alarms (getAlarm/setAlarm): purge on a timer of your own');
    }
  }

  /**
   * The unresolved records of `tenant`/`action` (each optional), oldest first, at most `limit`. Reads every
   * row of the object (there is no index of unresolved rows): for operators, not for a request's path.
   */
  async unresolved(filter = {}) {
    const rows = await this.#unresolvedRows(filter);
    return rows.slice(0, filter.limit ?? Infinity);
  }

  /** How many unresolved records each (tenant, action) holds (reads every row). */
  async countUnresolved(filter = {}) {
    return foldCounts((await this.#unresolvedRows(filter)).map(({ key, record }) => ({ ...key, state: record.state, n: 1 })));
  }

  async #unresolvedRows({ tenant, action } = {}) {
    const out = [];
    let after;
    for (;;) {
      const rows = await this.#storage.list({ prefix: ROW, limit: 256, ...(after === undefined ? {} : { startAfter: after }) });
      for (const [k, row] of rows) {
        if (!UNRESOLVED.has(row?.record?.state)) continue;
        const [t, a, operationId] = JSON.parse(k.slice(ROW.length));
        if ((tenant === undefined || t === tenant) && (action === undefined || a === action)) out.push({ key: { tenant: t, action: a, operationId }, record: row.record });
      }
      if (rows.size < 256) break;
      after = [...rows.keys()].at(-1);
    }
    return out.sort((x, y) => x.record.createdMs - y.record.createdMs);
  }

  /** Rows resolved before the expiry index existed get their entries, once per object. */
  async #indexOlderRows() {
    if ((await this.#storage.get(INDEXED)) === true) return;
    let after;
    for (;;) {
      const last = await this.#storage.transaction(async (txn) => {
        const rows = await txn.list({ prefix: ROW, limit: BATCH, ...(after === undefined ? {} : { startAfter: after }) });
        const entries = {};
        for (const [k, row] of rows) if (indexed(row?.record)) entries[expiryKey(k, row.record)] = k;
        if (Object.keys(entries).length) await txn.put(entries);
        return rows.size === BATCH ? [...rows.keys()].at(-1) : undefined;
      });
      if (last === undefined) break;
      after = last;
    }
    await this.#storage.put(INDEXED, true);
  }
}
