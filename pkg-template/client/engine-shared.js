// RetryEngine's shared state (issue 20 §4; client/shared-breaker.js): the breaker's and budget's state handed
// out in one crossing, the probe question, and a snapshot taken in. Which state wins is the core's.
import * as w from '../mcp_retry_policy_client.js';
import { typeError } from '../errors.js';
import { BREAKER_STATES } from '../generated/names.js';
import { O_BUDGET_TOKENS, O_FAILURES, O_SINCE_MS, O_STATE } from '../generated/seam.js';
import { code, fields, number, ok, ours } from './engine-read.js';
import { out } from './engine-codec.js';

const BREAKER_STATE_CODES = new Map(BREAKER_STATES.map((name, c) => [name, c]));

/** The engine `h`'s `{ state, sinceMs, failures, budgetTokens }` (each absent when off). */
export function snapshotOf(h) {
  ok(w.engineSnapshot(h));
  const o = out();
  const s = o[O_STATE] >= 0 ? { state: BREAKER_STATES[o[O_STATE] | 0], sinceMs: o[O_SINCE_MS], failures: o[O_FAILURES] } : {};
  if (o[O_BUDGET_TOKENS] >= 0) s.budgetTokens = o[O_BUDGET_TOKENS];
  return s;
}

/** Whether the engine `h`'s next admission at `nowMs` would send the breaker's probe. */
export function probeDueOf(h, nowMs) {
  number(nowMs, 'nowMs');
  return ok(w.engineProbeDue(h, nowMs)) === 1;
}

/**
 * Adopts `snapshot` into the engine `h`; returns its breaker's state. `nowMs` (optional): the engine's now, so that a
 * snapshot's time from the future is taken as now (the core's `BreakerSnapshot::no_later_than`).
 */
export function adopt(h, snapshot, nowMs) {
  let state;
  let since;
  let tokens;
  let failures;
  let at = 'snapshot';
  try {
    fields(snapshot, 'snapshot', ['state', 'sinceMs', 'failures', 'budgetTokens'], (key, v, field) => {
      at = field;
      if (v === undefined) return;
      if (key === 'state') state = code(v, field, BREAKER_STATE_CODES, BREAKER_STATES);
      else if (key === 'sinceMs') since = number(v, field);
      else if (key === 'failures') failures = number(v, field);
      else tokens = number(v, field);
    });
    at = 'snapshot';
    if ((state === undefined) !== (since === undefined)) {
      const f = state === undefined ? 'snapshot.state' : 'snapshot.sinceMs';
      throw typeError(f, `${f} is required with ${state === undefined ? 'snapshot.sinceMs' : 'snapshot.state'}`, 'missing');
    }
  } catch (e) {
    throw ours(e, at);
  }
  if (nowMs !== undefined) number(nowMs, 'nowMs');
  const r = ok(w.engineAdopt(h, state === undefined ? 0 : 1, state ?? 0, since ?? 0, tokens === undefined ? 0 : 1, tokens ?? 0,
    failures === undefined ? 0 : 1, failures ?? 0, nowMs === undefined ? 0 : 1, nowMs ?? 0));
  return r === 0 ? undefined : BREAKER_STATES[r - 1];
}
