// RetryEngine#next: the core's call driver (src/retry/drive.rs, exported by src/wasm/drive.rs) asked what a
// call does next, given what happened. The sequence — admit, send, record, wait, gather input, follow a
// created task, stop — is the core's; this reads `happened` and the answer through the generated names and
// slots.
import {
  DRIVE_NEXTS, HAPPENINGS, MAX_DURATION_MS, HAPPENED_INPUT_UNANSWERED, HAPPENED_SENT, HAPPENED_TASK_CREATED, HAPPENED_TASK_LOOKED,
  HAPPENED_TASK_RESULT, NEXT_DONE, NEXT_GATHER_INPUT, NEXT_POLL_TASK, NEXT_SEND, NEXT_WAIT, RECOVERS, TASK_STATUSES,
} from '../generated/names.js';
import { O_HELD, O_NEXT, O_RECOVER, O_STEPPED, O_TASK_STATUS, O_TIMEOUT_MS, readAdmitted, readClassification, readRetry } from '../generated/seam.js';
import { rangeError, typeError, typeName } from '../errors.js';
import * as w from '../mcp_retry_policy_client.js';
import { TASK_CODES, bool, code, codes, fields, number, ok, ours, required } from './engine-read.js';
import { A, B, C, D, K, breakerOf, decision, encode, out, safetyCode } from './engine-codec.js';

const HAPPENED_CODES = codes(HAPPENINGS);
const KEYS = ['kind', 'outcome', 'timedOut', 'handlerMissing', 'task'];
const plain = (c) => ({ code: c, outcome: undefined, timedOut: false, handlerMissing: false, task: undefined });
const CARRIES_OUTCOME = [HAPPENED_SENT, HAPPENED_TASK_RESULT];
const CARRIES_TASK = [HAPPENED_TASK_CREATED, HAPPENED_TASK_LOOKED];

/** A task as the server showed it: `{ status, pollInterval? }` → `[statusCode, interval | undefined]`. */
function readTask(task, at) {
  if (task === null || typeof task !== 'object' || Array.isArray(task)) {
    throw typeError(at, `${at} must be { status, pollInterval? }, got ${typeName(task)}`);
  }
  const got = {};
  fields(task, at, ['status', 'pollInterval'], (key, v) => {
    got[key] = v;
  });
  const status = code(required(got.status, `${at}.status`, TASK_STATUSES), `${at}.status`, TASK_CODES, TASK_STATUSES);
  const interval = got.pollInterval;
  if (interval !== undefined && !(number(interval, `${at}.pollInterval`) >= 0 && interval <= MAX_DURATION_MS)) {
    throw rangeError(`${at}.pollInterval`, `${at}.pollInterval must be a number of milliseconds from 0 to ${MAX_DURATION_MS}, got ${interval}`);
  }
  return [status, interval];
}

/**
 * Reads `happened` — one of `HAPPENINGS` (a name, or `{ kind }`), `{ kind: 'sent' | 'task_result', outcome }`,
 * `{ kind: 'task_created' | 'task_looked', task: { status, pollInterval? } }` or `{ kind: 'input_unanswered',
 * timedOut?, handlerMissing? }` — into `{ code, outcome, timedOut, handlerMissing, task }`, or throws the typed
 * error naming the field. Each field is read once.
 */
export function readHappened(happened) {
  if (typeof happened === 'string') {
    if (CARRIES_OUTCOME.includes(happened)) throw typeError('happened.outcome', `a "${happened}" happening carries its outcome: { kind: "${happened}", outcome }`, 'missing');
    if (CARRIES_TASK.includes(happened)) throw typeError('happened.task', `a "${happened}" happening carries the task: { kind: "${happened}", task: { status } }`, 'missing');
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
    if (CARRIES_OUTCOME.includes(kind)) {
      if (got.outcome === undefined) throw typeError('happened.outcome', `a "${kind}" happening carries its outcome`, 'missing');
      read.outcome = got.outcome;
    } else if (got.outcome !== undefined) {
      throw typeError('happened.outcome', `happened.outcome belongs to a "sent" or "task_result" happening, not "${kind}"`, 'unknown_option');
    }
    at = 'happened.task';
    if (CARRIES_TASK.includes(kind)) {
      if (got.task === undefined) throw typeError(at, `a "${kind}" happening carries the task: { status, pollInterval? }`, 'missing');
      read.task = readTask(got.task, at);
    } else if (got.task !== undefined) {
      throw typeError(at, `happened.task belongs to a "task_created" or "task_looked" happening, not "${kind}"`, 'unknown_option');
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
  const task = read.task;
  let a = sent ? A : read.timedOut ? 1 : 0;
  let b = sent ? B : read.handlerMissing ? 1 : 0;
  let c2 = sent ? C : 0;
  if (task) [a, b, c2] = [task[0], task[1] === undefined ? 0 : 1, task[1] ?? 0];
  ok(w.next(h, c, read.code, sent ? K : 0, a, b, c2, sent ? D : 0, s, nowMs, room === undefined ? 0 : 1, room ?? 0));
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
  } else if (next === NEXT_WAIT) {
    answer = { next, held: o[O_HELD] === 1, decision: readRetry(o) };
  } else if (next === NEXT_POLL_TASK) {
    answer = { next, status: TASK_STATUSES[o[O_TASK_STATUS] | 0], decision: readRetry(o) };
  } else {
    answer = { next, timeoutMs: o[O_TIMEOUT_MS] }; // look_at_task, fetch_task_result, cancel_task
  }
  if (o[O_STEPPED] === 1) answer.step = { classification: readClassification(o), decision: decision(o), breaker: breakerOf(o) };
  return answer;
}
