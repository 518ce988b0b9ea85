/// <reference path="../dispose.d.ts" />
// Types of the client engine (client/engine.js). The closed sets are generated from the Rust definitions
// (src/vocab.rs → generated/names.d.ts).
import type {
  Revision, Safety, Delivery, Recover, FinalStatus, Reason, Cause, Verdict, BreakerStateName, Jitter, AttemptOutcome,
  UNKNOWN_REVISION, ACTION_RETRY, ACTION_STOP, OperationStatus, TaskStatus, HedgeRefusalName, Happening, StatusHeard,
  FinishNext, Finishing,
} from '../generated/names.js';
export type {
  Revision, Safety, Delivery, Recover, FinalStatus, Reason, Cause, Verdict, ResultType, Sent, LedgerStatus, Jitter, AttemptOutcome, Action, OperationStatus, TaskStatus, DriveNext, Happening, StatusHeard,
  FinishNext, Finishing,
} from '../generated/names.js';

/**
 * Retry policy options (`withRetry`'s `policy`, `new RetryEngine(policy)`); every field optional. An absent field
 * takes the core's default (the Rust policy, src/retry/policy/: `new RetryEngine().policy` lists them all; the
 * README says why each is what it is). Durations are milliseconds (a fraction of one is dropped), counts whole
 * numbers, token amounts are kept to a thousandth. A bad value is a `TypeError`/`RangeError` with `code` and
 * `field` (e.g. `field: 'breaker.failureRatio'`), before anything is sent.
 */
export interface PolicyOptions {
  /**
   * The most attempts one call makes, the first included: a count, 1–100. A look at a task or an in-progress
   * write is not an attempt.
   * @default 3 (the core's default)
   */
  maxAttempts?: number;
  /**
   * The first backoff step, in milliseconds (0 – 86,400,000): the delay before a retry is `baseDelayMs`
   * doubled with each retry, capped at `maxDelayMs`, then jittered. Also the first wait between looks at an
   * operation still running when the server gives no interval. At most `maxDelayMs` (else `code: 'base_exceeds_cap'`).
   * @default 200 (the core's default)
   */
  baseDelayMs?: number;
  /**
   * The largest backoff step, in milliseconds (0 – 86,400,000; at least `baseDelayMs`).
   * @default 20000 (the core's default: 20 seconds)
   */
  maxDelayMs?: number;
  /**
   * How the backoff delay `d` is randomized: `'full'` uniform in [0, d]; `'equal'` d/2 plus uniform in
   * [0, d/2]; `'decorrelated'` AWS's decorrelated jitter (between `baseDelayMs` and three times the previous
   * delay, capped); `'none'` exactly d.
   * @default 'full' (the core's default)
   */
  jitter?: Jitter;
  /**
   * How long one attempt may go unanswered before it is abandoned as a timeout, in milliseconds
   * (1 – 86,400,000). With `resetTimeoutOnProgress` it is the longest silence between progress notifications.
   * @default 60000 (the core's default: the MCP TypeScript SDK's request timeout, 60 seconds)
   */
  attemptTimeoutMs?: number;
  /**
   * How long the whole call may take, in milliseconds (1 – 86,400,000): every attempt, backoff wait, status
   * lookup and task poll included. A retry that cannot start before it is not made.
   * @default 180000 (the core's default: three full attempts, 3 minutes)
   */
  totalTimeoutMs?: number;
  /**
   * The longest server-given wait (`Retry-After`, a ledger's `retryAfterMs`) honoured as the floor of the next
   * retry's delay, in milliseconds (0 – 86,400,000); a longer one is clamped to it.
   * @default 60000 (the core's default: 1 minute)
   */
  maxRetryAfterMs?: number;
  /**
   * The retry budget: a token bucket per engine (so per server) that every retry and hedge spends from and
   * every answered attempt refills, so that retries cannot multiply an outage. `false` turns it off; `true` or
   * an object (its fields over the defaults) turns it on.
   * @default true (the core's default bucket: 10 tokens, a retry costs 1, after a timeout 2, a success returns 0.1, 1 token back a second)
   */
  budget?: boolean | {
    /**
     * The tokens the bucket holds, and starts with (0 – 1,000,000 tokens, kept to a thousandth).
     * @default 10 (the core's default)
     */
    capacity?: number;
    /**
     * The tokens one retry after a transient failure costs, and one hedge (0 – 1,000,000 tokens).
     * @default 1 (the core's default)
     */
    retryCost?: number;
    /**
     * The tokens one retry after a timeout costs (0 – 1,000,000 tokens): a timeout held server resources longer.
     * @default 2 (the core's default)
     */
    timeoutCost?: number;
    /**
     * The tokens an attempt the tool answered puts back (0 – 1,000,000 tokens; never above `capacity`).
     * @default 0.1 (the core's default)
     */
    successRefill?: number;
    /**
     * The tokens the bucket regains each second whatever happens, up to `capacity` (0 – 1,000,000 tokens a
     * second; 0: only successes refill it).
     * @default 1 (the core's default)
     */
    refillPerSecond?: number;
  };
  /**
   * The circuit breaker: fed by transport-level failures only (a tool's `isError` answer is a healthy server),
   * it opens on `consecutiveFailures` in a row or on `failureRatio` of at least `minimumCalls` in a window, fails
   * calls fast while open, and after `openMs` lets one probe through. `false` turns it off; `true` or an object
   * (its fields over the defaults) turns it on.
   * @default true (the core's default breaker: 5 in a row, or 50 % of at least 10 calls in 10 seconds; open 2 seconds)
   */
  breaker?: boolean | {
    /**
     * Transport failures in a row that open the breaker: a count, 1 – 1,000,000.
     * @default 5 (the core's default)
     */
    consecutiveFailures?: number;
    /**
     * The fraction of a window's calls that failed at which the breaker opens, once `minimumCalls` were seen: a
     * ratio from 0.001 to 1 (kept to a thousandth).
     * @default 0.5 (the core's default)
     */
    failureRatio?: number;
    /**
     * The count of calls a window needs before `failureRatio` is looked at: 1 – 1,000,000.
     * @default 10 (the core's default)
     */
    minimumCalls?: number;
    /**
     * The length of one counting window, in milliseconds (1 – 86,400,000).
     * @default 10000 (the core's default: 10 seconds)
     */
    windowMs?: number;
    /**
     * How long the breaker stays open before it lets one probe through, in milliseconds (1 – 86,400,000): the
     * longest calls stay shed after the server is back.
     * @default 2000 (the core's default: 2 seconds)
     */
    openMs?: number;
  };
  /**
   * Hedged reads (`read_only` and `idempotent` tools only, never `keyed` or `unsafe`): after this many
   * milliseconds (1 – 86,400,000) without an answer to an attempt, a concurrent copy may be sent; the first
   * answer wins and the other copies are cancelled. A hedge spends the retry budget like a retry. From the
   * browser entry it needs the `hedging` part (see `withRetry`'s `parts`).
   * @default undefined (the core's default: no hedging)
   */
  hedgeAfterMs?: number;
  /**
   * The most hedged copies one call sends: a count, 1–10 (checked even while hedging is off).
   * @default 1 (the core's default)
   */
  maxHedges?: number;
}
/** The validated policy (sections are `false` when switched off). */
export type Policy = Required<Omit<PolicyOptions, 'budget' | 'breaker' | 'hedgeAfterMs' | 'maxHedges'>> & {
  budget: false | { capacity: number; retryCost: number; timeoutCost: number; successRefill: number; refillPerSecond: number };
  breaker: false | { consecutiveFailures: number; failureRatio: number; minimumCalls: number; windowMs: number; openMs: number };
};
/** A revision, or `"unknown"` when the negotiated version is not visible (stdio, a hidden transport). */
export type RevisionSetting = Revision | typeof UNKNOWN_REVISION;
/** The options of `new RetryEngine(policy, options)`, besides the policy. */
export interface EngineOptions {
  /**
   * Seeds the jitter generator so that delays are repeatable (tests, simulations): a whole number from 0 to 2^53.
   * @default undefined (seeded from secure randomness before the first draw, not at construction: safe at module scope in Workers)
   */
  seed?: number;
  /**
   * The server's MCP revision. `"unknown"`: each outcome gets its most conservative reading across revisions
   * until a negotiated version is set (`setProtocolVersion`).
   * @default 'unknown'
   */
  revision?: RevisionSetting;
  /** The server sits behind a proxy that may re-send a POST to another replica: a lost session and a 429/503 with
   * `Retry-After` no longer prove "not processed" (see `WithRetryOptions.behindRetryingProxy`).
   * @default false */
  behindRetryingProxy?: boolean;
}
/** How the engine read one attempt's outcome (`RetryEngine.classify`, and the `classification` of every step). */
export interface Classification {
  /** What the outcome means for the call. */
  verdict: Verdict;
  /** Whether the server acted on the request: `not_processed`, `unknown` or `processed`. */
  delivery: Delivery;
  /** The recovery step the outcome asks for before a retry (a new session, a renegotiation, …), if any. */
  recover?: Recover;
  /** The server-given wait, in milliseconds (`Retry-After`, a ledger's `retryAfterMs`), if there was one. */
  retryAfterMs?: number;
  /** The row of the classification table that applied. */
  cause: Cause;
}
/** What the engine decided: retry after `delayMs` milliseconds (with a `recover` step first, if any), or stop with a final status. */
export type Decision =
  | { action: typeof ACTION_RETRY; delayMs: number; recover?: Recover; reason: Reason }
  | { action: typeof ACTION_STOP; status: FinalStatus; reason: Reason };
/** A change of the circuit breaker's state (`closed`, `open`, `half_open`). */
export interface BreakerTransition {
  /** The state before. */
  from: BreakerStateName;
  /** The state after. */
  to: BreakerStateName;
}
/** What `RetryEngine.record` answers for one attempt: how its outcome was read, what comes next, and the breaker's transition if it changed. */
export interface Step { classification: Classification; decision: Decision; breaker?: BreakerTransition }
/** The engine's answer to `hedge`. */
export type HedgeAdmission = { admitted: true; timeoutMs: number } | { admitted: false; refusal: HedgeRefusalName };
/** Hedges sent and won so far, and what is in flight now. */
export interface HedgeCounts { sent: number; won: number; requestsInFlight: number; hedgesInFlight: number }
/**
 * The engine's answer to `admit`: send attempt number `attempt` now, abandoning it after `timeoutMs`
 * milliseconds (the attempt timeout, cut to the call's deadline) — or not now.
 */
export type Admission =
  | { admitted: true; attempt: number; timeoutMs: number; breaker?: BreakerTransition }
  /** Not now: a stop to report, or a held retry (`reason` `breaker_hold` / `budget_hold`): wait `delayMs`, then admit again. */
  | { admitted: false; decision: Decision };
/**
 * What happened, fed to the call driver (`RetryEngine.next`): the call's start, a wait that ran out, the caller's
 * cancel, an input round gathered — or an attempt's outcome, or an input round that could not be gathered.
 */
export type Happened =
  | Exclude<Happening, 'sent' | 'task_result' | 'task_created' | 'task_looked'>
  | { kind: Exclude<Happening, 'sent' | 'task_result' | 'task_created' | 'task_looked' | 'input_unanswered'> }
  | { kind: 'sent' | 'task_result'; outcome: AttemptOutcome }
  /**
   * The call ended `pending` on a task the server created and the caller follows it (`task_created`, once,
   * after that `done`), or a look answered with the task (`task_looked`).
   */
  | { kind: 'task_created' | 'task_looked'; task: TaskView }
  | {
    kind: 'input_unanswered';
    /** The handlers ran past the call's deadline. @default false */
    timedOut?: boolean;
    /** No handler answers the kind of request the server made. @default false */
    handlerMissing?: boolean;
  };
/** The call driver's answer (`RetryEngine.next`); `step` when it recorded an attempt's outcome (as `record` answers). */
export type Next = (
  /** Carry out `recover` (if any), then send attempt `admission.attempt` within `admission.timeoutMs`; feed back `{ kind: 'sent', outcome }`. */
  | { next: 'send'; admission: { admitted: true; attempt: number; timeoutMs: number; breaker?: BreakerTransition }; recover?: Recover }
  /** Wait `decision.delayMs`, then feed back `'waited'` (or `'cancelled'`); `held`: an open breaker or an empty budget held the attempt. */
  | { next: 'wait'; held: boolean; decision: Extract<Decision, { action: typeof ACTION_RETRY }> }
  /** Gather the answers to the server's input requests; feed back `'input_gathered'` or `{ kind: 'input_unanswered', … }`. */
  | { next: 'gather_input'; decision?: Extract<Decision, { action: typeof ACTION_RETRY }> }
  /** Wait `decision.delayMs` before looking at the followed task again (`status`: as last seen); feed back `'waited'` (or `'cancelled'`). */
  | { next: 'poll_task'; status: TaskStatus; decision: Extract<Decision, { action: typeof ACTION_RETRY }> }
  /** Look at the task (`tasks/get`) within `timeoutMs`; feed back `{ kind: 'task_looked', task }` or `'task_look_failed'`. */
  | { next: 'look_at_task'; timeoutMs: number }
  /** Ask for the task's result (`tasks/result`) within `timeoutMs`; feed back `{ kind: 'task_result', outcome }` or `'task_result_failed'`. */
  | { next: 'fetch_task_result'; timeoutMs: number }
  /** The caller cancelled: cancel the task (`tasks/cancel`) within `timeoutMs`; feed back `'task_cancel_answered'`, whatever it answered. */
  | { next: 'cancel_task'; timeoutMs: number }
  /** The loop is over: the engine's last decision, a stop. */
  | { next: 'done'; decision: Decision }
) & { step?: Step };
/** What happened, fed to the status driver (`RetryEngine.statusNext`). */
export type StatusHappened =
  | StatusHeard
  | { kind: Exclude<StatusHeard, 'answered'> }
  | {
    kind: 'answered';
    /** The status tool's answer; none: no usable answer (an error, a refusal, another operation's). */
    answer?: OperationStatus;
    /** Its `retryAfterMs` (ms), if it gave one: the hint for the next look. */
    retryAfterMs?: number;
  };
/** The status driver's answer (`RetryEngine.statusNext`). */
export type StatusNext =
  | { next: 'ask' | 'unchanged' }
  | { next: 'wait'; decision: Extract<Decision, { action: typeof ACTION_RETRY }> }
  | { next: 'done'; decision: Decision };
/** What the face knows as a call ends (`RetryEngine.finish`); each absent is `false`. */
export interface FinishFacts {
  /** The call carries an operation id: it has a journal entry, and the status tool can be asked about it. */
  keyed?: boolean;
  /** The face may ask the server's status tool (one is named, `autoResolve` is on). */
  mayResolve?: boolean;
  /** The caller cancelled: nothing more is asked on its behalf. */
  cancelled?: boolean;
}
/** A call's end's answer (`RetryEngine.finish`): ask the status tool about the open end (`resolve`), settle the
 *  journal entry at `status` (`settle`), or answer (`end`: `gaveUp` when the end is not the tool's own answer). */
export interface FinishStep {
  next: FinishNext;
  status: FinalStatus;
  reason: Reason;
  gaveUp: boolean;
}
/** A task as the server last showed it (`tasks/get`, or the created task). */
export interface TaskView {
  /** Its status. */
  status: TaskStatus;
  /** Its `pollInterval` (ms, 0 to a day), if it gave one: a look without one keeps the server's last. */
  pollInterval?: number;
}
/** What the caller says about one call when it begins (`RetryEngine.begin`). */
export interface BeginOptions {
  /**
   * Whether the caller can answer an `input_required` result (a 2026-07-28 input request); `false`: the engine
   * stops the call there (`input_required_unhandled`).
   * @default true
   */
  answersInput?: boolean;
}
/** What the app says about a tool's safety (`RetryEngine.safety`). */
export interface SafetyOptions {
  /**
   * Whether the server's annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`) are believed.
   * Untrusted, a tool is `unsafe` unless `override` says otherwise.
   * @default false (the spec's rule: annotations from an untrusted server are hints only)
   */
  trusted?: boolean;
  /**
   * The app's own verdict on the tool; it wins over the annotations.
   * @default undefined (none: the annotations of a trusted server decide)
   */
  override?: Safety;
  /**
   * The argument that carries the operation id: a trusted tool whose input schema declares it is `keyed`.
   * @default 'operation_id'
   */
  operationIdArgument?: string;
}
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
  /**
   * Validates `policy` and builds an engine with a full budget and a closed breaker. Draws no randomness (safe
   * at module scope in Workers).
   * @param policy The retry policy; absent fields take the core's defaults (see {@link PolicyOptions}).
   * @param options The seed, the server's revision, `behindRetryingProxy` (see {@link EngineOptions}).
   */
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
  /** Adopts a shared snapshot (the newer breaker state wins, but a closed breaker takes a shedding one only after a
   * failure of its own; the fleet's `failures` in a row count toward the next trip; the budget only goes down).
   * Returns the breaker's state. `nowMs`: the engine's now; a snapshot whose state began later is taken as begun
   * at `nowMs`. */
  adoptShared(snapshot: SharedSnapshot, nowMs?: number): BreakerStateName | undefined;
  /** `{ hedgeAfterMs, maxHedges }` when hedged reads are on, else `undefined`. */
  readonly hedging: { hedgeAfterMs: number; maxHedges: number } | undefined;
  /** Hedges sent and won so far, and the requests and hedges in flight. */
  readonly hedgeCounts: HedgeCounts;
  /** Asks to send a concurrent copy of `call`'s attempt in flight (read_only / idempotent only). `options.subrequests`:
   * the invocation's room now (a hedge costs 2 of it: its request and the losing copy's cancellation). */
  hedge(call: RetryCall, safety: Safety, nowMs: number, options?: {
    /**
     * A count: the outgoing requests the invocation still has room for (`SubrequestBudget#room`); a hedge
     * needs 2 of them.
     * @default undefined (not counted)
     */
    subrequests?: number;
  }): HedgeAdmission;
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
  admit(call: RetryCall, nowMs: number, options?: {
    /**
     * A count: the outgoing requests the call may still make (`SubrequestBudget#room`); an attempt it cannot pay
     * for is a stop, `subrequest_budget`.
     * @default undefined (not counted)
     */
    subrequests?: number;
  }): Admission;
  /** Records how an attempt of `call` ended and decides what comes next. */
  record(call: RetryCall, outcome: AttemptOutcome, safety: Safety, nowMs: number): Step;
  /**
   * The call driver (the core's, one per call): what `call` of a `safety` tool does next, given what `happened`
   * — the loop `withRetry` runs, step by step: `'start'` → `send` → `{ kind: 'sent', outcome }` → `wait` →
   * `'waited'` → … → `done`. An event out of order never leads to a send: the driver ends the call (`unknown`
   * once anything may have been delivered). `options.subrequests`: as for `admit`.
   */
  next(call: RetryCall, happened: Happened, safety: Safety, nowMs: number, options?: {
    /**
     * A count: the outgoing requests the call may still make (a Worker invocation's, `SubrequestBudget#room`);
     * an attempt it cannot pay for is not sent (`done`, `subrequest_budget`).
     * @default undefined (not counted)
     */
    subrequests?: number;
  }): Next;
  /**
   * The operation `call` waits on is still running (a created task `working`, a write the status tool
   * reports `in_progress`): when to look again. `hintMs`: the server's own interval, if it gave one. A look
   * is not a retry (no budget, no attempt); the stop is `pending` (`deadline` or `polls_exhausted`).
   */
  poll(call: RetryCall, options: {
    /**
     * The server's own interval before the next look, in milliseconds (a task's `pollInterval`, the ledger's
     * `retryAfterMs`); at least 50 ms is waited whatever it says, plus up to a tenth more.
     * @default undefined (the policy's backoff: `baseDelayMs` doubling per look, capped at `maxDelayMs`)
     */
    hintMs?: number;
    /**
     * A count: the outgoing requests the call may still make (`SubrequestBudget#room`).
     * @default undefined (not counted)
     */
    subrequests?: number;
  } | undefined, nowMs: number): Decision;
  /**
   * `call` was told to answer the server's input request (`recover: 'continue_input'`) and the caller could not
   * (`handlerMissing`: it has no handler for one of the requests; else its handler failed): the stop to report.
   */
  inputUnanswered(call: RetryCall, options?: {
    /**
     * The caller has no handler for one of the requests (the stop is `input_required_unhandled`); else its
     * handler failed (`input_not_given`).
     * @default false
     */
    handlerMissing?: boolean;
  }): Decision;
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
  /**
   * The status driver (the core's): one look at an open end, on a call of its own from `begin` (its polls).
   * Feed `'start'`, then what happened; it answers `ask` (call the status tool, feed back `{ kind: 'answered',
   * answer?, retryAfterMs? }` — no `answer`: no usable one), `wait` (`decision.delayMs`, then `'waited'` or
   * `'cancelled'`), `done` (`decision`: what the answer makes of the call) or `unchanged` (nothing learned: the
   * call's own end stands). Pass the same `options` at every step; the first step's are kept.
   */
  statusNext(call: RetryCall, happened: StatusHappened, nowMs: number, options: {
    /**
     * The call's open end (its stop).
     * @default undefined (none: an operation known only from the journal)
     */
    before?: {
      /** The stop's status (`unknown` or `pending`: anything else is never asked about). */
      status: FinalStatus;
      /** The stop's reason. */
      reason: Reason;
    };
    /** When the look must be over (ms, the engine's clock): no question is asked at or past it. */
    deadlineMs: number;
    /**
     * A count: the outgoing requests the look may still make (`SubrequestBudget#room`).
     * @default undefined (not counted)
     */
    subrequests?: number;
  }): StatusNext;
  /**
   * A call's end after its loop: `happened` `'start'` with the loop's decision as `end`, `'resolved'` with what
   * the status look made of it (the same end when it learned nothing), `'settled'` once the journal was told
   * (whatever it said). It asks the status tool only about an open (`unknown`, `pending`) keyed end, settles
   * only a keyed call's entry, and never turns an open end into a success or a failure itself.
   */
  finish(happened: Finishing, end: { status: FinalStatus; reason: Reason }, facts?: FinishFacts): FinishStep;
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
  /** Failures in a row while closed: a count. */
  failures?: number;
  /** The retry budget's tokens left. */
  budgetTokens?: number;
}
