// RetryEngine and RetryCall: JS objects holding handles into the client wasm (src/wasm/client.rs), whose
// exports take and return numbers only. Here: the JS-shaped reading (objects, names, types, unknown keys)
// and the typed errors; there: every range check and every decision. `record`, `admit` and `classify`
// encode the outcome as a kind code and four numbers, cross the boundary once, and decode one packed number.
// The names, codes and bit layout are generated from the Rust definitions (../generated/names.js, from
// src/vocab.rs). The client wasm imports nothing, so no JS runs inside a call into it: nothing can unwind
// through its frames or re-enter it.
import * as w from '../mcp_retry_policy_client.js';
import { rangeError, typeError, typeName } from '../errors.js';
import { wasmFailure } from '../wasm-failure.js';
import {
  ACTION_RETRY, ACTION_STOP, ADMIT_ADMITTED_MASK, ADMIT_ADMITTED_SHIFT, ADMIT_ATTEMPT_MASK, ADMIT_ATTEMPT_SHIFT, ADMIT_BREAKER_MASK, ADMIT_BREAKER_SHIFT,
  ADMIT_REASON_MASK, ADMIT_REASON_SHIFT, ADMIT_STATUS_MASK, ADMIT_STATUS_SHIFT, BOUNDARY_FIELDS, BREAKER_STATES, BREAKER_TRANSITIONS,
  CAUSES, CAUSE_RECOVERS, C_B_PRESENT, C_D_PRESENT, C_HAD_SESSION, DELIVERIES, ERROR_KINDS, JITTERS, KIND_ABORTED, KIND_HTTP,
  KIND_JSONRPC_ERROR, KIND_LEDGER, KIND_NETWORK, KIND_RESULT, KIND_STREAM_BROKEN, LEDGER_STATUSES, OUTCOME_FIELDS, OUTCOME_KINDS,
  POLICY_VALUES, REASONS, RECOVERS, RESULT_TYPES, REVISIONS, SAFETIES, SENT, STATUSES, VERDICTS, STEP_CAUSE_MASK, STEP_CAUSE_SHIFT,
  STEP_DELIVERY_MASK, STEP_DELIVERY_SHIFT, STEP_REASON_MASK, STEP_REASON_SHIFT, STEP_RECOVER_MASK, STEP_RECOVER_SHIFT,
  STEP_RETRY_AFTER_MASK, STEP_RETRY_AFTER_SHIFT, STEP_STOP_MASK, STEP_STOP_SHIFT, STEP_VERDICT_MASK, STEP_VERDICT_SHIFT,
  STEP_BREAKER_MASK, STEP_BREAKER_SHIFT, TOOL_DECLARES_ID, TOOL_DESTRUCTIVE, TOOL_DESTRUCTIVE_GIVEN, TOOL_IDEMPOTENT,
  TOOL_IDEMPOTENT_GIVEN, TOOL_READ_ONLY, TOOL_READ_ONLY_GIVEN, TOOL_TRUSTED, UNKNOWN_REVISION, VALUE_SCALE,
} from '../generated/names.js';

const codes = (names) => new Map(names.map((name, code) => [name, code]));
const SAFETY_CODES = codes(SAFETIES);
const KIND_CODES = codes(OUTCOME_KINDS);
const RESULT_TYPE_CODES = codes(RESULT_TYPES);
const SENT_CODES = codes(SENT);
const LEDGER_CODES = codes(LEDGER_STATUSES);
const JITTER_CODES = codes(JITTERS);
const REVISION_SETTINGS = [...REVISIONS, UNKNOWN_REVISION];
const REVISION_CODES = codes(REVISION_SETTINGS);
const BREAKER_STATE_CODES = codes(BREAKER_STATES);
const FIELDS = OUTCOME_FIELDS.map((keys) => ['kind', ...keys]);
const oneOf = (names) => names.join(', ');

const quote = (s) => `"${s.slice(0, 64)}"`;

/** The typed error for a failure the wasm returned (`../wasm-failure.js`). */
const failure = (r, what) => wasmFailure(r, w.errorDetail, what);

/** `r`, or the typed error it encodes. */
function ok(r, what = 'RetryEngine') {
  if (r < 0) throw failure(r, what);
  return r;
}

function number(v, field) {
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number, got ${typeName(v)}`);
  return v;
}
function bool(v, field) {
  if (v === undefined || v === false) return 0;
  if (v === true) return 1;
  throw typeError(field, `${field} must be a boolean, got ${typeName(v)}`);
}
/** `what`: a description, or the names it may be (joined only when it is missing). */
function required(v, field, what) {
  if (v === undefined) throw typeError(field, `${field} is required (${Array.isArray(what) ? `one of ${oneOf(what)}` : what})`, 'missing');
  return v;
}
/** The code of a name in `names` (absent: 0, the first, when not required). */
function code(v, field, table, names) {
  if (v === undefined) return 0;
  if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
  const c = table.get(v);
  if (c === undefined) throw rangeError(field, `${field} must be one of ${oneOf(names)}, got ${quote(v)}`);
  return c;
}
/** A typed error of ours passes; anything a getter or proxy trap threw becomes `unreadable` naming `at`. */
function ours(e, at) {
  if ((e instanceof TypeError || e instanceof RangeError) && Object.hasOwn(e, 'field') && typeof e.code === 'string') return e;
  return typeError(at, `${at} could not be read`, 'unreadable');
}

/**
 * Reads an object's fields: `keys` are the ones it may have (any other own string key is `unknown_option`),
 * `read(key)` returns each value once. `undefined` reads as empty; anything but a plain object is a TypeError.
 */
function fields(o, path, keys, read) {
  if (o === undefined) return;
  const what = path || 'policy';
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw typeError(what, `${what} must be an object, got ${typeName(o)}`);
  const unreadable = (f) => typeError(f, `${f} could not be read`, 'unreadable');
  let own;
  try {
    own = Reflect.ownKeys(o);
  } catch {
    throw unreadable(what);
  }
  for (const key of own) {
    if (typeof key === 'string' && !keys.includes(key)) {
      const f = path ? `${path}.${key.slice(0, 64)}` : key.slice(0, 64);
      throw typeError(f, `${f} is not a known option`, 'unknown_option');
    }
  }
  for (const key of keys) {
    const f = path ? `${path}.${key}` : key;
    let v;
    try {
      v = o[key];
    } catch {
      throw unreadable(f);
    }
    read(key, v, f);
  }
}

// The policy fields in argument order (BOUNDARY_FIELDS 0..POLICY_VALUES), split into the top-level ones
// and the two sections'.
const POLICY_FIELDS = BOUNDARY_FIELDS.slice(0, POLICY_VALUES);
const TOP = POLICY_FIELDS.filter((f) => !f.includes('.'));
const section = (name) => POLICY_FIELDS.filter((f) => f.startsWith(`${name}.`)).map((f) => f.slice(name.length + 1));
const SECTIONS = { budget: section('budget'), breaker: section('breaker') };

// The engine's arguments: present bits, budget mode, breaker mode, revision, then the 16 values.
const ARGS = new Array(4 + POLICY_VALUES).fill(0);

/** Reads policy options into ARGS[0..3 + 16] (the revision, ARGS[3], is the caller's). */
function readPolicy(policy) {
  ARGS.fill(0);
  ARGS[1] = 1;
  ARGS[2] = 1;
  let at = 'policy';
  try {
    const put = (field, v) => {
      at = field;
      if (v === undefined) return;
      const i = POLICY_FIELDS.indexOf(field);
      ARGS[4 + i] = field === 'jitter' ? code(v, field, JITTER_CODES, JITTERS) : number(v, field);
      ARGS[0] |= 1 << i;
    };
    fields(policy, '', [...TOP, 'budget', 'breaker'], (key, v, field) => {
      at = field;
      if (!(key in SECTIONS)) return put(field, v);
      const slot = key === 'budget' ? 1 : 2;
      if (v === false) ARGS[slot] = 0;
      else if (v === undefined || v === true) ARGS[slot] = 1;
      else if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        throw typeError(field, `${field} must be an object or false, got ${typeName(v)}`);
      } else {
        ARGS[slot] = 2;
        fields(v, key, SECTIONS[key], (_, sv, sf) => put(sf, sv));
      }
    });
  } catch (e) {
    throw ours(e, at);
  }
}

function readRevision(v, field) {
  if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
  const c = REVISION_CODES.get(v);
  if (c === undefined) throw rangeError(field, `${field} must be one of ${oneOf(REVISION_SETTINGS)}, got ${quote(v)}`);
  return c;
}

/** The revision code a negotiated `protocolVersion` (any `YYYY-MM-DD`) behaves as. */
function revisionCode(v) {
  if (typeof v !== 'string') throw typeError('protocolVersion', `protocolVersion must be a string, got ${typeName(v)}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) throw rangeError('protocolVersion', `protocolVersion must be a YYYY-MM-DD date, got ${quote(v)}`);
  return ok(w.revisionOfDate(Number(v.slice(0, 4) + v.slice(5, 7) + v.slice(8))));
}

// The encoded outcome: a kind code and four numbers (src/vocab.rs, KIND_*), set by encode() after its last
// read (a getter may call this engine again). Module slots, not an array: nothing is allocated on the way in.
let K = 0;
let A = 0;
let B = 0;
let C = 0;
let D = 0;

/**
 * Encodes an outcome object into K, A, B, C, D, or throws the typed error (`TypeError`/`RangeError` with
 * `code` and `field`) from the same tables. Each field is read once (a getter may answer differently
 * twice); numbers must be numbers (no coercion); their ranges are the core's to check.
 */
function encode(o) {
  if (o === undefined) throw typeError('outcome', 'outcome is required', 'missing');
  if (o === null || typeof o !== 'object') throw typeError('outcome', `outcome must be an object, got ${typeName(o)}`);
  let at = 'outcome';
  try {
    if (Array.isArray(o)) throw typeError('outcome', 'outcome must be an object, got array');
    at = 'outcome.kind';
    const kind = required(o.kind, at, OUTCOME_KINDS);
    const k = code(kind, at, KIND_CODES, OUTCOME_KINDS);
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    let v;
    switch (k) {
      case KIND_RESULT:
        at = 'outcome.isError';
        a = bool(o.isError, at);
        at = 'outcome.resultType';
        b = code(o.resultType, at, RESULT_TYPE_CODES, RESULT_TYPES);
        break;
      case KIND_JSONRPC_ERROR:
        at = 'outcome.code';
        a = number(required(o.code, at, 'the JSON-RPC error code'), at);
        break;
      case KIND_HTTP:
        at = 'outcome.status';
        a = number(required(o.status, at, 'the HTTP status'), at);
        at = 'outcome.retryAfterMs';
        v = o.retryAfterMs;
        if (v !== undefined) {
          b = number(v, at);
          c = C_B_PRESENT;
        }
        at = 'outcome.hadSession';
        if (bool(o.hadSession, at)) c |= C_HAD_SESSION;
        at = 'outcome.jsonrpcCode';
        v = o.jsonrpcCode;
        if (v !== undefined) {
          d = number(v, at);
          c |= C_D_PRESENT;
        }
        break;
      case KIND_NETWORK:
      case KIND_ABORTED:
        at = 'outcome.sent';
        a = code(required(o.sent, at, SENT), at, SENT_CODES, SENT);
        break;
      case KIND_STREAM_BROKEN:
        at = 'outcome.eventIdSeen';
        a = bool(o.eventIdSeen, at);
        at = 'outcome.retryMs';
        v = o.retryMs;
        if (v !== undefined) {
          b = number(v, at);
          c = C_B_PRESENT;
        }
        break;
      case KIND_LEDGER:
        at = 'outcome.status';
        a = code(required(o.status, at, LEDGER_STATUSES), at, LEDGER_CODES, LEDGER_STATUSES);
        at = 'outcome.retryAfterMs';
        v = o.retryAfterMs;
        if (v !== undefined) {
          b = number(v, at);
          c = C_B_PRESENT;
        }
        break;
      default: // KIND_TIMEOUT: no fields
    }
    at = 'outcome';
    const keys = FIELDS[k];
    for (const key in o) {
      if (!keys.includes(key)) {
        const f = `outcome.${key.slice(0, 64)}`;
        throw typeError(f, `${f} is not a field of a "${kind}" outcome (${oneOf(keys)})`, 'unknown_option');
      }
    }
    K = k;
    A = a;
    B = b;
    C = c;
    D = d;
  } catch (e) {
    throw ours(e, at);
  }
}

function safetyCode(safety) {
  const s = SAFETY_CODES.get(safety);
  if (s !== undefined) return s;
  if (typeof safety !== 'string') throw typeError('safety', `safety must be a string, got ${typeName(safety)}`);
  throw rangeError('safety', `safety must be one of ${oneOf(SAFETIES)}, got ${quote(safety)}`);
}

function transition(c) {
  const t = BREAKER_TRANSITIONS[c];
  return t === undefined ? undefined : { from: t[0], to: t[1] };
}

/** The classification in `meta`; its Retry-After is `retryAfterMs` (the core's). */
function classification(meta, retryAfterMs) {
  const cause = (meta >>> STEP_CAUSE_SHIFT) & STEP_CAUSE_MASK;
  return {
    verdict: VERDICTS[(meta >>> STEP_VERDICT_SHIFT) & STEP_VERDICT_MASK],
    delivery: DELIVERIES[(meta >>> STEP_DELIVERY_SHIFT) & STEP_DELIVERY_MASK],
    recover: CAUSE_RECOVERS[cause],
    retryAfterMs,
    cause: CAUSES[cause],
  };
}

function decision(meta, delayMs) {
  const reason = REASONS[(meta >>> STEP_REASON_SHIFT) & STEP_REASON_MASK];
  const stop = (meta >>> STEP_STOP_SHIFT) & STEP_STOP_MASK;
  if (stop) return { action: ACTION_STOP, status: STATUSES[stop - 1], reason };
  const r = (meta >>> STEP_RECOVER_SHIFT) & STEP_RECOVER_MASK;
  return { action: ACTION_RETRY, delayMs, recover: r ? RECOVERS[r - 1] : undefined, reason };
}

function decodeAdmission(packed) {
  const meta = packed % VALUE_SCALE;
  if ((meta >>> ADMIT_ADMITTED_SHIFT) & ADMIT_ADMITTED_MASK) {
    return {
      admitted: true,
      attempt: (meta >>> ADMIT_ATTEMPT_SHIFT) & ADMIT_ATTEMPT_MASK,
      timeoutMs: (packed - meta) / VALUE_SCALE,
      breaker: transition((meta >>> ADMIT_BREAKER_SHIFT) & ADMIT_BREAKER_MASK),
    };
  }
  return {
    admitted: false,
    decision: { action: ACTION_STOP, status: STATUSES[(meta >>> ADMIT_STATUS_SHIFT) & ADMIT_STATUS_MASK], reason: REASONS[(meta >>> ADMIT_REASON_SHIFT) & ADMIT_REASON_MASK] },
  };
}

/** 53 random bits for a jitter seed, drawn only inside a call (Workers refuse randomness at module load). */
function freshSeed() {
  const c = globalThis.crypto;
  if (typeof c?.getRandomValues !== 'function') {
    const e = new Error('no secure randomness available here (crypto.getRandomValues); pass options.seed');
    e.code = 'no_randomness';
    throw e;
  }
  const [hi, lo] = c.getRandomValues(new Uint32Array(2));
  return hi * 2 ** 21 + (lo >>> 11);
}

/** A fresh operation id: a UUID v4 from secure randomness (`crypto.randomUUID` where the platform has it). */
export function newOperationId() {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  if (typeof c?.getRandomValues !== 'function') {
    const e = new Error('no secure randomness available here (crypto.getRandomValues)');
    e.code = 'no_randomness';
    throw e;
  }
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The revision a negotiated `protocolVersion` behaves as. */
export function revisionFor(protocolVersion) {
  return REVISIONS[revisionCode(protocolVersion)];
}

// Frees what the program dropped without free(). The handle is all it needs.
const finalizeEngines = new FinalizationRegistry((h) => w.engineFree(h));
const finalizeCalls = new FinalizationRegistry((h) => w.callFree(h));
const MADE_BY_BEGIN = Symbol('RetryCall');

function foreign(field, cls, v) {
  return typeError(field, `${field} is not a ${cls} made by this module (got ${typeName(v)}; a cloned, forged or foreign object cannot be used)`, 'foreign_object');
}
function inUse(cls) {
  return typeError('this', `this ${cls} is in use: it cannot be freed from inside one of its own calls`, 'in_use');
}

let callHandle;
let callRelease;
const callField = (call, i) => ok(w.callField(callHandle(call, 'this'), i), 'RetryCall');

/** One call's state across its attempts, made by `RetryEngine.begin`. */
export class RetryCall {
  #h = 0;
  #busy = 0;

  /** @internal */
  constructor(token, h) {
    if (token !== MADE_BY_BEGIN) throw typeError('this', 'a RetryCall is made by RetryEngine.begin()', 'foreign_object');
    this.#h = h;
    finalizeCalls.register(this, h, this);
  }

  static {
    /** The live handle of `call` (`field` names it in errors); `busy` ±1 marks it in use. */
    callHandle = (call, field, busy = 0) => {
      if (call === null || typeof call !== 'object' || !(#h in call)) throw foreign(field, 'RetryCall', call);
      if (call.#h === 0) throw typeError(field, `${field} is a RetryCall that was freed`, 'freed');
      call.#busy += busy;
      return call.#h;
    };
    /** Ends the mark `callHandle(call, field, 1)` set (the call is live: marked, it could not be freed). */
    callRelease = (call) => {
      call.#busy--;
    };
  }

  /** Attempts so far that count toward `maxAttempts`. */
  get attempts() {
    return callField(this, 0);
  }

  /** When the call must be over (ms, same clock as `nowMs`). */
  get deadlineMs() {
    return callField(this, 1);
  }

  /** Whether any attempt so far may have been delivered without an answer from the tool. */
  get maybeDelivered() {
    return callField(this, 2) === 1;
  }

  /** Looks taken so far at an operation still running (`RetryEngine.poll`). */
  get polls() {
    return callField(this, 3);
  }

  /** Frees the call's state (the engine forgets it). Later use is a `freed` TypeError. */
  free() {
    const h = callHandle(this, 'this');
    if (this.#busy > 0) throw inUse('RetryCall');
    this.#h = 0;
    finalizeCalls.unregister(this);
    w.callFree(h);
  }

  [Symbol.dispose]() {
    RetryCall.prototype.free.call(this);
  }
}

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
    readPolicy(policy);
    ARGS[3] = REVISIONS.length; // "unknown" until one is given or negotiated
    let seed;
    let at = 'options';
    try {
      fields(options, 'options', ['seed', 'revision'], (key, v, field) => {
        at = field;
        if (v === undefined) return;
        if (key === 'seed') seed = number(v, field);
        else ARGS[3] = readRevision(v, field);
      });
    } catch (e) {
      throw ours(e, at);
    }
    const h = ok(w.engineNew(...ARGS));
    if (seed !== undefined) {
      const r = w.engineSeed(h, seed);
      if (r < 0) {
        const e = failure(r);
        w.engineFree(h);
        throw e;
      }
      this.#seeded = true;
    }
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
    this.#busy++; // reading the outcome may run a getter, which must not free this engine
    try {
      encode(outcome);
    } finally {
      this.#busy--;
    }
    const packed = ok(w.classify(h, K, A, B, C, D));
    const meta = packed % VALUE_SCALE;
    return classification(meta, (meta >>> STEP_RETRY_AFTER_SHIFT) & STEP_RETRY_AFTER_MASK ? (packed - meta) / VALUE_SCALE : undefined);
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
    return new RetryCall(MADE_BY_BEGIN, ok(w.callBegin(h, nowMs, answers)));
  }

  /** Asks to send the next attempt of `call` at `nowMs`. */
  admit(call, nowMs) {
    const h = engineHandle(this);
    const c = callHandle(call, 'call');
    number(nowMs, 'nowMs');
    return decodeAdmission(ok(w.admit(h, c, nowMs)));
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
    if (!this.#seeded) {
      ok(w.engineSeed(h, freshSeed()));
      this.#seeded = true;
    }
    const packed = ok(w.record(h, c, K, A, B, C, D, s, nowMs));
    const meta = packed % VALUE_SCALE;
    // The classification's Retry-After is the core's answer: a step's value is its delay, so when the core
    // says there is one, it is asked for (a pure classification of the same numbers; rare off the 429/503 path).
    let retryAfterMs;
    if ((meta >>> STEP_RETRY_AFTER_SHIFT) & STEP_RETRY_AFTER_MASK) {
      const ra = ok(w.classify(h, K, A, B, C, D));
      retryAfterMs = (ra - (ra % VALUE_SCALE)) / VALUE_SCALE;
    }
    return {
      classification: classification(meta, retryAfterMs),
      decision: decision(meta, (packed - meta) / VALUE_SCALE),
      breaker: transition((meta >>> STEP_BREAKER_SHIFT) & STEP_BREAKER_MASK),
    };
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
    const packed = ok(w.inputUnanswered(h, c, missing));
    const meta = packed % VALUE_SCALE;
    return decision(meta, (packed - meta) / VALUE_SCALE);
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
    let at = 'options';
    try {
      fields(options, 'options', ['hintMs'], (_, v, field) => {
        at = field;
        if (v !== undefined) {
          hint = number(v, field);
          has = 1;
        }
      });
    } catch (e) {
      throw ours(e, at);
    }
    number(nowMs, 'nowMs');
    if (!this.#seeded) {
      ok(w.engineSeed(h, freshSeed()));
      this.#seeded = true;
    }
    const packed = ok(w.poll(h, c, has, hint, nowMs));
    const meta = packed % VALUE_SCALE;
    return decision(meta, (packed - meta) / VALUE_SCALE);
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
    const h = engineHandle(this);
    let flags = 0;
    let override = 0;
    let arg = 'operation_id';
    let at = 'options';
    try {
      fields(options, 'options', ['trusted', 'override', 'operationIdArgument'], (key, v, field) => {
        at = field;
        if (v === undefined) return;
        if (key === 'trusted') flags |= bool(v, field) ? TOOL_TRUSTED : 0;
        else if (key === 'override') {
          if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
          override = safetyCode(v) + 1;
        } else if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
        else arg = v;
      });
      // Only the fields used are read; a Tool has many more. Hints of the wrong type count as absent (the
      // spec's default): they come from a server, not from the app.
      at = 'tool';
      if (tool !== undefined && (tool === null || typeof tool !== 'object' || Array.isArray(tool))) {
        throw typeError('tool', `tool must be an object, got ${typeName(tool)}`);
      }
      at = 'tool.annotations';
      const a = tool?.annotations;
      if (a !== null && typeof a === 'object') {
        const hint = (v, given, yes) => (typeof v === 'boolean' ? given | (v ? yes : 0) : 0);
        at = 'tool.annotations.readOnlyHint';
        flags |= hint(a.readOnlyHint, TOOL_READ_ONLY_GIVEN, TOOL_READ_ONLY);
        at = 'tool.annotations.destructiveHint';
        flags |= hint(a.destructiveHint, TOOL_DESTRUCTIVE_GIVEN, TOOL_DESTRUCTIVE);
        at = 'tool.annotations.idempotentHint';
        flags |= hint(a.idempotentHint, TOOL_IDEMPOTENT_GIVEN, TOOL_IDEMPOTENT);
      }
      at = 'tool.inputSchema.properties';
      const props = tool?.inputSchema?.properties;
      if (props !== null && typeof props === 'object' && Reflect.has(props, arg)) flags |= TOOL_DECLARES_ID;
    } catch (e) {
      throw ours(e, at);
    }
    return SAFETIES[ok(w.safetyOf(flags, override))] ?? SAFETIES[SAFETIES.length - 1];
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

  /** The validated policy (sections are `false` when switched off). */
  get policy() {
    const h = engineHandle(this);
    const v = (i) => ok(w.enginePolicy(h, i));
    const p = {};
    for (const f of TOP) {
      const i = POLICY_FIELDS.indexOf(f);
      p[f] = f === 'jitter' ? JITTERS[v(i)] : v(i);
    }
    for (const [name, keys] of Object.entries(SECTIONS)) {
      if (!v(POLICY_VALUES + (name === 'budget' ? 0 : 1))) {
        p[name] = false;
        continue;
      }
      const s = {};
      for (const k of keys) {
        const x = v(POLICY_FIELDS.indexOf(`${name}.${k}`));
        s[k] = name === 'budget' || k === 'failureRatio' ? x / 1000 : x; // tokens and the ratio in thousandths
      }
      p[name] = s;
    }
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

  // ── Shared state (issue 20 §4; client/shared-breaker.js): handed out and taken in, decided here ──────────

  /**
   * The breaker's and budget's state to share: `{ state, sinceMs, failures, budgetTokens }` (each absent when
   * off; `failures`: in a row, while closed).
   */
  sharedSnapshot() {
    const h = engineHandle(this);
    const code = ok(w.engineSnapshot(h, 0));
    const tokens = this.budgetTokens;
    return {
      ...(code ? { state: BREAKER_STATES[code - 1], sinceMs: ok(w.engineSnapshot(h, 1)), failures: ok(w.engineSnapshot(h, 2)) } : {}),
      ...(tokens !== undefined ? { budgetTokens: tokens } : {}),
    };
  }

  /** Whether the next `admit` at `nowMs` would send the breaker's probe (ask for the shared probe lease first). */
  probeDue(nowMs) {
    const h = engineHandle(this);
    number(nowMs, 'nowMs');
    return ok(w.engineProbeDue(h, nowMs)) === 1;
  }

  /**
   * Adopts a snapshot another process shared (`{ state, sinceMs, failures, budgetTokens }`, each optional but
   * `state` and `sinceMs` together): the newer breaker state wins (a closed breaker takes a shedding one only after
   * a failure of its own), the fleet's `failures` in a row count toward the next trip, the budget only goes down.
   * Returns the breaker's state.
   */
  adoptShared(snapshot) {
    const h = engineHandle(this);
    let state;
    let since;
    let tokens;
    let failures;
    let at = 'snapshot';
    try {
      fields(snapshot, 'snapshot', ['state', 'sinceMs', 'failures', 'budgetTokens'], (key, v, field) => {
        at = field;
        if (v === undefined) return;
        if (key === 'state') state = code(v, field, BREAKER_STATE_CODES, BREAKER_STATES);
        else if (key === 'sinceMs') since = number(v, field);
        else if (key === 'failures') failures = number(v, field);
        else tokens = number(v, field);
      });
      at = 'snapshot';
      if ((state === undefined) !== (since === undefined)) {
        const f = state === undefined ? 'snapshot.state' : 'snapshot.sinceMs';
        throw typeError(f, `${f} is required with ${state === undefined ? 'snapshot.sinceMs' : 'snapshot.state'}`, 'missing');
      }
    } catch (e) {
      throw ours(e, at);
    }
    const r = ok(w.engineAdopt(h, state === undefined ? 0 : 1, state ?? 0, since ?? 0, tokens === undefined ? 0 : 1, tokens ?? 0, failures === undefined ? 0 : 1, failures ?? 0));
    return r === 0 ? undefined : BREAKER_STATES[r - 1];
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
