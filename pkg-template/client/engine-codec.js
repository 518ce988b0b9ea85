// The hot path's codec: an outcome object encoded as a kind code and four numbers (module slots K…D: nothing is
// allocated on the way in), and the packed numbers the wasm answers with decoded into classifications,
// decisions and admissions. The codes and the bit layout are src/vocab.rs's (../generated/names.js).
import {
  ACTION_RETRY, ACTION_STOP, ADMIT_ADMITTED_MASK, ADMIT_ADMITTED_SHIFT, ADMIT_ATTEMPT_MASK, ADMIT_ATTEMPT_SHIFT,
  ADMIT_BREAKER_MASK, ADMIT_BREAKER_SHIFT, ADMIT_REASON_MASK, ADMIT_REASON_SHIFT, ADMIT_STATUS_MASK,
  ADMIT_STATUS_SHIFT, BREAKER_TRANSITIONS, CAUSES, CAUSE_RECOVERS, C_B_PRESENT, C_D_PRESENT, C_HAD_SESSION,
  DELIVERIES, KIND_ABORTED, KIND_HTTP, KIND_JSONRPC_ERROR, KIND_LEDGER, KIND_NETWORK, KIND_RESULT,
  KIND_STREAM_BROKEN, LEDGER_STATUSES, OUTCOME_FIELDS, OUTCOME_KINDS, REASONS, RECOVERS, RESULT_TYPES, SAFETIES,
  SENT, STATUSES, VERDICTS, STEP_CAUSE_MASK, STEP_CAUSE_SHIFT, STEP_DELIVERY_MASK, STEP_DELIVERY_SHIFT,
  STEP_REASON_MASK, STEP_REASON_SHIFT, STEP_RECOVER_MASK, STEP_RECOVER_SHIFT, STEP_STOP_MASK, STEP_STOP_SHIFT,
  STEP_VERDICT_MASK, STEP_VERDICT_SHIFT, VALUE_SCALE,
} from '../generated/names.js';
import { rangeError, typeError, typeName } from '../errors.js';
import { bool, code, codes, number, oneOf, ours, quote, required } from './engine-read.js';

const SAFETY_CODES = codes(SAFETIES);
const KIND_CODES = codes(OUTCOME_KINDS);
const RESULT_TYPE_CODES = codes(RESULT_TYPES);
const SENT_CODES = codes(SENT);
const LEDGER_CODES = codes(LEDGER_STATUSES);
const FIELDS = OUTCOME_FIELDS.map((keys) => ['kind', ...keys]);

// The encoded outcome: a kind code and four numbers (src/vocab.rs, KIND_*), set by encode() after its last
// read (a getter may call this engine again). Module slots, not an array: nothing is allocated on the way in.
export let K = 0;
export let A = 0;
export let B = 0;
export let C = 0;
export let D = 0;

/**
 * Encodes an outcome object into K, A, B, C, D, or throws the typed error (`TypeError`/`RangeError` with
 * `code` and `field`) from the same tables. Each field is read once (a getter may answer differently
 * twice); numbers must be numbers (no coercion); their ranges are the core's to check.
 */
export function encode(o) {
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

export function safetyCode(safety) {
  const s = SAFETY_CODES.get(safety);
  if (s !== undefined) return s;
  if (typeof safety !== 'string') throw typeError('safety', `safety must be a string, got ${typeName(safety)}`);
  throw rangeError('safety', `safety must be one of ${oneOf(SAFETIES)}, got ${quote(safety)}`);
}

export function transition(c) {
  const t = BREAKER_TRANSITIONS[c];
  return t === undefined ? undefined : { from: t[0], to: t[1] };
}

/** The classification in `meta`; its Retry-After is `retryAfterMs` (the core's). */
export function classification(meta, retryAfterMs) {
  const cause = (meta >>> STEP_CAUSE_SHIFT) & STEP_CAUSE_MASK;
  return {
    verdict: VERDICTS[(meta >>> STEP_VERDICT_SHIFT) & STEP_VERDICT_MASK],
    delivery: DELIVERIES[(meta >>> STEP_DELIVERY_SHIFT) & STEP_DELIVERY_MASK],
    recover: CAUSE_RECOVERS[cause],
    retryAfterMs,
    cause: CAUSES[cause],
  };
}

export function decision(meta, delayMs) {
  const reason = REASONS[(meta >>> STEP_REASON_SHIFT) & STEP_REASON_MASK];
  const stop = (meta >>> STEP_STOP_SHIFT) & STEP_STOP_MASK;
  if (stop) return { action: ACTION_STOP, status: STATUSES[stop - 1], reason };
  const r = (meta >>> STEP_RECOVER_SHIFT) & STEP_RECOVER_MASK;
  return { action: ACTION_RETRY, delayMs, recover: r ? RECOVERS[r - 1] : undefined, reason };
}

/** A packed decision (`pack_decision`): its bits, plus the delay as the value. */
export function unpackDecision(packed) {
  const meta = packed % VALUE_SCALE;
  return decision(meta, (packed - meta) / VALUE_SCALE);
}

export function decodeAdmission(packed) {
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
