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
      out.push(engine.record(call, { kind: 'http', status: 503, retryAfterMs: 0 }, 'unsafe', t0).decision.delayMs);
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

test('the hot path (packed numbers) and the wasm object reader agree on every outcome, good or bad', async () => {
  const { RetryEngine: Fast, RetryCall } = await import('../../pkg/client.node.js');
  const { RetryEngine: Raw } = await import('../../pkg/mcp_retry_policy_client.js');
  const slowRecord = Raw.prototype.record;
  const slowAdmit = Raw.prototype.admit;
  let seed = 3;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const values = [undefined, true, false, 0, 1, -1, 0.5, 503, 1e300, NaN, Infinity, 'no', 'maybe', 'task', 'in_progress', null, {}];
  const kinds = ['result', 'jsonrpc_error', 'http', 'network', 'timeout', 'stream_broken', 'aborted', 'ledger', 'teapot'];
  const fields = ['isError', 'resultType', 'code', 'status', 'retryAfterMs', 'hadSession', 'sent', 'eventIdSeen', 'retryMs', 'extra'];
  const good = [{ kind: 'http', status: 503 }, { kind: 'http', status: 503, retryAfterMs: 40 }, { kind: 'timeout' }, { kind: 'network', sent: 'maybe' },
    { kind: 'result' }, { kind: 'result', isError: true }, { kind: 'jsonrpc_error', code: -32603 }, { kind: 'ledger', status: 'in_progress', retryAfterMs: 5 }];
  const outcomeOf = () => {
    if (rnd() < 0.6) return { ...pick(good) };
    const o = { kind: pick(kinds) };
    for (const f of fields) if (rnd() < 0.3) o[f] = pick(values);
    if (o.kind === 'http' && rnd() < 0.7) o.status = pick([200, 404, 429, 500, 502, 503, 504, 42]);
    if (o.kind === 'jsonrpc_error' && rnd() < 0.7) o.code = pick([-32603, -32602, -32020, -32001, 408, 1.5]);
    return o;
  };
  const run = (record, admit, classify) => {
    const e = new Fast({ maxAttempts: 4, breaker: { consecutiveFailures: 3 } }, { seed: 11 });
    const out = [];
    let call = e.begin(0);
    for (let i = 0; i < 400; i++) {
      const o = outcomeOf();
      const safety = pick(['read_only', 'idempotent', 'keyed', 'unsafe', 'bogus']);
      try {
        out.push(classify.call(e, o));
      } catch (err) {
        out.push({ error: [err.constructor.name, err.code, err.field, err.message] });
      }
      try {
        out.push(admit.call(e, call, i * 10));
        out.push(record.call(e, call, o, safety, i * 10 + 5));
      } catch (err) {
        out.push({ error: [err.constructor.name, err.code, err.field, err.message] });
      }
      if (i % 5 === 4) call = e.begin(i * 10);
    }
    return out;
  };
  const fast = () => run(Fast.prototype.record, Fast.prototype.admit, Fast.prototype.classify);
  const slow = () => run(slowRecord, slowAdmit, Raw.prototype.classify);
  seed = 3;
  const a = fast();
  seed = 3;
  const b = slow();
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++) assert.deepStrictEqual(a[i], b[i], `step ${i}`);
  assert.ok(a.some((x) => x.error) && a.some((x) => x.decision?.action === 'retry') && a.some((x) => x.breaker), 'the run covered errors, retries and breaker changes');
  assert.ok(RetryCall);
});

test('by path: pkg/index.js is the Node entry; decide is record under its DESIGN name', async () => {
  const pkg = await import('../../pkg/index.js');
  for (const name of ['withRetry', 'RetryEngine', 'OperationLedger', 'withIdempotency', 'OutcomeUnknown', 'MemoryLedgerStore',
    'SqliteLedgerStore', 'DurableObjectLedgerStore', 'D1LedgerStore', 'MemoryJournal', 'IndexedDbJournal', 'DurableObjectJournal', 'fingerprint']) {
    assert.ok(name in pkg, name);
  }
  const e = new pkg.RetryEngine(undefined, { seed: 1 });
  const c = e.begin(0);
  e.admit(c, 0);
  assert.deepEqual(e.decide(c, { kind: 'timeout' }, 'unsafe', 1).decision, { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' });
});

test('the default breaker: open 2 s after five 503s, one probe at a time (a hanging one is not doubled), a cancelled probe frees its slot, a good probe closes it', () => {
  const engine = new RetryEngine(undefined, { seed: 5 });
  assert.equal(engine.policy.breaker.openMs, 2000);
  const events = [];
  const attempt = (t, outcome) => {
    const call = engine.begin(t);
    const a = engine.admit(call, t);
    if (a.breaker) events.push(`${a.breaker.from}→${a.breaker.to}`);
    if (!a.admitted) return a.decision.reason;
    if (!outcome) return call; // in flight
    const step = engine.record(call, outcome, 'read_only', t + 10);
    if (step.breaker) events.push(`${step.breaker.from}→${step.breaker.to}`);
    return step.decision.reason;
  };
  const down = { kind: 'http', status: 503 };
  for (let i = 0; i < 5; i++) attempt(t0 + i, down);
  assert.equal(engine.breakerState, 'open');
  assert.equal(attempt(t0 + 1_000, down), 'breaker_open', 'shed without sending');
  const probe = attempt(t0 + 2_014); // 2 s after the fifth failure: the probe goes, and hangs
  assert.equal(typeof probe, 'object');
  assert.equal(attempt(t0 + 30_000, down), 'breaker_open', 'a probe within its attempt timeout is not doubled');
  engine.record(probe, { kind: 'aborted', sent: 'maybe' }, 'read_only', t0 + 30_001);
  assert.equal(engine.breakerState, 'half_open', 'a cancel says nothing about the server');
  assert.equal(attempt(t0 + 30_002, { kind: 'result' }), 'succeeded', 'the cancelled probe freed its slot');
  assert.equal(engine.breakerState, 'closed');
  assert.deepEqual(events, ['closed→open', 'open→half_open', 'half_open→closed']);
});
