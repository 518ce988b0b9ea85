// Ledger stores. One contract (tests/support/ledger-store-contract.mjs runs it against each):
//
//   get(key) → { record, result? } | undefined
//   insert(key, record) → true if stored, false if a record for the key already exists   (atomic)
//   replace(key, expectedVersion, record, result?) → true if the stored version matched     (atomic)
//
// `key` = { tenant, action, operationId }; `record` = the core's LedgerRecord; `result` = opaque text (a
// string) that the ledger wrote — the encoded result to replay — kept beside the record and given back
// unchanged; `replace` without one leaves the row without one. Stores never encode or decode results: the
// ledger does, once, the same way for every store. KV stores are not ledger stores: eventual consistency
// cannot make a claim atomic.
import { typeError } from '../errors.js';

function keyError(key) {
  if (!key || typeof key.tenant !== 'string' || typeof key.action !== 'string' || typeof key.operationId !== 'string') {
    throw typeError('key', 'a ledger key is { tenant, action, operationId }, all strings');
  }
}

function resultError(result) {
  if (result !== undefined && typeof result !== 'string') {
    throw typeError('result', 'a ledger store keeps a result as text: the ledger encodes it (OperationLedger.finish)');
  }
}

const keyString = (k) => JSON.stringify([k.tenant, k.action, k.operationId]);

/** In memory: for tests and single-process servers. A Map makes each operation atomic. */
export class MemoryLedgerStore {
  #rows = new Map();

  async get(key) {
    keyError(key);
    const row = this.#rows.get(keyString(key));
    return row && { record: structuredClone(row.record), ...(row.result !== undefined ? { result: row.result } : {}) };
  }

  async insert(key, record) {
    keyError(key);
    const k = keyString(key);
    if (this.#rows.has(k)) return false;
    this.#rows.set(k, { record: structuredClone(record) });
    return true;
  }

  async replace(key, expectedVersion, record, result) {
    keyError(key);
    resultError(result);
    const k = keyString(key);
    const row = this.#rows.get(k);
    if (!row || row.record.version !== expectedVersion) return false;
    this.#rows.set(k, { record: structuredClone(record), result });
    return true;
  }

  /** Rows held (for tests). */
  get size() {
    return this.#rows.size;
  }
}

const TABLE = 'mcp_operation_ledger';
const CREATE = `CREATE TABLE IF NOT EXISTS ${TABLE} (
  tenant TEXT NOT NULL, action TEXT NOT NULL, operation_id TEXT NOT NULL,
  state TEXT NOT NULL, fingerprint TEXT NOT NULL,
  lease_until_ms INTEGER NOT NULL, created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
  version INTEGER NOT NULL, result TEXT,
  UNIQUE (tenant, action, operation_id)
)`;
const INSERT = `INSERT INTO ${TABLE} (tenant, action, operation_id, state, fingerprint, lease_until_ms, created_ms, expires_ms, version)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, action, operation_id) DO NOTHING`;
const UPDATE = `UPDATE ${TABLE} SET state = ?, fingerprint = ?, lease_until_ms = ?, created_ms = ?, expires_ms = ?, version = ?,
  result = ? WHERE tenant = ? AND action = ? AND operation_id = ? AND version = ?`;
const SELECT = `SELECT * FROM ${TABLE} WHERE tenant = ? AND action = ? AND operation_id = ?`;

const recordArgs = (r) => [r.state, r.fingerprint, r.leaseUntilMs, r.createdMs, r.expiresMs, r.version];
function fromRow(row) {
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

/**
 * SQLite through `better-sqlite3` (pass an open `Database`). The UNIQUE (tenant, action, operation_id)
 * constraint makes the claim atomic across processes sharing the file; the version makes updates atomic.
 */
export class SqliteLedgerStore {
  #get;
  #insert;
  #update;

  constructor(db) {
    if (!db || typeof db.prepare !== 'function' || typeof db.exec !== 'function') {
      throw typeError('db', 'SqliteLedgerStore needs a better-sqlite3 Database');
    }
    db.exec(CREATE);
    this.#get = db.prepare(SELECT);
    this.#insert = db.prepare(INSERT);
    this.#update = db.prepare(UPDATE);
  }

  async get(key) {
    keyError(key);
    return fromRow(this.#get.get(key.tenant, key.action, key.operationId));
  }

  async insert(key, record) {
    keyError(key);
    return this.#insert.run(key.tenant, key.action, key.operationId, ...recordArgs(record)).changes === 1;
  }

  async replace(key, expectedVersion, record, result) {
    keyError(key);
    resultError(result);
    return this.#update.run(...recordArgs(record), result ?? null, key.tenant, key.action, key.operationId, expectedVersion).changes === 1;
  }
}

/** Cloudflare D1 (pass the binding). Same schema and guarantees as SQLite. Call `await store.ready` once. */
export class D1LedgerStore {
  #db;

  constructor(db) {
    if (!db || typeof db.prepare !== 'function') throw typeError('db', 'D1LedgerStore needs a D1 database binding');
    this.#db = db;
    this.ready = db.prepare(CREATE).run();
  }

  async get(key) {
    keyError(key);
    await this.ready;
    return fromRow(await this.#db.prepare(SELECT).bind(key.tenant, key.action, key.operationId).first());
  }

  async insert(key, record) {
    keyError(key);
    await this.ready;
    const r = await this.#db.prepare(INSERT).bind(key.tenant, key.action, key.operationId, ...recordArgs(record)).run();
    return r.meta.changes === 1;
  }

  async replace(key, expectedVersion, record, result) {
    keyError(key);
    resultError(result);
    await this.ready;
    const r = await this.#db.prepare(UPDATE).bind(...recordArgs(record), result ?? null, key.tenant, key.action, key.operationId, expectedVersion).run();
    return r.meta.changes === 1;
  }
}

/**
 * A Durable Object's storage (`ctx.storage`). The object runs one event at a time and each check-and-write
 * runs in a storage transaction, so the claim is atomic.
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
    const row = await this.#storage.get(`ledger:${keyString(key)}`);
    return row && { record: row.record, ...(row.result !== undefined ? { result: row.result } : {}) };
  }

  async insert(key, record) {
    keyError(key);
    const k = `ledger:${keyString(key)}`;
    return this.#storage.transaction(async (txn) => {
      if ((await txn.get(k)) !== undefined) return false;
      await txn.put(k, { record });
      return true;
    });
  }

  async replace(key, expectedVersion, record, result) {
    keyError(key);
    resultError(result);
    const k = `ledger:${keyString(key)}`;
    return this.#storage.transaction(async (txn) => {
      const row = await txn.get(k);
      if (!row || row.record.version !== expectedVersion) return false;
      await txn.put(k, result === undefined ? { record } : { record, result });
      return true;
    });
  }
}
