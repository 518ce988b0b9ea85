// LedgerRules: the ledger's transitions, decided by the server wasm's numbers-only rule exports
// (src/wasm/ledger.rs, over the core's src/ledger/record/). Here: the JS-shaped reading (the options
// object, a record's fields and their types, state names → codes) and the typed errors; there: every range
// check and every decision. A record crosses as its state code and four numbers; its fingerprint stays in JS
// (the rules are told only whether two are equal, and a new record carries the fingerprint it was made for).
// A rule's answer is its return and the server's out slots, read in place through the readers generated
// from src/seam/ (../generated/seam.js): one crossing a rule.
// The rule exports import nothing, so no JS runs inside them.
import {
  initSync, isValidOperationId as rawIsValidOperationId, ledgerAdmit, ledgerClaim, ledgerConfig, ledgerDefault,
  ledgerFinish, ledgerGiveUpAt, ledgerKeepAlive, ledgerLook, ledgerLookup, ledgerRelease, ledgerRenew,
  ledgerHold, ledgerHoldStart,
} from '../mcp_retry_policy_server.js';
import { ok, out } from './rules-slots.js';
import { TA_LENGTH, TA_SET, TA_TAG, holdReading, holdSlots } from './hold-slots.js';
import { guardFunction, stackGuard } from '../guard.js';
import { rangeError, typeError, typeName } from '../errors.js';
import {
  ADMISSIONS, LOOKUPS, LOOK_ENDS, LOOK_END_IN_PROGRESS, LOOK_END_REPLAY, LOOK_EVENTS, LOOK_EVENT_RECONCILED, LOOK_MODES,
  LOOK_STARTS, LOOK_STEPS, LOOK_STEP_DONE, LOOK_STEP_WRITE_CLAIM, LOOK_STEP_WRITE_RECONCILED, LOOK_VERDICTS, RECORD_STATES,
  RELEASE_REFUSALS, HOLD_EVENTS, HOLD_ANSWERS, HOLD_EVENT_READ_BACK,
} from '../generated/names.js';
import {
  HOLD_WORDS, L_CODE, L_END, L_EXPECTED, L_LOOK, L_RETRY_AFTER_MS, L_STATE, RECORD_NUMBERS, readMade,
} from '../generated/seam.js';

export const STACK = stackGuard(() => initSync()); // initialized by then: initSync() returns the exports

const STATE_CODES = new Map(RECORD_STATES.map((s, i) => [s, i]));
const FINISHED = new Set(['succeeded', 'failed', 'unknown']);
const TIMES = RECORD_NUMBERS; // a record's numbers, in the order the rules take them (src/seam/)

// The last error this module threw from inside `readable` (compared by identity: a thrown Proxy runs no trap).
let own;
const mine = (e) => (own = e);

/** Reads `f` and turns anything it throws but its own errors (a getter, a proxy trap) into a typed `unreadable`. */
function readable(field, f) {
  try {
    return f();
  } catch (e) {
    if (e === own) {
      own = undefined;
      throw e;
    }
    throw typeError(field, `${field} could not be read: a getter or a proxy trap threw`, 'unreadable');
  }
}

// The record being read, as numbers: [has, state, leaseUntilMs, createdMs, expiresMs, version], and its fingerprint.
const R = [0, 0, 0, 0, 0, 0];
let fingerprintOf = '';

/** Reads a record (or, when `optional`, undefined/null for none) into R. Each field is read once. */
function readRecord(record, optional) {
  if (record === undefined || record === null) {
    if (!optional) throw typeError('record', 'record is required', 'missing');
    R[0] = 0;
    return;
  }
  readable('record', () => {
    if (typeof record !== 'object' || Array.isArray(record)) throw mine(typeError('record', `record must be an object, got ${typeName(record)}`));
    const state = record.state;
    if (typeof state !== 'string') throw mine(typeError('record.state', state === undefined ? 'record.state is required' : `record.state must be a string, got ${typeName(state)}`, state === undefined ? 'missing' : 'invalid_type'));
    const code = STATE_CODES.get(state);
    if (code === undefined) throw mine(rangeError('record.state', `record.state must be ${RECORD_STATES.join(', ')}, got "${state.slice(0, 64)}"`));
    const fp = record.fingerprint;
    if (typeof fp !== 'string') throw mine(typeError('record.fingerprint', fp === undefined ? 'record.fingerprint is required' : `record.fingerprint must be a string, got ${typeName(fp)}`, fp === undefined ? 'missing' : 'invalid_type'));
    // Read into locals and written to R only after the last read: a getter may call these rules again, and
    // a nested read must not leave its record's numbers under this one's state.
    const n = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) {
      const key = TIMES[i];
      const v = record[key];
      if (typeof v !== 'number') throw mine(typeError(`record.${key}`, v === undefined ? `record.${key} is required` : `record.${key} must be a number, got ${typeName(v)}`, v === undefined ? 'missing' : 'invalid_type'));
      n[i] = v;
    }
    R[1] = code;
    R[2] = n[0];
    R[3] = n[1];
    R[4] = n[2];
    R[5] = n[3];
    fingerprintOf = fp;
    R[0] = 1;
  });
}

function checkFingerprint(fingerprint) {
  if (typeof fingerprint !== 'string') throw typeError('fingerprint', `fingerprint must be a string, got ${typeName(fingerprint)}`);
}

function checkNow(nowMs) {
  if (typeof nowMs !== 'number') throw typeError('nowMs', `nowMs must be a number, got ${typeName(nowMs)}`);
}

/** The record the last rule made (its answer `r`, checked), with `fingerprint`. */
function made(r, fingerprint) {
  ok(r);
  return readMade(out(), fingerprint);
}

/** Throws the typed error unless `self` is live LedgerRules (set by the class's static block). */
let live;

/** The ledger's transitions with validated settings (`ttlMs`, `leaseMs`). */
export class LedgerRules {
  #ttl;
  #lease;

  /**
   * `ttlMs` (default 24 h) and `leaseMs` (default 60 s), validated; a TTL shorter than the lease is a
   * `RangeError` (`code: "ttl_below_lease"`, `field: "ttlMs"`).
   */
  constructor(options) {
    let ttl = ledgerDefault(0);
    let lease = ledgerDefault(1);
    if (options !== undefined && options !== null) {
      readable('options', () => {
        if (typeof options !== 'object' || Array.isArray(options)) throw mine(typeError('options', `options must be an object, got ${typeName(options)}`));
        for (const key of Reflect.ownKeys(options)) {
          const name = typeof key === 'symbol' ? key.toString() : key;
          if (name !== 'ttlMs' && name !== 'leaseMs') throw mine(typeError(name, `${name} is not an option of the ledger (ttlMs, leaseMs)`, 'unknown_option'));
        }
        const t = options.ttlMs;
        const l = options.leaseMs;
        if (t !== undefined) {
          if (typeof t !== 'number') throw mine(typeError('ttlMs', `ttlMs must be a number, got ${typeName(t)}`));
          ttl = t;
        }
        if (l !== undefined) {
          if (typeof l !== 'number') throw mine(typeError('leaseMs', `leaseMs must be a number, got ${typeName(l)}`));
          lease = l;
        }
      });
    }
    if (ok(ledgerConfig(ttl, lease)) === 1) {
      throw rangeError('ttlMs', `ttlMs (${ttl}) must be at least leaseMs (${lease}): a record would expire while its claim is live`, 'ttl_below_lease');
    }
    this.#ttl = Math.trunc(ttl);
    this.#lease = Math.trunc(lease);
  }

  /** What to do with a write of `fingerprint` at `nowMs`, given the stored record (or `undefined`). */
  admit(stored, fingerprint, nowMs) {
    live(this);
    readRecord(stored, true);
    checkFingerprint(fingerprint);
    checkNow(nowMs);
    const action = ADMISSIONS[ok(ledgerAdmit(R[0], R[1], R[2], R[3], R[4], R[5], R[0] === 1 && fingerprintOf === fingerprint ? 1 : 0, nowMs))];
    return action === 'in_progress' ? { action, retryAfterMs: out()[L_RETRY_AFTER_MS] } : { action };
  }

  /**
   * What a status lookup finds at `nowMs` in the stored record (or `undefined`): `{ status }`, one of
   * `not_found`, `not_done`, `in_progress` (with `retryAfterMs`), `succeeded`, `failed`, `reconcile`.
   */
  lookup(stored, nowMs) {
    live(this);
    readRecord(stored, true);
    checkNow(nowMs);
    const status = LOOKUPS[ok(ledgerLookup(R[0], R[1], R[2], R[3], R[4], R[5], nowMs))];
    return status === 'in_progress' ? { status, retryAfterMs: out()[L_RETRY_AFTER_MS] } : { status };
  }

  /**
   * A new look at a key (`mode`: `claim`, `atomic` or `status`): its code. Its first step is `read`. A write's
   * look (`claim`, `atomic`) needs the input's `fingerprint` (a string, else a `TypeError`, `field: 'fingerprint'`).
   */
  lookStart(mode, fingerprint) {
    live(this);
    const code = LOOK_MODES.indexOf(mode);
    if (code < 0) throw rangeError('mode', `mode must be one of ${LOOK_MODES.join(', ')}, got ${typeName(mode)}`);
    if (mode !== 'status') checkFingerprint(fingerprint);
    return LOOK_STARTS[code];
  }

  /**
   * One step of a look (the core's driver, src/ledger/look.rs): `look` its code; `event` what happened —
   * `read` (`arg`: whether the input fingerprints are equal), `held` (the wait to suggest, or -1 when not held),
   * `reconciled` (a `LOOK_VERDICTS` name), `wrote` (whether the write won) — and `stored`, the record read
   * last. `fingerprint`: the write's, carried by a claim. Returns `{ step, look }` and, by step, `record` and
   * `expected` (`write_claim`, `write_reconciled`: the record to write and the version it replaces, undefined
   * for an insert) or `end` (`done`; with `retryAfterMs` for `in_progress`, `state` for `replay`).
   */
  look(look, event, arg, stored, fingerprint, nowMs) {
    live(this);
    const ttl = this.#ttl;
    const lease = this.#lease;
    if (typeof look !== 'number') throw typeError('look', `look must be a look's code (a number), got ${typeName(look)}`);
    if (typeof arg !== 'number' && typeof arg !== 'boolean' && typeof arg !== 'string') {
      throw typeError('arg', `arg must be a number, a boolean or a verdict, got ${typeName(arg)}`);
    }
    readRecord(stored, true);
    const storedFingerprint = fingerprintOf;
    checkNow(nowMs);
    const e = LOOK_EVENTS.indexOf(event);
    const a = event === LOOK_EVENT_RECONCILED ? LOOK_VERDICTS.indexOf(arg) : typeof arg === 'boolean' ? +arg : typeof arg === 'number' ? arg : NaN;
    const step = LOOK_STEPS[ok(ledgerLook(look, e, a, R[0], R[1], R[2], R[3], R[4], R[5], nowMs, ttl, lease))];
    const o = out();
    const next = { step, look: o[L_LOOK] };
    if (step === LOOK_STEP_WRITE_CLAIM || step === LOOK_STEP_WRITE_RECONCILED) {
      next.record = readMade(o, step === LOOK_STEP_WRITE_CLAIM ? fingerprint : storedFingerprint);
      const v = o[L_EXPECTED];
      if (v === v) next.expected = v;
    } else if (step === LOOK_STEP_DONE) {
      next.end = LOOK_ENDS[o[L_END]];
      if (next.end === LOOK_END_IN_PROGRESS) next.retryAfterMs = o[L_RETRY_AFTER_MS];
      if (next.end === LOOK_END_REPLAY) next.state = RECORD_STATES[o[L_STATE]];
    }
    return next;
  }

  /** The pending record that claims a key for `fingerprint`, replacing `previous` (expired or reconciled) if given. */
  claim(previous, fingerprint, nowMs) {
    live(this);
    const ttl = this.#ttl; // read before the caller's getters run (one may free these rules)
    const lease = this.#lease;
    readRecord(previous, true);
    checkFingerprint(fingerprint);
    checkNow(nowMs);
    return made(ledgerClaim(R[0], R[1], R[2], R[3], R[4], R[5], nowMs, ttl, lease), fingerprint);
  }

  /** The record after the handler finished as `state` (`succeeded`, `failed` or `unknown`). */
  finish(claimed, state, nowMs) {
    live(this);
    const ttl = this.#ttl;
    const lease = this.#lease;
    readRecord(claimed, false);
    if (!FINISHED.has(state)) {
      throw rangeError('state', `state must be succeeded, failed or unknown, got ${typeof state === 'string' ? `"${state.slice(0, 64)}"` : typeName(state)}`);
    }
    checkNow(nowMs);
    return made(ledgerFinish(R[1], R[2], R[3], R[4], R[5], STATE_CODES.get(state), nowMs, ttl, lease), fingerprintOf);
  }

  /**
   * The claim renewed at `nowMs` by the run that holds it (a heartbeat): a new lease from now and the next
   * version; the record must be `pending` (else a typed `record.state` error).
   */
  renew(claimed, nowMs) {
    live(this);
    const ttl = this.#ttl;
    const lease = this.#lease;
    readRecord(claimed, false);
    checkNow(nowMs);
    return made(ledgerRenew(R[1], R[2], R[3], R[4], R[5], nowMs, ttl, lease), fingerprintOf);
  }

  /** How often a running claim is renewed, and how long before its lease ends its owner gives up (ms). */
  get keepAliveMs() {
    live(this);
    return ok(ledgerKeepAlive(this.#ttl, this.#lease));
  }

  /**
   * When the owner of `claimed` (a pending claim it holds) gives up on it, on the clock the claim was written
   * by: a third of the lease before it ends. Past it the run must not commit (its claim's signal aborts).
   */
  giveUpAt(claimed) {
    live(this);
    readRecord(claimed, false);
    return ok(ledgerGiveUpAt(R[2], this.#ttl, this.#lease));
  }

  /**
   * The hold of `claimed` (the core's driver, src/ledger/hold): the claim just written at `nowMs` (the
   * ledger's clock) = `monoMs` (the monotonic one, `performance.now()`). Returns its state — `HOLD_WORDS`
   * numbers in a Float64Array the caller keeps and hands to each `hold` step — and its first reading (see
   * `hold`).
   */
  holdStart(claimed, nowMs, monoMs) {
    live(this);
    const ttl = this.#ttl;
    const lease = this.#lease;
    readRecord(claimed, false);
    checkNow(nowMs);
    if (typeof monoMs !== 'number') throw typeError('monoMs', `monoMs must be a number, got ${typeName(monoMs)}`);
    const state = new Float64Array(HOLD_WORDS);
    const reading = holdReading(ledgerHoldStart(R[1], R[2], R[3], R[4], R[5], nowMs, monoMs, ttl, lease), state);
    return { state, reading };
  }

  /**
   * One step of a hold: `state` its numbers (updated in place), `event` a `HOLD_EVENTS` name — `timer`,
   * `renewed` and `committed` (`arg`: a `HOLD_ANSWERS` name), `look`, `stop`, `commit`, `read_back` (`arg`:
   * whether the record read back is the write) — at `nowMs` and `monoMs`. Returns `{ step, standing, timeout,
   * claimVersion, claimLeaseUntilMs, write?, tell?, leftMs? }`: the `HOLD_STEPS` name to carry out, where the
   * claim stands (a `CLAIM_STANDINGS` name), when to wake the hold (`timer`, on the monotonic clock; none:
   * undefined), the claim as last written, the step's write (`renew`, `commit`, `read_back`: `{ version,
   * leaseUntilMs, expected }`) and what operators hear (`lost`, `late` with `leftMs`).
   */
  hold(state, event, arg, nowMs, monoMs) {
    live(this);
    if (TA_TAG.call(state) !== 'Float64Array' || TA_LENGTH.call(state) !== HOLD_WORDS) {
      throw typeError('hold', `hold must be the Float64Array of ${HOLD_WORDS} numbers holdStart gave, got ${typeName(state)}`);
    }
    checkNow(nowMs);
    if (typeof monoMs !== 'number') throw typeError('monoMs', `monoMs must be a number, got ${typeName(monoMs)}`);
    const e = HOLD_EVENTS.indexOf(event);
    const a = event === HOLD_EVENT_READ_BACK ? +(arg === true) : arg === undefined ? 0 : HOLD_ANSWERS.indexOf(arg);
    TA_SET.call(holdSlots(), state);
    return holdReading(ledgerHold(e, a, nowMs, monoMs), state);
  }

  /**
   * An operator's release of an unresolved record at `nowMs`: `{ released: record }`, or
   * `{ refused: "resolved" | "already_released" }`, or `{ refused: "lease_live", retryAfterMs }`.
   */
  release(stored, nowMs) {
    live(this);
    const ttl = this.#ttl;
    const lease = this.#lease;
    readRecord(stored, false);
    checkNow(nowMs);
    const fp = fingerprintOf;
    const r = ok(ledgerRelease(R[1], R[2], R[3], R[4], R[5], nowMs, ttl, lease));
    if (r === 0) return { released: made(r, fp) };
    const o = out();
    const refused = RELEASE_REFUSALS[o[L_CODE] | 0];
    return refused === 'lease_live' ? { refused, retryAfterMs: o[L_RETRY_AFTER_MS] } : { refused };
  }

  /** The settings in force. */
  get ttlMs() {
    live(this);
    return this.#ttl;
  }

  /** The settings in force. */
  get leaseMs() {
    live(this);
    return this.#lease;
  }

  /** Ends the rules' use (they hold no wasm memory): later calls are a `freed` TypeError. */
  free() {
    live(this);
    this.#ttl = undefined;
  }

  [Symbol.dispose]() {
    LedgerRules.prototype.free.call(this);
  }

  static {
    // A method or getter called on something else (a forged, cloned or proxied object) is a typed error, and
    // on freed rules `freed`: checked by identity of the private field, which runs no code of the caller's.
    live = (self) => {
      if (self === null || typeof self !== 'object' || !(#ttl in self)) {
        throw typeError('this', `this is not a LedgerRules made by this module (got ${typeName(self)})`, 'foreign_object');
      }
      if (self.#ttl === undefined) throw typeError('this', 'this is a LedgerRules that was freed', 'freed');
    };
  }
}

/** Whether an operation id has the accepted form: 8–128 characters of `A–Z a–z 0–9 - _ . :`. */
export const isValidOperationId = guardFunction(STACK, rawIsValidOperationId);
