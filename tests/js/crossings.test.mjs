// How many times each step crosses into the wasm: one for a decision (an attempt's admission, its record —
// with or without a Retry-After —, a poll, a status answer), one to read the whole policy or the shared
// snapshot, one for each step of a ledger look (src/ledger/look.rs) and one to finish a write. Every call into either module is counted by
// wrapping the exports of each WebAssembly.Instance the package makes (before the package is imported), so a
// step that starts asking twice — a second call for a field, a read-back per record number — goes red here.
import test from 'node:test';
import assert from 'node:assert/strict';

const counts = new Map();
const Instance = WebAssembly.Instance;
WebAssembly.Instance = function CountingInstance(module, imports) {
  const real = new Instance(module, imports);
  const exports = {};
  for (const [name, v] of Object.entries(real.exports)) {
    exports[name] = typeof v === 'function' && !name.startsWith('__')
      ? (...args) => {
        counts.set(name, (counts.get(name) ?? 0) + 1);
        return v(...args);
      }
      : v;
  }
  return { exports };
};
const { RetryEngine, OperationLedger, MemoryLedgerStore } = await import('../../pkg/node.js');
WebAssembly.Instance = Instance;

/** The exports `f` called, by name and count. */
async function crossings(f) {
  counts.clear();
  await f();
  return Object.fromEntries([...counts].sort());
}

test('an attempt crosses once to be admitted and once to be recorded, with or without Retry-After', async () => {
  const engine = new RetryEngine({ maxAttempts: 5 }, { seed: 7 });
  const warm = engine.begin(0); // the out slots' view is made once, on the first answer read
  engine.admit(warm, 0);
  const call = engine.begin(0);
  assert.deepEqual(await crossings(() => engine.admit(call, 1)), { admit: 1 });
  const plain = await crossings(() => engine.record(call, { kind: 'http', status: 503 }, 'read_only', 2));
  assert.deepEqual(plain, { record: 1 });
  engine.admit(call, 3000);
  let step;
  const waited = await crossings(() => {
    step = engine.record(call, { kind: 'http', status: 503, retryAfterMs: 1500 }, 'read_only', 3001);
  });
  assert.deepEqual(waited, { record: 1 }, 'the classification\'s Retry-After comes with the step');
  assert.equal(step.classification.retryAfterMs, 1500);
  assert.ok(step.decision.delayMs >= 1500);
  assert.deepEqual(await crossings(() => engine.poll(call, { hintMs: 10 }, 3002)), { poll: 1 });
  assert.deepEqual(await crossings(() => engine.statusAnswer('succeeded', { status: 'unknown', reason: 'unsafe_after_unknown' })), { statusAnswer: 1 });
  assert.deepEqual(await crossings(() => engine.taskEnd('working')), { taskEnd: 1 });
  assert.deepEqual(await crossings(() => engine.classify({ kind: 'timeout' })), { classify: 1 });
  call.free();
  warm.free();
  engine.free();
});

test('the policy, the shared snapshot and the hedge counts are each read in one crossing', async () => {
  const engine = new RetryEngine({ hedgeAfterMs: 50 });
  let policy;
  assert.deepEqual(await crossings(() => { policy = engine.policy; }), { enginePolicy: 1 });
  assert.equal(policy.maxAttempts, 3);
  assert.equal(policy.budget.successRefill, 0.1);
  assert.equal(policy.breaker.failureRatio, 0.5);
  assert.deepEqual(await crossings(() => engine.sharedSnapshot()), { engineSnapshot: 1 });
  assert.deepEqual(await crossings(() => engine.hedgeCounts), { engineHedges: 1 });
  assert.deepEqual(await crossings(() => engine.hedging), { engineHedges: 1 });
  engine.free();
});

test('an executed ledger write crosses once per step of its look, and once to finish', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const key = { tenant: 't', action: 'create_ticket', operationId: 'op-crossings-0001' };
  const warm = { ...key, operationId: 'op-crossings-0000' };
  const w = await ledger.begin(warm, 'fp');
  await ledger.finish(warm, w.claim, 'succeeded', { content: [] });
  let admission;
  // The look: read → write_claim, wrote → done (execute).
  assert.deepEqual(await crossings(async () => { admission = await ledger.begin(key, 'fp'); }), { ledgerLook: 2 });
  assert.equal(admission.action, 'execute');
  assert.deepEqual(await crossings(() => ledger.finish(key, admission.claim, 'succeeded', { content: [] })), { ledgerFinish: 1 });
  let replay;
  assert.deepEqual(await crossings(async () => { replay = await ledger.begin(key, 'fp'); }), { ledgerLook: 1 });
  assert.equal(replay.action, 'replay');
});

test('a hedged attempt no copy answered: which copy stands is one crossing per copy after the first, and the revision', async () => {
  const { standingCopy } = await import('../../pkg/client/engine-hedge.js');
  const engine = new RetryEngine({ hedgeAfterMs: 50 });
  const copies = [{ kind: 'network', sent: 'maybe' }, { kind: 'network', sent: 'no' }];
  standingCopy(engine, copies); // warm
  let standing;
  assert.deepEqual(await crossings(() => { standing = standingCopy(engine, copies); }), { engineRevision: 1, hedgeCopyStands: 1 });
  assert.equal(standing, 0, 'the copy that may have been sent stands');
  engine.free();
});
