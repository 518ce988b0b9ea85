// RetryEngine's hedged reads (src/wasm/hedge.rs): set at construction from `policy.hedgeAfterMs` and
// `policy.maxHedges`, asked per copy, told when a copy ended. Every rule (which safeties, the per-call cap,
// the deadline, the breaker, the shared retry budget, the concurrency cap) is the core's.
import * as w from '../mcp_retry_policy_client.js';
import { HEDGE_REFUSALS, HEDGE_SCALE } from '../generated/names.js';
import { HEDGE_ARGS, bool, failure, number, ok } from './engine-read.js';
import { safetyCode } from './engine-codec.js';

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
  const r = ok(w.hedge(h, c, s, nowMs));
  const code = r % HEDGE_SCALE;
  return code === 0 ? { admitted: true, timeoutMs: (r - code) / HEDGE_SCALE } : { admitted: false, refusal: HEDGE_REFUSALS[code - 1] };
}

/** One hedge of `c` ended (`won`: its answer is the call's). */
export function hedgeEnd(h, c, won) {
  ok(w.hedgeEnded(h, c, bool(won, 'won')));
}

/** `{ hedgeAfterMs, maxHedges }` when hedging is on, else `undefined`. */
export function hedgingOf(h) {
  const after = ok(w.engineHedges(h, 4));
  return after === 0 ? undefined : { hedgeAfterMs: after, maxHedges: ok(w.engineHedges(h, 5)) };
}

/** `{ sent, won, requestsInFlight, hedgesInFlight }`. */
export function hedgeCountsOf(h) {
  const v = (i) => ok(w.engineHedges(h, i));
  return { sent: v(0), won: v(1), requestsInFlight: v(2), hedgesInFlight: v(3) };
}
