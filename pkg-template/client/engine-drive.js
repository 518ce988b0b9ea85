// RetryEngine#next: the core's call driver (src/retry/drive.rs, exported by src/wasm/drive.rs) asked what a
// call does next, given what happened. The sequence — admit, send, record, wait, gather input, stop — is the
// core's; this reads `happened` and the answer through the generated names and slots.
import { DRIVE_NEXTS, HAPPENINGS, HAPPENED_INPUT_UNANSWERED, HAPPENED_SENT, NEXT_DONE, NEXT_GATHER_INPUT, NEXT_SEND, RECOVERS } from '../generated/names.js';
import { O_HELD, O_NEXT, O_RECOVER, O_STEPPED, readAdmitted, readClassification, readRetry } from '../generated/seam.js';
import { typeError, typeName } from '../errors.js';
import * as w from '../mcp_retry_policy_client.js';
import { bool, code, codes, fields, number, ok, ours, required } from './engine-read.js';
import { A, B, C, D, K, breakerOf, decision, encode, out, safetyCode } from './engine-codec.js';

const HAPPENED_CODES = codes(HAPPENINGS);
const KEYS = ['kind', 'outcome', 'timedOut', 'handlerMissing'];
const plain = (c) => ({ code: c, outcome: undefined, timedOut: false, handlerMissing: false });

/**
 * Reads `happened` — one of `HAPPENINGS` (a name, or `{ kind }`), `{ kind: 'sent', outcome }` or `{ kind:
 * 'input_unanswered', timedOut?, handlerMissing? }` — into `{ code, outcome, timedOut, handlerMissing }`, or
 * throws the typed error naming the field. Each field is read once.
 */
export function readHappened(happened) {
  if (typeof happened === 'string') {
    if (happened === HAPPENED_SENT) throw typeError('happened.outcome', 'a "sent" happening carries its outcome: { kind: "sent", outcome }', 'missing');
    return plain(code(happened, 'happened', HAPPENED_CODES, HAPPENINGS));
  }
  let at = 'happened';
  try {
    if (happened === null || typeof happened !== 'object' || Array.isArray(happened)) {
      throw typeError('happened', `happened must be one of ${HAPPENINGS.join(', ')}, or { kind, … }, got ${typeName(happened)}`);
    }
    const got = {};
    fields(happened, 'happened', KEYS, (key, v, field) => {
      at = field;
      got[key] = v;
    });
    at = 'happened.kind';
    const read = plain(code(required(got.kind, at, HAPPENINGS), at, HAPPENED_CODES, HAPPENINGS));
    const kind = got.kind;
    if (kind === HAPPENED_SENT) {
      if (got.outcome === undefined) throw typeError('happened.outcome', 'a "sent" happening carries its outcome', 'missing');
      read.outcome = got.outcome;
    } else if (got.outcome !== undefined) {
      throw typeError('happened.outcome', `happened.outcome belongs to a "sent" happening, not "${kind}"`, 'unknown_option');
    }
    for (const key of ['timedOut', 'handlerMissing']) {
      if (got[key] === undefined) continue;
      at = `happened.${key}`;
      if (kind !== HAPPENED_INPUT_UNANSWERED) throw typeError(at, `${at} belongs to an "input_unanswered" happening, not "${kind}"`, 'unknown_option');
      read[key] = bool(got[key], at);
    }
    if (read.outcome !== undefined) encode(read.outcome); // last: its getters may run the engine again
    return read;
  } catch (e) {
    throw ours(e, at);
  }
}

/** One step of the driver for call `c` of engine `h`: `read` from readHappened (its outcome in K…D). */
export function driveStep(h, c, read, safety, nowMs, room) {
  const s = safetyCode(safety);
  number(nowMs, 'nowMs');
  const sent = read.outcome !== undefined;
  const a = sent ? A : read.timedOut ? 1 : 0;
  const b = sent ? B : read.handlerMissing ? 1 : 0;
  ok(w.next(h, c, read.code, sent ? K : 0, a, b, sent ? C : 0, sent ? D : 0, s, nowMs, room === undefined ? 0 : 1, room ?? 0));
  return readNext();
}

/** The driver's answer in the out slots: `{ next, … }`, with `step` when it recorded an attempt's outcome. */
export function readNext() {
  const o = out();
  const next = DRIVE_NEXTS[o[O_NEXT] | 0];
  let answer;
  if (next === NEXT_SEND) {
    const recover = o[O_RECOVER] >= 0 ? RECOVERS[o[O_RECOVER] | 0] : undefined;
    answer = { next, admission: readAdmitted(o), recover };
  } else if (next === NEXT_DONE) {
    answer = { next, decision: decision(o) };
  } else if (next === NEXT_GATHER_INPUT) {
    answer = { next, decision: o[O_STEPPED] === 1 ? readRetry(o) : undefined };
  } else {
    answer = { next, held: o[O_HELD] === 1, decision: readRetry(o) };
  }
  if (o[O_STEPPED] === 1) answer.step = { classification: readClassification(o), decision: decision(o), breaker: breakerOf(o) };
  return answer;
}
