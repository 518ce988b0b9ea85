// RetryEngine's hedged reads (src/wasm/hedge.rs): set at construction from `policy.hedgeAfterMs` and
// `policy.maxHedges`, asked per copy, told when a copy ended. Every rule (which safeties, the per-call cap,
// the deadline, the breaker, the shared retry budget, the concurrency cap) is the core's.
import * as w from '../mcp_retry_policy_client.js';
import { HEDGE_REFUSALS } from '../generated/names.js';
import { O_HEDGE_AFTER_MS, O_MAX_HEDGES, O_REFUSAL, O_TIMEOUT_MS, readHedgeCounts } from '../generated/seam.js';
import { HEDGE_ARGS, REVISION_CODES, bool, failure, number, ok } from './engine-read.js';
import { A, B, C, D, K, encode, out, safetyCode } from './engine-codec.js';

/** Sets the engine `h`'s hedging from what readPolicy read; the typed error (naming the field) if refused. */
export function setHedging(h) {
  const r = w.engineHedging(h, HEDGE_ARGS[0], HEDGE_ARGS[1], HEDGE_ARGS[2]);
  return r < 0 ? failure(r) : undefined;
}

/**
 * Asks to send a hedge of `c`'s attempt in flight: `{ admitted: true, timeoutMs }`, or `{ admitted: false,
 * refusal }` (one of `HEDGE_REFUSALS`). `room`: the outgoing requests the call may still make, if counted
 * (without it, the engine still bounds the hedge by the room it was given at the attempt's admission).
 */
export function hedgeStep(h, c, safety, nowMs, room) {
  const s = safetyCode(safety);
  number(nowMs, 'nowMs');
  if (room !== undefined) number(room, 'options.subrequests');
  ok(room === undefined ? w.hedge(h, c, s, nowMs, 0, 0) : w.hedge(h, c, s, nowMs, 1, room));
  const o = out();
  return o[O_REFUSAL] >= 0 ? { admitted: false, refusal: HEDGE_REFUSALS[o[O_REFUSAL] | 0] } : { admitted: true, timeoutMs: o[O_TIMEOUT_MS] };
}

/**
 * A hedged attempt in which no copy answered: the index, in `outcomes` (the copies' outcomes in the order
 * they ended), of the one that stands for the attempt — the engine's answer (`hedgeCopyStands`, under
 * `engine`'s revision), one crossing per copy after the first, and one for the revision.
 */
export function standingCopy(engine, outcomes) {
  const revision = REVISION_CODES.get(engine.revision);
  let standing = 0;
  for (let i = 1; i < outcomes.length; i++) {
    encode(outcomes[standing]);
    const k = K, a = A, b = B, c = C, d = D;
    encode(outcomes[i]);
    if (ok(w.hedgeCopyStands(revision, k, a, b, c, d, K, A, B, C, D)) === 1) standing = i;
  }
  return standing;
}

/** One hedge of `c` ended (`won`: its answer is the call's). */
export function hedgeEnd(h, c, won) {
  ok(w.hedgeEnded(h, c, bool(won, 'won')));
}

/** `{ hedgeAfterMs, maxHedges }` when hedging is on, else `undefined`. */
export function hedgingOf(h) {
  ok(w.engineHedges(h));
  const o = out();
  return o[O_HEDGE_AFTER_MS] >= 0 ? { hedgeAfterMs: o[O_HEDGE_AFTER_MS], maxHedges: o[O_MAX_HEDGES] } : undefined;
}

/** `{ sent, won, requestsInFlight, hedgesInFlight }`. */
export function hedgeCountsOf(h) {
  ok(w.engineHedges(h));
  return readHedgeCounts(out());
}
