// RetryEngine on one protocol: `record`, `admit` and `classify` encode the outcome as a kind code and four
// numbers, cross the boundary once, and decode one packed number (src/wasm/packed.rs) — no object traffic
// through wasm. The names, codes and bit layout are generated from the Rust definitions (../generated/
// names.js, from src/vocab.rs). An outcome the encoding cannot express is a typed error here, from the same
// tables; a number's range is the core's to check (its error names the field too).
// The generated classes are guarded in place first (../guard.js): a freed, cloned or foreign engine or call,
// or a number parameter that is not a number, is a typed error before anything enters wasm.
import {
  RetryEngine as WasmRetryEngine,
  RetryCall,
  __adopt,
  initSync,
  newOperationId as rawNewOperationId,
  revisionFor as rawRevisionFor,
} from '../mcp_retry_policy_client.js';
import { ANY, NUMBER, U32, checkNumber, guardClass, guardFunction, stackGuard } from '../guard.js';
import { rangeError, typeError } from '../errors.js';
import {
  ADMIT_ADMITTED_MASK, ADMIT_ADMITTED_SHIFT, ADMIT_ATTEMPT_MASK, ADMIT_ATTEMPT_SHIFT, ADMIT_BREAKER_MASK, ADMIT_BREAKER_SHIFT,
  ADMIT_REASON_MASK, ADMIT_REASON_SHIFT, ADMIT_STATUS_MASK, ADMIT_STATUS_SHIFT, BREAKER_TRANSITIONS, CAUSES, CAUSE_RECOVERS,
  C_B_PRESENT, C_D_PRESENT, C_HAD_SESSION, DELIVERIES, KIND_ABORTED, KIND_HTTP, KIND_JSONRPC_ERROR, KIND_LEDGER, KIND_NETWORK,
  KIND_RESULT, KIND_STREAM_BROKEN, LEDGER_STATUSES, OUTCOME_FIELDS, OUTCOME_KINDS, REASONS, RECOVERS, RESULT_TYPES, SAFETIES,
  SENT, STATUSES, VERDICTS, STEP_CAUSE_MASK, STEP_CAUSE_SHIFT, STEP_DELIVERY_MASK, STEP_DELIVERY_SHIFT, STEP_REASON_MASK,
  STEP_REASON_SHIFT, STEP_RECOVER_MASK, STEP_RECOVER_SHIFT, STEP_RETRY_AFTER_MASK, STEP_RETRY_AFTER_SHIFT, STEP_STOP_MASK,
  STEP_STOP_SHIFT, STEP_VERDICT_MASK, STEP_VERDICT_SHIFT, STEP_BREAKER_MASK, STEP_BREAKER_SHIFT, VALUE_SCALE,
} from '../generated/names.js';

const STACK = stackGuard(() => initSync()); // initialized by then: initSync() returns the exports
const CALL = guardClass(RetryCall, {
  name: 'RetryCall',
  tag: 2, // src/wasm/brand.rs
  adopt: __adopt,
  stack: STACK,
  getters: ['attempts', 'deadlineMs', 'maybeDelivered'],
});
const ENGINE = guardClass(WasmRetryEngine, {
  name: 'RetryEngine',
  tag: 1,
  adopt: __adopt,
  stack: STACK,
  methods: {
    safety: [['tool', ANY], ['options', ANY]],
    setProtocolVersion: [['protocolVersion', ANY]],
    begin: [['nowMs', NUMBER], ['options', ANY]],
    recordPacked: [['call', CALL], ['kind', U32], ['a', NUMBER], ['b', NUMBER], ['c', NUMBER], ['d', NUMBER], ['safety', U32], ['nowMs', NUMBER]],
    classifyPacked: [['kind', U32], ['a', NUMBER], ['b', NUMBER], ['c', NUMBER], ['d', NUMBER]],
    admitPacked: [['call', CALL], ['nowMs', NUMBER]],
  },
  getters: ['policy', 'revision', 'budgetTokens', 'breakerState'],
});
const { classifyPacked, recordPacked, admitPacked } = ENGINE.raw;
// The static codeTables() too (no object to check; the stack backstop only).
const rawCodeTables = WasmRetryEngine.codeTables;
WasmRetryEngine.codeTables = guardFunction(STACK, rawCodeTables);

/** A fresh operation id (UUID v4 from secure randomness). */
export const newOperationId = guardFunction(STACK, rawNewOperationId);
/** The revision a negotiated `protocolVersion` behaves as. */
export const revisionFor = guardFunction(STACK, rawRevisionFor);

const SAFETY_CODES = new Map(SAFETIES.map((name, code) => [name, code]));
const KIND_CODES = new Map(OUTCOME_KINDS.map((name, code) => [name, code]));
const RESULT_TYPE_CODES = new Map(RESULT_TYPES.map((name, code) => [name, code]));
const SENT_CODES = new Map(SENT.map((name, code) => [name, code]));
const LEDGER_CODES = new Map(LEDGER_STATUSES.map((name, code) => [name, code]));
const FIELDS = OUTCOME_FIELDS.map((keys) => ['kind', ...keys]);

// The encoded outcome: a kind code and four numbers (src/vocab.rs, KIND_*), set by encode() after its last
// read (a getter may call this engine again). Module slots, not an array: nothing is allocated on the way in.
let K = 0;
let A = 0;
let B = 0;
let C = 0;
let D = 0;

function typeName(v) {
  if (v === null) return 'null';
  try {
    return Array.isArray(v) ? 'array' : typeof v;
  } catch {
    return 'a revoked Proxy';
  }
}
const oneOf = (names) => names.join(', ');

function bool(v, field) {
  if (v === undefined || v === false) return 0;
  if (v === true) return 1;
  throw typeError(field, `${field} must be a boolean, got ${typeName(v)}`);
}
/** A number as given: its range is the core's to check. */
function num(v, field) {
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number, got ${typeName(v)}`);
  return v;
}
/** `what`: a description, or the names it may be (joined only when it is missing). */
function required(v, field, what) {
  if (v === undefined) throw typeError(field, `${field} is required (${Array.isArray(what) ? `one of ${oneOf(what)}` : what})`, 'missing');
  return v;
}
/** The code of a name in `names` (absent: 0, the first, when not required). */
function code(v, field, codes, names) {
  if (v === undefined) return 0;
  if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
  const c = codes.get(v);
  if (c === undefined) throw rangeError(field, `${field} must be one of ${oneOf(names)}, got "${v.slice(0, 64)}"`);
  return c;
}

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
        a = num(required(o.code, at, 'the JSON-RPC error code'), at);
        break;
      case KIND_HTTP:
        at = 'outcome.status';
        a = num(required(o.status, at, 'the HTTP status'), at);
        at = 'outcome.retryAfterMs';
        v = o.retryAfterMs;
        if (v !== undefined) {
          b = num(v, at);
          c = C_B_PRESENT;
        }
        at = 'outcome.hadSession';
        if (bool(o.hadSession, at)) c |= C_HAD_SESSION;
        at = 'outcome.jsonrpcCode';
        d = o.jsonrpcCode;
        if (d === undefined) d = 0;
        else {
          num(d, at);
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
          b = num(v, at);
          c = C_B_PRESENT;
        }
        break;
      case KIND_LEDGER:
        at = 'outcome.status';
        a = code(required(o.status, at, LEDGER_STATUSES), at, LEDGER_CODES, LEDGER_STATUSES);
        at = 'outcome.retryAfterMs';
        v = o.retryAfterMs;
        if (v !== undefined) {
          b = num(v, at);
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
    if (e instanceof TypeError || e instanceof RangeError) {
      if (typeof e.code === 'string' && typeof e.field === 'string' && Object.hasOwn(e, 'field')) throw e;
    }
    // A getter or a proxy trap threw: named, not passed on (what it threw is the caller's, not ours).
    throw typeError(at, `${at} could not be read`, 'unreadable');
  }
}

function safetyCode(safety) {
  const s = SAFETY_CODES.get(safety);
  if (s !== undefined) return s;
  if (typeof safety !== 'string') throw typeError('safety', `safety must be a string, got ${typeName(safety)}`);
  throw rangeError('safety', `safety must be one of ${oneOf(SAFETIES)}, got "${safety.slice(0, 64)}"`);
}

function transition(code) {
  const t = BREAKER_TRANSITIONS[code];
  return t === undefined ? undefined : { from: t[0], to: t[1] };
}

/** The classification in `meta`; its Retry-After is `retryAfterMs` (the core's: see retryAfter()). */
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
  if (stop) return { action: 'stop', status: STATUSES[stop - 1], reason };
  const r = (meta >>> STEP_RECOVER_SHIFT) & STEP_RECOVER_MASK;
  return { action: 'retry', delayMs, recover: r ? RECOVERS[r - 1] : undefined, reason };
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
    decision: { action: 'stop', status: STATUSES[(meta >>> ADMIT_STATUS_SHIFT) & ADMIT_STATUS_MASK], reason: REASONS[(meta >>> ADMIT_REASON_SHIFT) & ADMIT_REASON_MASK] },
  };
}

/** The encoded outcome (K, A, B, C, D), classified by the core: classification bits + Retry-After. */
function classifyEncoded(engine) {
  const sp = STACK.enterFast();
  try {
    return classifyPacked.call(engine, K, A, B, C, D);
  } catch (err) {
    STACK.escaped(sp);
    throw err;
  }
}

export class RetryEngine extends WasmRetryEngine {
  constructor(policy, options) {
    const sp = STACK.enter();
    try {
      super(policy, options);
    } catch (e) {
      STACK.escaped(sp);
      throw e;
    }
  }

  /** Classifies one attempt's outcome under the engine's revision. Changes nothing. */
  classify(outcome) {
    const self = ENGINE.live(this, 'this');
    self.busy++; // reading the outcome may run a getter, which must not free this engine
    try {
      encode(outcome);
    } finally {
      self.busy--;
    }
    const packed = classifyEncoded(this);
    const meta = packed % VALUE_SCALE;
    return classification(meta, (meta >>> STEP_RETRY_AFTER_SHIFT) & STEP_RETRY_AFTER_MASK ? (packed - meta) / VALUE_SCALE : undefined);
  }

  /** Records how an attempt of `call` ended and decides what comes next. */
  record(call, outcome, safety, nowMs) {
    const self = ENGINE.live(this, 'this');
    const c = CALL.live(call, 'call');
    checkNumber(nowMs, 'nowMs');
    self.busy++;
    c.busy++;
    try {
      encode(outcome);
    } finally {
      self.busy--;
      c.busy--;
    }
    const s = safetyCode(safety);
    const sp = STACK.enterFast();
    let packed;
    try {
      packed = recordPacked.call(this, call, K, A, B, C, D, s, nowMs); // no JS runs inside: nothing to hold busy
    } catch (err) {
      STACK.escaped(sp);
      throw err;
    }
    const meta = packed % VALUE_SCALE;
    // The classification's Retry-After is the core's answer: a step's value is its delay, so when the core
    // says there is one, it is asked for (a pure classification of the same numbers; rare off the 429/503 path).
    let retryAfterMs;
    if ((meta >>> STEP_RETRY_AFTER_SHIFT) & STEP_RETRY_AFTER_MASK) {
      const ra = classifyEncoded(this);
      retryAfterMs = (ra - (ra % VALUE_SCALE)) / VALUE_SCALE;
    }
    return {
      classification: classification(meta, retryAfterMs),
      decision: decision(meta, (packed - meta) / VALUE_SCALE),
      breaker: transition((meta >>> STEP_BREAKER_SHIFT) & STEP_BREAKER_MASK),
    };
  }

  /** `record` under the name DESIGN.md gives the step: classify the outcome, then decide. */
  decide(call, outcome, safety, nowMs) {
    return this.record(call, outcome, safety, nowMs);
  }

  /** Asks to send the next attempt of `call` at `nowMs`. */
  admit(call, nowMs) {
    ENGINE.live(this, 'this');
    CALL.live(call, 'call');
    checkNumber(nowMs, 'nowMs');
    const sp = STACK.enterFast();
    let packed;
    try {
      packed = admitPacked.call(this, call, nowMs); // no JS runs inside: nothing to hold busy
    } catch (err) {
      STACK.escaped(sp);
      throw err;
    }
    return decodeAdmission(packed);
  }
}
