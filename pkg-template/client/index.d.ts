import type { PolicyOptions, RevisionSetting, Safety, AttemptOutcome, Classification, Decision, BreakerTransition, RetryEngine, FinalStatus, Reason, Recover } from './engine.js';
import type { OperationStatus } from '../generated/names.js';

/** The final status of a call. `unknown`: it may or may not have happened — never success, never a clean failure. */
export type CallStatus = FinalStatus;

/** One attempt of a call, as observed and decided. */
export interface AttemptRecord {
  attempt: number;
  startedAt: number;
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
  /** The most resolved entries kept (succeeded, tool_error, failed); the oldest settled go first. Default 10,000; 0 keeps none. */
  maxSettled?: number;
  /** How long a resolved entry (and its intent) is kept after it settled, in ms of the times the journal is given. Default 86,400,000 (a day). */
  settledTtlMs?: number;
  /** Unresolved entries (never forgotten) at which withRetry says `journal_backlog`. Default 1,000; at least 1. */
  backlogThreshold?: number;
}

/**
 * In memory, lost with the process: the default. Forgets resolved entries by itself (`maxSettled`, `settledTtlMs`)
 * — with them their intents: a begin with a forgotten intent makes a new entry. Pending and unknown entries stay.
 */
export declare class MemoryJournal implements Journal {
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
  /** `options.prefix` goes before every key, for a storage shared with other code (an `agents` Agent's). */
  constructor(storage: { get(key: string): Promise<any>; put(key: string | Record<string, unknown>, value?: unknown): Promise<void>; list(options: { prefix: string }): Promise<Map<string, any>> }, options?: { prefix?: string });
  begin(entry: Parameters<Journal['begin']>[0]): Promise<JournalEntry>;
  settle(operationId: string, status: CallStatus, settledAt?: number): Promise<JournalEntry | undefined>;
  get(operationId: string): Promise<JournalEntry | undefined>;
  pending(): Promise<JournalEntry[]>;
  purge(settledBeforeMs: number): Promise<number>;
}

/** What every event of a call carries: the call's id (per `withRetry` object, 1, 2, …) and the server's name. */
export interface EventContext {
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

export interface WithRetryOptions {
  policy?: PolicyOptions;
  /** Whether this server's tool annotations are trusted (default false: the spec's rule). On an untrusted server
   * the status tool is not made read-only by its name either: it is `unsafe` unless `tools` says otherwise. */
  trusted?: boolean;
  /**
   * The server sits behind a proxy that may re-send a POST to another replica (default false). Set it behind
   * Envoy or Istio with a retry policy that covers POSTs (Istio's default route retries on
   * `connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes` to another host), or nginx with
   * `proxy_next_upstream … non_idempotent`. Then a lost session and a 429/503 with `Retry-After` may be the second
   * replica's answer to a request the first one ran: they are still recovered from (a new session, the wait), but
   * an unsafe tool is no longer sent again after them — it ends `unknown`. Unneeded when the proxy does not retry
   * POSTs (nginx's default since 1.9.13; an Envoy route whose `retry_policy` is absent or limited to `reset`
   * before any byte was forwarded is still a retry: set this).
   */
  behindRetryingProxy?: boolean;
  /** Per-tool safety overrides; they win over annotations. */
  tools?: Record<string, Safety>;
  /** The argument that carries the operation id (default `operation_id`). */
  operationIdArgument?: string;
  /** Where operation ids are persisted before the first send (default: in memory). */
  journal?: Journal;
  /**
   * The identity of this server in the journal (default: the Streamable HTTP endpoint's origin + path, else the
   * server's `initialize` name, else `"default"`). Entries are bound to it: `reconcile()` asks only about this
   * server's operations, `resolve(id)` refuses another server's (`code: 'other_server'`), and an intent already
   * used for another server is refused (`intent_reused`). Set it when one server has several URLs, or one URL
   * serves several servers (per-tenant routing behind one endpoint).
   */
  server?: string;
  /** Keep the call's arguments in the journal (default true: `pendingOperations()` shows them). They are stored in
   * plaintext (IndexedDB, Durable Object storage); `false` keeps only tool, server, intent, id and state. */
  journalArguments?: boolean;
  /**
   * A Cloudflare Worker invocation's outgoing requests (a `SubrequestBudget`, or a function returning the current
   * invocation's): before each attempt the engine is told the budget's `room`, and never starts an attempt the
   * invocation cannot pay for (stop `subrequest_budget`). Give the transport `budget.fetch` so that what the SDK
   * sends is counted.
   */
  subrequestBudget?: import('./subrequests.js').SubrequestBudget | (() => import('./subrequests.js').SubrequestBudget);
  /** The breaker and budget shared with every process calling this server, through a Durable Object. */
  sharedBreaker?: SharedBreaker;
  onEvent?: (event: RetryEvent) => void;
  /** The server's revision when it cannot be learned from the transport (stdio cannot tell it). Without one, and
   * until a negotiated version is seen, each outcome gets its most conservative reading across revisions. */
  revision?: RevisionSetting;
  /** Makes jitter repeatable (tests, simulations). */
  seed?: number;
  /**
   * A factory of fresh transports, used to re-initialize after a lost session or to renegotiate: withRetry
   * closes the client and connects it over `transport()`. Recommended for Streamable HTTP, e.g.
   * `transport: () => new StreamableHTTPClientTransport(url, { fetch: observeFetch() })`. Without it (and without
   * `reconnect`) withRetry re-creates the transport from the SDK transport's private fields, best effort.
   * Needed for stdio (`() => new StdioClientTransport({ command, args })`): when the server's process exits, or
   * stops answering (an attempt timeout, nothing from it since, and an unanswered ping), one fresh process is
   * started for every call in flight; the engine says which of them are re-sent there.
   */
  transport?: () => TransportLike | Promise<TransportLike>;
  /** Re-initialize yourself instead (called with the client); exclusive with `transport`. */
  /** `context.cause`: the error of the attempt after which the engine asked for a new session. */
  reconnect?: (client: ClientLike, context?: { cause?: unknown }) => Promise<void>;
  /** The clock (default `Date.now`). */
  now?: () => number;
  /** Reset the per-attempt timeout on progress notifications (still capped by `attemptTimeoutMs`). */
  resetTimeoutOnProgress?: boolean;
  /**
   * The server's read-only status tool (`registerStatusTool` on the server; default `operation_status`), asked
   * `{ action: <the tool's name>, operation_id }` to close an unknown; `false`: never ask. Used only when the
   * server lists it.
   */
  statusTool?: string | false;
  /** After a keyed write ends `unknown` or `pending`, ask the status tool within the call's deadline (default true). */
  autoResolve?: boolean;
  /**
   * The model cannot mint a fresh operation id: withRetry ignores an id in the arguments and takes it from the
   * journal by the call's `intent` (give the model's tool-call id as `intent`), and `listToolsForModel()` hides
   * the argument. A model's retry of the same tool call reuses the id by construction; a *new* tool call for the
   * same intent cannot be recognized (the status tool is what the model is pointed at instead).
   */
  idFromIntent?: boolean;
  /**
   * Your `@opentelemetry/api` module (`import * as api from '@opentelemetry/api'`): a span per tool call and one
   * per attempt (MCP semantic conventions), retry events, the `mcp.client.operation.duration` histogram, and the
   * trace context in each request's `params._meta`. Without it nothing is recorded and nothing is imported.
   * From the browser entry it needs the `telemetry` part (see `parts`).
   */
  opentelemetry?: OpenTelemetryApi;
  /**
   * Optional parts to hand in, from `'mcp-retry-policy/parts'`: `hedging` (for `policy.hedgeAfterMs`), `tasks`
   * (the `task` call option, tools that run only as a task, following a task the server created), `inputRounds`
   * (answering a 2026-07-28 server's input requests through the client's handlers), `telemetry` (for
   * `opentelemetry`) and `stdio` (a stdio server's process watched and restarted). The browser entry includes none, so a browser app bundles only what it imports; the Node,
   * Workers and edge entries include every part already (then `parts` changes nothing). An option that needs a
   * missing part throws a `TypeError` with `code: 'part_missing'` naming the option, before anything is sent.
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

export interface CallOptions {
  signal?: AbortSignal;
  /** The app's key for this one intended call (e.g. the model's tool-call id): the same intent reuses its operation id. */
  intent?: string;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * Ask the server to run the call as a task (MCP 2025-11-25): `true`, or `{ ttl }` (ms the server keeps it).
   * A tool whose `execution.taskSupport` is `'required'` is always asked this way. A created task is followed
   * within the call's deadline (`tasks/get` with the engine's waits, then `tasks/result`) and cancelled on abort;
   * a call that runs out of time with its task still working ends `pending`, the task in `result.task`.
   * From the browser entry it needs the `tasks` part (see `withRetry`'s `parts`).
   */
  task?: boolean | { ttl?: number };
}

export interface RetryingClient {
  call(params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, options?: CallOptions): Promise<CallOutcome>;
  /** Drop-in for `client.callTool`: a non-succeeded outcome becomes an `isError` result with the message and `_meta[OUTCOME_META_KEY]`. */
  callTool(params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, options?: CallOptions): Promise<CallToolResultLike>;
  /**
   * What happened to a journaled operation, from the server's status tool (never by sending the write again):
   * `succeeded`/`tool_error` with the recorded result, `failed` (it did not take effect), `pending`, or `unknown`.
   * The journal is updated. `tool` names the tool for an id the journal does not hold (else a `RangeError`
   * with `code: 'not_pending'`).
   */
  resolve(operationId: string, options?: { tool?: string; signal?: AbortSignal }): Promise<CallOutcome>;
  /** `resolve` for every operation the journal holds as not finished for this server. */
  reconcile(options?: { signal?: AbortSignal }): Promise<CallOutcome[]>;
  /** The server's tools for a model: with `idFromIntent`, without the operation-id argument. */
  listToolsForModel(): Promise<Array<{ name: string; description?: string; inputSchema?: Record<string, unknown>; [k: string]: unknown }>>;
  engine: RetryEngine;
  journal: Journal;
  refreshTools(): Promise<Map<string, unknown>>;
  pendingOperations(): Promise<JournalEntry[]>;
}

export declare function withRetry(client: ClientLike, options?: WithRetryOptions): RetryingClient;
export { OUTCOME_META_KEY, ATTEMPT_META_KEY } from '../generated/names.js';
/** Wraps `fetch` so `withRetry` can read the status and `Retry-After` of refused calls. */
export declare function observeFetch(fetch?: typeof globalThis.fetch): typeof globalThis.fetch;
export declare function parseRetryAfter(value: string | null | undefined, now?: number): number | undefined;

/** What a shared breaker's requests may take from an invocation's subrequests. */
export interface SubrequestPay { budget: import('./subrequests.js').SubrequestBudget; keep: number }
/** One process's link to the shared breaker state of one server, through a Durable Object stub. */
export declare class SharedBreaker {
  constructor(stub: { fetch(input: string, init?: RequestInit): Promise<Response> }, options?: { server?: string; ttlMs?: number; timeoutMs?: number });
  /** What it did: the object's answers used; the times it went without (`unreachable`; `unpaid`: the invocation's
   * subrequests were kept for the call's next attempt and the app's reserve). */
  readonly stats: { reads: number; reports: number; probesAsked: number; probesGranted: number; unreachable: number; unpaid: number };
  /** `pay`: with withRetry's `subrequestBudget`, each request to the object is counted in `budget` and made only
   * while its `room` exceeds `keep` (what the next attempt needs). */
  beforeAdmit(engine: import('./engine.js').RetryEngine, nowMs: number, pay?: SubrequestPay): Promise<void>;
  afterRecord(engine: import('./engine.js').RetryEngine, nowMs: number, transitioned: boolean, pay?: SubrequestPay): Promise<void>;
}
/** The shared breaker state in a Durable Object's storage; hand it the object's requests (`fetch`). */
export declare class DurableObjectBreakerState {
  /** `maxServers`: servers kept at most (default 256; one more is refused, `too_many_servers`); `now`: its clock
   * (default `Date.now`), by which it judges every report (a reported time ahead of it is taken as its now). */
  constructor(storage: { get(key: string): Promise<any>; put(key: string, value: unknown): Promise<void> }, options?: { prefix?: string; maxServers?: number; now?: () => number });
  read(server: string): Promise<import('./engine.js').SharedSnapshot>;
  report(server: string, snapshot: { state: import('../generated/names.js').BreakerStateName; sinceMs: number }, counted?: 'failure' | 'success'): Promise<{ state: string; sinceMs: number; failures: number }>;
  acquireProbe(server: string, request: { holder: string; sinceMs: number; nowMs?: number; leaseMs: number }): Promise<{ granted: boolean; snapshot: import('./engine.js').SharedSnapshot }>;
  fetch(request: Request): Promise<Response>;
}
