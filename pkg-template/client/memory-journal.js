// The default operation-id journal: in memory, lost with the process (the contract: journal.js). It forgets
// resolved entries by itself, so that a wrapper that lives for millions of calls stays bounded:
//   - by count: at most `maxSettled` resolved entries (succeeded, tool_error, failed) are kept, the ones settled
//     longest ago go first (default 10,000);
//   - by age: a resolved entry goes once the journal has been told of a time `settledTtlMs` after its settlement
//     (default a day, the server ledger's default `ttlMs`: a replay the server no longer holds would run again
//     anyway). The journal reads no clock: "now" is the newest `createdAt`/`settledAt` it was given (withRetry
//     gives its `now()`), checked on every begin and settle.
// A forgotten entry takes its intent with it, as `purge` does: a begin with that intent makes a new entry. So an
// intent is held for a day or for the last `maxSettled` resolved calls, whichever ends first — raise them if
// intents repeat later than that.
// Pending and unknown entries are never dropped: they stay until settled (resolve/reconcile) however many there
// are. `stats()` counts them; withRetry says `journal_backlog` when they reach `backlogThreshold` (default
// 1,000; client/backlog.js) and observes them in its OpenTelemetry gauge.
import { rangeError, typeError, typeName } from '../errors.js';
import { UNRESOLVED, checkBefore, checkBegin, cloned, entryOf, purgeable } from './journal-entry.js';

/** The defaults of MemoryJournal's retention options. */
export const JOURNAL_DEFAULTS = Object.freeze({ maxSettled: 10_000, settledTtlMs: 86_400_000, backlogThreshold: 1_000 });
const OPTIONS = Object.keys(JOURNAL_DEFAULTS);
const MIN = { maxSettled: 0, settledTtlMs: 0, backlogThreshold: 1 };

/** A whole number from `MIN[field]` to 2^53 − 1, or the typed error naming `field`. */
function whole(v, field) {
  if (v === undefined) return JOURNAL_DEFAULTS[field];
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number, got ${typeName(v)}`);
  if (!Number.isFinite(v)) throw rangeError(field, `${field} must be finite, got ${v}`, 'not_finite');
  if (!Number.isInteger(v)) throw rangeError(field, `${field} must be a whole number, got ${v}`, 'not_integer');
  if (v < MIN[field]) throw rangeError(field, `${field} must be at least ${MIN[field]}, got ${v}`, 'too_small');
  if (v > Number.MAX_SAFE_INTEGER) throw rangeError(field, `${field} must be at most 2^53 − 1, got ${v}`, 'too_large');
  return v;
}

function optionsOf(options) {
  if (options === undefined) return JOURNAL_DEFAULTS;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw typeError('options', `MemoryJournal options must be an object ({ ${OPTIONS.join(', ')} }), got ${typeName(options)}`);
  }
  for (const k of Object.keys(options)) {
    if (!OPTIONS.includes(k)) throw typeError(k.slice(0, 64), `${k.slice(0, 64)} is not a MemoryJournal option (${OPTIONS.join(', ')})`, 'unknown_option');
  }
  return Object.fromEntries(OPTIONS.map((k) => [k, whole(options[k], k)]));
}

/** In memory: lost with the process. The default. `options`: `{ maxSettled, settledTtlMs, backlogThreshold }`. */
export class MemoryJournal {
  // Bounded: every pending or unknown entry (never dropped: `stats().unresolved`, the backlog event) and at most
  // `maxSettled` resolved ones, each at most `settledTtlMs` old.
  #byId = new Map();
  // Bounded with #byId: an intent is entered with its entry and forgotten with it.
  #byIntent = new Map();
  // The resolved entries in the order they were settled, [id, settledAt] from #head on: what retention forgets
  // first. An array, not a Map: a Map's deleted slots stay until it is rehashed, and walking it from the start on
  // every settle skipped thousands of them (measured: 12 → 33 µs a begin + settle). An entry settled again leaves
  // its earlier item stale (skipped where it is met); bounded: compacted when stale items outnumber live ones.
  #queue = [];
  #head = 0;
  #resolved = 0;
  #unresolved = 0;
  #latest = -Infinity; // the newest time the journal was given: its "now"
  #max;
  #ttl;
  #threshold;

  constructor(options) {
    const o = optionsOf(options);
    this.#max = o.maxSettled;
    this.#ttl = o.settledTtlMs;
    this.#threshold = o.backlogThreshold;
  }

  async begin(e) {
    checkBegin(e);
    const known = e.intent !== undefined && this.#byIntent.has(e.intent) ? this.#byIntent.get(e.intent) : e.operationId;
    if (this.#byId.has(known)) {
      const out = structuredClone(this.#byId.get(known));
      this.#sweep(e.createdAt);
      return out;
    }
    // Copied before it is kept: an entry that cannot be copied (arguments holding a function) is refused with
    // nothing stored, and the caller's later changes to its arguments do not reach the journal.
    const entry = cloned(entryOf(e));
    this.#byId.set(entry.operationId, entry);
    if (e.intent !== undefined) this.#byIntent.set(e.intent, entry.operationId);
    this.#unresolved++;
    const out = structuredClone(entry);
    this.#sweep(entry.createdAt);
    return out;
  }

  async settle(operationId, status, settledAt = Date.now()) {
    const entry = this.#byId.get(operationId);
    if (!entry) return undefined;
    const wasOpen = UNRESOLVED.has(entry.state);
    const open = UNRESOLVED.has(status);
    entry.state = status;
    entry.settledAt = settledAt;
    if (wasOpen && !open) this.#unresolved--;
    if (!wasOpen && open) this.#unresolved++;
    if (!wasOpen) this.#resolved--; // settled before: its earlier item in the queue is stale now
    if (!open) {
      this.#resolved++;
      this.#queue.push([operationId, settledAt]);
    }
    const out = structuredClone(entry);
    this.#sweep(settledAt);
    return out;
  }

  async get(operationId) {
    const e = this.#byId.get(operationId);
    return e && structuredClone(e);
  }

  async pending() {
    return [...this.#byId.values()].filter((e) => UNRESOLVED.has(e.state)).map((e) => structuredClone(e));
  }

  async purge(settledBeforeMs) {
    checkBefore(settledBeforeMs);
    let n = 0;
    for (const [id, e] of this.#byId) {
      if (!purgeable(e, settledBeforeMs)) continue;
      this.#forget(id, e);
      n++;
    }
    return n;
  }

  /** What the journal holds now: all its entries, the unresolved ones among them, and the backlog threshold. */
  stats() {
    return { entries: this.#byId.size, unresolved: this.#unresolved, backlogThreshold: this.#threshold };
  }

  #forget(id, e) {
    this.#byId.delete(id);
    if (!UNRESOLVED.has(e.state)) this.#resolved--;
    if (e.intent !== undefined && this.#byIntent.get(e.intent) === id) this.#byIntent.delete(e.intent);
  }

  /** Whether the queue's item `[id, at]` is its entry's latest settlement (not stale). */
  #live([id, at]) {
    const e = this.#byId.get(id);
    return e !== undefined && !UNRESOLVED.has(e.state) && Object.is(e.settledAt, at);
  }

  /** Forgets the resolved entries past the count, then those settled `settledTtlMs` before `at` or earlier. */
  #sweep(at) {
    if (typeof at === 'number' && at > this.#latest) this.#latest = at;
    const cutoff = this.#latest - this.#ttl;
    const q = this.#queue;
    // Oldest settlement first; an entry settled with an earlier time than one before it waits for its turn.
    while (this.#head < q.length) {
      const item = q[this.#head];
      if (this.#live(item)) {
        if (this.#resolved <= this.#max && !(typeof item[1] === 'number' && item[1] <= cutoff)) break;
        this.#forget(item[0], this.#byId.get(item[0]));
      }
      q[this.#head++] = undefined;
    }
    // Amortized: the consumed head is cut off once it is half the array, stale items once they outnumber live ones.
    if (this.#head > 1_024 && this.#head * 2 > q.length) {
      q.splice(0, this.#head);
      this.#head = 0;
    }
    if (q.length - this.#head > 2 * this.#resolved + 1_024) {
      this.#queue = q.slice(this.#head).filter((item) => this.#live(item));
      this.#head = 0;
    }
  }
}
