// Caller-side operation-id journals. One contract, three stores:
//
//   begin({ tool, server?, intent?, operationId, arguments?, createdAt }) → entry
//       Records the operation id of an intended write *before* its first send. With an `intent` (the app's
//       own key for "this one intended call", e.g. the model's tool-call id), a second begin for the same
//       intent returns the first entry — the same operation id — whatever its state: an id is never replaced.
//   settle(operationId, status, settledAt) → entry | undefined
//       Marks the outcome once known (succeeded, tool_error, failed, pending, unknown).
//   get(operationId) → entry | undefined
//   pending() → entries not known to be finished: state 'pending' (in flight or crashed) or 'unknown'.
//   purge(settledBeforeMs) → how many entries were removed: resolved ones (succeeded, tool_error, failed)
//       settled at or before `settledBeforeMs`, with their intent. Never a pending or unknown entry. After a
//       purge the intent is forgotten (a begin with it makes a new entry): keep entries longer than any intent
//       may be repeated.
//   stats() → { entries, unresolved, backlogThreshold } (optional, synchronous): withRetry reads it after each
//       keyed call's begin to say `journal_backlog` when unresolved entries pile up (client/backlog.js).
//
// Retention: MemoryJournal forgets resolved entries by itself, by age and by count (memory-journal.js). The
// IndexedDB and Durable Object journals keep them until the app purges (`purge(Date.now() - ttl)` from a timer
// or a Durable Object alarm): a sweep there is a scan of the store, the app chooses when to pay it.
//
// Entries: { operationId, tool, server?, intent?, arguments?, state, createdAt, settledAt? }. `server` is the
// identity of the server the write went to (withRetry's `server` option, client/scope.js); entries written before
// it existed have none. `arguments` are kept in plaintext (IndexedDB, Durable Object storage): withRetry's
// `journalArguments: false` keeps only what a retry and a status lookup need (tool, server, intent, id, state).
import { typeError } from '../errors.js';
import { UNRESOLVED, checkBefore, checkBegin, entryOf, purgeable } from './journal-entry.js';

export { unresolved } from './journal-entry.js';
export { MemoryJournal } from './memory-journal.js';

/** In IndexedDB (browsers): survives reloads and crashes of the tab. */
export class IndexedDbJournal {
  #db;
  #name;

  /** `name`: the database name (one per app); `indexedDB`: the factory (default: the global one). */
  constructor(name = 'mcp-retry-policy', factory = globalThis.indexedDB) {
    if (!factory) throw typeError('indexedDB', 'IndexedDB is not available here', 'unsupported');
    this.#name = name;
    this.#db = new Promise((resolve, reject) => {
      const req = factory.open(name, 1);
      req.onupgradeneeded = () => {
        const store = req.result.createObjectStore('operations', { keyPath: 'operationId' });
        store.createIndex('intent', 'intent', { unique: true });
        store.createIndex('state', 'state');
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }

  async #tx(mode, fn) {
    const db = await this.#db;
    return new Promise((resolve, reject) => {
      const tx = db.transaction('operations', mode);
      const store = tx.objectStore('operations');
      let out;
      Promise.resolve(fn(store, (v) => (out = v))).catch(reject);
      tx.oncomplete = () => resolve(out);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  }

  begin(e) {
    checkBegin(e);
    // One readwrite transaction: the intent lookup and the insert are atomic.
    return this.#tx('readwrite', (store, set) => {
      const insert = () => {
        const byId = store.get(e.operationId);
        byId.onsuccess = () => {
          if (byId.result) return set(byId.result);
          const entry = entryOf(e);
          store.add(entry);
          set(entry);
        };
      };
      if (e.intent === undefined) return insert();
      const byIntent = store.index('intent').get(e.intent);
      byIntent.onsuccess = () => (byIntent.result ? set(byIntent.result) : insert());
    });
  }

  settle(operationId, status, settledAt = Date.now()) {
    return this.#tx('readwrite', (store, set) => {
      const req = store.get(operationId);
      req.onsuccess = () => {
        if (!req.result) return set(undefined);
        const entry = { ...req.result, state: status, settledAt };
        store.put(entry);
        set(entry);
      };
    });
  }

  get(operationId) {
    return this.#tx('readonly', (store, set) => {
      const req = store.get(operationId);
      req.onsuccess = () => set(req.result ?? undefined);
    });
  }

  pending() {
    return this.#tx('readonly', (store, set) => {
      const req = store.getAll();
      req.onsuccess = () => set(req.result.filter((e) => UNRESOLVED.has(e.state)));
    });
  }

  async purge(settledBeforeMs) {
    checkBefore(settledBeforeMs);
    return this.#tx('readwrite', (store, set) => {
      let n = 0;
      const req = store.openCursor();
      req.onsuccess = () => {
        const cursor = req.result;
        if (!cursor) return set(n);
        if (purgeable(cursor.value, settledBeforeMs)) {
          cursor.delete();
          n++;
        }
        cursor.continue();
      };
    });
  }

  /** Closes the database connection. */
  async close() {
    (await this.#db).close();
  }
}

/**
 * In a Durable Object's storage (Cloudflare Workers): `new DurableObjectJournal(this.ctx.storage)` inside the
 * object. Single-threaded per object, so begin's lookup-then-insert is atomic without a lock. `options.prefix`
 * goes before every key (`${prefix}op:…`, `${prefix}intent:…`) when the storage is shared with other code —
 * an `agents` Agent's, say (the `mcp-retry-policy/agents` adapter uses `mcp-retry-policy:`).
 */
export class DurableObjectJournal {
  #storage;
  #op;
  #intent;

  constructor(storage, options = {}) {
    if (!storage || typeof storage.get !== 'function' || typeof storage.put !== 'function') {
      throw typeError('storage', 'DurableObjectJournal needs a Durable Object storage (ctx.storage)');
    }
    if (options === null || typeof options !== 'object') throw typeError('options', 'options must be an object ({ prefix })');
    const prefix = options.prefix ?? '';
    if (typeof prefix !== 'string' || prefix.length > 256) throw typeError('prefix', 'prefix must be a string of at most 256 characters');
    this.#storage = storage;
    this.#op = `${prefix}op:`;
    this.#intent = `${prefix}intent:`;
  }

  async begin(e) {
    checkBegin(e);
    if (e.intent !== undefined) {
      const id = await this.#storage.get(`${this.#intent}${e.intent}`);
      if (id !== undefined) return this.#storage.get(`${this.#op}${id}`);
    }
    const existing = await this.#storage.get(`${this.#op}${e.operationId}`);
    if (existing) return existing;
    const entry = entryOf(e);
    const writes = { [`${this.#op}${entry.operationId}`]: entry };
    if (e.intent !== undefined) writes[`${this.#intent}${e.intent}`] = entry.operationId;
    await this.#storage.put(writes);
    return entry;
  }

  async settle(operationId, status, settledAt = Date.now()) {
    const entry = await this.#storage.get(`${this.#op}${operationId}`);
    if (!entry) return undefined;
    const next = { ...entry, state: status, settledAt };
    await this.#storage.put(`${this.#op}${operationId}`, next);
    return next;
  }

  async get(operationId) {
    return this.#storage.get(`${this.#op}${operationId}`);
  }

  async pending() {
    const all = await this.#storage.list({ prefix: this.#op });
    return [...all.values()].filter((e) => UNRESOLVED.has(e.state));
  }

  async purge(settledBeforeMs) {
    checkBefore(settledBeforeMs);
    const all = await this.#storage.list({ prefix: this.#op });
    const gone = [];
    for (const [key, e] of all) {
      if (!purgeable(e, settledBeforeMs)) continue;
      gone.push(key);
      if (e.intent !== undefined) gone.push(`${this.#intent}${e.intent}`);
    }
    // Durable Object storage deletes at most 128 keys per call.
    for (let i = 0; i < gone.length; i += 128) await this.#storage.delete(gone.slice(i, i + 128));
    return [...all.values()].filter((e) => purgeable(e, settledBeforeMs)).length;
  }
}
