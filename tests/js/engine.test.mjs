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

test('one protocol: every outcome, good or bad, is a step named from the tables or a typed error; classify and record agree', async () => {
  const names = await import('../../pkg/generated/names.js');
  const { LEDGER_STATUSES, OUTCOME_KINDS, SAFETIES } = names;
  let seed = 3;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const values = [undefined, true, false, 0, 1, -1, 0.5, 503, 1e300, NaN, Infinity, 'no', 'maybe', 'task', 'in_progress', null, {}];
  const kinds = [...OUTCOME_KINDS, 'teapot'];
  const fields = ['isError', 'resultType', 'code', 'status', 'retryAfterMs', 'hadSession', 'jsonrpcCode', 'sent', 'eventIdSeen', 'retryMs', 'extra'];
  // Every ledger status, with and without a wait: the classification's retryAfterMs is the core's answer.
  const ledger = LEDGER_STATUSES.flatMap((status) => [{ kind: 'ledger', status }, { kind: 'ledger', status, retryAfterMs: 5 }]);
  const good = [{ kind: 'http', status: 503 }, { kind: 'http', status: 503, retryAfterMs: 40 }, { kind: 'timeout' }, { kind: 'network', sent: 'maybe' },
    { kind: 'result' }, { kind: 'result', isError: true }, { kind: 'result', resultType: 'input_required' }, { kind: 'jsonrpc_error', code: -32603 },
    { kind: 'http', status: 400, jsonrpcCode: -32020 }, { kind: 'http', status: 404, hadSession: true, jsonrpcCode: -32001, retryAfterMs: 7 },
    { kind: 'stream_broken', eventIdSeen: true, retryMs: 30 }, { kind: 'aborted', sent: 'no' }, ...ledger];
  const outcomeOf = () => {
    if (rnd() < 0.6) return { ...pick(good) };
    const o = { kind: pick(kinds) };
    for (const f of fields) if (rnd() < 0.3) o[f] = pick(values);
    if (o.kind === 'http' && rnd() < 0.7) o.status = pick([200, 404, 429, 500, 502, 503, 504, 42]);
    if (o.kind === 'jsonrpc_error' && rnd() < 0.7) o.code = pick([-32603, -32602, -32020, -32001, 408, 1.5]);
    return o;
  };
  const typed = (err) => (err instanceof TypeError || err instanceof RangeError) && typeof err.code === 'string' && typeof err.field === 'string';
  const named = (c) => names.VERDICTS.includes(c.verdict) && names.DELIVERIES.includes(c.delivery) && names.CAUSES.includes(c.cause)
    && (c.recover === undefined || names.RECOVERS.includes(c.recover)) && (c.retryAfterMs === undefined || Number.isInteger(c.retryAfterMs));
  const e = new RetryEngine({ maxAttempts: 4, breaker: { consecutiveFailures: 3 } }, { seed: 11 });
  let call = e.begin(0);
  const seen = { errors: 0, retries: 0, breaker: 0, causes: new Set() };
  for (let i = 0; i < 2000; i++) {
    const o = outcomeOf();
    const safety = rnd() < 0.1 ? 'bogus' : pick(SAFETIES);
    let c;
    try {
      c = e.classify(o);
      assert.ok(named(c), JSON.stringify(c));
    } catch (err) {
      assert.ok(typed(err), `classify ${i}: ${err}`);
      seen.errors++;
    }
    try {
      const a = e.admit(call, i * 10);
      // Admitted, or a stop, or a held retry (a wait the engine names): each named from the tables.
      assert.ok(a.admitted === true || (names.REASONS.includes(a.decision.reason) && (a.decision.action === 'retry' ? a.decision.delayMs >= 1 : names.STATUSES.includes(a.decision.status))));
      const step = e.record(call, o, safety, i * 10 + 5);
      assert.deepStrictEqual(step.classification, c, `record ${i} classifies as classify does`);
      assert.ok(names.REASONS.includes(step.decision.reason));
      if (step.decision.action === 'stop') assert.ok(names.STATUSES.includes(step.decision.status));
      else seen.retries++;
      if (step.breaker) seen.breaker++;
      seen.causes.add(step.classification.cause);
    } catch (err) {
      if (err.code === 'invalid_value' && err.field === 'safety') assert.equal(safety, 'bogus');
      assert.ok(typed(err), `record ${i}: ${err}`);
    }
    if (i % 5 === 4) call = e.begin(i * 10);
  }
  assert.ok(seen.errors && seen.retries && seen.breaker, 'the run covered errors, retries and breaker changes');
  for (const status of LEDGER_STATUSES) assert.ok(seen.causes.has(`ledger_${status}`), `the run covered the ledger's ${status}`);
});

test('one protocol: each malformed field is a typed error naming it, from the encoder or the core', () => {
  const e = new RetryEngine(undefined, { seed: 1 });
  const cases = [
    [undefined, TypeError, 'missing', 'outcome'],
    [null, TypeError, 'invalid_type', 'outcome'],
    [[], TypeError, 'invalid_type', 'outcome'],
    [{}, TypeError, 'missing', 'outcome.kind'],
    [{ kind: 5 }, TypeError, 'invalid_type', 'outcome.kind'],
    [{ kind: 'teapot' }, RangeError, 'invalid_value', 'outcome.kind'],
    [{ kind: 'timeout', extra: 1 }, TypeError, 'unknown_option', 'outcome.extra'],
    [{ kind: 'result', isError: 1 }, TypeError, 'invalid_type', 'outcome.isError'],
    [{ kind: 'result', resultType: 'done' }, RangeError, 'invalid_value', 'outcome.resultType'],
    [{ kind: 'http' }, TypeError, 'missing', 'outcome.status'],
    [{ kind: 'http', status: 42 }, RangeError, 'too_small', 'outcome.status'],
    [{ kind: 'http', status: 503, retryAfterMs: -1 }, RangeError, 'negative', 'outcome.retryAfterMs'],
    [{ kind: 'http', status: 503, jsonrpcCode: 1.5 }, RangeError, 'not_integer', 'outcome.jsonrpcCode'],
    [{ kind: 'http', status: 503, jsonrpcCode: '-32020' }, TypeError, 'invalid_type', 'outcome.jsonrpcCode'],
    [{ kind: 'network' }, TypeError, 'missing', 'outcome.sent'],
    [{ kind: 'aborted', sent: 'perhaps' }, RangeError, 'invalid_value', 'outcome.sent'],
    [{ kind: 'stream_broken', retryMs: NaN }, RangeError, 'not_finite', 'outcome.retryMs'],
    [{ kind: 'ledger', status: 'done' }, RangeError, 'invalid_value', 'outcome.status'],
    [{ kind: 'jsonrpc_error', code: Infinity }, RangeError, 'not_integer', 'outcome.code'],
    [{ get kind() { throw new Error('no'); } }, TypeError, 'unreadable', 'outcome.kind'],
  ];
  for (const [o, type, code, field] of cases) {
    const name = `${code} ${field}`;
    assert.throws(() => e.classify(o), (err) => err instanceof type && err.code === code && err.field === field, `classify ${name}`);
    const c = e.begin(0);
    assert.throws(() => e.record(c, o, 'unsafe', 1), (err) => err instanceof type && err.code === code && err.field === field, `record ${name}`);
  }
  const c = e.begin(0);
  assert.throws(() => e.record(c, { kind: 'timeout' }, 'safe', 1), (err) => err instanceof RangeError && err.code === 'invalid_value' && err.field === 'safety');
  assert.throws(() => e.record(c, { kind: 'timeout' }, 3, 1), (err) => err instanceof TypeError && err.code === 'invalid_type' && err.field === 'safety');
});

test("the core's retryAfterMs is the answer, for every ledger status", () => {
  const e = new RetryEngine(undefined, { seed: 1 });
  const expected = { in_progress: 5, unknown: undefined, conflict: undefined, rejected: undefined };
  for (const [status, ms] of Object.entries(expected)) {
    const o = { kind: 'ledger', status, retryAfterMs: 5 };
    assert.equal(e.classify(o).retryAfterMs, ms, `classify ${status}`);
    const c = e.begin(0);
    e.admit(c, 0);
    assert.equal(e.record(c, o, 'keyed', 1).classification.retryAfterMs, ms, `record ${status}`);
  }
  const c = e.begin(0);
  e.admit(c, 0);
  const step = e.record(c, { kind: 'http', status: 503, retryAfterMs: 1234.9 }, 'read_only', 1);
  assert.equal(step.classification.retryAfterMs, 1234);
  assert.ok(step.decision.delayMs >= 1234);
  // An HTTP answer with a JSON-RPC body has its slot on the one protocol (2026-07-28: -32020 in a 400).
  const e2 = new RetryEngine(undefined, { seed: 1, revision: '2026-07-28' });
  // A -32020 proves nothing until the client confirmed it (a handler may relay it after it ran): unknown, then
  // not processed with `mismatchConfirmed` (the flag crosses in slot c, on both kinds that carry a code).
  assert.deepEqual(e2.classify({ kind: 'http', status: 400, jsonrpcCode: -32020 }),
    { verdict: 'recover', delivery: 'unknown', recover: 'refresh_tools', retryAfterMs: undefined, cause: 'jsonrpc_header_mismatch' });
  assert.deepEqual(e2.classify({ kind: 'http', status: 400, jsonrpcCode: -32020, mismatchConfirmed: true }),
    { verdict: 'recover', delivery: 'not_processed', recover: 'refresh_tools', retryAfterMs: undefined, cause: 'jsonrpc_header_mismatch' });
  assert.equal(e2.classify({ kind: 'jsonrpc_error', code: -32022, mismatchConfirmed: true }).delivery, 'not_processed');
  assert.equal(e2.classify({ kind: 'jsonrpc_error', code: -32022 }).delivery, 'unknown');
  assert.throws(() => e2.classify({ kind: 'jsonrpc_error', code: -32022, mismatchConfirmed: 'yes' }), { code: 'invalid_type', field: 'outcome.mismatchConfirmed' });
  // Behind a retrying proxy a lost session and a Retry-After refusal prove nothing either (a replica's answer).
  const lost = { kind: 'http', status: 404, hadSession: true };
  const proxied = new RetryEngine(undefined, { revision: '2025-11-25', behindRetryingProxy: true });
  assert.equal(proxied.classify(lost).delivery, 'unknown');
  assert.equal(proxied.classify({ kind: 'http', status: 503, retryAfterMs: 1000 }).delivery, 'unknown');
  assert.equal(new RetryEngine(undefined, { revision: '2025-11-25' }).classify(lost).delivery, 'not_processed');
  assert.throws(() => new RetryEngine(undefined, { behindRetryingProxy: 1 }), { code: 'invalid_type', field: 'options.behindRetryingProxy' });
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

test('every code the wasm packs has a name in the generated tables, and codeTables() gives them', async () => {
  const names = await import('../../pkg/generated/names.js');
  const t = RetryEngine.codeTables();
  assert.deepEqual(t.statuses, [...names.STATUSES]);
  assert.deepEqual(t.reasons, [...names.REASONS]);
  assert.deepEqual(t.causes, [...names.CAUSES]);
  assert.deepEqual(t.causeRecovers, [...names.CAUSE_RECOVERS]);
  assert.deepEqual(t.transitions.slice(1), names.BREAKER_TRANSITIONS.slice(1));
  // Every outcome the encoder can express, under every revision: each decoded field is a name, never undefined.
  const outcomes = [{ kind: 'timeout' }, { kind: 'result' }, { kind: 'result', isError: true }];
  for (const resultType of names.RESULT_TYPES) outcomes.push({ kind: 'result', resultType });
  for (const code of [-32700, -32603, -32602, -32601, -32600, -32002, -32020, -32021, -32022, -32042, -32050, -1, 0, 1]) outcomes.push({ kind: 'jsonrpc_error', code });
  for (const status of [200, 202, 400, 401, 403, 404, 405, 408, 409, 413, 422, 429, 499, 500, 502, 503, 504, 599]) {
    outcomes.push({ kind: 'http', status }, { kind: 'http', status, retryAfterMs: 10, hadSession: true, jsonrpcCode: -32020 });
  }
  for (const sent of names.SENT) outcomes.push({ kind: 'network', sent }, { kind: 'aborted', sent });
  for (const status of names.LEDGER_STATUSES) outcomes.push({ kind: 'ledger', status, retryAfterMs: 5 });
  outcomes.push({ kind: 'stream_broken', eventIdSeen: true, retryMs: 50 }, { kind: 'stream_broken' });
  for (const revision of [...names.REVISIONS, 'unknown']) {
    const e = new RetryEngine(undefined, { seed: 1, revision });
    for (const o of outcomes) {
      const c = e.classify(o);
      for (const k of ['verdict', 'delivery', 'cause']) assert.equal(typeof c[k], 'string', `${revision} ${JSON.stringify(o)} ${k}`);
      for (const safety of names.SAFETIES) {
        const call = e.begin(0);
        e.admit(call, 0);
        const step = e.record(call, o, safety, 1);
        assert.equal(typeof step.decision.reason, 'string', `${revision} ${JSON.stringify(o)} ${safety}`);
        assert.ok(step.decision.action === 'retry' || typeof step.decision.status === 'string');
        call.free();
      }
    }
    e.free();
  }
});

test('every reason a call can stop with has words for the model', async () => {
  const { messageFor } = await import('../../pkg/client/messages.js');
  const { REASONS, STATUSES } = await import('../../pkg/generated/names.js');
  // Reasons of a retry, or of a stop whose status speaks for itself.
  const bySatus = new Set(['succeeded', 'tool_error', 'task_pending', 'transient', 'throttled', 'recover', 'continue_input']);
  for (const reason of REASONS.filter((r) => !bySatus.has(r))) {
    for (const status of STATUSES.filter((s) => s === 'failed' || s === 'unknown')) {
      const m = messageFor({ tool: 't', status, reason, operationIdArgument: 'operation_id' });
      assert.ok(!m.includes(reason), `${reason} (${status}) has no sentence in client/messages.js: ${m}`);
    }
  }
});

test('a caller that cannot answer input: the core stops the call (input_required_unhandled), unknown once anything may have been delivered', () => {
  const e = new RetryEngine(undefined, { seed: 1 });
  const c = e.begin(0, { answersInput: false });
  e.admit(c, 0);
  assert.deepEqual(e.record(c, { kind: 'result', resultType: 'input_required' }, 'unsafe', 1).decision,
    { action: 'stop', status: 'failed', reason: 'input_required_unhandled' });
  const c2 = e.begin(0, { answersInput: false });
  e.admit(c2, 0);
  assert.equal(e.record(c2, { kind: 'timeout' }, 'read_only', 1).decision.action, 'retry');
  e.admit(c2, 2);
  assert.deepEqual(e.record(c2, { kind: 'result', resultType: 'input_required' }, 'read_only', 3).decision,
    { action: 'stop', status: 'unknown', reason: 'input_required_unhandled' });
  const c3 = e.begin(0); // answers input (the default)
  e.admit(c3, 0);
  assert.equal(e.record(c3, { kind: 'result', resultType: 'input_required' }, 'unsafe', 1).decision.reason, 'continue_input');
  assert.throws(() => e.begin(0, { answersInput: 'no' }), (err) => err instanceof TypeError && err.code === 'invalid_type' && err.field === 'options.answersInput');
  assert.throws(() => e.begin(0, { answers: false }), (err) => err instanceof TypeError && err.field === 'options.answers');
});

test('policy options: the JS reader names types and unknown keys, the core names ranges; each a typed error', () => {
  const cases = [
    [{ maxAttempts: NaN }, RangeError, 'not_finite', 'maxAttempts', /maxAttempts must be a finite number, got NaN/],
    [{ maxAttempts: 0 }, RangeError, 'too_small', 'maxAttempts', /at least 1, got 0/],
    [{ maxAttempts: 1.5 }, RangeError, 'not_integer', 'maxAttempts', /whole number, got 1\.5/],
    [{ maxAttempts: 1e9 }, RangeError, 'too_large', 'maxAttempts', /at most 100, got 1000000000/],
    [{ maxAttempts: '3' }, TypeError, 'invalid_type', 'maxAttempts', /must be a number, got string/],
    [{ maxAttempts: null }, TypeError, 'invalid_type', 'maxAttempts', /got null/],
    [{ baseDelayMs: -5 }, RangeError, 'negative', 'baseDelayMs', /must not be negative, got -5/],
    [{ baseDelayMs: 10, maxDelayMs: 5 }, RangeError, 'base_exceeds_cap', 'baseDelayMs', /baseDelayMs \(10\) must not exceed maxDelayMs \(5\)/],
    [{ baseDelayMs: 30_000 }, RangeError, 'base_exceeds_cap', 'baseDelayMs', /maxDelayMs \(20000\)/],
    [{ totalTimeoutMs: Infinity }, RangeError, 'not_finite', 'totalTimeoutMs', /got Infinity/],
    [{ jitter: 'random' }, RangeError, 'invalid_value', 'jitter', /one of full, equal, decorrelated, none, got "random"/],
    [{ jitter: 1 }, TypeError, 'invalid_type', 'jitter', /must be a string/],
    [{ budget: 'no' }, TypeError, 'invalid_type', 'budget', /an object or false/],
    [{ budget: { capacity: -1 } }, RangeError, 'negative', 'budget.capacity', /budget\.capacity must not be negative/],
    [{ budget: { capacityy: 1 } }, TypeError, 'unknown_option', 'budget.capacityy', /not a known option/],
    [{ breaker: { failureRatio: 2 } }, RangeError, 'too_large', 'breaker.failureRatio', /at most 1, got 2/],
    [{ breaker: { openMs: 0 } }, RangeError, 'too_small', 'breaker.openMs', /at least 1/],
    [{ breaker: [] }, TypeError, 'invalid_type', 'breaker', /got array/],
    [{ retries: 3 }, TypeError, 'unknown_option', 'retries', /retries is not a known option/],
    [{ get maxAttempts() { throw new Error('boom'); } }, TypeError, 'unreadable', 'maxAttempts', /could not be read/],
    [new Proxy({}, { ownKeys() { throw new Error('trap'); } }), TypeError, 'unreadable', 'policy', /could not be read/],
    [(() => { const o = {}; o.budget = o; return o; })(), TypeError, 'unknown_option', 'budget.budget', /not a known option/],
    ['fast', TypeError, 'invalid_type', 'policy', /policy must be an object, got string/],
    [[1], TypeError, 'invalid_type', 'policy', /got array/],
  ];
  for (const [policy, type, code, field, message] of cases) {
    assert.throws(() => new RetryEngine(policy), (e) => e instanceof type && e.code === code && e.field === field && message.test(e.message),
      `${code} ${field}`);
  }
  const options = [
    [{ seed: -1 }, RangeError, 'negative', 'options.seed'],
    [{ seed: 0.5 }, RangeError, 'not_integer', 'options.seed'],
    [{ seed: 2 ** 60 }, RangeError, 'too_large', 'options.seed'],
    [{ seed: '1' }, TypeError, 'invalid_type', 'options.seed'],
    [{ revision: '2024-01-01' }, RangeError, 'invalid_value', 'options.revision'],
    [{ revision: 5 }, TypeError, 'invalid_type', 'options.revision'],
    [{ seeds: 1 }, TypeError, 'unknown_option', 'options.seeds'],
    [7, TypeError, 'invalid_type', 'options'],
  ];
  for (const [o, type, code, field] of options) {
    assert.throws(() => new RetryEngine(undefined, o), (e) => e instanceof type && e.code === code && e.field === field, `${code} ${field}`);
  }
  // Accepted, and read back as the core validated it (durations whole ms, tokens and the ratio as given).
  const e = new RetryEngine({ maxAttempts: 5, baseDelayMs: 10.7, jitter: 'none', budget: { capacity: 2.5 }, breaker: false }, { revision: '2025-11-25' });
  assert.deepEqual(e.policy, {
    maxAttempts: 5, baseDelayMs: 10, maxDelayMs: 20_000, jitter: 'none', attemptTimeoutMs: 60_000, totalTimeoutMs: 180_000,
    maxRetryAfterMs: 60_000, budget: { capacity: 2.5, retryCost: 1, timeoutCost: 2, successRefill: 0.1, refillPerSecond: 1 }, breaker: false,
  });
  assert.equal(e.revision, '2025-11-25');
  assert.equal(e.budgetTokens, 2.5);
  assert.equal(e.breakerState, undefined);
  assert.equal(new RetryEngine().revision, 'unknown');
  assert.equal(new RetryEngine({ budget: true, breaker: {} }).policy.breaker.openMs, 2000);
  assert.equal(new RetryEngine().setProtocolVersion('2026-09-01'), '2026-07-28');
  assert.throws(() => new RetryEngine().setProtocolVersion('2026-9-1'), (err) => err.code === 'invalid_value' && err.field === 'protocolVersion');
  assert.throws(() => revisionFor('x'.repeat(5000)), (err) => err.code === 'invalid_value' && err.message.length < 200);
});

test('operation ids: UUID v4 from crypto.randomUUID, or from getRandomValues where randomUUID is missing', () => {
  const check = (ids) => {
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  };
  check(Array.from({ length: 500 }, () => newOperationId()));
  const randomUUID = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(globalThis.crypto), 'randomUUID');
  Object.defineProperty(Object.getPrototypeOf(globalThis.crypto), 'randomUUID', { value: undefined, configurable: true });
  try {
    check(Array.from({ length: 500 }, () => newOperationId())); // an insecure context in a browser has no randomUUID
  } finally {
    Object.defineProperty(Object.getPrototypeOf(globalThis.crypto), 'randomUUID', randomUUID);
  }
});

test('the safety of a tool: the override, else (trusted) annotations and schema, else unsafe; bad options are typed', () => {
  const e = new RetryEngine();
  const tool = { name: 'x', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: { operation_id: { type: 'string' } } } };
  assert.equal(e.safety(tool), 'unsafe');
  assert.equal(e.safety(tool, { trusted: true }), 'read_only');
  assert.equal(e.safety({ annotations: { readOnlyHint: 'yes' }, inputSchema: { properties: { op: {} } } }, { trusted: true, operationIdArgument: 'op' }), 'keyed');
  assert.equal(e.safety({ annotations: { idempotentHint: true } }, { trusted: true }), 'idempotent');
  assert.equal(e.safety(undefined, { override: 'idempotent' }), 'idempotent');
  assert.throws(() => e.safety(tool, { override: 'safe' }), (err) => err instanceof RangeError && err.field === 'safety');
  assert.throws(() => e.safety(tool, { trusted: 'yes' }), (err) => err instanceof TypeError && err.field === 'options.trusted');
  assert.throws(() => e.safety(tool, { trust: true }), (err) => err.code === 'unknown_option' && err.field === 'options.trust');
  assert.throws(() => e.safety(5), (err) => err instanceof TypeError && err.field === 'tool');
  assert.throws(() => e.safety({ get annotations() { throw new Error('x'); } }), (err) => err.code === 'unreadable' && err.field === 'tool.annotations');
});
