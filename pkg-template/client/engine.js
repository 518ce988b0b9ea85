// RetryEngine: a JS object holding a handle into the client wasm (src/wasm/client.rs), whose exports take
// numbers and write their answers into the module's out slots. Here: the handle's lifecycle and the methods,
// each reading its arguments (engine-read.js), crossing the boundary once, and reading the answer through the
// generated readers (engine-codec.js, ../generated/seam.js); there: every range check and every decision. The
// names, codes and slots are generated from the Rust definitions (src/vocab/, src/seam/). The client wasm imports
// nothing, so no JS runs inside a call into it: nothing can unwind through its frames or re-enter it.
import * as w from '../mcp_retry_policy_client.js';
import { typeError } from '../errors.js';
import { BREAKER_STATES, BREAKER_TRANSITIONS, CAUSES, CAUSE_RECOVERS, DELIVERIES, REASONS, RECOVERS, REVISIONS, STATUSES, VERDICTS } from '../generated/names.js';
import { O_BREAKER_ON, O_BUDGET_ON, readBreaker, readBudget, readClassification, readTop } from '../generated/seam.js';
import {
  ARGS, REVISION_SETTINGS, bool, code, failure, fields, foreign, inUse, number, ok, ours, readPolicy, readRevision,
  revisionCode, roomOf, stagePolicy,
} from './engine-read.js';
import { A, B, C, D, K, admission, breakerOf, decision, encode, out, safetyCode } from './engine-codec.js';
import { safetyOf } from './engine-safety.js';
import { driveStep, readHappened } from './engine-drive.js';
import { statusStep } from './engine-resolve.js';
import { finishOf, statusAnswerOf, taskEndOf, taskResultEndOf } from './engine-ends.js';
import { adopt, probeDueOf, snapshotOf } from './engine-shared.js';
import { freshSeed, newOperationId } from './ids.js';
import { hedgeCountsOf, hedgeEnd, hedgeStep, hedgingOf, setHedging } from './engine-hedge.js';
import { RetryCall, callHandle, callRelease, newCall, newOwnedCall } from './retry-call.js';

export { RetryCall, newOperationId };
export { revisionFor } from './engine-read.js';

const finalizeEngines = new FinalizationRegistry((h) => w.engineFree(h)); // what the program dropped without free()

let engineHandle;

/** Per-server retry engine: policy, retry budget and circuit breaker (the core's `Engine`). */
export class RetryEngine {
  #h = 0;
  #busy = 0;
  #seeded = false;

  /**
   * Validates `policy` (a `RangeError`/`TypeError` with `code` and `field`) and builds an engine with a full
   * budget and a closed breaker. Draws no randomness: safe at module scope in Workers.
   */
  constructor(policy, options) {
    const read = readPolicy(policy);
    let revision = REVISIONS.length; // "unknown" until one is given or negotiated
    let seed;
    let proxy = false;
    let at = 'options';
    try {
      fields(options, 'options', ['seed', 'revision', 'behindRetryingProxy'], (key, v, field) => {
        at = field;
        if (v === undefined) return;
        if (key === 'seed') seed = number(v, field);
        else if (key === 'behindRetryingProxy') proxy = bool(v, field);
        else revision = readRevision(v, field);
      });
    } catch (e) {
      throw ours(e, at);
    }
    stagePolicy(read, revision); // no caller code runs from here to the engine's creation
    const h = ok(w.engineNew(...ARGS));
    const set = proxy ? w.engineSetBehindRetryingProxy(h, 1) : 0;
    const seeded = seed === undefined ? 0 : w.engineSeed(h, seed);
    // The first refusal, in the order the options are read: hedging, the proxy setting, the seed.
    const refused = setHedging(h) ?? (set < 0 ? failure(set) : seeded < 0 ? failure(seeded) : undefined);
    if (refused) {
      w.engineFree(h);
      throw refused;
    }
    this.#seeded = seed !== undefined;
    this.#h = h;
    finalizeEngines.register(this, h, this);
  }

  static {
    engineHandle = (engine, busy = 0) => {
      if (engine === null || typeof engine !== 'object' || !(#h in engine)) throw foreign('this', 'RetryEngine', engine);
      if (engine.#h === 0) throw typeError('this', 'this is a RetryEngine that was freed', 'freed');
      engine.#busy += busy;
      return engine.#h;
    };
  }

  /** Encodes `outcome` into K…D (reading it may run a getter, which must not free this engine). */
  #encode(outcome) {
    this.#busy++;
    try {
      encode(outcome);
    } finally {
      this.#busy--;
    }
  }

  /** Seeds the jitter generator from secure randomness before its first draw, unless `options.seed` did. */
  #seed(h) {
    if (!this.#seeded) {
      ok(w.engineSeed(h, freshSeed()));
      this.#seeded = true;
    }
  }

  /** The names behind the packed codes. */
  static codeTables() {
    return {
      statuses: [...STATUSES], reasons: [...REASONS], recovers: [...RECOVERS], verdicts: [...VERDICTS],
      deliveries: [...DELIVERIES], causes: [...CAUSES], causeRecovers: [...CAUSE_RECOVERS],
      transitions: BREAKER_TRANSITIONS.map((t) => (t ? [...t] : ['', ''])),
    };
  }

  /** Classifies one attempt's outcome under the engine's revision. Changes nothing. */
  classify(outcome) {
    const h = engineHandle(this);
    this.#encode(outcome);
    ok(w.classify(h, K, A, B, C, D));
    return readClassification(out());
  }

  /** Starts a call at `nowMs`. `options.answersInput: false`: the caller cannot answer `input_required`. */
  begin(nowMs, options) {
    const h = engineHandle(this);
    number(nowMs, 'nowMs');
    let answers = 1;
    let at = 'options';
    try {
      fields(options, 'options', ['answersInput'], (_, v, field) => {
        at = field;
        if (v !== undefined) answers = bool(v, field);
      });
    } catch (e) {
      throw ours(e, at);
    }
    return newCall(ok(w.callBegin(h, nowMs, answers)));
  }

  /** Asks to send the next attempt of `call` at `nowMs` (`options.subrequests`: the invocation's room; engine.d.ts). */
  admit(call, nowMs, options) {
    const h = engineHandle(this);
    const c = callHandle(call, 'call');
    number(nowMs, 'nowMs');
    const room = roomOf(options);
    ok(room === undefined ? w.admit(h, c, nowMs, 0, 0) : w.admit(h, c, nowMs, 1, room));
    return admission(out());
  }

  /** Records how an attempt of `call` ended and decides what comes next. */
  record(call, outcome, safety, nowMs) {
    const h = engineHandle(this);
    const c = callHandle(call, 'call', 1);
    this.#busy++; // reading the outcome may run a getter, which must free neither the engine nor the call
    try {
      encode(outcome);
    } finally {
      this.#busy--;
      callRelease(call);
    }
    const s = safetyCode(safety);
    number(nowMs, 'nowMs');
    this.#seed(h);
    ok(w.record(h, c, K, A, B, C, D, s, nowMs));
    const o = out();
    return { classification: readClassification(o), decision: decision(o), breaker: breakerOf(o) };
  }

  /** The call driver (the core's, one per call): what `call` does next, given what `happened` (engine.d.ts). */
  next(call, happened, safety, nowMs, options) {
    const h = engineHandle(this);
    const c = callHandle(call, 'call', 1);
    const room = roomOf(options); // first: a getter here may encode another outcome
    let read;
    this.#busy++; // reading the outcome may run a getter, which must free neither the engine nor the call
    try {
      read = readHappened(happened); // a sent outcome encoded into K…D, last
    } finally {
      this.#busy--;
      callRelease(call);
    }
    this.#seed(h);
    return driveStep(h, c, read, safety, nowMs, room);
  }

  /**
   * The status driver (the core's, one per look, on its own call from `begin`): what a look at an open end does
   * next, given what `happened` — ask the status tool, wait, or end (engine.d.ts).
   */
  statusNext(call, happened, nowMs, options) {
    const h = engineHandle(this);
    const c = callHandle(call, 'call', 1);
    this.#busy++; // reading the options may run a getter, which must free neither the engine nor the call
    try {
      this.#seed(h);
      return statusStep(h, c, happened, nowMs, options);
    } finally {
      this.#busy--;
      callRelease(call);
    }
  }

  /**
   * `call` was told to answer the server's input request (`recover: 'continue_input'`) and the caller could
   * not: `options.handlerMissing: true` when it has no handler for one of the requests, else its handler
   * failed. Sends nothing; returns the stop: `{ action: 'stop', status: 'failed' | 'unknown', reason:
   * 'input_required_unhandled' | 'input_not_given' }`.
   */
  inputUnanswered(call, options) {
    const h = engineHandle(this);
    const c = callHandle(call, 'call');
    let missing = 0;
    let at = 'options';
    try {
      fields(options, 'options', ['handlerMissing'], (_, v, field) => {
        at = field;
        if (v !== undefined) missing = bool(v, field);
      });
    } catch (e) {
      throw ours(e, at);
    }
    ok(w.inputUnanswered(h, c, missing));
    return decision(out());
  }

  /**
   * The operation `call` waits on is still running (a created task `working`, a write the status tool
   * reports `in_progress`): when to look again. `options.hintMs` is the server's own interval (a task's
   * `pollInterval`, the ledger's `retryAfterMs`), if it gave one. Resolves nothing, sends nothing: returns
   * `{ action: 'retry', delayMs, reason: 'still_running' }` (wait, then look) or `{ action: 'stop', status:
   * 'pending', reason: 'deadline' | 'polls_exhausted' }`. A look is not a retry: no budget, no attempt.
   */
  poll(call, options, nowMs) {
    const h = engineHandle(this);
    const c = callHandle(call, 'call');
    let hint = 0;
    let has = 0;
    let room;
    let at = 'options';
    try {
      fields(options, 'options', ['hintMs', 'subrequests'], (key, v, field) => {
        at = field;
        if (v === undefined) return;
        if (key === 'subrequests') room = number(v, field);
        else {
          hint = number(v, field);
          has = 1;
        }
      });
    } catch (e) {
      throw ours(e, at);
    }
    number(nowMs, 'nowMs');
    this.#seed(h);
    ok(room === undefined ? w.poll(h, c, has, hint, nowMs, 0, 0) : w.poll(h, c, has, hint, nowMs, 1, room));
    return decision(out());
  }

  /**
   * A `tools/list` failed with `outcome` (read as a read-only attempt, through the budget and the breaker):
   * `{ action: 'retry', delayMs, recover: 'reinitialize' | 'renegotiate' }` to recover and list again, or a
   * stop (the list stays unknown).
   */
  listFailed(outcome, nowMs) {
    const h = engineHandle(this);
    this.#encode(outcome);
    number(nowMs, 'nowMs');
    this.#seed(h);
    ok(w.listFailed(h, K, A, B, C, D, nowMs));
    return decision(out());
  }

  // The ends the core decides outside an attempt's step (engine-ends.js; each documented in engine.d.ts): the
  // status tool's answer, a followed task's status and result, and a call's end after its loop.
  statusAnswer(answer, before) {
    engineHandle(this);
    return statusAnswerOf(answer, before);
  }

  taskEnd(status) {
    engineHandle(this);
    return taskEndOf(status);
  }

  taskResultEnd(cause, reason) {
    engineHandle(this);
    return taskResultEndOf(cause, reason);
  }

  finish(happened, end, facts) {
    engineHandle(this);
    return finishOf(happened, end, facts);
  }

  /** `record` under the name the design gives the step: classify the outcome, then decide. */
  decide(call, outcome, safety, nowMs) {
    return this.record(call, outcome, safety, nowMs);
  }

  /**
   * The safety of `tool` (an MCP `Tool`): the override if given; else, for a trusted server, from its
   * annotations and whether its input schema declares the operation-id argument; else `"unsafe"`.
   */
  safety(tool, options) {
    engineHandle(this);
    return safetyOf(tool, options);
  }


  /**
   * Sets the revision from a negotiated `protocolVersion` (any `YYYY-MM-DD`; dates between known revisions
   * behave like the older one). Returns the revision used.
   */
  setProtocolVersion(protocolVersion) {
    const h = engineHandle(this);
    const r = revisionCode(protocolVersion);
    ok(w.engineSetRevision(h, r));
    return REVISIONS[r];
  }

  /** The MCP revision the server speaks (`"unknown"` until one is set). */
  get revision() {
    return REVISION_SETTINGS[ok(w.engineRevision(engineHandle(this)))];
  }

  /** The validated policy (sections are `false` when switched off), read in one crossing. */
  get policy() {
    ok(w.enginePolicy(engineHandle(this)));
    const o = out();
    const p = readTop(o);
    p.budget = o[O_BUDGET_ON] === 1 ? readBudget(o) : false;
    p.breaker = o[O_BREAKER_ON] === 1 ? readBreaker(o) : false;
    return p;
  }

  /** The retry budget's tokens left, or `undefined` without a budget. */
  get budgetTokens() {
    const r = ok(w.engineBudget(engineHandle(this)));
    return r === 0 ? undefined : (r - 1) / 1000;
  }

  /** The breaker's state (`closed`, `open`, `half_open`), or `undefined` without a breaker. */
  get breakerState() {
    const r = ok(w.engineBreaker(engineHandle(this)));
    return r === 0 ? undefined : BREAKER_STATES[r - 1];
  }

  // A breaker and budget shared across processes (engine-shared.js, client/shared-breaker.js), and hedged reads
  // (engine-hedge.js): each documented in engine.d.ts; every decision stays the engine's.
  sharedSnapshot() {
    return snapshotOf(engineHandle(this));
  }

  probeDue(nowMs) {
    return probeDueOf(engineHandle(this), nowMs);
  }

  adoptShared(snapshot, nowMs) {
    return adopt(engineHandle(this), snapshot, nowMs);
  }

  hedge(call, safety, nowMs, options) {
    const h = engineHandle(this);
    const c = callHandle(call, 'call');
    return hedgeStep(h, c, safety, nowMs, roomOf(options));
  }

  hedgeEnded(call, won) {
    hedgeEnd(engineHandle(this), callHandle(call, 'call'), won);
  }

  get hedging() {
    return hedgingOf(engineHandle(this));
  }

  get hedgeCounts() {
    return hedgeCountsOf(engineHandle(this));
  }

  /** Frees the engine. Later use is a `freed` TypeError. */
  free() {
    const h = engineHandle(this);
    if (this.#busy > 0) throw inUse('RetryEngine');
    this.#h = 0;
    finalizeEngines.unregister(this);
    w.engineFree(h);
  }

  [Symbol.dispose]() {
    RetryEngine.prototype.free.call(this);
  }
}

/**
 * `engine.begin(nowMs, { answersInput })` for withRetry's own calls, which free their state on every path:
 * the options are not read from an object and the call is not registered for finalization.
 */
export function beginOwned(engine, nowMs, answersInput) {
  const h = engineHandle(engine);
  number(nowMs, 'nowMs');
  return newOwnedCall(ok(w.callBegin(h, nowMs, answersInput ? 1 : 0)));
}
