// What a ledger look's end (the core's driver, src/ledger/look.rs) is answered as: `begin`'s admission, or — a
// status look — the status tool's answer. A mapping of names; the end itself is the core's.
import {
  LOOK_END_CONFLICT, LOOK_END_EXECUTE, LOOK_END_IN_PROGRESS, LOOK_END_NOT_DONE, LOOK_END_NOT_FOUND, LOOK_END_REPLAY,
  LOOK_MODE_STATUS, OPERATION_IN_PROGRESS, OPERATION_UNKNOWN,
} from '../generated/names.js';
import { decodeResult } from './result.js';

/**
 * `next`: the look's last step (`end`, with `state` or `retryAfterMs`); `text`: the result text it replays (the
 * stored one, or the one just reconciled); `claim`: the claim written last, the key's when the end is `execute`.
 */
export function lookAnswer(next, key, mode, text, claim) {
  const result = () => decodeResult(text, next.state, key.operationId);
  if (mode === LOOK_MODE_STATUS) {
    switch (next.end) {
      case LOOK_END_REPLAY: return { status: next.state, result: result() };
      case LOOK_END_IN_PROGRESS: return { status: OPERATION_IN_PROGRESS, retryAfterMs: next.retryAfterMs };
      case LOOK_END_NOT_FOUND:
      case LOOK_END_NOT_DONE: return { status: next.end };
      default: return { status: OPERATION_UNKNOWN };
    }
  }
  switch (next.end) {
    case LOOK_END_REPLAY: return { action: 'replay', state: next.state, result: result() };
    case LOOK_END_IN_PROGRESS: return { action: 'in_progress', retryAfterMs: next.retryAfterMs };
    case LOOK_END_CONFLICT: return { action: 'conflict' };
    case LOOK_END_EXECUTE: return claim ? { action: 'execute', claim } : { action: 'unknown' };
    default: return { action: 'unknown' };
  }
}
