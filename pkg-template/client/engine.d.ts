/// <reference path="../dispose.d.ts" />
// Types of the client engine (client/engine.js). The closed sets are generated from the Rust definitions
// (src/vocab.rs → generated/names.d.ts).
import type {
  Revision, Safety, Delivery, Recover, FinalStatus, Reason, Cause, Verdict, BreakerStateName, Jitter, AttemptOutcome,
  UNKNOWN_REVISION, ACTION_RETRY, ACTION_STOP, OperationStatus, TaskStatus, HedgeRefusalName,
} from '../generated/names.js';
export type {
  Revision, Safety, Delivery, Recover, FinalStatus, Reason, Cause, Verdict, ResultType, Sent, LedgerStatus, Jitter, AttemptOutcome, Action, OperationStatus, TaskStatus,
} from '../generated/names.js';

/** Retry policy options; every field optional. See the README for defaults and why. */
export interface PolicyOptions {
  maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number;
  jitter?: Jitter;
  attemptTimeoutMs?: number; totalTimeoutMs?: number; maxRetryAfterMs?: number;
  budget?: boolean | { capacity?: number; retryCost?: number; timeoutCost?: number; successRefill?: number; refillPerSecond?: number };
  breaker?: boolean | { consecutiveFailures?: number; failureRatio?: number; minimumCalls?: number; windowMs?: number; openMs?: number };
  /** Hedged reads (read_only and idempotent tools only): send a concurrent copy after this long without an answer. Default: off. */
  hedgeAfterMs?: number;
  /** The most copies one call sends (1–10, default 1). */
  maxHedges?: number;
}
/** The validated policy (sections are `false` when switched off). */
export type Policy = Required<Omit<PolicyOptions, 'budget' | 'breaker' | 'hedgeAfterMs' | 'maxHedges'>> & {
  budget: false | { capacity: number; retryCost: number; timeoutCost: number; successRefill: number; refillPerSecond: number };
  breaker: false | { consecutiveFailures: number; failureRatio: number; minimumCalls: number; windowMs: number; openMs: number };
};
/** A revision, or `"unknown"` when the negotiated version is not visible (stdio, a hidden transport). */
export type RevisionSetting = Revision | typeof UNKNOWN_REVISION;
/** Engine options: `seed` makes jitter repeatable; `revision` is the server's MCP revision (default `"unknown"`: each
 * outcome gets its most conservative reading across revisions until a negotiated version is set). */
export interface EngineOptions {
  seed?: number;
  revision?: RevisionSetting;
  /** The server sits behind a proxy that may re-send a POST to another replica: a lost session and a 429/503 with
   * `Retry-After` no longer prove "not processed" (see `WithRetryOptions.behindRetryingProxy`). Default false. */
  behindRetryingProxy?: boolean;
}
export interface Classification {
  verdict: Verdict; delivery: Delivery; recover?: Recover; retryAfterMs?: number; cause: Cause;
}
export type Decision =
  | { action: typeof ACTION_RETRY; delayMs: number; recover?: Recover; reason: Reason }
  | { action: typeof ACTION_STOP; status: FinalStatus; reason: Reason };
export interface BreakerTransition { from: BreakerStateName; to: BreakerStateName }
export interface Step { classification: Classification; decision: Decision; breaker?: BreakerTransition }
/** The engine's answer to `hedge`. */
export type HedgeAdmission = { admitted: true; timeoutMs: number } | { admitted: false; refusal: HedgeRefusalName };
/** Hedges sent and won so far, and what is in flight now. */
export interface HedgeCounts { sent: number; won: number; requestsInFlight: number; hedgesInFlight: number }
export type Admission =
  | { admitted: true; attempt: number; timeoutMs: number; breaker?: BreakerTransition }
  /** Not now: a stop to report, or a held retry (`reason` `breaker_hold` / `budget_hold`): wait `delayMs`, then admit again. */
  | { admitted: false; decision: Decision };
/** What the caller says about one call when it begins. */
export interface BeginOptions { /** Whether the caller can answer an `input_required` result (default true). */ answersInput?: boolean }
/** What the app says about a tool's safety. */
export interface SafetyOptions { trusted?: boolean; override?: Safety; operationIdArgument?: string }
/** The parts of an MCP `Tool` the engine reads. */
export interface ToolLike {
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; [k: string]: unknown };
  inputSchema?: { properties?: Record<string, unknown>; [k: string]: unknown };
  [k: string]: unknown;
}
/** The names behind the packed codes. */
export interface CodeTables {
  statuses: FinalStatus[]; reasons: Reason[]; recovers: Recover[]; verdicts: Verdict[]; deliveries: Delivery[]; causes: Cause[];
  causeRecovers: (Recover | undefined)[]; transitions: [string, string][];
}

/** One call's state across its attempts. Made by `RetryEngine.begin`; not constructible. */
export declare class RetryCall {
  private constructor();
  /** Attempts so far that count toward `maxAttempts`. */
  readonly attempts: number;
  /** When the call must be over (ms, same clock as `nowMs`). */
  readonly deadlineMs: number;
  /** Whether any attempt so far may have been delivered without an answer from the tool. */
  readonly maybeDelivered: boolean;
  /** Looks taken so far at an operation still running (`RetryEngine.poll`). */
  readonly polls: number;
  /** Frees the call's state. Later use is a `freed` TypeError. */
  free(): void;
  [Symbol.dispose](): void;
}

/**
 * Per-server retry engine: policy, retry budget and circuit breaker. Bad input is a `TypeError` or
 * `RangeError` with `code` and `field`.
 */
export declare class RetryEngine {
  constructor(policy?: PolicyOptions, options?: EngineOptions);
  /** The names behind the packed codes. */
  static codeTables(): CodeTables;
  /** The validated policy. */
  readonly policy: Policy;
  /** The MCP revision the server speaks. */
  readonly revision: RevisionSetting;
  /** The retry budget's tokens left, or `undefined` without a budget. */
  readonly budgetTokens: number | undefined;
  /** The breaker's state, or `undefined` without a breaker. */
  readonly breakerState: BreakerStateName | undefined;
  /** The breaker's and budget's state to share with other processes (each absent when off). */
  sharedSnapshot(): SharedSnapshot;
  /** Whether the next `admit` at `nowMs` would send the breaker's probe. */
  probeDue(nowMs: number): boolean;
  /** Adopts a shared snapshot (the newer breaker state wins; the budget only goes down). Returns the breaker's state.
   * `nowMs`: the engine's now; a snapshot whose state began later is taken as begun at `nowMs`. */
  adoptShared(snapshot: SharedSnapshot, nowMs?: number): BreakerStateName | undefined;
  /** `{ hedgeAfterMs, maxHedges }` when hedged reads are on, else `undefined`. */
  readonly hedging: { hedgeAfterMs: number; maxHedges: number } | undefined;
  /** Hedges sent and won so far, and the requests and hedges in flight. */
  readonly hedgeCounts: HedgeCounts;
  /** Asks to send a concurrent copy of `call`'s attempt in flight (read_only / idempotent only). `options.subrequests`:
   * the invocation's room now (a hedge costs 2 of it: its request and the losing copy's cancellation). */
  hedge(call: RetryCall, safety: Safety, nowMs: number, options?: { subrequests?: number }): HedgeAdmission;
  /** One hedge of `call` ended: `won` when its answer is the call's. */
  hedgeEnded(call: RetryCall, won: boolean): void;
  /** Sets the revision from a negotiated `protocolVersion` (any `YYYY-MM-DD`). Returns the revision used. */
  setProtocolVersion(protocolVersion: string): Revision;
  /** The safety of `tool`: the override; else, for a trusted server, from its annotations and schema; else `"unsafe"`. */
  safety(tool: ToolLike | undefined, options?: SafetyOptions): Safety;
  /** Starts a call at `nowMs`. */
  begin(nowMs: number, options?: BeginOptions): RetryCall;
  /** Classifies one attempt's outcome under the engine's revision. Changes nothing. */
  classify(outcome: AttemptOutcome): Classification;
  /** Asks to send the next attempt of `call` at `nowMs`. */
  /**
   * `options.subrequests`: the outgoing requests the call may still make (`SubrequestBudget#room`); an attempt it
   * cannot pay for (its request and the recovery before it) is a stop, `subrequest_budget`. Omitted: not counted.
   */
  admit(call: RetryCall, nowMs: number, options?: { subrequests?: number }): Admission;
  /** Records how an attempt of `call` ended and decides what comes next. */
  record(call: RetryCall, outcome: AttemptOutcome, safety: Safety, nowMs: number): Step;
  /**
   * The operation `call` waits on is still running (a created task `working`, a write the status tool
   * reports `in_progress`): when to look again. `hintMs`: the server's own interval, if it gave one. A look
   * is not a retry (no budget, no attempt); the stop is `pending` (`deadline` or `polls_exhausted`).
   */
  poll(call: RetryCall, options: { hintMs?: number; subrequests?: number } | undefined, nowMs: number): Decision;
  /**
   * `call` was told to answer the server's input request (`recover: 'continue_input'`) and the caller could not
   * (`handlerMissing`: it has no handler for one of the requests; else its handler failed): the stop to report.
   */
  inputUnanswered(call: RetryCall, options?: { handlerMissing?: boolean }): Decision;
  /**
   * A `tools/list` failed with `outcome` (read as a read-only attempt): a retry to re-initialize or renegotiate
   * and list again, or a stop (the list stays unknown).
   */
  listFailed(outcome: AttemptOutcome, nowMs: number): Decision;
  /**
   * What the server's status tool answered (`undefined`: no usable answer) makes of a call whose outcome was
   * open (`before`: the engine's stop; `undefined` when there is none, as in `resolve`): the stop to report.
   */
  statusAnswer(answer: OperationStatus | undefined, before?: { status: FinalStatus; reason: Reason }): Decision;
  /** What a followed task's status means when no result was read: a stop, or a `poll_task` retry while it runs. */
  taskEnd(status: TaskStatus): Decision;
  /** What a followed task's result means when `record` would not stop on it (`cause`, `reason`: that step's
   * classification cause and decision reason): an open end, `pending` or `unknown`, never `succeeded`. */
  taskResultEnd(cause: Cause, reason: Reason): Decision;
  /** `record` under the name the design gives the step: classify the outcome, then decide. */
  decide(call: RetryCall, outcome: AttemptOutcome, safety: Safety, nowMs: number): Step;
  /** Frees the engine. Later use is a `freed` TypeError. */
  free(): void;
  [Symbol.dispose](): void;
}

/** A fresh operation id (UUID v4 from secure randomness). Create it once per intended write and persist it. */
export declare function newOperationId(): string;
/** The revision a negotiated `protocolVersion` behaves as. */
export declare function revisionFor(protocolVersion: string): Revision;

/** A breaker's and budget's state as processes share it (`RetryEngine.sharedSnapshot`/`adoptShared`). */
export interface SharedSnapshot {
  state?: BreakerStateName;
  /** When the state began (ms, the engine's clock). */
  sinceMs?: number;
  /** Failures in a row while closed. */
  failures?: number;
  budgetTokens?: number;
}
