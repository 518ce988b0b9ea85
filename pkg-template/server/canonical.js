// canonicalJson(value): the RFC 8785 canonical JSON text of a JS value, written in one pass in JS.
//
// It is JSON.stringify's own algorithm (SerializeJSONProperty: toJSON, boxed primitives unboxed, undefined,
// functions and symbols omitted in objects and `null` in arrays, cycles and BigInt refused) with object
// members in RFC 8785 order. What RFC 8785 asks is what JS already does: numbers are ECMAScript's
// Number::toString (`'' + n`), strings are JSON.stringify's (`JSON.stringify(s)`, native), and keys sort by
// UTF-16 code units (JS's default sort). So nothing needs parsing again: the wasm only hashes the text.
//
// Differences from JSON.stringify, all refusals with a typed error (`field: 'value'`):
// - NaN and ±Infinity, also boxed (`new Number(NaN)`, from any realm): RangeError `not_finite`, naming the key.
// - strings and keys with a lone surrogate: RangeError `lone_surrogate` (no Unicode text, no UTF-8 bytes).
// - nesting deeper than MAX_DEPTH (256) levels: RangeError `too_deep` (checked before the engine's own
//   recursion limit is reached; the caller maps that one to `too_deep` too).
// - a text longer than `limit` UTF-16 code units: RangeError `too_large`, checked while writing.
// - cycles, BigInt: TypeError `invalid_type`.
// Each property is read once, as JSON.stringify reads it, but in canonical key order (getters with side
// effects on their siblings run in that order).
import { rangeError, typeError } from '../errors.js';

/** The deepest nesting, as the wasm parser has it (src/ledger/json.rs `MAX_DEPTH`): the top value is 0. */
export const MAX_DEPTH = 256;

const { isArray } = Array;
const { keys: objectKeys } = Object;
const { stringify } = JSON;
const objectToString = Object.prototype.toString;
const numberValueOf = Number.prototype.valueOf;
const stringValueOf = String.prototype.valueOf;
const booleanValueOf = Boolean.prototype.valueOf;
const bigintValueOf = BigInt.prototype.valueOf;

const wellFormed =
  typeof String.prototype.isWellFormed === 'function'
    ? (s) => s.isWellFormed()
    : (s) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

/** Whether `v` (an object) has the internal slot that `valueOf` checks, from any realm; never throws. */
function hasSlot(valueOf, v) {
  try {
    valueOf.call(v);
    return true;
  } catch {
    return false;
  }
}

// The state of one write (saved and restored around a nested call: a toJSON or a getter may fingerprint).
let limit = 0;
let stack = []; // the objects being written, by depth: a cycle is one of them again

const refusals = new WeakSet();
/** Whether `e` is one of the typed errors this writer threw (not something a value's own code threw). */
export const isRefusal = (e) => refusals.has(e);
const refuse = (e) => {
  refusals.add(e);
  return e;
};

function notFinite(key, v) {
  return refuse(rangeError('value', `cannot fingerprint ${v} (at ${stringify(String(key))}): JSON has no NaN or Infinity`, 'not_finite'));
}

// Whether a string needs more than its two quotes: an escape, or a surrogate to check.
const special = /[\u0000-\u001f"\\\ud800-\udfff]/;

function quote(s) {
  if (!special.test(s)) return '"' + s + '"';
  if (!wellFormed(s)) {
    throw refuse(rangeError('value', `cannot fingerprint a string with a lone UTF-16 surrogate (not valid Unicode): ${stringify(s.slice(0, 40))}`, 'lone_surrogate'));
  }
  return stringify(s);
}

// Quoted keys, with the `:` after them: keys repeat (an array of records), and a Map hit costs half the
// escape check. Bounded: short keys only, emptied when full.
const keyCache = new Map();
const KEY_CACHE_SIZE = 1024;
const KEY_CACHE_LENGTH = 64;

function member(k) {
  let m = keyCache.get(k);
  if (m === undefined) {
    m = quote(k) + ':';
    if (k.length <= KEY_CACHE_LENGTH) {
      if (keyCache.size >= KEY_CACHE_SIZE) keyCache.clear();
      keyCache.set(k, m);
    }
  }
  return m;
}

/**
 * The value JSON.stringify would write for `holder[key]` (already read: `v`), after toJSON and unboxing:
 * a primitive, an object to write, or `undefined` (omitted).
 */
function resolve(key, v) {
  const t = typeof v;
  if ((t === 'object' && v !== null) || t === 'bigint') {
    const toJSON = v.toJSON;
    if (typeof toJSON === 'function') v = toJSON.call(v, typeof key === 'number' ? String(key) : key);
  }
  switch (typeof v) {
    case 'number':
      if (v - v !== 0) throw notFinite(key, v); // NaN, ±Infinity
      return v;
    case 'string':
    case 'boolean':
      return v;
    case 'bigint':
      throw refuse(typeError('value', `cannot fingerprint a BigInt (at ${stringify(String(key))})`));
    case 'object': {
      if (v === null || isArray(v)) return v;
      // A boxed primitive is written as its primitive. Plain objects and class instances are told apart
      // without a throwing brand check (50 times slower): Object.prototype.toString names a Number, String or
      // Boolean slot, or BigInt.prototype's tag; anything else not `[object Object]` gets the brand checks.
      // Not exact for a boxed primitive whose Symbol.toStringTag reads "Object", nor for a BigInt object
      // whose prototype was replaced (written as an object, where JSON.stringify unboxes or throws).
      if (objectToString.call(v) === '[object Object]') return v;
      if (hasSlot(numberValueOf, v)) {
        const n = +v; // ToNumber, as JSON.stringify does (valueOf may be overridden; a BigInt throws)
        if (n - n !== 0) throw notFinite(key, n);
        return n;
      }
      if (hasSlot(stringValueOf, v)) return String(v);
      if (hasSlot(booleanValueOf, v)) return booleanValueOf.call(v);
      if (hasSlot(bigintValueOf, v)) throw refuse(typeError('value', `cannot fingerprint a BigInt (at ${stringify(String(key))})`));
      return v;
    }
    default:
      return undefined; // undefined, a function, a symbol
  }
}

/**
 * Keys in RFC 8785 order (§3.2.3: by UTF-16 code units, which is how JS compares strings). An insertion sort
 * for the usual few keys (Array.prototype.sort costs about 250 ns a call), the engine's sort for more.
 */
function sortKeys(keys) {
  const n = keys.length;
  if (n > 16) return keys.sort();
  for (let i = 1; i < n; i++) {
    const k = keys[i];
    let j = i - 1;
    while (j >= 0 && keys[j] > k) {
      keys[j + 1] = keys[j];
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

// The last object's shape at each depth, for objects of at most SHAPE_KEYS keys: an array of records has one
// shape, sorted once and quoted once. Reused only when Object.keys gives the very same keys in the same order.
const shapes = [];
const SHAPE_KEYS = 64;

/** `keys` (Object.keys of an object at `depth`) sorted, with each one's `"key":` text (or undefined). */
function shapeOf(keys, depth) {
  const n = keys.length;
  if (n > SHAPE_KEYS) return { sorted: sortKeys(keys), members: [] };
  const last = shapes[depth];
  if (last !== undefined && last.keys.length === n) {
    const known = last.keys;
    let i = 0;
    while (i < n && known[i] === keys[i]) i++;
    if (i === n) return last;
  }
  const sorted = sortKeys(keys.slice());
  const members = sorted.map((k) => (wellFormed(k) ? member(k) : undefined));
  const shape = { keys, sorted, members };
  shapes[depth] = shape;
  return shape;
}

// A container's text is a rope of the pieces appended to it; a long one is flattened whenever it doubles, so
// that its pieces die young instead of filling the old generation (1 MB: about 40 % faster), at O(n) copying.
const FLAT_AT = 16 * 1024;

/** Checks the size of a long text, flattens it (charCodeAt does), and says when to do so again. */
function flatten(s) {
  if (s.length > limit) throw tooLarge();
  s.charCodeAt(0);
  return Math.min(s.length * 2, limit);
}

function tooLarge() {
  return refuse(rangeError('value', `cannot fingerprint this value: its canonical JSON text is longer than ${limit} characters`, 'too_large'));
}

/** The canonical text of a resolved value `v` at nesting `depth`. */
function write(v, depth) {
  if (depth > MAX_DEPTH) throw refuse(rangeError('value', `cannot fingerprint this value: nested deeper than ${MAX_DEPTH} levels`, 'too_deep'));
  switch (typeof v) {
    case 'string':
      return quote(v);
    case 'number':
      return '' + v; // Number::toString; -0 is "0"
    case 'boolean':
      return v ? 'true' : 'false';
    default: {
      if (v === null) return 'null';
      for (let i = 0; i < depth; i++) {
        if (stack[i] === v) throw refuse(typeError('value', 'cannot fingerprint this value: it contains a cycle'));
      }
      stack[depth] = v;
      const inner = depth + 1;
      let s;
      if (isArray(v)) {
        s = '[';
        let flatAt = FLAT_AT;
        const n = v.length;
        for (let i = 0; i < n; i++) {
          if (i > 0) s += ',';
          const x = resolve(i, v[i]); // the index as a string only if a toJSON or an error needs it
          s += x === undefined ? 'null' : write(x, inner);
          if (s.length > flatAt) flatAt = flatten(s);
        }
        s += ']';
      } else {
        const { sorted, members } = shapeOf(objectKeys(v), depth);
        s = '{';
        let flatAt = FLAT_AT;
        for (let i = 0; i < sorted.length; i++) {
          const k = sorted[i];
          const x = resolve(k, v[k]);
          if (x === undefined) continue;
          const m = members[i] ?? member(k); // member(k) throws for a key with a lone surrogate
          s += (s.length === 1 ? m : ',' + m) + write(x, inner);
          if (s.length > flatAt) flatAt = flatten(s);
        }
        s += '}';
      }
      stack[depth] = undefined;
      return s;
    }
  }
}

/**
 * The canonical JSON text of `value` (RFC 8785), or `undefined` for what JSON.stringify would not write
 * (`undefined`, a function, a symbol). At most `maxChars` UTF-16 code units (`too_large` past that).
 * Throws the typed errors above; anything a value's own code throws (a getter, a toJSON, a proxy trap, the
 * engine's recursion limit) passes through untouched.
 */
export function canonicalJson(value, maxChars) {
  const outer = { limit, stack };
  limit = maxChars;
  stack = [];
  try {
    const v = resolve('', value);
    if (v === undefined) return undefined;
    const text = write(v, 0);
    if (text.length > limit) throw tooLarge();
    return text;
  } finally {
    ({ limit, stack } = outer);
  }
}
