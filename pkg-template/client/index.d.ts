import type { PolicyOptions, RevisionSetting, Safety, AttemptOutcome, Classification, Decision, BreakerTransition, RetryEngine, FinalStatus, Reason, Recover } from './engine.js';
import type { OperationStatus } from '../generated/names.js';

/** The final status of a call. `unknown`: it may or may not have happened — never success, never a clean failure. */
export type CallStatus = FinalStatus;

/** One attempt of a call, as observed and decided. */
export interface AttemptRecord {
  /** Its number in the call, from 1 (a count of attempts so far). */
  attempt: number;
  /** When it started, in milliseconds on withRetry's clock (`now`, default `Date.now`). */
  startedAt: number;
  /** How long it took, in milliseconds. */
  durationMs: number;
  outcome: AttemptOutcome;
  classification: Classification;
  decision: Decision;
  breaker?: BreakerTransition;
}

/** What `call()` returns. */
export interface CallOutcome {
  status: CallStatus;
  tool: string;
  /** The tool's result, for `succeeded`, `tool_error` and (a task) `pending`. */
  result?: CallToolResultLike;
  /** The last error, when the call did not end with a result. */
  error?: { name: string; message: string; code?: string | number };
  /** The operation id sent with a keyed tool (the same on every attempt). */
  operationId?: string;
  safety: Safety;
  attempts: AttemptRecord[];
  /** Why the call stopped (a stable snake_case name). */
  reason: Reason;
  /** A sentence for the model: what happened, whether it may have run, what to do next. */
  message: string;
}

/** The subset of an MCP `CallToolResult` this package reads and returns. */
export interface CallToolResultLike {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The parts of an MCP SDK transport that `withRetry` needs from a `transport` factory's product. */
export interface TransportLike {
  start(): Promise<void>;
  send(message: unknown, options?: unknown): Promise<void>;
  close(): Promise<void>;
}

/** The parts of an `@modelcontextprotocol/sdk` `Client` that `withRetry` uses. */
export interface ClientLike {
  request(request: { method: string; params?: Record<string, unknown> }, resultSchema: unknown, options?: Record<string, unknown>): Promise<unknown>;
  listTools(params?: { cursor?: string }): Promise<{ tools: Array<{ name: string; annotations?: Record<string, unknown>; inputSchema?: Record<string, unknown> }>; nextCursor?: string }>;
  close(): Promise<void>;
  connect(transport: any): Promise<void>;
  transport?: any;
}

/** An operation-id journal entry. */
export interface JournalEntry {
  operationId: string;
  tool: string;
  /** The server the write went to (withRetry's `server`); absent on entries written before entries were bound to a server. */
  server?: string;
  intent?: string;
  arguments?: Record<string, unknown>;
  state: 'pending' | CallStatus;
  createdAt: number;
  settledAt?: number;
}

/** Where operation ids are persisted before the first send. */
export interface Journal {
  begin(entry: { tool: string; operationId: string; server?: string; intent?: string; arguments?: Record<string, unknown>; createdAt?: number }): Promise<JournalEntry>;
  settle(operationId: string, status: CallStatus, settledAt?: number): Promise<JournalEntry | undefined>;
  get?(operationId: string): Promise<JournalEntry | undefined>;
  pending(): Promise<JournalEntry[]>;
  /** Removes resolved entries settled at or before `settledBeforeMs` (and their intents); never unresolved ones. */
  purge?(settledBeforeMs: number): Promise<number>;
  /** What the journal holds (synchronous): withRetry says `journal_backlog` when `unresolved` reaches `backlogThreshold`. */
  stats?(): JournalStats;
}

/** What a journal holds, counted (`Journal.stats`): how withRetry tells a growing backlog of unresolved writes. */
export interface JournalStats {
  /** Every entry held. */
  entries: number;
  /** The pending and unknown ones: never forgotten by retention. */
  unresolved: number;
  /** The count of unresolved entries at which withRetry says `journal_backlog` (and at each multiple of it). */
  backlogThreshold: number;
}

/** MemoryJournal's retention. Each a whole number (NaN, ±∞, fractions, negatives refused by name). */
export interface MemoryJournalOptions {
  /**
   * The most resolved entries kept (succeeded, tool_error, failed), a count (0 keeps none); the ones settled
   * longest ago go first.
   * @default 10000
   */
  maxSettled?: number;
  /**
   * How long a resolved entry (and its intent) is kept after it settled, in milliseconds of the times the
   * journal is given (it reads no clock: its "now" is the newest `createdAt`/`settledAt` it was told).
   * @default 86400000 (a day: the server ledger's default `ttlMs`)
   */
  settledTtlMs?: number;
  /**
   * The count of unresolved entries (pending, unknown: never forgotten) at which withRetry says
   * `journal_backlog`, and again at each multiple of it; at least 1.
   * @default 1000
   */
  backlogThreshold?: number;
}

/**
 * In memory, lost with the process: the default. Forgets resolved entries by itself (`maxSettled`, `settledTtlMs`)
 * — with them their intents: a begin with a forgotten intent makes a new entry. Pending and unknown entries stay.
 */
export declare class MemoryJournal implements Journal {
  /**
   * An empty journal.
   * @param options Its retention (`maxSettled`, `settledTtlMs`) and backlog threshold; each a whole number
   * (NaN, ±∞, fractions, negatives are a `TypeError`/`RangeError` naming the option).
   */
  constructor(options?: MemoryJournalOptions);
  begin(entry: Parameters<Journal['begin']>[0]): Promise<JournalEntry>;
  settle(operationId: string, status: CallStatus, settledAt?: number): Promise<JournalEntry | undefined>;
  get(operationId: string): Promise<JournalEntry | undefined>;
  pending(): Promise<JournalEntry[]>;
  purge(settledBeforeMs: number): Promise<number>;
  stats(): JournalStats;
}
/**
 * In IndexedDB (browsers): operation ids survive reloads. Not a MemoryJournal: it shares only the contract, and keeps
 * resolved entries until `purge` (a sweep scans the store: call it from a timer, e.g. `purge(Date.now() - 86_400_000)`).
 */
export declare class IndexedDbJournal implements Journal {
  /**
   * Starts opening the IndexedDB database `name` (its store `operations` made on first open); without an
   * IndexedDB factory it throws a `TypeError` (`code: 'unsupported'`).
   * @param name The database's name, one per app. Default `'mcp-retry-policy'`.
   * @param factory The `IDBFactory` to open it with (tests: fake-indexeddb). Default `globalThis.indexedDB`.
   */
  constructor(name?: string, factory?: unknown);
  begin(entry: Parameters<Journal['begin']>[0]): Promise<JournalEntry>;
  settle(operationId: string, status: CallStatus, settledAt?: number): Promise<JournalEntry | undefined>;
  get(operationId: string): Promise<JournalEntry | undefined>;
  pending(): Promise<JournalEntry[]>;
  purge(settledBeforeMs: number): Promise<number>;
  close(): Promise<void>;
}
/** In a Durable Object's storage (Workers). Keeps resolved entries until `purge` (from an alarm: it lists the storage). */
export declare class DurableObjectJournal implements Journal {
  /**
   * A journal in `storage`, keys `${prefix}op:…` and `${prefix}intent:…`.
   * @param storage The Durable Object's `ctx.storage` (its `get`, `put` and `list` are used).
   * @param options `prefix`, for a storage shared with other code (see {@link DurableObjectJournalOptions}).
   */
  constructor(storage: { get(key: string): Promise<any>; put(key: string | Record<string, unknown>, value?: unknown): Promise<void>; list(options: { prefix: string }): Promise<Map<string, any>> }, options?: DurableObjectJournalOptions);
  begin(entry: Parameters<Journal['begin']>[0]): Promise<JournalEntry>;
  settle(operationId: string, status: CallStatus, settledAt?: number): Promise<JournalEntry | undefined>;
  get(operationId: string): Promise<JournalEntry | undefined>;
  pending(): Promise<JournalEntry[]>;
  purge(settledBeforeMs: number): Promise<number>;
}

/** What every event of a call carries: the call's id (per `withRetry` object, 1, 2, …) and the server's name. */
export interface EventContext {
  /** The call's number within its `withRetry` object, counted from 1. */
  callId?: number;
  /** The server's name from its `initialize` answer, when known. */
  server?: string;
}

/** Events for logs and metrics. */
export type RetryEvent = EventContext & (
  | ({ type: 'attempt'; tool: string; attempt: number; durationMs: number; outcome: AttemptOutcome; classification: Classification; decision: Decision; breaker?: BreakerTransition })
  | { type: 'retry'; tool: string; delayMs: number; recover?: Recover; reason: Reason }
  /** A re-send held by an open breaker or an empty retry budget (`reason` `breaker_hold` / `budget_hold`): it waits `delayMs`, then asks again. */
  | { type: 'hold'; tool: string; delayMs: number; reason: Reason }
  | ({ type: 'breaker'; tool: string } & BreakerTransition)
  | { type: 'give_up'; tool: string; status: Exclude<CallStatus, 'succeeded' | 'tool_error'>; reason: Reason; operationId?: string }
  | { type: 'done'; tool: string; status: CallStatus; reason: Reason; attempts: number; durationMs: number }
  /** One status query about a keyed write whose outcome was not known (`answer`: the status tool's, or `no_answer`). */
  | { type: 'resolve'; tool: string; operationId: string; answer: OperationStatus | 'no_answer' }
  /**
   * The journal's unresolved entries (pending, unknown: never forgotten) reached its `backlogThreshold`, or a
   * further multiple of it: resolve them (`reconcile()`), or look at why writes keep ending unknown.
   */
  | { type: 'journal_backlog'; tool: string; unresolved: number; threshold: number }
  /** A created task's progress: each look (`delayMs`: the wait before the next), its end, or a cancel (`cancelled` / `cancel_failed`). */
  | { type: 'task'; tool: string; taskId: string; status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled' | 'cancel_failed'; delayMs?: number }
  /**
   * A 2026-07-28 input round answered through the client's own handlers (`answered`: the server's
   * `inputRequests` keys; `requestState`: whether the server sent one, echoed as it was); the next attempt carries it.
   */
  | { type: 'input'; tool: string; round: number; answered: string[]; requestState: boolean });

/**
 * The options of `withRetry(client, options)`: the retry policy, what is known about the server and its tools,
 * where operation ids are kept, how a lost session is re-established, and what is observed. Every field is
 * optional; an unknown key is a `TypeError` (`code: 'unknown_option'`), a bad value a `TypeError`/`RangeError`
 * with `code` and `field`, thrown by `withRetry` before anything is sent.
 */
export interface WithRetryOptions {
  /**
   * The retry policy: attempts, backoff and jitter, timeouts, the retry budget, the circuit breaker and hedged
   * reads (see {@link PolicyOptions}). One engine per `withRetry` object: the budget and the breaker are this
   * server's.
   * @default {} (every field the core's default: 3 attempts, 200 ms doubling up to 20 seconds with full jitter, 60-second attempts within 180 seconds, budget and breaker on, no hedging)
   */
  policy?: PolicyOptions;
  /** Whether this server's tool annotations are trusted. On an untrusted server
   * the status tool is not made read-only by its name either: it is `unsafe` unless `tools` says otherwise.
   * @default false (the spec's rule: an untrusted server's annotations are hints; every tool is `unsafe`) */
  trusted?: boolean;
  /**
   * The server sits behind a proxy that may re-send a POST to another replica. Set it behind
   * Envoy or Istio with a retry policy that covers POSTs (Istio's default route retries on
   * `connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes` to another host), or nginx with
   * `proxy_next_upstream … non_idempotent`. Then a lost session and a 429/503 with `Retry-After` may be the second
   * replica's answer to a request the first one ran: they are still recovered from (a new session, the wait), but
   * an unsafe tool is no longer sent again after them — it ends `unknown`. Unneeded when the proxy does not retry
   * POSTs (nginx's default since 1.9.13; an Envoy route whose `retry_policy` is absent or limited to `reset`
   * before any byte was forwarded is still a retry: set this).
   * @default false
   */
  behindRetryingProxy?: boolean;
  /**
   * Per-tool safety overrides, tool name → `read_only` | `idempotent` | `keyed` | `unsafe`; they win over
   * annotations (and apply on an untrusted server too).
   * @default {} (none)
   */
  tools?: Record<string, Safety>;
  /**
   * The argument that carries the operation id: a keyed tool gets one minted (and journaled) under this name,
   * the same on every attempt.
   * @default 'operation_id'
   */
  operationIdArgument?: string;
  /**
   * Where operation ids are persisted before the first send, so that a retry — or a restarted process's
   * `reconcile()` — reuses them: a `MemoryJournal`, `IndexedDbJournal`, `DurableObjectJournal` or your own.
   * @default new MemoryJournal() (in memory, lost with the process; its retention defaults)
   */
  journal?: Journal;
  /**
   * The identity of this server in the journal. Entries are bound to it: `reconcile()` asks only about this
   * server's operations, `resolve(id)` refuses another server's (`code: 'other_server'`), and an intent already
   * used for another server is refused (`intent_reused`). Set it when one server has several URLs, or one URL
   * serves several servers (per-tenant routing behind one endpoint).
   * @default the Streamable HTTP endpoint's origin + path; else `name:` + the server's `initialize` name; else `'default'`
   */
  server?: string;
  /** Keep the call's arguments in the journal (`pendingOperations()` shows them). They are stored in
   * plaintext (IndexedDB, Durable Object storage); `false` keeps only tool, server, intent, id and state.
   * @default true */
  journalArguments?: boolean;
  /**
   * A Cloudflare Worker invocation's outgoing requests (a `SubrequestBudget`, or a function returning the current
   * invocation's): before each attempt the engine is told the budget's `room`, and never starts an attempt the
   * invocation cannot pay for (stop `subrequest_budget`). Give the transport `budget.fetch` so that what the SDK
   * sends is counted.
   * @default undefined (outgoing requests are not counted)
   */
  subrequestBudget?: import('./subrequests.js').SubrequestBudget | (() => import('./subrequests.js').SubrequestBudget);
  /**
   * The circuit breaker's state shared with every process calling this server, through a Durable Object
   * (`new SharedBreaker(env.BREAKER.get(id))`); each engine still decides every attempt itself.
   * @default undefined (each process's breaker decides alone)
   */
  sharedBreaker?: SharedBreaker;
  /**
   * Hears every event of every call (attempts, retries, holds, breaker transitions, give-ups, status lookups,
   * tasks, input rounds, the journal's backlog), for logs and metrics. Each event is its own copy; a throw here
   * is ignored and changes nothing.
   * @default undefined (no events are built)
   */
  onEvent?: (event: RetryEvent) => void;
  /** The server's revision when it cannot be learned from the transport (stdio cannot tell it). Without one, and
   * until a negotiated version is seen, each outcome gets its most conservative reading across revisions.
   * @default undefined (learned from the transport's negotiated `protocolVersion`; `'unknown'` until then) */
  revision?: RevisionSetting;
  /**
   * Seeds the jitter generator so that delays are repeatable (tests, simulations): a whole number from 0 to 2^53.
   * @default undefined (seeded from secure randomness)
   */
  seed?: number;
  /**
   * A factory of fresh transports, used to re-initialize after a lost session or to renegotiate: withRetry
   * closes the client and connects it over `transport()`. Recommended for Streamable HTTP, e.g.
   * `transport: () => new StreamableHTTPClientTransport(url, { fetch: observeFetch() })`. Without it (and without
   * `reconnect`) withRetry re-creates the transport from the SDK transport's private fields, best effort.
   * Needed for stdio (`() => new StdioClientTransport({ command, args })`): when the server's process exits, or
   * stops answering (an attempt timeout, nothing from it since, and an unanswered ping), one fresh process is
   * started for every call in flight; the engine says which of them are re-sent there.
   * @default undefined (the transport re-created from the SDK transport's fields, best effort)
   */
  transport?: () => TransportLike | Promise<TransportLike>;
  /**
   * Re-initialize yourself instead (called with the client); exclusive with `transport` (both: a `TypeError`,
   * `code: 'conflicting_options'`). `context.cause`: the error of the attempt after which the engine asked for
   * a new session.
   * @default undefined (withRetry re-initializes, over `transport` if given)
   */
  reconnect?: (client: ClientLike, context?: { cause?: unknown }) => Promise<void>;
  /**
   * The clock, in milliseconds: attempt times, the call's deadline, the journal's times.
   * @default () => Date.now()
   */
  now?: () => number;
  /**
   * Reset the per-attempt timeout on each progress notification: `attemptTimeoutMs` becomes the longest
   * silence, and the call's deadline (`totalTimeoutMs`) stays the hard cap.
   * @default false
   */
  resetTimeoutOnProgress?: boolean;
  /**
   * The server's read-only status tool (`registerStatusTool` on the server), asked
   * `{ action: <the tool's name>, operation_id }` to close an unknown; `false`: never ask. Used only when the
   * server lists it.
   * @default 'operation_status'
   */
  statusTool?: string | false;
  /**
   * After a keyed write ends `unknown` or `pending`, ask the status tool within the call's deadline (it never
   * sends the write again).
   * @default true
   */
  autoResolve?: boolean;
  /**
   * The model cannot mint a fresh operation id: withRetry ignores an id in the arguments and takes it from the
   * journal by the call's `intent` (give the model's tool-call id as `intent`), and `listToolsForModel()` hides
   * the argument. A model's retry of the same tool call reuses the id by construction; a *new* tool call for the
   * same intent cannot be recognized (the status tool is what the model is pointed at instead).
   * @default false
   */
  idFromIntent?: boolean;
  /**
   * Your `@opentelemetry/api` module (`import * as api from '@opentelemetry/api'`): a span per tool call and one
   * per attempt (MCP semantic conventions), retry events, the `mcp.client.operation.duration` histogram, and the
   * trace context in each request's `params._meta`. Without it nothing is recorded and nothing is imported.
   * From the browser entry it needs the `telemetry` part (see `parts`).
   * @default undefined (nothing recorded)
   */
  opentelemetry?: OpenTelemetryApi;
  /**
   * Optional parts to hand in, from `'mcp-retry-policy/parts'`: `hedging` (for `policy.hedgeAfterMs`), `tasks`
   * (the `task` call option, tools that run only as a task, following a task the server created), `inputRounds`
   * (answering a 2026-07-28 server's input requests through the client's handlers), `telemetry` (for
   * `opentelemetry`) and `stdio` (a stdio server's process watched and restarted). The browser entry includes none, so a browser app bundles only what it imports; the Node,
   * Workers and edge entries include every part already (then `parts` changes nothing). An option that needs a
   * missing part throws a `TypeError` with `code: 'part_missing'` naming the option, before anything is sent.
   * @default [] (from the browser entry: no part; the Node, Workers and edge entries have every part built in)
   */
  parts?: readonly Part[];
}

/** One optional part of withRetry (`'mcp-retry-policy/parts'`). */
export interface Part {
  readonly part: 'hedging' | 'tasks' | 'inputRounds' | 'telemetry' | 'stdio';
}

/** The parts of `@opentelemetry/api` withRetry and OperationLedger use (pass the module itself). */
export interface OpenTelemetryApi {
  trace: { getTracer(name: string, version?: string): unknown; setSpan(context: unknown, span: unknown): unknown };
  metrics: { getMeter(name: string, version?: string): unknown };
  context: { active(): unknown; with<T>(context: unknown, fn: () => T): T };
  propagation: { inject(context: unknown, carrier: unknown, setter?: unknown): void };
  SpanKind?: unknown;
  SpanStatusCode?: unknown;
}

/** The options of one call (`call`, `callTool`): its abort signal, its intent, progress, and whether to run it as a task. */
export interface CallOptions {
  /**
   * Aborts the call: no further attempt is sent, and the attempt in flight is cancelled (the SDK sends
   * `notifications/cancelled`). An attempt that may have been delivered still counts: a write can end `unknown`.
   * @default undefined (the call ends by its own deadline, `policy.totalTimeoutMs`)
   */
  signal?: AbortSignal;
  /**
   * The app's key for this one intended call (e.g. the model's tool-call id): the same intent reuses its
   * operation id (from the journal), so a repeat of the same call is deduplicated by the server.
   * @default undefined (a keyed tool gets a fresh operation id, unless its arguments carry one)
   */
  intent?: string;
  /**
   * Hears the server's progress notifications for the attempt in flight (as the SDK's `onprogress`).
   * @default undefined (none)
   */
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * Ask the server to run the call as a task (MCP 2025-11-25): `true`, or `{ ttl }`.
   * A tool whose `execution.taskSupport` is `'required'` is always asked this way. A created task is followed
   * within the call's deadline (`tasks/get` with the engine's waits, then `tasks/result`) and cancelled on abort;
   * a call that runs out of time with its task still working ends `pending`, the task in `result.task`.
   * From the browser entry it needs the `tasks` part (see `withRetry`'s `parts`).
   * @default false (unless the tool's `execution.taskSupport` is `'required'`)
   */
  task?: boolean | {
    /**
     * How long the server keeps the task, in milliseconds (a whole number, at least 1).
     * @default undefined (the server's own choice)
     */
    ttl?: number;
  };
}

/**
 * What `withRetry` returns: `call` (the outcome, never a thrown transport error), `callTool` (a drop-in for the
 * SDK's), `resolve`/`reconcile` (ask the status tool about journaled writes), the model-facing tool list, and
 * the engine and journal it uses.
 */
export interface RetryingClient {
  /**
   * Calls a tool, retried only where a retry is safe, and resolves to the `CallOutcome`: `succeeded`,
   * `tool_error`, `failed` (it did not take effect), `unknown` (it may have) or `pending` (still running).
   */
  call(params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, options?: CallOptions): Promise<CallOutcome>;
  /** Drop-in for `client.callTool`: a non-succeeded outcome becomes an `isError` result with the message and `_meta[OUTCOME_META_KEY]`. */
  callTool(params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, options?: CallOptions): Promise<CallToolResultLike>;
  /**
   * What happened to a journaled operation, from the server's status tool (never by sending the write again):
   * `succeeded`/`tool_error` with the recorded result, `failed` (it did not take effect), `pending`, or `unknown`.
   * The journal is updated. `tool` names the tool for an id the journal does not hold (else a `RangeError`
   * with `code: 'not_pending'`).
   */
  resolve(operationId: string, options?: {
    /**
     * The tool the operation was sent to, for an id the journal does not hold.
     * @default undefined (the journal's entry names it)
     */
    tool?: string;
    /**
     * Aborts the status lookup.
     * @default undefined (none)
     */
    signal?: AbortSignal;
  }): Promise<CallOutcome>;
  /** `resolve` for every operation the journal holds as not finished for this server. */
  reconcile(options?: {
    /**
     * Aborts the status lookups.
     * @default undefined (none)
     */
    signal?: AbortSignal;
  }): Promise<CallOutcome[]>;
  /** The server's tools for a model: with `idFromIntent`, without the operation-id argument. */
  listToolsForModel(): Promise<Array<{ name: string; description?: string; inputSchema?: Record<string, unknown>; [k: string]: unknown }>>;
  /** The engine of this server: its policy, budget and breaker. */
  engine: RetryEngine;
  /** The journal operation ids are kept in (`options.journal`, or the default `MemoryJournal`). */
  journal: Journal;
  /** Lists the server's tools again (every page) and resolves to them by name. */
  refreshTools(): Promise<Map<string, unknown>>;
  /** This server's operations whose outcome is not known to be final (after a crash, or `unknown`), and any written before entries were bound to a server. */
  pendingOperations(): Promise<JournalEntry[]>;
}

/**
 * Wraps an `@modelcontextprotocol/sdk` `Client` so that `tools/call` is retried only where a retry is safe:
 * read-only and idempotent tools are retried on transient failures, a keyed write is re-sent under the same
 * operation id, and an unsafe tool is never re-sent after it may have been delivered (it ends `unknown`).
 * Every decision — retry or not, how long to wait, the final status and reason — is the wasm engine's. Call it
 * once per client and share the wrapper: the retry budget and the breaker are per server. Bad options throw a
 * `TypeError`/`RangeError` with `code` and `field`.
 */
export declare function withRetry(client: ClientLike, options?: WithRetryOptions): RetryingClient;
import type { OUTCOME_META_KEY as GENERATED_OUTCOME_META_KEY, ATTEMPT_META_KEY as GENERATED_ATTEMPT_META_KEY } from '../generated/names.js';
/** The `_meta` key under which `callTool` attaches the full `CallOutcome` to a non-succeeded (`isError`) result. */
export declare const OUTCOME_META_KEY: typeof GENERATED_OUTCOME_META_KEY;
/**
 * The `params._meta` key under which each attempt's `tools/call` carries a tag of its own, by which
 * `observeFetch` matches an HTTP answer to its attempt.
 */
export declare const ATTEMPT_META_KEY: typeof GENERATED_ATTEMPT_META_KEY;
/**
 * Wraps `fetch` for `StreamableHTTPClientTransport({ fetch })` so that `withRetry` sees what the SDK hides: the
 * HTTP status and `Retry-After` of a refused `tools/call`. It changes nothing about the request but its abort
 * signal (each request gets its own, tied to the transport's).
 * @param fetch The fetch to wrap. Default `globalThis.fetch`.
 */
export declare function observeFetch(fetch?: typeof globalThis.fetch): typeof globalThis.fetch;
/**
 * Parses a `Retry-After` header value — delta-seconds or an HTTP date — into milliseconds from `now` (at most a
 * day; a date in the past is 0), or `undefined` for an absent or unreadable value.
 * @param value The header's value.
 * @param now The time a date is counted from, in milliseconds since the epoch. Default `Date.now()`.
 */
export declare function parseRetryAfter(value: string | null | undefined, now?: number): number | undefined;

/** What a shared breaker's requests may take from an invocation's subrequests. */
export interface SubrequestPay {
  /** The invocation's budget: each request to the object is counted in it. */
  budget: import('./subrequests.js').SubrequestBudget;
  /** A count: the requests kept for the call's next attempt; the object is asked only while `budget.room` exceeds it. */
  keep: number;
}
/** The options of `new SharedBreaker(stub, options)`. */
export interface SharedBreakerOptions {
  /**
   * The server's key in the object (at most 256 characters): one object may hold several servers' state.
   * @default 'default'
   */
  server?: string;
  /**
   * The longest a snapshot read from the object is used before it is read again, in milliseconds (a quarter
   * of it while this process's breaker sheds calls); 0 reads it before every attempt.
   * @default 1000
   */
  ttlMs?: number;
  /**
   * The longest a call waits on the object, in milliseconds (at least 1): slower, it is skipped and the local
   * breaker decides alone.
   * @default 100
   */
  timeoutMs?: number;
}
/** The options of `new DurableObjectBreakerState(storage, options)`. */
export interface DurableObjectBreakerStateOptions {
  /**
   * The storage keys' prefix, for a storage shared with other data.
   * @default 'breaker:'
   */
  prefix?: string;
  /**
   * The most servers it keeps, a count (at most 10,000): a report for one more is refused (`too_many_servers`).
   * @default 256
   */
  maxServers?: number;
  /**
   * Its clock, in milliseconds since the epoch, by which it judges every report (a reported time ahead of it is
   * taken as its now) and runs the probe lease.
   * @default Date.now
   */
  now?: () => number;
}
/** The options of `new DurableObjectJournal(storage, options)`. */
export interface DurableObjectJournalOptions {
  /**
   * Goes before every key (at most 256 characters), for a storage shared with other code (an `agents`
   * Agent's: the adapter uses `JOURNAL_PREFIX`).
   * @default '' (no prefix)
   */
  prefix?: string;
}
/**
 * One process's link to the shared breaker state of one server, through a Durable Object stub whose object hands
 * its requests to a `DurableObjectBreakerState`. Give it to withRetry (`sharedBreaker`): a process refreshes the
 * shared snapshot at most once per `ttlMs`, reports its breaker's transitions and counted failures, and sends a
 * probe only under the object's probe lease, so N processes send one probe into an outage, not N. It never
 * decides; an unreachable object is skipped (the local breaker decides alone).
 */
export declare class SharedBreaker {
  /**
   * @param stub The Durable Object stub (`env.BREAKER.get(id)`, anything with `fetch`).
   * @param options The server's key, the snapshot's lifetime and the wait on the object (see {@link SharedBreakerOptions}).
   */
  constructor(stub: { fetch(input: string, init?: RequestInit): Promise<Response> }, options?: SharedBreakerOptions);
  /** What it did: the object's answers used; the times it went without (`unreachable`; `unpaid`: the invocation's
   * subrequests were kept for the call's next attempt and the app's reserve). */
  readonly stats: { reads: number; reports: number; probesAsked: number; probesGranted: number; unreachable: number; unpaid: number };
  /** `pay`: with withRetry's `subrequestBudget`, each request to the object is counted in `budget` and made only
   * while its `room` exceeds `keep` (what the next attempt needs). */
  beforeAdmit(engine: import('./engine.js').RetryEngine, nowMs: number, pay?: SubrequestPay): Promise<void>;
  /** After an attempt was recorded (`transitioned`: its step changed the breaker): tells the object of a transition, a counted failure, or an answer after failures. */
  afterRecord(engine: import('./engine.js').RetryEngine, nowMs: number, transitioned: boolean, pay?: SubrequestPay): Promise<void>;
}
/**
 * The shared breaker state in a Durable Object's storage, inside the object; hand it the object's requests
 * (`fetch`). It keeps what it is told (the newest report wins) and holds the probe lease like a lock.
 */
export declare class DurableObjectBreakerState {
  /**
   * @param storage The object's `ctx.storage` (its `get` and `put`).
   * @param options The keys' prefix, the most servers kept, its clock (see {@link DurableObjectBreakerStateOptions}).
   */
  constructor(storage: { get(key: string): Promise<any>; put(key: string, value: unknown): Promise<void> }, options?: DurableObjectBreakerStateOptions);
  read(server: string): Promise<import('./engine.js').SharedSnapshot>;
  report(server: string, snapshot: { state: import('../generated/names.js').BreakerStateName; sinceMs: number }, counted?: 'failure' | 'success'): Promise<{ state: string; sinceMs: number; failures: number }>;
  acquireProbe(server: string, request: { holder: string; sinceMs: number; nowMs?: number; leaseMs: number }): Promise<{ granted: boolean; snapshot: import('./engine.js').SharedSnapshot }>;
  fetch(request: Request): Promise<Response>;
}
