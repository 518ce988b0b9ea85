// RetryEngine's readers: JS-shaped input (objects, names, types, unknown keys) read into the numbers the client
// wasm takes, with the typed errors (`TypeError`/`RangeError` with `code` and `field`) — the policy, the
// revision, a safety, the code of a name; and the typed error of a failure the wasm returned. Every range
// check and every decision is the core's.
import * as w from '../mcp_retry_policy_client.js';
import { rangeError, typeError, typeName } from '../errors.js';
import { wasmFailure } from '../wasm-failure.js';
import {
  BOUNDARY_FIELDS, CAUSES, JITTERS, OPERATION_STATUSES, POLICY_VALUES, TASK_STATUSES, REASONS, REVISIONS, STATUSES,
  UNKNOWN_REVISION,
} from '../generated/names.js';

export const codes = (names) => new Map(names.map((name, code) => [name, code]));
export const JITTER_CODES = codes(JITTERS);
export const OPERATION_CODES = codes(OPERATION_STATUSES);
export const TASK_CODES = codes(TASK_STATUSES);
export const STATUS_CODES = codes(STATUSES);
export const REASON_CODES = codes(REASONS);
export const CAUSE_CODES = codes(CAUSES);
export const REVISION_SETTINGS = [...REVISIONS, UNKNOWN_REVISION];
export const REVISION_CODES = codes(REVISION_SETTINGS);
export const oneOf = (names) => names.join(', ');

export const quote = (s) => `"${s.slice(0, 64)}"`;

/** The typed error for a failure the wasm returned (`../wasm-failure.js`). */
export const failure = (r, what) => wasmFailure(r, w.errorDetail, what);

/** `r`, or the typed error it encodes. */
export function ok(r, what = 'RetryEngine') {
  if (r < 0) throw failure(r, what);
  return r;
}

export function number(v, field) {
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number, got ${typeName(v)}`);
  return v;
}
export function bool(v, field) {
  if (v === undefined || v === false) return 0;
  if (v === true) return 1;
  throw typeError(field, `${field} must be a boolean, got ${typeName(v)}`);
}
/** `what`: a description, or the names it may be (joined only when it is missing). */
export function required(v, field, what) {
  if (v === undefined) throw typeError(field, `${field} is required (${Array.isArray(what) ? `one of ${oneOf(what)}` : what})`, 'missing');
  return v;
}
/** The code of a name in `names` (absent: 0, the first, when not required). */
export function code(v, field, table, names) {
  if (v === undefined) return 0;
  if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
  const c = table.get(v);
  if (c === undefined) throw rangeError(field, `${field} must be one of ${oneOf(names)}, got ${quote(v)}`);
  return c;
}
/** A typed error of ours passes; anything a getter or proxy trap threw becomes `unreadable` naming `at`. */
export function ours(e, at) {
  if ((e instanceof TypeError || e instanceof RangeError) && Object.hasOwn(e, 'field') && typeof e.code === 'string') return e;
  return typeError(at, `${at} could not be read`, 'unreadable');
}

/**
 * Reads an object's fields: `keys` are the ones it may have (any other own string key is `unknown_option`),
 * `read(key)` returns each value once. `undefined` reads as empty; anything but a plain object is a TypeError.
 */
export function fields(o, path, keys, read) {
  if (o === undefined) return;
  const what = path || 'policy';
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw typeError(what, `${what} must be an object, got ${typeName(o)}`);
  const unreadable = (f) => typeError(f, `${f} could not be read`, 'unreadable');
  let own;
  try {
    own = Reflect.ownKeys(o);
  } catch {
    throw unreadable(what);
  }
  for (const key of own) {
    if (typeof key === 'string' && !keys.includes(key)) {
      const f = path ? `${path}.${key.slice(0, 64)}` : key.slice(0, 64);
      throw typeError(f, `${f} is not a known option`, 'unknown_option');
    }
  }
  for (const key of keys) {
    const f = path ? `${path}.${key}` : key;
    let v;
    try {
      v = o[key];
    } catch {
      throw unreadable(f);
    }
    read(key, v, f);
  }
}

// The policy fields in argument order (BOUNDARY_FIELDS 0..POLICY_VALUES), split into the top-level ones
// and the two sections'.
export const POLICY_FIELDS = BOUNDARY_FIELDS.slice(0, POLICY_VALUES);
export const TOP = POLICY_FIELDS.filter((f) => !f.includes('.'));
export const section = (name) => POLICY_FIELDS.filter((f) => f.startsWith(`${name}.`)).map((f) => f.slice(name.length + 1));
export const SECTIONS = { budget: section('budget'), breaker: section('breaker') };

// The engine's arguments: present bits, budget mode, breaker mode, revision, then the 16 values.
export const ARGS = new Array(4 + POLICY_VALUES).fill(0);

/**
 * Reads policy options into arrays of their own (`args`: ARGS's layout, the revision, `args[3]`, left to the
 * caller; `hedge`: HEDGE_ARGS's). Not into ARGS itself: the caller's getters run meanwhile, and one that builds
 * another engine would fill ARGS with that one's policy. The caller copies them in (`stagePolicy`) once no
 * caller code is left to run.
 */
export function readPolicy(policy) {
  const args = new Array(ARGS.length).fill(0);
  const hedge = [0, 0, 0];
  args[1] = 1;
  args[2] = 1;
  let at = 'policy';
  try {
    const put = (field, v) => {
      at = field;
      if (v === undefined) return;
      const i = POLICY_FIELDS.indexOf(field);
      args[4 + i] = field === 'jitter' ? code(v, field, JITTER_CODES, JITTERS) : number(v, field);
      args[0] |= 1 << i;
    };
    fields(policy, '', [...TOP, 'budget', 'breaker', ...HEDGE_KEYS], (key, v, field) => {
      at = field;
      if (HEDGE_KEYS.includes(key)) return readHedge(hedge, key, v, field);
      if (!(key in SECTIONS)) return put(field, v);
      const slot = key === 'budget' ? 1 : 2;
      if (v === false) args[slot] = 0;
      else if (v === undefined || v === true) args[slot] = 1;
      else if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        throw typeError(field, `${field} must be an object or false, got ${typeName(v)}`);
      } else {
        args[slot] = 2;
        fields(v, key, SECTIONS[key], (_, sv, sf) => put(sf, sv));
      }
    });
  } catch (e) {
    throw ours(e, at);
  }
  return { args, hedge };
}

/** Copies what `readPolicy` read, and the revision, into ARGS and HEDGE_ARGS: call it when no caller code is left to run. */
export function stagePolicy({ args, hedge }, revision) {
  for (let i = 0; i < args.length; i++) ARGS[i] = args[i];
  ARGS[3] = revision;
  for (let i = 0; i < hedge.length; i++) HEDGE_ARGS[i] = hedge[i];
}

export function readRevision(v, field) {
  if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
  const c = REVISION_CODES.get(v);
  if (c === undefined) throw rangeError(field, `${field} must be one of ${oneOf(REVISION_SETTINGS)}, got ${quote(v)}`);
  return c;
}

/** The revision code a negotiated `protocolVersion` (any `YYYY-MM-DD`) behaves as. */
export function revisionCode(v) {
  if (typeof v !== 'string') throw typeError('protocolVersion', `protocolVersion must be a string, got ${typeName(v)}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) throw rangeError('protocolVersion', `protocolVersion must be a YYYY-MM-DD date, got ${quote(v)}`);
  return ok(w.revisionOfDate(Number(v.slice(0, 4) + v.slice(5, 7) + v.slice(8))));
}

/** The revision a negotiated `protocolVersion` behaves as. */
export function revisionFor(protocolVersion) {
  return REVISIONS[revisionCode(protocolVersion)];
}


export function foreign(field, cls, v) {
  return typeError(field, `${field} is not a ${cls} made by this module (got ${typeName(v)}; a cloned, forged or foreign object cannot be used)`, 'foreign_object');
}
export function inUse(cls) {
  return typeError('this', `this ${cls} is in use: it cannot be freed from inside one of its own calls`, 'in_use');
}

// Hedged reads (engineHedging, src/wasm/hedge.rs): present bits (1 hedgeAfterMs, 2 maxHedges), then the two.
export const HEDGE_KEYS = ['hedgeAfterMs', 'maxHedges'];
export const HEDGE_ARGS = [0, 0, 0];
function readHedge(hedge, key, v, field) {
  if (v === undefined) return;
  const i = HEDGE_KEYS.indexOf(key);
  hedge[1 + i] = number(v, field);
  hedge[0] |= 1 << i;
}

/** `options.subrequests` (the invocation's room, `admit`'s and `hedge`'s), checked by name; `undefined` if absent. */
export function roomOf(options) {
  let room;
  let at = 'options';
  try {
    fields(options, 'options', ['subrequests'], (_, v, field) => {
      at = field;
      if (v !== undefined) room = number(v, field);
    });
  } catch (e) {
    throw ours(e, at);
  }
  return room;
}
