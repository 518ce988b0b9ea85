// The one result encoding of the operation ledger. Every store keeps a recorded result as opaque text,
// written here and read back here, so every store replays the same value. The text is the result's MCP wire
// form: exactly `JSON.stringify(result)` — `toJSON` is honoured (a Date becomes its ISO string), NaN and
// ±Infinity become null, -0 becomes 0, undefined object members are left out (undefined in an array becomes
// null), and the key order is kept. A replay is `JSON.parse` of that text. A result that has no such form — a
// BigInt, a function or a Symbol anywhere in it, a cycle, a `toJSON` that throws, or nothing at all — is not
// data, and one longer than the ledger's `maxResultBytes` is not kept: either way the ledger still records how
// the operation ended, with a stored note in place of the result (`unstoredResult`).
import { rangeError, typeError } from '../errors.js';
import { LEDGER_META_KEY } from '../generated/names.js';

/** The default `maxResultBytes`: 1 MiB of UTF-8 result text per record. */
export const DEFAULT_MAX_RESULT_BYTES = 1 << 20;
const MAX_RESULT_BYTES_LIMIT = 1 << 30;

/** `maxResultBytes` of the ledger's options: a whole number of bytes, 1 … 1 GiB. */
export function checkMaxResultBytes(v) {
  if (v === undefined) return DEFAULT_MAX_RESULT_BYTES;
  if (typeof v !== 'number') throw typeError('maxResultBytes', `maxResultBytes must be a number of bytes, not ${typeof v}`);
  if (!Number.isFinite(v)) throw rangeError('maxResultBytes', `maxResultBytes must be finite, not ${v}`, 'not_finite');
  if (!Number.isInteger(v)) throw rangeError('maxResultBytes', `maxResultBytes must be whole bytes (${v})`, 'not_integer');
  if (v < 1) throw rangeError('maxResultBytes', `maxResultBytes must be at least 1 (${v})`, 'too_small');
  if (v > MAX_RESULT_BYTES_LIMIT) throw rangeError('maxResultBytes', `maxResultBytes must be at most ${MAX_RESULT_BYTES_LIMIT} (${v})`, 'too_large');
  return v;
}

class Unencodable extends Error {}

function noteUnencodable(key, value) {
  const t = typeof value;
  if (t === 'bigint' || t === 'function' || t === 'symbol') {
    const what = t === 'bigint' ? 'a BigInt' : t === 'symbol' ? 'a Symbol' : 'a function';
    throw new Unencodable(key === '' ? `it is ${what}` : `${what} at ${JSON.stringify(key)}`);
  }
  return value;
}

/** The result's text, or `{ why }` when it has none. */
export function encodeResult(result) {
  let text;
  try {
    text = JSON.stringify(result, noteUnencodable);
  } catch (e) {
    if (e instanceof Unencodable) return { why: e.message };
    if (e instanceof TypeError && /circular|cyclic/i.test(e.message)) return { why: 'it contains a cycle' };
    return { why: `encoding it threw ${e?.name ?? 'an error'}` };
  }
  if (text === undefined) return { why: 'there was no result (undefined)' };
  return { text };
}

/** UTF-8 bytes of `text`, counted only as far as needed to know whether it exceeds `max`. */
function utf8Over(text, max) {
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? (i++, 4) : 3;
    if (bytes > max) return true;
  }
  return false;
}

/** A stored note in place of a result that could not be stored; `state` says how the operation ended. */
export function unstoredResult(state, operationId, why) {
  const failed = state === 'failed';
  const ended = failed ? 'ran and reported an error' : 'succeeded';
  return {
    isError: failed,
    content: [{
      type: 'text',
      text: `The operation${operationId ? ` ${operationId}` : ''} ${ended}; its result could not be stored (${why}), so it cannot be shown again. ` +
        'It has taken effect: do not repeat it with a new operation id.',
    }],
    _meta: { [LEDGER_META_KEY]: { status: 'result_not_stored', state, ...(operationId ? { operationId } : {}), reason: why } },
  };
}

/**
 * The text to store for a result: its encoding, or a note saying it could not be stored and why (no
 * encoding, or longer than `maxBytes`). `notStored(why)` is told when a note is stored instead.
 */
export function storedText(state, operationId, result, maxBytes = DEFAULT_MAX_RESULT_BYTES, notStored) {
  const encoded = encodeResult(result);
  let why = encoded.why;
  if (encoded.text !== undefined && utf8Over(encoded.text, maxBytes)) why = `it is longer than the ledger's maxResultBytes, ${maxBytes} bytes`;
  if (why === undefined) return encoded.text;
  notStored?.(why);
  return JSON.stringify(unstoredResult(state, operationId, why));
}

/** A replay of the stored text. Rows written before results were text (an object) are re-encoded once. */
export function decodeResult(stored, state, operationId) {
  if (stored === undefined || stored === null) return undefined;
  if (typeof stored !== 'string') return decodeResult(storedText(state, operationId, stored, MAX_RESULT_BYTES_LIMIT), state, operationId);
  try {
    return JSON.parse(stored);
  } catch {
    return unstoredResult(state, operationId, 'the stored text is not JSON');
  }
}
