// fingerprint(value): RFC 8785 canonical JSON + SHA-256, hex. JS writes the canonical text in one pass
// (./canonical.js: JSON.stringify's algorithm with keys in RFC 8785 order; JS already writes numbers and
// strings the RFC's way and sorts keys by UTF-16 code units); the wasm hashes its UTF-8 bytes (sha2).
// Synchronous, and the same code in Node, browsers and workerd; in Node, server.node.js hands in node:crypto's
// SHA-256 (`useNodeCrypto`), which hashes the same UTF-8 bytes natively (faster: no copy into wasm memory).
//
// What is refused, with a typed error (`field: 'value'`):
// - NaN and ±Infinity, also boxed (`new Number(NaN)`, from any realm): RangeError `not_finite`, naming the
//   key. JSON.stringify would write them as `null`, so that `{ a: NaN }` and `{ a: null }` would be one
//   operation. Other boxed primitives (`new Number(3)`, `new String('x')`, `new Boolean(true)`) are their
//   primitive, as JSON.stringify has it.
// - a string or key with a lone surrogate: RangeError `lone_surrogate`.
// - cycles, BigInt: TypeError `invalid_type`; `undefined`, a function or a symbol at the top: `invalid_type`.
// - nesting deeper than 256 levels: RangeError `too_deep` (also when the engine's own recursion limit is
//   reached first).
// - a canonical text longer than MAX_FINGERPRINT_BYTES (16 MiB of UTF-8): RangeError `too_large`, checked
//   in UTF-16 code units while writing (before anything is copied into wasm memory), then in UTF-8 bytes (by
//   the wasm, or by Buffer.byteLength in Node).
import { rangeError, typeError } from '../errors.js';
import { fingerprintCanonical } from '../mcp_retry_policy_server.js';
import { canonicalJson, isRefusal } from './canonical.js';
import { STACK } from './rules.js';

/**
 * The longest canonical JSON text `fingerprint` takes, in UTF-8 bytes (16 MiB): the wasm's own limit
 * (`maxFingerprintBytes()`, src/ledger/json.rs; a test checks they agree). Not read from the wasm here:
 * modules are evaluated before the runtime entry initializes it.
 */
export const MAX_FINGERPRINT_BYTES = 16 * 1024 * 1024;

let nodeCrypto; // { byteLength(text), sha256Hex(text) } from node:crypto and Buffer, set by server.node.js

/**
 * Hash with node:crypto instead of the wasm (Node only: server.node.js calls it; `undefined` goes back to the
 * wasm); returns what was in use. The text is well-formed UTF-16 (the writer refuses lone surrogates), so both
 * hash the same bytes; the byte limit is checked the same way.
 */
export function useNodeCrypto(crypto) {
  const before = nodeCrypto;
  nodeCrypto = crypto;
  return before;
}

/** What was thrown, described without trusting it (it may be a Proxy whose every trap throws). */
function describe(thrown) {
  try {
    const m = thrown?.message;
    if (typeof m === 'string') return m;
  } catch {
    // fall through
  }
  try {
    return String(thrown);
  } catch {
    return 'an exception that cannot be described';
  }
}

function isRangeError(thrown) {
  try {
    return thrown instanceof RangeError;
  } catch {
    return false;
  }
}

/** The fingerprint of a JSON-serializable value: same value in any key order → same hex string. */
export function fingerprint(value) {
  let text;
  try {
    text = canonicalJson(value, MAX_FINGERPRINT_BYTES);
  } catch (e) {
    if (isRefusal(e)) throw e;
    // The engine's own limits: its recursion depth (V8, JSC: RangeError "Maximum call stack size exceeded";
    // SpiderMonkey: InternalError "too much recursion") or its longest string ("Invalid string length").
    const message = describe(e);
    if (/call stack|recursion/i.test(message)) {
      throw rangeError('value', `cannot fingerprint this value: nested too deeply (${message})`, 'too_deep');
    }
    if (isRangeError(e)) {
      throw rangeError('value', `cannot fingerprint this value: its JSON text is longer than ${MAX_FINGERPRINT_BYTES} bytes (${message})`, 'too_large');
    }
    // A toJSON or getter or proxy trap that threw.
    throw typeError('value', `cannot fingerprint this value: ${message}`);
  }
  if (text === undefined) throw typeError('value', 'cannot fingerprint undefined, a function or a symbol');
  if (nodeCrypto !== undefined) {
    const bytes = nodeCrypto.byteLength(text);
    if (bytes > MAX_FINGERPRINT_BYTES) {
      throw rangeError('value', `cannot fingerprint this value: its JSON text (${bytes} bytes) is longer than ${MAX_FINGERPRINT_BYTES} bytes`, 'too_large');
    }
    return nodeCrypto.sha256Hex(text);
  }
  return STACK.call(fingerprintCanonical, undefined, [text]);
}
