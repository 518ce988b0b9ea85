// run: standalone
// engine.md: the RetryEngine loop, run over scripted attempt outcomes (the engine is pure: it decides from the
// outcomes it is told and the times it is given).
import assert from 'node:assert/strict';

// ANCHOR: loop
import { RetryEngine } from 'mcp-retry-policy'; // Node: pkg/node.js when used by path

const engine = new RetryEngine({ maxAttempts: 3 });          // one per server: holds its budget and breaker
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// `tool`: the tool as tools/list gave it; `attempt(timeoutMs)`: send it once, resolve to how that ended.
async function callWithRetries(tool, attempt) {
  const safety = engine.safety(tool, { trusted: true });     // 'read_only' | 'idempotent' | 'keyed' | 'unsafe'
  const call = engine.begin(Date.now());
  try {
    for (;;) {
      const admission = engine.admit(call, Date.now());
      if (!admission.admitted) {
        if (admission.decision.action === 'stop') return admission.decision; // { action: 'stop', status, reason }
        await sleep(admission.decision.delayMs);               // held by the breaker or the budget: ask again
        continue;
      }
      const outcome = await attempt(admission.timeoutMs);      // e.g. { kind: 'http', status: 503, retryAfterMs: 1000 }
      const { decision } = engine.record(call, outcome, safety, Date.now());
      if (decision.action === 'stop') return decision;         // status: succeeded | tool_error | failed | unknown | pending
      await sleep(decision.delayMs);                           // then decision.recover, if any, and send again
    }
  } finally {
    call.free();
  }
}
// ANCHOR_END: loop

/** An attempt function that plays `outcomes` in order and notes when each attempt started. */
function scripted(outcomes) {
  const starts = [];
  const attempt = async (timeoutMs) => {
    assert.ok(timeoutMs > 0 && timeoutMs <= 60_000, `an attempt timeout: ${timeoutMs}`);
    starts.push(Date.now());
    return outcomes[starts.length - 1];
  };
  return { attempt, starts };
}
const search = { name: 'search', annotations: { readOnlyHint: true } };
const sendEmail = { name: 'send_email', annotations: { readOnlyHint: false, idempotentHint: false } };
const openTicket = { name: 'open_ticket', annotations: { readOnlyHint: false }, inputSchema: { properties: { operation_id: { type: 'string' } } } };

assert.equal(engine.safety(search, { trusted: true }), 'read_only');
assert.equal(engine.safety(openTicket, { trusted: true }), 'keyed');
assert.equal(engine.safety(sendEmail), 'unsafe');

// A read: a 503 with Retry-After (its wait honoured), a timeout, then the result.
const read = scripted([{ kind: 'http', status: 503, retryAfterMs: 40 }, { kind: 'timeout' }, { kind: 'result' }]);
assert.deepEqual(await callWithRetries(search, read.attempt), { action: 'stop', status: 'succeeded', reason: 'succeeded' });
assert.equal(read.starts.length, 3);
assert.ok(read.starts[1] - read.starts[0] >= 40, 'Retry-After is the floor of the wait');

// An unsafe write whose attempt timed out: it may have run — stop, unknown, never sent again.
const write = scripted([{ kind: 'timeout' }, { kind: 'result' }]);
const unknown = await callWithRetries(sendEmail, write.attempt);
assert.equal(unknown.status, 'unknown');
assert.equal(write.starts.length, 1);

// The same write refused at connect (nothing left the machine): sent again.
const refused = scripted([{ kind: 'network', sent: 'no' }, { kind: 'result' }]);
assert.equal((await callWithRetries(sendEmail, refused.attempt)).status, 'succeeded');
assert.equal(refused.starts.length, 2);

// A keyed write is retried after a timeout (the same operation id goes out again), up to maxAttempts.
const keyed = scripted([{ kind: 'timeout' }, { kind: 'timeout' }, { kind: 'timeout' }]);
const exhausted = await callWithRetries(openTicket, keyed.attempt);
assert.equal(exhausted.status, 'unknown');
assert.equal(keyed.starts.length, 3);

// A tool error is an answer: no retry.
const toolError = scripted([{ kind: 'result', isError: true }]);
assert.equal((await callWithRetries(search, toolError.attempt)).status, 'tool_error');
engine.free();
