// The built package, imported the way a Node user imports it (by path here; by name once published).
import test from 'node:test';
import assert from 'node:assert/strict';
import { RetryEngine, newOperationId, revisionFor } from '../../pkg/node.js';

const t0 = 1_700_000_000_000;

test('an unsafe tool whose response was lost stops as unknown, with no retry', () => {
  const engine = new RetryEngine(undefined, { seed: 1 });
  const call = engine.begin(t0);
  assert.equal(engine.admit(call, t0).admitted, true);
  const step = engine.record(call, { kind: 'network', sent: 'maybe' }, 'unsafe', t0 + 10);
  assert.equal(step.classification.delivery, 'unknown');
  assert.deepEqual(step.decision, { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' });
});

test('a read-only tool is retried after a jittered delay within the policy', () => {
  const engine = new RetryEngine({ baseDelayMs: 100, maxDelayMs: 1000 }, { seed: 2 });
  const call = engine.begin(t0);
  engine.admit(call, t0);
  const { decision } = engine.record(call, { kind: 'timeout' }, 'read_only', t0 + 10);
  assert.equal(decision.action, 'retry');
  assert.ok(decision.delayMs >= 0 && decision.delayMs <= 100, `delay ${decision.delayMs}`);
});

test('the same seed gives the same delays; another seed other delays', () => {
  const delays = (seed) => {
    const engine = new RetryEngine({ maxAttempts: 6, budget: false, breaker: false }, { seed });
    const call = engine.begin(t0);
    const out = [];
    for (let i = 0; i < 5; i++) {
      engine.admit(call, t0);
      out.push(engine.record(call, { kind: 'http', status: 503 }, 'unsafe', t0).decision.delayMs);
    }
    return out;
  };
  assert.deepEqual(delays(42), delays(42));
  assert.notDeepEqual(delays(42), delays(43));
});

test('bad policy values throw typed errors naming the field', () => {
  const cases = [
    [{ maxAttempts: NaN }, RangeError, 'not_finite', 'maxAttempts'],
    [{ maxAttempts: 0 }, RangeError, 'too_small', 'maxAttempts'],
    [{ baseDelayMs: -1 }, RangeError, 'negative', 'baseDelayMs'],
    [{ maxDelayMs: Infinity }, RangeError, 'not_finite', 'maxDelayMs'],
    [{ baseDelayMs: 5000, maxDelayMs: 10 }, RangeError, 'base_exceeds_cap', 'baseDelayMs'],
    [{ maxAttempts: '3' }, TypeError, 'invalid_type', 'maxAttempts'],
    [{ maxAtempts: 3 }, TypeError, 'unknown_option', 'maxAtempts'],
    [{ budget: { capacity: 1e300 } }, RangeError, 'too_large', 'budget.capacity'],
    [{ breaker: 'off' }, TypeError, 'invalid_type', 'breaker'],
    [{ jitter: 'fast' }, RangeError, 'invalid_value', 'jitter'],
    [[], TypeError, 'invalid_type', 'policy'],
  ];
  for (const [policy, type, code, field] of cases) {
    assert.throws(() => new RetryEngine(policy), (e) => e instanceof type && e.code === code && e.field === field,
      JSON.stringify(policy));
  }
});

test('operation ids are UUID v4 and distinct', () => {
  const ids = new Set(Array.from({ length: 1000 }, () => newOperationId()));
  assert.equal(ids.size, 1000);
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('revisions are learned from the negotiated protocol version', () => {
  assert.equal(revisionFor('2025-03-26'), '2025-06-18');
  assert.equal(revisionFor('2025-11-25'), '2025-11-25');
  assert.equal(revisionFor('2027-01-01'), '2026-07-28');
  assert.throws(() => revisionFor('latest'), (e) => e instanceof RangeError && e.code === 'invalid_value');
});

test('MemoryJournal meets the journal contract', async () => {
  const { MemoryJournal } = await import('../../pkg/node.js');
  const { runJournalContract } = await import('../support/journal-contract.mjs');
  const checks = await runJournalContract(new MemoryJournal());
  assert.ok(checks.length >= 10);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
});

test('the package resolves by name through its exports map: root, /client and /server, in Node', async () => {
  const { mkdtempSync, mkdirSync, symlinkSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { execFileSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const dir = mkdtempSync(join(tmpdir(), 'consumer-'));
  try {
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(fileURLToPath(new URL('../../pkg', import.meta.url)), join(dir, 'node_modules', 'mcp-retry-policy'), 'dir');
    writeFileSync(join(dir, 'app.mjs'), `
      import * as all from 'mcp-retry-policy';
      import * as client from 'mcp-retry-policy/client';
      import * as server from 'mcp-retry-policy/server';
      const e = new client.RetryEngine();
      console.log(JSON.stringify({
        root: ['withRetry', 'RetryEngine', 'OperationLedger', 'withIdempotency', 'fingerprint', 'MemoryJournal', 'SqliteLedgerStore'].every((n) => n in all),
        clientOnly: 'withRetry' in client && !('OperationLedger' in client),
        serverOnly: 'OperationLedger' in server && !('withRetry' in server),
        fp: server.fingerprint({ b: 1, a: 2 }) === server.fingerprint({ a: 2, b: 1 }),
        engine: e.policy.maxAttempts,
      }));`);
    const out = JSON.parse(execFileSync(process.execPath, [join(dir, 'app.mjs')], { encoding: 'utf8' }));
    assert.deepEqual(out, { root: true, clientOnly: true, serverOnly: true, fp: true, engine: 3 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
