import type { LedgerRecord, LedgerRulesOptions, RecordState } from './rules.js';

/** A ledger key: the tenant comes from the authenticated request, never from tool arguments. */
export interface LedgerKey {
  /** The authenticated principal whose record it is (from the request context, never the arguments). */
  tenant: string;
  /** The ledger's name for the tool's writes (`withIdempotency`'s `action`, usually the tool name). */
  action: string;
  /** The operation id the client sent (8–128 characters of `A–Z a–z 0–9 - _ . :`). */
  operationId: string;
}

/**
 * Where the ledger keeps records. `insert` and `replace` must be atomic. `result` is opaque text the ledger
 * wrote (the encoded result): store it and give it back unchanged; `replace` without one leaves none.
 * `purge(nowMs)` (needed by `OperationLedger#purge` only) deletes the `succeeded`/`failed` records with
 * `expiresMs <= nowMs` and resolves to how many; it must never delete a `pending` or `unknown` one.
 */
export interface LedgerStore {
  get(key: LedgerKey): Promise<{ record: LedgerRecord; result?: string } | undefined | null>;
  insert(key: LedgerKey, record: LedgerRecord): Promise<boolean>;
  replace(key: LedgerKey, expectedVersion: number, record: LedgerRecord, result?: string): Promise<boolean>;
  purge?(nowMs: number): Promise<number>;
  /** Optional (`OperationLedger#unresolved`, `releaseAll`): unresolved records, oldest first. */
  unresolved?(filter: UnresolvedFilter): Promise<UnresolvedRecord[]>;
  /** Optional (`OperationLedger#countUnresolved`). */
  countUnresolved?(filter: Omit<UnresolvedFilter, 'limit'>): Promise<UnresolvedCount[]>;
  /**
   * Optional (`withIdempotency`'s `transaction` option needs it): in one store transaction, write `claim`
   * (insert when `expectedVersion` is null, else replace that version — if that does not apply, roll back
   * and resolve `false` without calling `work`), await `work(tx)`, write its record and result, commit. A
   * throwing `work` rolls everything back and the error is rethrown.
   */
  transaction?(key: LedgerKey, expectedVersion: number | null, claim: LedgerRecord, work: (tx: any) => Promise<{ record: LedgerRecord; result?: string }>): Promise<boolean>;
}

/** Which unresolved records (`OperationLedger#unresolved`, `releaseAll`, `countUnresolved`): a tenant and/or an action, at most `limit`. */
export interface UnresolvedFilter {
  /**
   * Only this tenant's records.
   * @default undefined (every tenant)
   */
  tenant?: string;
  /**
   * Only this action's records.
   * @default undefined (every action)
   */
  action?: string;
  /**
   * The most records answered, oldest first: a count from 1 to 10,000.
   * @default 100
   */
  limit?: number;
}
/** An unresolved (`pending` or `unknown`) record. */
export interface UnresolvedRecord { key: LedgerKey; record: LedgerRecord }
/** How many unresolved records one (tenant, action) holds. */
export interface UnresolvedCount { tenant: string; action: string; pending: number; unknown: number }

/** What a transactional handler gets from `D1LedgerStore`: queue its writes; they commit in the ledger's batch. */
export interface D1LedgerTransaction {
  /** The D1 binding: read with it, and prepare the statements to add. */
  readonly db: any;
  /** Adds prepared, bound statements to the batch that commits them with the record. */
  add(...statements: any[]): void;
}

/** The store operations every ledger store of the package has. */
declare abstract class LedgerStoreMethods implements LedgerStore {
  get(key: LedgerKey): Promise<{ record: LedgerRecord; result?: string } | undefined | null>;
  insert(key: LedgerKey, record: LedgerRecord): Promise<boolean>;
  replace(key: LedgerKey, expectedVersion: number, record: LedgerRecord, result?: string): Promise<boolean>;
  /**
   * Deletes the resolved records (`succeeded`, `failed`) with `expiresMs <= nowMs`; never a `pending` or
   * `unknown` one (nor a `released` one). Resolves to how many went. `nowMs`: whole ms since the epoch
   * (else a `TypeError`/`RangeError` with `field: 'nowMs'`).
   */
  purge(nowMs: number): Promise<number>;
  unresolved(filter?: UnresolvedFilter): Promise<UnresolvedRecord[]>;
  countUnresolved(filter?: Omit<UnresolvedFilter, 'limit'>): Promise<UnresolvedCount[]>;
}
/** A store that can commit a handler's writes with its record (`withIdempotency`'s `transaction` option). */
declare abstract class TransactionalLedgerStore<Tx> extends LedgerStoreMethods {
  /** See `LedgerStore.transaction`; `tx` is what the handler writes through. */
  transaction(key: LedgerKey, expectedVersion: number | null, claim: LedgerRecord, work: (tx: Tx) => Promise<{ record: LedgerRecord; result?: string }>): Promise<boolean>;
}
/**
 * A ledger store in this process's memory: for tests, and for a single process whose records may be lost with
 * it (a restart forgets every claim and outcome, so a repeat after it runs again). Not transactional.
 */
export declare class MemoryLedgerStore extends LedgerStoreMethods {
  /** Rows held (only the memory store can count cheaply). */
  readonly size: number;
}

/**
 * How much of the ledger a power cut may take (`SqliteLedgerStore`, WAL mode):
 * - `'full'` (default): `synchronous=FULL` — every committed claim and finish survives a power cut.
 * - `'normal'`: `synchronous=NORMAL` — a power cut may lose the last transactions but never corrupts the file
 *   (a lost claim lets its operation run again).
 */
export type SqliteDurability = 'full' | 'normal';
/** The options of `new SqliteLedgerStore(db, options)`; a bad one is a `TypeError`/`RangeError` naming it. */
export interface SqliteLedgerStoreOptions {
  /**
   * How much a power cut may take (see {@link SqliteDurability}): `'full'` sets `synchronous=FULL`, `'normal'`
   * `synchronous=NORMAL` (WAL mode only). An `EXTRA` set on the connection is kept.
   * @default 'full'
   */
  durability?: SqliteDurability;
  /**
   * The longest a `transaction: true` handler may hold the transaction, in milliseconds (1 – 3,600,000): a
   * longer one is rolled back (answered `rejected`/`rolled_back`) and its `tx` refuses every later call.
   * @default 10000 (10 seconds)
   */
  transactionTimeoutMs?: number;
}
/**
 * SQLite through better-sqlite3: pass an open `Database`. Switches the file to WAL mode unless you chose a
 * journal mode yourself, and sets `synchronous` from `durability` (an `EXTRA` you set is kept). A
 * transactional handler gets that `Database`, inside `BEGIN IMMEDIATE`.
 */
export declare class SqliteLedgerStore<Db extends { prepare(sql: string): any; exec(sql: string): unknown } = any> extends TransactionalLedgerStore<Db> {
  /**
   * Creates the table and its indexes if missing, and sets the journal and synchronous modes.
   * @param db An open better-sqlite3 `Database`.
   * @param options `durability` and `transactionTimeoutMs` (see {@link SqliteLedgerStoreOptions}).
   */
  constructor(db: Db, options?: SqliteLedgerStoreOptions);
}
/**
 * Cloudflare D1: pass the binding; `await store.ready` creates the table and its expiry index. A
 * transactional handler gets a `D1LedgerTransaction` (its statements join one batch with the record).
 */
export declare class D1LedgerStore extends TransactionalLedgerStore<D1LedgerTransaction> {
  /**
   * Starts creating the table and its indexes (`ready`); every store call waits for it.
   * @param db The D1 binding (`env.DB`).
   */
  constructor(db: { prepare(sql: string): any });
  /** Settles when the table and its indexes exist. */
  readonly ready: Promise<unknown>;
}
/**
 * A Durable Object's `ctx.storage`. To purge on the object's alarm:
 * ```ts
 * export class Ledger extends DurableObject {
 *   store = new DurableObjectLedgerStore(this.ctx.storage);
 *   constructor(ctx: DurableObjectState, env: Env) {
 *     super(ctx, env);
 *     ctx.blockConcurrencyWhile(() => this.store.scheduleAlarm(3_600_000));
 *   }
 *   async alarm() {
 *     await this.store.purgeOnAlarm(3_600_000); // purge what expired, then again in an hour
 *   }
 * }
 * ```
 * An object has one alarm: if yours does other work, call `purge(Date.now())` from your `alarm()` instead.
 */
export declare class DurableObjectLedgerStore extends TransactionalLedgerStore<any> {
  /**
   * A store in the object's storage (records under keys of their own; a transaction is the storage's).
   * @param storage The Durable Object's `ctx.storage` (`get`, `transaction`; `getAlarm`/`setAlarm` for the alarm helpers).
   */
  constructor(storage: {
    get(key: string): Promise<any>;
    transaction<T>(fn: (txn: any) => Promise<T>): Promise<T>;
    getAlarm?(): Promise<number | null>;
    setAlarm?(scheduledTime: number | Date): Promise<void>;
  });
  /**
   * Sets the alarm to `nowMs + everyMs` unless one is set already; resolves to the alarm's time.
   * @param everyMs The purge interval, in milliseconds (1 ms – a year).
   * @param nowMs The time it counts from, in milliseconds since the epoch. Default `Date.now()`.
   */
  scheduleAlarm(everyMs: number, nowMs?: number): Promise<number>;
  /** For `alarm()`: purges what expired by `nowMs` (default now), sets the next alarm `everyMs` later; resolves to the count purged. */
  purgeOnAlarm(everyMs: number, nowMs?: number): Promise<number>;
}
/** What `PostgresLedgerStore` needs of a `pg.Pool`. */
export interface PostgresQueryable {
  query(query: { name?: string; text: string; values?: unknown[] } | string): Promise<{ rows: any[]; rowCount: number | null }>;
}
/**
 * PostgreSQL through `pg` (node-postgres, an optional peer dependency): pass a `Pool`. **Node only**: exported
 * by the package's node entries, not by its browser or workerd ones. `await store.ready` creates the table and
 * its expiry index if missing (safe when processes start together); a failed setup is tried again by the next
 * call. Durability is the server's (`synchronous_commit`, `fsync`). A transactional handler gets a `PoolClient`
 * of the pool, inside `BEGIN`.
 */
export declare class PostgresLedgerStore<Client = any> extends TransactionalLedgerStore<Client> {
  /**
   * Starts creating the table and its index if missing (`ready`).
   * @param pool A `pg.Pool` (its `query`; `connect` for transactional handlers).
   */
  constructor(pool: PostgresQueryable & { connect?(): Promise<Client> });
  /** Settles when the table and its index exist (a failed setup is tried again by the next call). */
  readonly ready: Promise<void>;
}

/** What the reconcile hook answers when an outcome is not known. */
export type ReconcileVerdict =
  | { status: 'succeeded' | 'failed'; result: unknown }
  | { status: 'not_done' }
  | { status: 'unknown' };

/**
 * The options of `new OperationLedger(options)`: the store (required), the durations (`ttlMs`, `leaseMs`: see
 * {@link LedgerRulesOptions}), the reconcile hook, the clock, what operators hear, the largest result kept,
 * and OpenTelemetry. `ttlMs` must be at least `leaseMs` (a `RangeError` with `code: 'ttl_below_lease'`,
 * `field: 'ttlMs'` otherwise); pending and unknown records never expire.
 */
export interface OperationLedgerOptions extends LedgerRulesOptions {
  /**
   * Where records are kept: `MemoryLedgerStore`, `SqliteLedgerStore`, `D1LedgerStore`, `DurableObjectLedgerStore`,
   * `PostgresLedgerStore`, or your own `LedgerStore`. Required.
   */
  store: LedgerStore;
  /**
   * Asked when an outcome is not known: a claim whose lease ran out (its run stopped renewing it) or an
   * `unknown` record — never while this process holds a live claim on the key. Answer `not_done` only when
   * the operation did not happen and cannot happen any more (a stale run's write would be refused
   * downstream by its fence, or the run has provably ended). Look up by the `tenant` given, not by the id alone.
   * @default undefined (no hook: an outcome not known stays `unknown` until an operator releases it)
   */
  reconcile?: (ctx: LedgerKey & { record: LedgerRecord; result?: unknown }) => Promise<ReconcileVerdict> | ReconcileVerdict;
  /**
   * The ledger's clock, in milliseconds since the epoch: leases, expiries and record times. (A claim's give-up
   * point is also kept on this process's monotonic clock.)
   * @default () => Date.now()
   */
  now?: () => number;
  /**
   * What operators must know (a throw here is ignored). Store and handler error details go here, never to the model.
   * @default undefined (nothing is told)
   */
  onEvent?: (event: LedgerEvent) => void;
  /**
   * The largest result text a record keeps, in UTF-8 bytes (1 – 1,073,741,824); a larger result is recorded as
   * `result_not_stored`.
   * @default 1048576 (1 MiB)
   */
  maxResultBytes?: number;
  /**
   * Your `@opentelemetry/api` module: `withIdempotency` counts every answer in `mcp_retry_policy.ledger.answers`
   * (attributes `mcp_retry_policy.ledger.answer` — execute, replay, conflict, in_progress, unknown, rejected,
   * rolled_back — and `mcp_retry_policy.ledger.action`), and every event in `mcp_retry_policy.ledger.incidents`
   * (attribute `mcp_retry_policy.ledger.incident`: the event's type), and observes the gauge
   * `mcp_retry_policy.ledger.unresolved` (unresolved records by `mcp_retry_policy.ledger.action` and
   * `mcp_retry_policy.ledger.state` — pending, unknown —, never by tenant) from one `countUnresolved()` query
   * per `unresolvedCacheMs`. Without it nothing is recorded.
   * @default undefined (nothing recorded)
   */
  opentelemetry?: {
    /** The module's metrics API (`api.metrics`): its `getMeter` makes the ledger's counters and gauge. */
    metrics: { getMeter(name: string, version?: string): unknown };
  };
  /**
   * How long the unresolved gauge reuses a count read from the store, in milliseconds on the ledger's clock
   * (a whole number, 0 – 3,600,000; 0 asks the store on every collection). A failed count is kept as long (no
   * value observed).
   * @default 5000 (5 seconds)
   */
  unresolvedCacheMs?: number;
}

/** What `onEvent` hears. `error` is the store's, handler's or hook's own error: for logs, never for the model. */
export type LedgerEvent =
  | { type: 'store_error'; during: 'get' | 'insert' | 'replace' | 'renew' | 'transaction' | 'commit'; key: LedgerKey; error: unknown }
  /** An operators' listing or count failed (`unresolved`, `countUnresolved`, the unresolved gauge): no key. */
  | { type: 'store_error'; during: 'unresolved' | 'countUnresolved'; key: undefined; error: unknown }
  | { type: 'lease_lost'; key: LedgerKey; fence: number; reason: 'record_changed' | 'not_renewed' }
  /** A renewal came late (the event loop stalled past two thirds of the lease) but held: the lease is too short for this process. */
  | { type: 'lease_late'; key: LedgerKey; fence: number; leftMs: number }
  | { type: 'late_finish'; key: LedgerKey; version: number; state: 'succeeded' | 'failed' | 'unknown' }
  | { type: 'result_not_stored'; key: LedgerKey; state: 'succeeded' | 'failed'; why: string; error?: unknown }
  | { type: 'handler_error'; during: 'handler' | 'validate' | 'transaction'; key: LedgerKey; error: unknown }
  | { type: 'reconcile_error' | 'authorize_error'; key: LedgerKey; error: unknown };

/** A ledger store failed (its error in `cause`; the `store_error` event has told `onEvent`). */
export declare class LedgerStoreError extends Error {
  readonly code: 'store_unavailable';
  readonly during: string;
}

/** Why a handler's claim signal aborted (`claimOf(extra).signal.reason`). */
export declare class LeaseLost extends Error {
  readonly reason: 'record_changed' | 'not_renewed';
  readonly fence: number;
  /** `false` when `claim.transaction` was refused: none of its writes stand. */
  readonly committed?: false;
}

/** A claim kept while its handler runs (`OperationLedger.hold`). */
export interface LedgerClaimHold {
  /** The fencing token: the version the claim was made with; every later claim of the key has a higher one. */
  readonly fence: number;
  /** Aborts (with a `LeaseLost`) when the claim can no longer be kept. */
  readonly signal: AbortSignal;
  readonly live: boolean;
  /** The claim as last renewed. */
  readonly claim: LedgerRecord;
  /** `work(tx)` in the store's transaction, committed only while the claim is the record's (see `LedgerClaimContext.transaction`). */
  transaction<T, Tx = any>(work: (tx: Tx) => T | Promise<T>): Promise<T>;
  /** Ends the renewals; resolves to the claim to `finish` with (a renewal in flight is waited for up to the give-up point). */
  stop(): Promise<LedgerRecord>;
}

/** The claim a handler runs under: `claimOf(extra)` inside a handler wrapped by `withIdempotency`. */
export interface LedgerClaimContext extends LedgerKey {
  /** The fencing token (the claim's version): pass it downstream so that a stale run is refused there. */
  readonly fence: number;
  /**
   * Aborts when the claim can no longer be kept: stop, and do not commit. It also aborts once the claim's
   * give-up point (a third of the lease before its end) passes on this process's monotonic clock with no
   * renewal landed — after a pause too: read `claimOf(extra).signal` afresh right before committing.
   */
  readonly signal: AbortSignal;
  /**
   * Runs `work(tx)` in one transaction of the ledger's store (SQLite, Postgres, D1, Durable Object) that
   * commits only while this claim is still the record's: the fence is checked where the write lands. Refused
   * (the record changed hands): rejects with a `LeaseLost` (`committed: false`), none of the writes stand, and
   * `withIdempotency` answers what the ledger now says (the other run's result, or in progress).
   */
  transaction<T, Tx = any>(work: (tx: Tx) => T | Promise<T>): Promise<T>;
}
/** The claim the handler with this `extra` runs under, or `undefined` outside a `withIdempotency` handler. */
export declare function claimOf(extra: unknown): LedgerClaimContext | undefined;

/**
 * What `OperationLedger.begin` says to do with a write: `execute` under the new `claim`, `replay` the recorded
 * outcome, answer `in_progress` (retry after `retryAfterMs` milliseconds), `conflict` (the id was used for other
 * input), or `unknown`.
 */
export type LedgerBegin =
  | { action: 'execute'; claim: LedgerRecord }
  | { action: 'replay'; state: RecordState; result: unknown }
  | { action: 'in_progress'; retryAfterMs: number }
  | { action: 'conflict' }
  | { action: 'unknown' };

/** What `release` did. */
export interface LedgerReleased {
  released: true;
  /** The unresolved state it was in. */
  previousState: 'pending' | 'unknown';
  /** The stored record now (state `released`). */
  record: LedgerRecord;
}

/** The `code` of the `RangeError` (`field: 'key'`) that `release` refuses with. */
export type LedgerReleaseRefusal = 'not_found' | 'resolved' | 'lease_live' | 'already_released' | 'contended';

/**
 * The operation ledger: records each keyed write by (tenant, action, operation id) so that a repeat returns the
 * first outcome instead of running again. The rules (what to do with a write, how a record changes) are the
 * wasm core's; the ledger does the store I/O, asks the reconcile hook when an outcome is not known, keeps
 * the claims of running handlers alive (renewed every third of the lease), and gives operators their listings,
 * releases and purges. Use it through `withIdempotency` and the status tool.
 */
export declare class OperationLedger {
  /**
   * Checks the options (a `TypeError`/`RangeError` with `code` and `field`).
   * @param options The store (required), `ttlMs`, `leaseMs`, `reconcile`, `now`, `onEvent`, `maxResultBytes`,
   * `opentelemetry`, `unresolvedCacheMs` (see {@link OperationLedgerOptions}).
   */
  constructor(options: OperationLedgerOptions);
  /** How long a resolved outcome is replayed, in milliseconds. */
  readonly ttlMs: number;
  /** How long a claim holds before a repeat is reconciled, in milliseconds. */
  readonly leaseMs: number;
  /** The largest result text a record keeps (UTF-8 bytes). */
  readonly maxResultBytes: number;
  /** Rejects with a `LedgerStoreError` when the store fails. */
  begin(key: LedgerKey, fingerprint: string): Promise<LedgerBegin>;
  /** Keeps a claim from `begin` while its handler runs (renewed every third of the lease). */
  hold(key: LedgerKey, claim: LedgerRecord): LedgerClaimHold;
  /**
   * Which action holds `operationId` for `tenant`: the asked one, else the one action registered by
   * `withIdempotency` on this ledger that does (`{ ambiguous: true, actions }` for several). One tenant only.
   */
  locate(query: { tenant: string; operationId: string; action: string }): Promise<{ action: string } | { ambiguous: true; actions: string[] } | undefined>;
  /** Records the outcome; a result that cannot be encoded (BigInt, function, Symbol, cycle) is recorded as a note. */
  finish(key: LedgerKey, claim: LedgerRecord, state: 'succeeded' | 'failed' | 'unknown', result?: unknown): Promise<boolean>;
  /**
   * Releases an unresolved record (`unknown`, or `pending` past its lease) after you checked that the
   * operation did not take effect: the next call with the key executes. Refuses (a `RangeError` with
   * `field: 'key'` and a `LedgerReleaseRefusal` `code`) a missing, resolved, live or released record.
   */
  release(key: LedgerKey, options: {
    /** How you know the operation did not take effect (a non-empty string, kept in the store with the release). Required. */
    reason: string;
  }): Promise<LedgerReleased>;
  /**
   * Releases, with one `reason`, up to `filter.limit` (default 100) unresolved records of a tenant and/or
   * action, oldest first, each through `release` (a live lease is refused, never released).
   */
  releaseAll(filter: UnresolvedFilter | undefined, options: {
    /** How you know these operations did not take effect (a non-empty string, kept with each release). Required. */
    reason: string;
  }): Promise<{ released: LedgerKey[]; refused: { key: LedgerKey; code: LedgerReleaseRefusal }[] }>;
  /** The unresolved records of a tenant and/or action, oldest first (a store without `unresolved`: `TypeError`, `field: 'store'`). */
  unresolved(filter?: UnresolvedFilter): Promise<UnresolvedRecord[]>;
  /** How many unresolved records each (tenant, action) holds. */
  countUnresolved(filter?: Omit<UnresolvedFilter, 'limit'>): Promise<UnresolvedCount[]>;
  /**
   * What is known about an operation, read-only (nothing is claimed or executed; an unresolved record is
   * put to the reconcile hook). `not_found` is not proof that it did not happen. The key's tenant must be
   * the authenticated caller's.
   */
  status(key: LedgerKey): Promise<OperationStatusAnswer>;
  /**
   * Deletes the resolved records that expired at or before `nowMs` (default: the ledger's clock); never an
   * unresolved one. Resolves to how many went. A store without `purge` is a `TypeError` (`field: 'store'`).
   */
  purge(nowMs?: number): Promise<number>;
  /** Whether the store can commit a handler's writes with the record (it has `transaction`). */
  readonly transactional: boolean;
  /**
   * Runs `work(tx)` in the store's transaction with the claim and the record: all commit or none does. No
   * pending claim is ever visible. A key already used answers as `begin` does.
   */
  executeAtomically<Tx = any>(key: LedgerKey, fingerprint: string, work: (tx: Tx) => unknown): Promise<LedgerAtomicOutcome>;
}

/** What `executeAtomically` did. */
export type LedgerAtomicOutcome =
  | { action: 'executed'; state: 'succeeded' | 'failed'; result: unknown }
  | { action: 'rolled_back'; error: unknown }
  | { action: 'commit_unknown'; error: unknown }
  | Exclude<LedgerBegin, { action: 'execute' }>;

/** What `OperationLedger.status` finds (and the status tool answers). */
export type OperationStatusAnswer =
  | { status: 'not_found' | 'not_done' | 'unknown' }
  | { status: 'in_progress'; retryAfterMs: number }
  | { status: 'succeeded' | 'failed'; result: unknown };

/** The options of `registerStatusTool` and `statusTool` (`statusTool` takes all but `z`). */
export interface StatusToolOptions<Extra> {
  /**
   * The tenant, from the authenticated request context (as for `withIdempotency`): the caller sees only its own
   * tenant's records. Required.
   */
  tenant: (extra: Extra) => string | undefined | Promise<string | undefined>;
  /**
   * The tool's name (the client's `statusTool` option must match it).
   * @default 'operation_status'
   */
  name?: string;
  /**
   * The description the model reads.
   * @default the package's: "Reports what happened to an earlier write, by the operation id it was sent with: …"
   */
  description?: string;
  /**
   * The zod the server's SDK uses, to build the input schema (`registerStatusTool` only).
   * @default the `zod` this package resolves
   */
  z?: { string(): any };
  /**
   * Whether this caller may read the record found under `action` (e.g. only payroll admins read `payroll_adjust`).
   * Anything but `true` (a throw too) answers as an id never used: `not_found`.
   * @default undefined (every caller of the tenant may read every action's records)
   */
  authorize?: (ctx: LedgerKey & { extra: Extra }) => boolean | Promise<boolean>;
}

/** The status tool's default name: `operation_status`. */
export declare const STATUS_TOOL_NAME: 'operation_status';
/**
 * Registers the read-only status tool on an `McpServer`: `{ action, operation_id }` → in `structuredContent`
 * `{ status, action, operation_id, retryAfterMs?, result? }`, for the caller's tenant only. Returns the
 * registered tool.
 */
export declare function registerStatusTool<Extra = any>(
  server: { registerTool(name: string, config: any, handler: (args: any, extra: Extra) => any): any },
  ledger: OperationLedger,
  options: StatusToolOptions<Extra>,
): any;

/** The status tool for any framework: what `statusTool` returns. */
export interface StatusToolDefinition<Extra> {
  /** The tool's name (`options.name`, default `operation_status`). */
  name: string;
  /** What the model reads about the tool. */
  description: string;
  /** `{ action, operation_id }`, as JSON Schema (both strings, both required). */
  inputSchema: { type: 'object'; properties: Record<'action' | 'operation_id', Record<string, unknown>>; required: ['action', 'operation_id'] };
  /** Read-only, idempotent, closed-world. */
  annotations: { readOnlyHint: true; idempotentHint: true; destructiveHint: false; openWorldHint: false };
  /** Answers a call: text for the model, `structuredContent` `{ status, action, operation_id, retryAfterMs?, result? }`. */
  handler: (args: { action: string; operation_id: string }, extra: Extra) => Promise<{ content: { type: 'text'; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> }>;
}

/**
 * The status tool as a framework-neutral definition (name, description, JSON Schema, annotations, handler), for a
 * server built on anything but the SDK's `McpServer` (the SDK's low-level `Server`, FastMCP, tmcp, …): register
 * it the way your framework registers a tool; `tenant(extra)` reads your framework's request context.
 */
export declare function statusTool<Extra = any>(ledger: OperationLedger, options: Omit<StatusToolOptions<Extra>, 'z'>): StatusToolDefinition<Extra>;

/** Thrown by a handler that submitted downstream and cannot tell whether it committed. */
export declare class OutcomeUnknown extends Error {
  /**
   * @param message What is not known (for logs; the model gets the ledger's own wording).
   * @param options `cause`: the downstream error, as for `Error`.
   */
  constructor(message?: string, options?: {
    /**
     * The error that left the outcome unknown (a timeout, a dropped connection).
     * @default undefined (none)
     */
    cause?: unknown;
  });
}

/** The options of `withIdempotency(ledger, handler, options)`; a bad one is a `TypeError` naming it. */
export interface IdempotencyOptions<Extra> {
  /** The ledger's name for this tool's writes (usually the tool name). Required. */
  action: string;
  /**
   * The tenant: the authenticated principal whose results these are — the token's subject (e.g.
   * `extra.authInfo.extra.sub`), not the app's client id, which many users share. Never from the arguments.
   * Required.
   */
  tenant: (extra: Extra) => string | undefined | Promise<string | undefined>;
  /**
   * The argument that carries the operation id; the tool's input schema must declare it. A missing or malformed
   * id is `rejected` (`invalid_operation_id`) and nothing is done.
   * @default 'operation_id'
   */
  operationIdArgument?: string;
  /**
   * Checks run before any claim; return a message to refuse (a validator that throws refuses too, with reason `validation_failed`): the caller gets `_meta[LEDGER_META_KEY] = { status: 'rejected', reason: 'invalid_input', operationId }` and nothing is stored.
   * @default undefined (no validation)
   */
  validate?: (args: any, extra: Extra) => string | undefined | Promise<string | undefined>;
  /**
   * `true`: the handler gets the store's transaction as its third argument and writes through it; its
   * writes, the claim and the record commit together or not at all, so a crash never leaves `unknown`. A
   * handler that throws is rolled back and the caller gets `{ status: 'rejected', reason: 'rolled_back' }`
   * (its database writes were undone; the same id may be sent again). Every effect must go through the
   * transaction: what the handler does outside it (a message sent, a call to another service) may stand, and the
   * caller is told so.
   * The ledger's store must be SQLite, Postgres, D1 or a Durable Object (else a `TypeError`, `field: 'transaction'`).
   * @default false
   */
  transaction?: boolean;
  /**
   * Asked on every call — a replay included — before the ledger is read, with the call's arguments: anything
   * but `true` (a throw included, told to `onEvent` as `authorize_error`) answers `rejected`, reason
   * `unauthorized`, and reveals nothing (not whether the id was used). Put here the permission checks the write
   * needs: a replay skips the handler, so checks inside it do not run for a reused key.
   * @default undefined (every authenticated caller of the tenant is allowed)
   */
  authorize?: (ctx: LedgerKey & { args: Record<string, unknown>; extra: Extra }) => boolean | Promise<boolean>;
  /**
   * With a tenant wider than one principal (an organisation): the caller's own principal (the token's
   * subject). It is bound into the record's fingerprint, so another principal's call with the same id and
   * input is a `conflict` (nothing done, nothing revealed), never a replay of this one's result. A request
   * without one is `rejected` (`unauthenticated`).
   * @default undefined (the tenant is the principal)
   */
  principal?: (extra: Extra) => string | undefined | Promise<string | undefined>;
}

/**
 * Wraps a tool handler for `McpServer.registerTool`: a replayed write returns its first outcome. With
 * `{ transaction: true }` the handler's third argument is the store's transaction (`Tx`: better-sqlite3's
 * `Database`, a pg `PoolClient`, a `D1LedgerTransaction`, a Durable Object storage transaction).
 */
export declare function withIdempotency<Args extends Record<string, unknown>, Extra, Result, Tx = any>(
  ledger: OperationLedger,
  handler: (args: Args, extra: Extra, tx: Tx) => Result | Promise<Result>,
  options: IdempotencyOptions<Extra> & {
    /** The handler's writes go through the store's transaction (its third argument) and commit with the record. */
    transaction: true;
  },
): (args: Args, extra: Extra) => Promise<Result>;
export declare function withIdempotency<Args extends Record<string, unknown>, Extra, Result>(
  ledger: OperationLedger,
  handler: (args: Args, extra: Extra) => Result | Promise<Result>,
  options: IdempotencyOptions<Extra> & {
    /**
     * No transaction: the claim is recorded before the handler runs and its outcome after.
     * @default false
     */
    transaction?: false;
  },
): (args: Args, extra: Extra) => Promise<Result>;

import type { LEDGER_META_KEY as GENERATED_LEDGER_META_KEY } from '../generated/names.js';
/** The `_meta` key of the ledger's own answers (rejected, in progress, conflict, unknown, result not stored): see {@link LedgerMeta}. */
export declare const LEDGER_META_KEY: typeof GENERATED_LEDGER_META_KEY;

/** Why `withIdempotency` answered `rejected`: refused before any claim (nothing was done), or (`rolled_back`) the
 *  handler ran and failed and its transaction was undone (effects outside the transaction may stand). */
export type LedgerRejectReason = 'invalid_operation_id' | 'unauthenticated' | 'unauthorized' | 'invalid_input' | 'validation_failed' | 'rolled_back';

/** What the ledger's own answers carry under `_meta[LEDGER_META_KEY]`. */
export type LedgerMeta =
  | { status: 'rejected'; reason: LedgerRejectReason; operationId?: string }
  | { status: 'in_progress'; operationId: string; retryAfterMs: number }
  | { status: 'conflict'; operationId: string }
  /** `reason: 'store_unavailable'`: the ledger's store failed before this call ran anything. */
  | { status: 'unknown'; operationId: string; reason?: 'store_unavailable' }
  | { status: 'result_not_stored'; state: 'succeeded' | 'failed'; operationId?: string; reason: string };
/**
 * RFC 8785 canonical JSON + SHA-256, hex. Throws `RangeError` (`not_finite`: NaN or ±Infinity, boxed too;
 * `too_deep`; `too_large`: over MAX_FINGERPRINT_BYTES) or `TypeError` (`invalid_type`: cycles, BigInt,
 * `undefined`), each with `code` and `field: 'value'`.
 */
export declare function fingerprint(value: unknown): string;
/** The longest canonical JSON text `fingerprint` takes, in UTF-8 bytes: 16 MiB. */
export declare const MAX_FINGERPRINT_BYTES: number;
