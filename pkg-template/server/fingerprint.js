// fingerprint(value): RFC 8785 canonical JSON + SHA-256, hex. JS serializes (JSON.stringify writes numbers
// by the very ECMAScript algorithm RFC 8785 prescribes); the wasm core parses, sorts keys by UTF-16 code
// units, escapes strings canonically and hashes.
//
// What is refused, with a typed error naming the key (`field: 'value'`):
// - NaN and ±Infinity, also boxed (`new Number(NaN)`, from any realm): RangeError `not_finite`, naming the
//   key. JSON.stringify would write them as `null`, so that `{ a: NaN }` and `{ a: null }` would be one
//   operation. Other boxed primitives (`new Number(3)`, `new String('x')`, `new Boolean(true)`) are their
//   primitive, as JSON.stringify has it.
// - cycles, BigInt: TypeError `invalid_type`; `undefined`, a function or a symbol at the top: `invalid_type`.
// - nesting deeper than 256 levels: RangeError `too_deep` (also when the engine's own recursion limit stops
//   JSON.stringify first).
// - a canonical text longer than MAX_FINGERPRINT_BYTES (16 MiB of UTF-8): RangeError `too_large`, checked
//   before the text is copied into wasm memory.
import { rangeError, typeError } from '../errors.js';
import { fingerprintJson } from '../mcp_retry_policy_server.js';
import { STACK } from './rules.js';

/**
 * The longest canonical JSON text `fingerprint` takes, in UTF-8 bytes (16 MiB): the wasm's own limit
 * (`maxFingerprintBytes()`, src/ledger/json.rs; a test checks they agree). Not read from the wasm here:
 * modules are evaluated before the runtime entry initializes it.
 */
export const MAX_FINGERPRINT_BYTES = 16 * 1024 * 1024;

const numberValueOf = Number.prototype.valueOf;

let refused; // the typed error the replacer threw, told apart from anything a value's own code throws

function notFinite(key, v) {
  refused = rangeError('value', `cannot fingerprint ${v} (at ${JSON.stringify(key)}): JSON has no NaN or Infinity`, 'not_finite');
  return refused;
}

/**
 * Whether JSON.stringify would unbox `v` (an object) as a number. Exact for Number objects of this realm and
 * of others (their prototypes are not this realm's); not for one whose prototype was set to this realm's
 * Object.prototype, Array.prototype or null (the brand check below throws for every plain object, which
 * made fingerprints of object-heavy values 50 times slower).
 */
function isBoxedNumber(v) {
  if (v instanceof Number) return true;
  const proto = Object.getPrototypeOf(v);
  if (proto === Object.prototype || proto === Array.prototype || proto === null) return false;
  try {
    numberValueOf.call(v); // throws unless v has a [[NumberData]] slot (a Number object, from any realm)
    return true;
  } catch {
    return false;
  }
}

function replacer(key, v) {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw notFinite(key, v);
    return v;
  }
  if (typeof v === 'object' && v !== null && isBoxedNumber(v)) {
    // JSON.stringify writes a Number object as ToNumber(it) (its valueOf, which may be overridden): do the
    // same once here and hand back the primitive, so the check and the serialization see one value.
    const n = Number(v);
    if (!Number.isFinite(n)) throw notFinite(key, n);
    return n;
  }
  return v;
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
  refused = undefined;
  try {
    text = JSON.stringify(value, replacer);
  } catch (e) {
    if (e !== undefined && e === refused) throw e;
    // The engine's own limits: its recursion depth (V8, JSC: RangeError "Maximum call stack size exceeded";
    // SpiderMonkey: InternalError "too much recursion") or its longest string ("Invalid string length").
    const message = describe(e);
    if (/call stack|recursion/i.test(message)) {
      throw rangeError('value', `cannot fingerprint this value: nested too deeply (${message})`, 'too_deep');
    }
    if (isRangeError(e)) {
      throw rangeError('value', `cannot fingerprint this value: its JSON text is longer than ${MAX_FINGERPRINT_BYTES} bytes (${message})`, 'too_large');
    }
    // Cycles, BigInt, a toJSON or getter or proxy trap that threw.
    throw typeError('value', `cannot fingerprint this value: ${message}`);
  } finally {
    refused = undefined;
  }
  if (typeof text !== 'string') throw typeError('value', 'cannot fingerprint undefined, a function or a symbol');
  // A UTF-16 code unit is at least one UTF-8 byte: this bound is exact for ASCII, and the wasm checks bytes.
  if (text.length > MAX_FINGERPRINT_BYTES) {
    throw rangeError('value', `cannot fingerprint this value: its JSON text (${text.length} characters) is longer than ${MAX_FINGERPRINT_BYTES} bytes`, 'too_large');
  }
  return STACK.call(fingerprintJson, undefined, [text]);
}
