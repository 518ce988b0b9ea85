// RetryEngine with a cheap hot path. `record` and `admit` encode well-formed outcomes as small numbers,
// cross the boundary once, and decode one packed number (see src/wasm/packed.rs) — no object traffic
// through wasm. Anything unusual (an unknown kind, a stray key, a getter, a wrong type) goes to the wasm's
// own object reader, which validates it and throws the typed error; the results are identical.
import { RetryEngine as WasmRetryEngine, RetryCall } from '../mcp_retry_policy_client.js';

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

/** [kind, a, b, c] for a plain, well-formed outcome; undefined for anything the wasm should judge. */
function encode(o) {
  if (o === null || typeof o !== 'object' || Object.getPrototypeOf(o) !== Object.prototype) return undefined;
  const keys = KEYS[o.kind];
  if (!keys || !Object.hasOwn(KEYS, o.kind)) return undefined;
  for (const k in o) if (!keys.includes(k)) return undefined;
  let e;
  switch (o.kind) {
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
  if ((o.kind === 'jsonrpc_error' || o.kind === 'http') && Number.isNaN(e[1])) return undefined;
  if (Number.isNaN(e[1]) || Number.isNaN(e[2]) || Number.isNaN(e[3])) return undefined;
  return e;
}

function retryAfterOf(o) {
  const v = o.kind === 'stream_broken' ? o.retryMs : o.kind === 'http' || o.kind === 'ledger' ? o.retryAfterMs : undefined;
  return v === undefined ? undefined : Math.floor(v);
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

function classification(meta, outcome) {
  const t = T();
  const cause = (meta >> 17) & 63;
  return {
    verdict: t.verdicts[(meta >> 12) & 7],
    delivery: t.deliveries[(meta >> 15) & 3],
    recover: t.causeRecovers[cause],
    retryAfterMs: retryAfterOf(outcome),
    cause: t.causes[cause],
  };
}

function decodeStep(packed, outcome) {
  const meta = packed % SHIFT;
  return {
    classification: classification(meta, outcome),
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
  /** Classifies one attempt's outcome under the engine's revision. Changes nothing. */
  classify(outcome) {
    const e = tryEncode(outcome);
    if (e === undefined) return super.classify(outcome);
    return classification(this.classifyPacked(e[0], e[1], e[2], e[3]), outcome);
  }

  /** Records how an attempt of `call` ended and decides what comes next. */
  record(call, outcome, safety, nowMs) {
    const e = tryEncode(outcome);
    const s = SAFETY.get(safety);
    if (e === undefined || s === undefined || typeof nowMs !== 'number' || !(call instanceof RetryCall)) {
      return super.record(call, outcome, safety, nowMs);
    }
    return decodeStep(this.recordPacked(call, e[0], e[1], e[2], e[3], s, nowMs), outcome);
  }

  /** `record` under the name DESIGN.md gives the step: classify the outcome, then decide. */
  decide(call, outcome, safety, nowMs) {
    return this.record(call, outcome, safety, nowMs);
  }

  /** Asks to send the next attempt of `call` at `nowMs`. */
  admit(call, nowMs) {
    if (typeof nowMs !== 'number' || !(call instanceof RetryCall)) return super.admit(call, nowMs);
    return decodeAdmission(this.admitPacked(call, nowMs));
  }
}
