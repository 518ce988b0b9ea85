// A caller's code that runs while the JS layer reads its objects — a getter, a proxy trap — may call the same
// engine or rules again. The nested call must not leave its numbers under the outer call's: each read is kept
// in locals and handed to the wasm only after the last of the caller's code has run. Found by a review of the
// generated encoder (the outcome's slots were taken after the key check, which runs `ownKeys` traps) and of the
// ledger rules (a record's numbers were written while its getters still ran).
import test from 'node:test';
import assert from 'node:assert/strict';
import { RetryEngine, LedgerRules } from '../../pkg/node.js';

test('an outcome whose proxy trap classifies another outcome keeps its own reading', () => {
  const e = new RetryEngine({}, { seed: 1 });
  const trap = (target) => new Proxy(target, { ownKeys(t) { e.classify({ kind: 'timeout' }); return Reflect.ownKeys(t); } });
  const maybe = trap({ kind: 'network', sent: 'maybe' });
  assert.equal(e.classify(maybe).delivery, 'unknown', 'a maybe-sent request stays unknown');
  const c = e.begin(0);
  e.admit(c, 0);
  const d = e.record(c, maybe, 'unsafe', 1).decision;
  assert.deepEqual(d, { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' }, 'an unsafe tool is not re-sent');
  const c2 = e.begin(0);
  e.admit(c2, 0);
  const refused = trap({ kind: 'result', isError: true, resultType: 'complete' });
  assert.equal(e.record(c2, refused, 'unsafe', 1).decision.status, 'tool_error', 'a tool error stays a tool error');
  c.free();
  c2.free();
  e.free();
});

test("a record whose getter asks the rules about another record keeps its own numbers", () => {
  const r = new LedgerRules({ ttlMs: 10_000, leaseMs: 1_000 });
  const claim = r.claim(undefined, 'f', 0); // pending, its lease until 1000
  const done = r.finish(claim, 'succeeded', 5);
  const sneaky = {
    ...claim,
    get leaseUntilMs() {
      r.admit(done, 'f', 10); // a nested read of a succeeded record
      return claim.leaseUntilMs;
    },
  };
  assert.deepEqual(r.admit(sneaky, 'f', 10).action, 'in_progress', 'a live claim stays in progress, never a replay');
});

test('a policy or options getter that builds another engine does not hand that one\'s policy to this one', () => {
  // Before: the policy was read straight into the module's argument array, so the nested engine's read
  // overwrote it — maxAttempts 2, no breaker, no hedging.
  const viaOptions = new RetryEngine({ maxAttempts: 7, hedgeAfterMs: 100 }, {
    get seed() {
      new RetryEngine({ maxAttempts: 2, breaker: false }).free();
      return 1;
    },
  });
  assert.equal(viaOptions.policy.maxAttempts, 7);
  assert.notEqual(viaOptions.breakerState, undefined, 'the breaker is on');
  assert.equal(viaOptions.hedging?.hedgeAfterMs, 100);
  const viaPolicy = new RetryEngine({
    get maxAttempts() {
      new RetryEngine({ totalTimeoutMs: 1234, budget: false }).free();
      return 4;
    },
  });
  assert.equal(viaPolicy.policy.maxAttempts, 4);
  assert.notEqual(viaPolicy.policy.totalTimeoutMs, 1234, 'no field of the nested policy leaks in');
  assert.notEqual(viaPolicy.budgetTokens, undefined, 'the budget is on');
  viaOptions.free();
  viaPolicy.free();
});
