// RetryEngine's hedged reads (src/wasm/hedge.rs): set at construction from `policy.hedgeAfterMs` and
// `policy.maxHedges`, asked per copy, told when a copy ended. Every rule (which safeties, the per-call cap,
// the deadline, the breaker, the shared retry budget, the concurrency cap) is the core's.
import * as w from '../mcp_retry_policy_client.js';
import { HEDGE_REFUSALS } from '../generated/names.js';
import { O_HEDGE_AFTER_MS, O_MAX_HEDGES, O_REFUSAL, O_TIMEOUT_MS, readHedgeCounts } from '../generated/seam.js';
import { HEDGE_ARGS, bool, failure, number, ok } from './engine-read.js';
import { out, safetyCode } from './engine-codec.js';

/** Sets the engine `h`'s hedging from what readPolicy read; the typed error (naming the field) if refused. */
export function setHedging(h) {
  const r = w.engineHedging(h, HEDGE_ARGS[0], HEDGE_ARGS[1], HEDGE_ARGS[2]);
  return r < 0 ? failure(r) : undefined;
}

/**
 * Asks to send a hedge of `c`'s attempt in flight: `{ admitted: true, timeoutMs }`, or `{ admitted: false,
 * refusal }` (one of `HEDGE_REFUSALS`).
 */
export function hedgeStep(h, c, safety, nowMs) {
  const s = safetyCode(safety);
  number(nowMs, 'nowMs');
  ok(w.hedge(h, c, s, nowMs));
  const o = out();
  return o[O_REFUSAL] >= 0 ? { admitted: false, refusal: HEDGE_REFUSALS[o[O_REFUSAL] | 0] } : { admitted: true, timeoutMs: o[O_TIMEOUT_MS] };
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
