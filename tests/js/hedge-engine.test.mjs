// RetryEngine's hedged reads at the boundary: the options refused by name, off by default, the engine's
// answers (which safeties, the per-call cap, the shared budget), and the in-flight counts balanced.
import test from 'node:test';
import assert from 'node:assert/strict';
import { RetryEngine } from '../../pkg/node.js';

test('hedgeAfterMs / maxHedges: off by default, refused by name with a stable code', () => {
  assert.equal(new RetryEngine().hedging, undefined);
  assert.equal(new RetryEngine({ maxHedges: 3 }).hedging, undefined, 'maxHedges alone turns nothing on');
  assert.deepEqual(new RetryEngine({ hedgeAfterMs: 50 }).hedging, { hedgeAfterMs: 50, maxHedges: 1 });
  assert.deepEqual(new RetryEngine({ hedgeAfterMs: 50, maxHedges: 10 }).hedging, { hedgeAfterMs: 50, maxHedges: 10 });
  assert.equal('hedgeAfterMs' in new RetryEngine({ hedgeAfterMs: 50 }).policy, false, 'policy keeps its shape');
  const cases = [
    [{ hedgeAfterMs: 0 }, RangeError, 'too_small', 'hedgeAfterMs'],
    [{ hedgeAfterMs: 86_400_001 }, RangeError, 'too_large', 'hedgeAfterMs'],
    [{ hedgeAfterMs: 1.5 }, RangeError, 'not_integer', 'hedgeAfterMs'],
    [{ hedgeAfterMs: -1 }, RangeError, 'negative', 'hedgeAfterMs'],
    [{ hedgeAfterMs: NaN }, RangeError, 'not_finite', 'hedgeAfterMs'],
    [{ hedgeAfterMs: '5' }, TypeError, 'invalid_type', 'hedgeAfterMs'],
    [{ hedgeAfterMs: 5, maxHedges: 0 }, RangeError, 'too_small', 'maxHedges'],
    [{ maxHedges: 11 }, RangeError, 'too_large', 'maxHedges'],
    [{ hedgeAfterMs: 5, maxHedges: true }, TypeError, 'invalid_type', 'maxHedges'],
  ];
  for (const [policy, type, code, field] of cases) {
    assert.throws(() => new RetryEngine(policy), (e) => e instanceof type && e.code === code && e.field === field, JSON.stringify(policy));
  }
});

test('hedge: read_only and idempotent only, within maxHedges, paid from the retry budget; counts balance', () => {
  // No refill with time: the tokens are counted exactly.
  const e = new RetryEngine({ hedgeAfterMs: 50, maxHedges: 2, budget: { refillPerSecond: 0 } });
  const c = e.begin(0);
  assert.deepEqual(e.hedge(c, 'read_only', 10), { admitted: false, refusal: 'not_in_flight' });
  e.admit(c, 0);
  for (const s of ['keyed', 'unsafe']) assert.deepEqual(e.hedge(c, s, 60), { admitted: false, refusal: 'safety' });
  assert.deepEqual(e.hedge(c, 'read_only', 60), { admitted: true, timeoutMs: 60_000 });
  assert.deepEqual(e.hedge(c, 'idempotent', 70), { admitted: true, timeoutMs: 60_000 });
  assert.deepEqual(e.hedge(c, 'read_only', 80), { admitted: false, refusal: 'max_hedges' });
  assert.equal(e.budgetTokens, 8, 'each hedge spent a retry token');
  assert.deepEqual(e.hedgeCounts, { sent: 2, won: 0, requestsInFlight: 3, hedgesInFlight: 2 });
  e.hedgeEnded(c, true);
  e.hedgeEnded(c, false);
  e.hedgeEnded(c, false); // none left: no change
  e.record(c, { kind: 'result' }, 'read_only', 90);
  assert.deepEqual(e.hedgeCounts, { sent: 2, won: 1, requestsInFlight: 0, hedgesInFlight: 0 });
  assert.throws(() => e.hedge(c, 'sometimes', 1), (x) => x instanceof RangeError && x.field === 'safety');
  assert.throws(() => e.hedgeEnded(c, 'yes'), (x) => x instanceof TypeError && x.field === 'won');
  const off = new RetryEngine();
  const d = off.begin(0);
  off.admit(d, 0);
  assert.deepEqual(off.hedge(d, 'read_only', 100), { admitted: false, refusal: 'off' });
});

test('hedge: where subrequests are counted, the room given at admission must pay the hedge (2: its request and a cancellation)', () => {
  const e = new RetryEngine({ hedgeAfterMs: 50, maxHedges: 2 });
  // The attempt takes 2 of its room (its request, and the cancellation if it times out); the hedge 2 more.
  for (const [room, refusal] of [[2, 'subrequest_budget'], [3, 'subrequest_budget'], [4, undefined]]) {
    const c = e.begin(0);
    e.admit(c, 0, { subrequests: room });
    assert.equal(e.hedge(c, 'read_only', 60).refusal, refusal, `room ${room}`);
    e.hedgeEnded(c, false);
    e.record(c, { kind: 'result' }, 'read_only', 90);
    c.free();
  }
  assert.deepEqual(e.hedgeCounts, { sent: 1, won: 0, requestsInFlight: 0, hedgesInFlight: 0 });
  // The room now, when another call has spent from the same budget since this one was admitted: the smaller pays.
  const c = e.begin(0);
  e.admit(c, 0, { subrequests: 10 });
  assert.equal(e.hedge(c, 'read_only', 60, { subrequests: 1 }).refusal, 'subrequest_budget', 'another call spent it meanwhile');
  assert.equal(e.hedge(c, 'read_only', 61, { subrequests: 5 }).admitted, true);
  assert.throws(() => e.hedge(c, 'read_only', 62, { subrequests: -1 }), (err) => err instanceof RangeError && err.field === 'options.subrequests');
  assert.throws(() => e.hedge(c, 'read_only', 62, { rooms: 1 }), (err) => err instanceof TypeError && err.code === 'unknown_option');
  c.free();
  e.free();
});
