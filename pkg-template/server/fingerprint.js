// fingerprint(value): RFC 8785 canonical JSON + SHA-256, hex. JS serializes (JSON.stringify writes numbers
// by the very ECMAScript algorithm RFC 8785 prescribes); the wasm core parses, sorts keys by UTF-16 code
// units, escapes strings canonically and hashes.
import { fingerprintJson } from '../mcp_retry_policy_server.js';

function rejectNonFinite(key, v) {
  if (typeof v === 'number' && !Number.isFinite(v)) {
    const e = new RangeError(`cannot fingerprint ${v} (at ${JSON.stringify(key)}): JSON has no NaN or Infinity`);
    e.code = 'not_finite';
    e.field = 'value';
    throw e;
  }
  return v;
}

/** The fingerprint of a JSON-serializable value: same value in any key order → same hex string. */
export function fingerprint(value) {
  let text;
  try {
    text = JSON.stringify(value, rejectNonFinite);
  } catch (e) {
    if (e?.code) throw e;
    const err = new TypeError(`cannot fingerprint this value: ${e?.message ?? e}`); // cycles, BigInt
    err.code = 'invalid_type';
    err.field = 'value';
    throw err;
  }
  if (text === undefined) {
    const err = new TypeError('cannot fingerprint undefined or a function');
    err.code = 'invalid_type';
    err.field = 'value';
    throw err;
  }
  return fingerprintJson(text);
}
