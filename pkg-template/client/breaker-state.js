// The object side of the shared breaker (client/shared-breaker.js has the processes' side): the state of one or
// more servers in a Durable Object's storage, and the checks every value crossing into it passes.
// Anything that can reach the object can send it anything (an isolate with a bug, a clock far ahead, a caller with
// intent), so it trusts no reporter's time: a reported state began no later than the object received it (its own
// clock, `Date.now()` unless `now` is given), and a probe lease runs on that clock too. One report can then open the
// shared breaker for at most the engines' `openMs` after it arrived; a later report wins over it as over any other.
// What it keeps is bounded: server names of at most MAX_SERVER_CHARS, at most `maxServers` servers per object.
import { rangeError, typeError, typeName } from '../errors.js';
import { BREAKER_STATES, MAX_DURATION_MS } from '../generated/names.js';

export const MAX_MS = MAX_DURATION_MS;
/** The longest server name (UTF-16 code units) and holder id the object keeps. */
export const MAX_SERVER_CHARS = 256;
export const MAX_HOLDER_CHARS = 128;
/** The largest request body `fetch` reads (bytes): an honest one is a few hundred. */
export const MAX_BODY_BYTES = 16 * 1024;
const MAX_FAILURES = 0xffff_ffff; // what an engine adopts (a u32)
const HALF_OPEN = BREAKER_STATES[2];
const CLOSED = BREAKER_STATES[0];

export function ms(v, field, min, max = MAX_MS) {
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number of milliseconds, got ${typeName(v)}`);
  if (!Number.isFinite(v)) throw rangeError(field, `${field} must be finite, got ${v}`, 'not_finite');
  if (!Number.isInteger(v)) throw rangeError(field, `${field} must be a whole number of milliseconds, got ${v}`, 'not_integer');
  if (v < min) throw rangeError(field, `${field} must be at least ${min}, got ${v}`, 'too_small');
  if (v > max) throw rangeError(field, `${field} must be at most ${max}${max === MAX_MS ? ' (a day)' : ''}, got ${v}`, 'too_large');
  return v;
}
function count(v, field, max) {
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number, got ${typeName(v)}`);
  if (!Number.isInteger(v) || v < 1 || v > max) throw rangeError(field, `${field} must be a whole number from 1 to ${max}, got ${v}`, 'invalid_value');
  return v;
}
export function time(v, field) {
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number, got ${typeName(v)}`);
  if (!Number.isInteger(v) || v < 0 || v > Number.MAX_SAFE_INTEGER) throw rangeError(field, `${field} must be a whole number of ms, 0 to 2^53 − 1, got ${v}`, 'invalid_value');
  return v;
}
export function text(v, field, max = 512) {
  if (typeof v !== 'string' || !v) throw typeError(field, `${field} must be a non-empty string, got ${typeName(v)}`);
  if (v.length > max) throw rangeError(field, `${field} must be at most ${max} characters, got ${v.length}`, 'too_large');
  return v;
}
export function object(v, field) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw typeError(field, `${field} must be an object, got ${typeName(v)}`);
  return v;
}
export function only(o, field, keys) {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k)) throw typeError(`${field}.${k.slice(0, 64)}`, `${field}.${k.slice(0, 64)} is not a known field`, 'unknown_option');
  }
}

/** A snapshot as it crosses the object's boundary: `{ state, sinceMs, failures? }`, checked field by field. */
export function snapshotOf(v, field) {
  const s = object(v, field);
  only(s, field, ['state', 'sinceMs', 'failures']);
  if (!BREAKER_STATES.includes(s.state)) throw rangeError(`${field}.state`, `${field}.state must be one of ${BREAKER_STATES.join(', ')}, got ${typeName(s.state)}`, 'invalid_value');
  const out = { state: s.state, sinceMs: time(s.sinceMs, `${field}.sinceMs`) };
  if (s.failures !== undefined) out.failures = time(s.failures, `${field}.failures`);
  return out;
}

/** A request's JSON body, read no further than MAX_BODY_BYTES (a larger one is refused, `too_large`). */
async function bodyOf(request) {
  const reader = request.body?.getReader();
  const parts = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = reader ? await reader.read() : { done: true };
    if (done) break;
    bytes += value.length;
    if (bytes > MAX_BODY_BYTES) {
      reader.cancel().catch(() => {});
      throw rangeError('body', `a request's body must be at most ${MAX_BODY_BYTES} bytes`, 'too_large');
    }
    parts.push(value);
  }
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) all.set(p, (at += p.length) - p.length);
  return JSON.parse(new TextDecoder().decode(all));
}

/** A stored row as processes see it: the snapshot, without the lease. */
const view = ({ state, sinceMs, failures = 0 }) => ({ state, sinceMs, failures });
const COUNTED = ['failure', 'success'];
// The fields of each request `fetch` reads, by op (anything else is refused by name).
const FIELDS = {
  read: ['op', 'server'],
  report: ['op', 'server', 'snapshot', 'counted'],
  probe: ['op', 'server', 'holder', 'sinceMs', 'nowMs', 'leaseMs'],
};

/**
 * The shared state of one or more servers, in a Durable Object's storage (`ctx.storage`). Put it in a Durable
 * Object of yours and hand it the object's requests (`fetch`), or call its methods from your own RPC methods.
 * The object runs one event at a time, so each read-and-write below is atomic.
 */
export class DurableObjectBreakerState {
  #storage;
  #prefix;
  #now;
  #maxServers;

  /**
   * `options.prefix`: the storage keys' prefix (default `breaker:`), for a storage shared with other data;
   * `maxServers`: how many servers it keeps at most (default 256; a report for one more is refused,
   * `too_many_servers`); `now`: its clock (default `Date.now`).
   */
  constructor(storage, options = {}) {
    if (!storage || typeof storage.get !== 'function' || typeof storage.put !== 'function') {
      throw typeError('storage', 'storage must be a Durable Object storage (ctx.storage)');
    }
    object(options, 'options');
    only(options, 'options', ['prefix', 'maxServers', 'now']);
    if (options.now !== undefined && typeof options.now !== 'function') throw typeError('now', `now must be a function returning ms, got ${typeName(options.now)}`);
    this.#storage = storage;
    this.#prefix = options.prefix === undefined ? 'breaker:' : text(options.prefix, 'prefix');
    this.#maxServers = options.maxServers === undefined ? 256 : count(options.maxServers, 'maxServers', 10_000);
    this.#now = options.now ?? Date.now;
  }

  /** The object's own time, as a whole number of ms (a clock that answers nonsense counts as 0). */
  #clock() {
    const t = Math.floor(Number(this.#now()));
    return Number.isSafeInteger(t) && t > 0 ? t : 0;
  }

  /**
   * What is stored for `server` (closed since 0, none, when nothing is), as of `nowMs` on the object's clock:
   * a time stored ahead of it (written before the object judged by its own clock) is taken as `nowMs`, and a
   * lease that could not have been granted (longer than a day from now) is gone.
   */
  async #get(server, nowMs) {
    const row = await this.#storage.get(this.#prefix + text(server, 'server', MAX_SERVER_CHARS));
    if (row === undefined) return { state: CLOSED, sinceMs: 0, stored: false };
    const out = { ...row, sinceMs: Math.min(row.sinceMs, nowMs), stored: true };
    if (out.lease && !(out.lease.untilMs <= nowMs + MAX_MS)) delete out.lease;
    return out;
  }

  async #put(server, { stored, ...row }) {
    if (!stored) {
      // How many servers it keeps, under the prefix alone (a server's name is never empty).
      const count = (await this.#storage.get(this.#prefix)) ?? 0;
      if (count >= this.#maxServers) {
        throw rangeError('server', `this object keeps at most ${this.#maxServers} servers (maxServers); ${JSON.stringify(server.slice(0, 64))} would be one more`, 'too_many_servers');
      }
      await this.#storage.put(this.#prefix, count + 1);
    }
    await this.#storage.put(this.#prefix + server, row);
    return row;
  }

  /** What is stored for `server`: `{ state, sinceMs, failures }` (closed since 0, none, when nothing is). */
  async read(server) {
    return view(await this.#get(server, this.#clock()));
  }

  /**
   * A process's own breaker state: kept when it is newer than what is stored (it began later); a new state
   * starts the failure count again. Its `sinceMs` is the reporter's word: taken as no later than the object's
   * own clock on receipt. A half-open state is the lease's (`acquireProbe`): reported, it changes nothing.
   * `counted`: the process's breaker just counted a failure (while closed: one more in a row for the fleet) or
   * was answered after failures (none in a row). A report that changes nothing writes nothing. Returns what is
   * stored afterwards, for the reporter to adopt.
   */
  async report(server, snapshot, counted) {
    const s = snapshotOf(snapshot, 'snapshot');
    if (counted !== undefined && !COUNTED.includes(counted)) throw rangeError('counted', `counted must be failure or success, got ${typeName(counted)}`, 'invalid_value');
    const nowMs = this.#clock();
    const row = await this.#get(server, nowMs);
    const next = { ...row };
    const sinceMs = Math.min(s.sinceMs, nowMs);
    if (sinceMs > row.sinceMs && s.state !== HALF_OPEN) {
      Object.assign(next, { state: s.state, sinceMs, failures: 0 });
      delete next.lease;
    }
    if (counted === 'failure' && next.state === CLOSED) next.failures = Math.min((next.failures ?? 0) + 1, MAX_FAILURES);
    if (counted === 'success') next.failures = 0;
    if (next.state === row.state && next.sinceMs === row.sinceMs && (next.failures ?? 0) === (row.failures ?? 0)) return view(row);
    return view(await this.#put(server, next));
  }

  /**
   * A process whose breaker is due to probe asks for the lease (`holder`: its id; `sinceMs`: when its own state
   * began; `leaseMs`: how long its probe may take). Granted when the stored state is open or half-open, no other
   * holder's lease is running and nothing newer than its state was reported: the stored state is then half-open since the object's now, and the lease
   * runs `leaseMs` on the object's clock. `nowMs` (the asker's clock) is checked and not used. Otherwise not
   * granted, with the stored snapshot to adopt (a probe out elsewhere, or a newer open or close).
   */
  async acquireProbe(server, { holder, sinceMs, nowMs, leaseMs }) {
    text(holder, 'holder', MAX_HOLDER_CHARS);
    time(sinceMs, 'sinceMs');
    if (nowMs !== undefined) time(nowMs, 'nowMs');
    ms(leaseMs, 'leaseMs', 1);
    const now = this.#clock();
    const row = await this.#get(server, now);
    const { lease } = row;
    const snapshot = view(row);
    const heldElsewhere = lease && lease.holder !== holder && now < lease.untilMs;
    const newer = row.sinceMs > sinceMs && row.state !== HALF_OPEN;
    // Closed, no probe is due anywhere the object knows of: one lease asked for would hold the fleet back for its
    // probe timeout. The asker probes alone (as when the object is unreachable); the others keep calling.
    if (heldElsewhere || newer || row.state === CLOSED) return { granted: false, snapshot };
    const granted = { ...row, state: HALF_OPEN, sinceMs: Math.max(now, row.sinceMs + 1), lease: { holder, untilMs: now + leaseMs } };
    return { granted: true, snapshot: view(await this.#put(server, granted)) };
  }

  /**
   * The object's side of `SharedBreaker`: a POST of `{ op: 'read' | 'report' | 'probe', server, … }` answered in
   * JSON. A request it cannot read (over MAX_BODY_BYTES, an unknown op or field, a value out of range, a server
   * too many) is a 400
   * naming the field (`{ error: { name, code, field, message } }`).
   */
  async fetch(request) {
    try {
      const body = object(await bodyOf(request), 'body');
      const fields = Object.hasOwn(FIELDS, body.op) ? FIELDS[body.op] : undefined;
      if (!fields) throw rangeError('op', `op must be one of read, report, probe, got ${typeName(body.op)}`, 'invalid_value');
      only(body, 'body', fields);
      const server = text(body.server, 'server', MAX_SERVER_CHARS);
      if (body.op === 'read') return Response.json(await this.read(server));
      if (body.op === 'report') return Response.json(await this.report(server, body.snapshot, body.counted));
      return Response.json(await this.acquireProbe(server, body));
    } catch (e) {
      const error = { name: e?.name ?? 'Error', code: e?.code ?? 'invalid_body', field: e?.field ?? 'body', message: String(e?.message ?? e) };
      return Response.json({ error }, { status: 400 });
    }
  }
}
