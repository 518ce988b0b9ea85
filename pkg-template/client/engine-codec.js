// The hot path's codec: an outcome object encoded as a kind code and four numbers (module slots K…D: nothing is
// allocated on the way in), and the answers the wasm writes into its out slots read in place, through the
// readers generated from src/seam.rs (../generated/seam.js): no position, bit or scale is spelled here.
import { initSync, outSlots } from '../mcp_retry_policy_client.js';
import { OUTCOME_FIELDS, OUTCOME_KINDS, SAFETIES } from '../generated/names.js';
import { encodeInputs } from '../generated/outcome.js';
import { O_ADMITTED, O_BREAKER, O_SLOTS, O_STOP, readAdmitted, readRetry, readStop, t as transition } from '../generated/seam.js';
import { rangeError, typeError, typeName } from '../errors.js';
import { code, codes, oneOf, ours, quote, required } from './engine-read.js';

const SAFETY_CODES = codes(SAFETIES);
const KIND_CODES = codes(OUTCOME_KINDS);
const FIELDS = OUTCOME_FIELDS.map((keys) => ['kind', ...keys]);
// The encoded outcome: a kind code and four numbers (src/vocab.rs, KIND_*), set by encode() after its last
// read (a getter may call this engine again). Module slots, not an array: nothing is allocated on the way in.
export let K = 0;
export let A = 0;
export let B = 0;
export let C = 0;
export let D = 0;
// What generated/outcome.js encodes into: the four slots, and the field a read that threw was reading.
const E = { a: 0, b: 0, c: 0, d: 0, at: '' };

/**
 * Encodes an outcome object into K, A, B, C, D, or throws the typed error (`TypeError`/`RangeError` with
 * `code` and `field`) from the same tables. Each field is read once (a getter may answer differently
 * twice); numbers must be numbers (no coercion); their ranges are the core's to check. Which key goes in
 * which slot is src/vocab.rs's (`OUTCOME_KINDS`), rendered as generated/outcome.js.
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
    try {
      encodeInputs(o, k, E);
    } catch (e) {
      at = E.at;
      throw e;
    }
    // Taken now: the key check below may run the caller's proxy traps, which may encode another outcome.
    const a = E.a;
    const b = E.b;
    const c = E.c;
    const d = E.d;
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

let O = new Float64Array(0);

/**
 * The client module's out slots, read in place: a view over its memory, made again after the memory grew (a
 * grown memory detaches the old buffer, and a view over it reads as empty).
 */
export function out() {
  if (O.length === 0) O = new Float64Array(initSync().memory.buffer, outSlots(), O_SLOTS);
  return O;
}

/** The decision in the out slots `o`: a stop when it has a status, else a retry. */
export const decision = (o) => (o[O_STOP] >= 0 ? readStop(o) : readRetry(o));

/** The admission in the out slots `o`: admitted, or the decision instead (a stop, or a held retry to wait out). */
export const admission = (o) => (o[O_ADMITTED] === 1 ? readAdmitted(o) : { admitted: false, decision: decision(o) });

/** The breaker transition in the out slots `o`. */
export const breakerOf = (o) => transition(o[O_BREAKER]);
