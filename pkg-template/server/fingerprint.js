// fingerprint(value): RFC 8785 canonical JSON + SHA-256, hex. JS serializes (JSON.stringify writes numbers
// by the very ECMAScript algorithm RFC 8785 prescribes); the wasm core parses, sorts keys by UTF-16 code
// units, escapes strings canonically and hashes.
import { rangeError, typeError } from '../errors.js';
import { fingerprintJson } from '../mcp_retry_policy_server.js';

function rejectNonFinite(key, v) {
  if (typeof v === 'number' && !Number.isFinite(v)) {
    throw rangeError('value', `cannot fingerprint ${v} (at ${JSON.stringify(key)}): JSON has no NaN or Infinity`, 'not_finite');
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
    throw typeError('value', `cannot fingerprint this value: ${e?.message ?? e}`); // cycles, BigInt
  }
  if (text === undefined) throw typeError('value', 'cannot fingerprint undefined or a function');
  return fingerprintJson(text);
}
