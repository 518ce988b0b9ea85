// RetryEngine#statusNext: the core's status driver (src/retry/resolve.rs, exported by src/wasm/drive.rs) asked
// what a look at an open end does next — ask the status tool, wait on `in_progress`, or end by what the answer
// makes of the call. The sequence and every end are the core's; this reads `happened`, the options of the first
// step and the answer through the generated names and slots.
import {
  HEARD_ANSWERED, OPERATION_STATUSES, RESOLVE_DONE, RESOLVE_NEXTS, RESOLVE_WAIT, STATUSES, STATUS_HEARD,
} from '../generated/names.js';
import { O_RESOLVE_NEXT, readRetry } from '../generated/seam.js';
import { typeError, typeName } from '../errors.js';
import * as w from '../mcp_retry_policy_client.js';
import { OPERATION_CODES, code, codes, fields, number, ok, ours, required } from './engine-read.js';
import { decision, out } from './engine-codec.js';
import { readBefore } from './engine-ends.js';

const HEARD_CODES = codes(STATUS_HEARD);

/**
 * `happened` — `'start'`, `'waited'`, `'cancelled'` or `{ kind: 'answered', answer?, retryAfterMs? }` (`answer`
 * one of `OPERATION_STATUSES`; none: no usable answer) — into `[heard, answer, hasRetryAfter, retryAfter]`.
 */
function readHeard(happened) {
  if (typeof happened === 'string') {
    if (happened === HEARD_ANSWERED) return [HEARD_CODES.get(happened), OPERATION_STATUSES.length, 0, 0];
    return [code(happened, 'happened', HEARD_CODES, STATUS_HEARD), 0, 0, 0];
  }
  const got = {};
  let at = 'happened';
  try {
    if (happened === null || typeof happened !== 'object' || Array.isArray(happened)) {
      throw typeError('happened', `happened must be one of ${STATUS_HEARD.join(', ')}, or { kind, … }, got ${typeName(happened)}`);
    }
    fields(happened, 'happened', ['kind', 'answer', 'retryAfterMs'], (key, v, field) => {
      at = field;
      got[key] = v;
    });
    at = 'happened.kind';
    const heard = code(required(got.kind, at, STATUS_HEARD), at, HEARD_CODES, STATUS_HEARD);
    for (const key of ['answer', 'retryAfterMs']) {
      if (got[key] !== undefined && got.kind !== HEARD_ANSWERED) {
        throw typeError(`happened.${key}`, `happened.${key} belongs to an "answered" happening, not "${got.kind}"`, 'unknown_option');
      }
    }
    at = 'happened.answer';
    const answer = got.answer === undefined ? OPERATION_STATUSES.length : code(got.answer, at, OPERATION_CODES, OPERATION_STATUSES);
    at = 'happened.retryAfterMs';
    const hint = got.retryAfterMs === undefined ? undefined : number(got.retryAfterMs, at);
    return [heard, answer, hint === undefined ? 0 : 1, hint ?? 0];
  } catch (e) {
    throw ours(e, at);
  }
}

/** The first step's options: `{ before?: { status, reason }, deadlineMs, subrequests? }` → numbers. */
function readOptions(options) {
  let [s, r, deadline, room] = [STATUSES.length, 0, undefined, undefined];
  let at = 'options';
  try {
    fields(options, 'options', ['before', 'deadlineMs', 'subrequests'], (key, v, field) => {
      at = field;
      if (key === 'deadlineMs') deadline = number(required(v, field, 'when the look must be over, in ms'), field);
      else if (key === 'subrequests' && v !== undefined) room = number(v, field);
      else if (key === 'before') [s, r] = readBefore(v, field);
    });
    if (options === undefined) required(undefined, 'options.deadlineMs', 'when the look must be over, in ms');
  } catch (e) {
    throw ours(e, at);
  }
  return [s, r, deadline, room];
}

/** One step of the status driver for look `c` of engine `h`: the answer `{ next, decision? }`. */
export function statusStep(h, c, happened, nowMs, options) {
  const heard = readHeard(happened);
  const [s, r, deadline, room] = readOptions(options);
  number(nowMs, 'nowMs');
  ok(w.statusNext(h, c, heard[0], heard[1], heard[2], heard[3], s, r, deadline, nowMs, room === undefined ? 0 : 1, room ?? 0));
  const o = out();
  const next = RESOLVE_NEXTS[o[O_RESOLVE_NEXT] | 0];
  if (next === RESOLVE_WAIT) return { next, decision: readRetry(o) };
  if (next === RESOLVE_DONE) return { next, decision: decision(o) };
  return { next }; // ask, unchanged
}
