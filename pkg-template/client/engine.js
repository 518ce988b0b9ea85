// RetryEngine with a cheap hot path. `record` and `admit` encode well-formed outcomes as small numbers,
// cross the boundary once, and decode one packed number (see src/wasm/packed.rs) — no object traffic
// through wasm. Anything unusual (an unknown kind, a stray key, a getter, a wrong type) goes to the wasm's
// own object reader, which validates it and throws the typed error; the results are identical.
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
    classify: [['outcome', ANY]],
    safety: [['tool', ANY], ['options', ANY]],
    setProtocolVersion: [['protocolVersion', ANY]],
    begin: [['nowMs', NUMBER]],
    admit: [['call', CALL], ['nowMs', NUMBER]],
    record: [['call', CALL], ['outcome', ANY], ['safety', ANY], ['nowMs', NUMBER]],
    recordPacked: [['call', CALL], ['kind', U32], ['a', NUMBER], ['b', NUMBER], ['c', NUMBER], ['safety', U32], ['nowMs', NUMBER]],
    classifyPacked: [['kind', U32], ['a', NUMBER], ['b', NUMBER], ['c', NUMBER]],
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

let tables;
const T = () => (tables ??= WasmRetryEngine.codeTables());
const SAFETY = new Map([['read_only', 0], ['idempotent', 1], ['keyed', 2], ['unsafe', 3]]);
const KEYS = {
  result: ['kind', 'isError', 'resultType'],
  jsonrpc_error: ['kind', 'code'],
  http: ['kind', 'status', 'retryAfterMs', 'hadSession'],
  network: ['kind', 'sent'],
  timeout: ['kind'],
  stream_broken: ['kind', 'eventIdSeen', 'retryMs'],
  aborted: ['kind', 'sent'],
  ledger: ['kind', 'status', 'retryAfterMs'],
};
const RESULT_TYPES = new Map([[undefined, 0], ['complete', 0], ['input_required', 1], ['task', 2]]);
const LEDGER = new Map([['in_progress', 0], ['unknown', 1], ['conflict', 2], ['rejected', 3]]);
const SHIFT = 67108864; // 2^26

const bool = (v) => (v === undefined ? 0 : v === true ? 1 : v === false ? 0 : NaN);
const ms = (v) => (v === undefined ? -1 : typeof v === 'number' && (v >= 0 || Number.isNaN(v)) ? v : NaN);
const sent = (v) => (v === 'no' ? 0 : v === 'maybe' ? 1 : NaN);

/**
 * [kind, a, b, c] for a plain, well-formed outcome; undefined for anything the wasm should judge. Each field
 * is read once (a getter may answer differently twice) and numbers must be numbers (no coercion).
 */
function encode(o) {
  if (o === null || typeof o !== 'object' || Object.getPrototypeOf(o) !== Object.prototype) return undefined;
  const kind = o.kind;
  if (typeof kind !== 'string' || !Object.hasOwn(KEYS, kind)) return undefined;
  const keys = KEYS[kind];
  for (const k in o) if (!keys.includes(k)) return undefined;
  let e;
  switch (kind) {
    case 'result':
      e = [0, bool(o.isError), RESULT_TYPES.get(o.resultType) ?? NaN, 0];
      break;
    case 'jsonrpc_error':
      e = [1, typeof o.code === 'number' ? o.code : NaN, 0, 0];
      break;
    case 'http':
      e = [2, typeof o.status === 'number' ? o.status : NaN, ms(o.retryAfterMs), bool(o.hadSession)];
      break;
    case 'network':
      e = [3, sent(o.sent), 0, 0];
      break;
    case 'timeout':
      e = [4, 0, 0, 0];
      break;
    case 'stream_broken':
      e = [5, bool(o.eventIdSeen), ms(o.retryMs), 0];
      break;
    case 'aborted':
      e = [6, sent(o.sent), 0, 0];
      break;
    case 'ledger':
      e = [7, LEDGER.get(o.status) ?? NaN, ms(o.retryAfterMs), 0];
      break;
    default:
      return undefined;
  }
  // A missing required field or a value of the wrong type: let the wasm name it.
  if (Number.isNaN(e[1]) || Number.isNaN(e[2]) || Number.isNaN(e[3])) return undefined;
  return e;
}

/** The outcome's Retry-After as encoded (b is the wait for http, stream_broken and ledger; -1 when absent). */
function retryAfterOf(e) {
  return (e[0] === 2 || e[0] === 5 || e[0] === 7) && e[2] >= 0 ? Math.floor(e[2]) : undefined;
}

function decision(meta, delay) {
  const t = T();
  const reason = t.reasons[(meta >> 4) & 31];
  if (meta & 1) return { action: 'stop', status: t.statuses[(meta >> 1) & 7], reason };
  const r = (meta >> 9) & 7;
  return { action: 'retry', delayMs: delay, recover: r ? t.recovers[r - 1] : undefined, reason };
}

function transition(code) {
  if (!code) return undefined;
  const [from, to] = T().transitions[code];
  return { from, to };
}

function classification(meta, e) {
  const t = T();
  const cause = (meta >> 17) & 63;
  return {
    verdict: t.verdicts[(meta >> 12) & 7],
    delivery: t.deliveries[(meta >> 15) & 3],
    recover: t.causeRecovers[cause],
    retryAfterMs: retryAfterOf(e),
    cause: t.causes[cause],
  };
}

function decodeStep(packed, e) {
  const meta = packed % SHIFT;
  return {
    classification: classification(meta, e),
    decision: decision(meta, (packed - meta) / SHIFT),
    breaker: transition((meta >> 23) & 7),
  };
}

function decodeAdmission(packed) {
  const meta = packed % SHIFT;
  if (meta & 1) {
    return { admitted: true, attempt: (meta >> 12) & 255, timeoutMs: (packed - meta) / SHIFT, breaker: transition((meta >> 1) & 7) };
  }
  const t = T();
  return { admitted: false, decision: { action: 'stop', status: t.statuses[(meta >> 4) & 7], reason: t.reasons[(meta >> 7) & 31] } };
}

function tryEncode(outcome) {
  try {
    return encode(outcome);
  } catch {
    return undefined; // a getter threw: the wasm reader reports it as `unreadable`
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
      const e = tryEncode(outcome);
      if (e === undefined) return super.classify(outcome);
      const sp = STACK.enterFast();
      let packed;
      try {
        packed = classifyPacked.call(this, e[0], e[1], e[2], e[3]);
      } catch (err) {
        STACK.escaped(sp);
        throw err;
      }
      return classification(packed, e);
    } finally {
      self.busy--;
    }
  }

  /** Records how an attempt of `call` ended and decides what comes next. */
  record(call, outcome, safety, nowMs) {
    const self = ENGINE.live(this, 'this');
    const c = CALL.live(call, 'call');
    checkNumber(nowMs, 'nowMs');
    self.busy++;
    c.busy++;
    try {
      const e = tryEncode(outcome);
      const s = SAFETY.get(safety);
      if (e === undefined || s === undefined) return super.record(call, outcome, safety, nowMs);
      const sp = STACK.enterFast();
      let packed;
      try {
        packed = recordPacked.call(this, call, e[0], e[1], e[2], e[3], s, nowMs);
      } catch (err) {
        STACK.escaped(sp);
        throw err;
      }
      return decodeStep(packed, e);
    } finally {
      self.busy--;
      c.busy--;
    }
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
