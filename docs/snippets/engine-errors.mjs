// run: standalone
// engine.md: bad input throws a RangeError or TypeError with a stable `code` and the offending `field`.
import assert from 'node:assert/strict';

// ANCHOR: errors
import { RetryEngine } from 'mcp-retry-policy';

const errorOf = (policy) => { try { new RetryEngine(policy); } catch (e) { return e; } };
const nan = errorOf({ maxAttempts: NaN });  // RangeError { code: 'not_finite', field: 'maxAttempts' }
const typo = errorOf({ maxAtempts: 3 });    // TypeError  { code: 'unknown_option', field: 'maxAtempts' }
// ANCHOR_END: errors

assert.ok(nan instanceof RangeError, String(nan));
assert.deepEqual({ code: nan.code, field: nan.field }, { code: 'not_finite', field: 'maxAttempts' });
assert.ok(typo instanceof TypeError, String(typo));
assert.deepEqual({ code: typo.code, field: typo.field }, { code: 'unknown_option', field: 'maxAtempts' });
// And the module keeps working afterwards.
const engine = new RetryEngine({ maxAttempts: 3 });
assert.equal(engine.policy.maxAttempts, 3);
engine.free();
