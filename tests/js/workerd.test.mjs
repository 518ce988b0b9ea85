// The package in real workerd (miniflare): the workerd entry, the engine at module scope, randomness inside
// a handler, withRetry around the real SDK client against a real MCP server, and the Durable Object journal.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { bundleWorker, modules } from '../support/workerd-bundle.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { ATTEMPT_SUBREQUESTS } from '../../pkg/generated/names.js';

let mf;
let server;
let proxy;

before(async () => {
  server = await startMcpServer();
  proxy = await startFaultProxy(server.url);
  const scriptPath = await bundleWorker('worker.mjs', 'worker-bundle.js');
  mf = new Miniflare({
    ...modules,
    scriptPath,
    durableObjects: { JOURNAL: 'JournalObject', LEDGER: 'LedgerObject' },
    d1Databases: ['DB'],
    bindings: { MCP_URL: proxy.url },
  });
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  await proxy?.close();
  await server?.close();
});

async function get(path) {
  const res = await mf.dispatchFetch(`http://worker${path}`);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

test('the engine decides in workerd, built at module scope; randomness works inside the handler', async () => {
  const body = await get('/engine');
  assert.deepEqual(body.lost, { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' });
  assert.equal(body.retry.action, 'retry');
  assert.ok(body.retry.delayMs >= 200);
  assert.equal(body.ids.length, 2);
  assert.notEqual(body.ids[0], body.ids[1]);
  for (const id of body.ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('withRetry in workerd: a keyed write whose response was cut is retried with the same id; one ticket', async () => {
  proxy.faults.push('cut');
  const body = await get(`/call?tool=create_ticket_keyed&args=${encodeURIComponent(JSON.stringify({ title: 'from a worker' }))}`);
  assert.equal(body.status, 'succeeded');
  assert.equal(body.attempts, 2);
  assert.equal(server.effects.tickets.length, 1);
  assert.deepEqual([...server.effects.keyed.keys()], [body.operationId]);
  assert.equal(body.revision, '2025-11-25');
});

test('withRetry in workerd: an unsafe write whose response was cut is unknown, not retried', async () => {
  const before = server.effects.tickets.length;
  proxy.faults.push('cut');
  const body = await get(`/call?tool=create_ticket&args=${encodeURIComponent(JSON.stringify({ title: 'once' }))}`);
  assert.equal(body.status, 'unknown');
  assert.equal(body.attempts, 1);
  assert.equal(server.effects.tickets.length, before + 1);
});

test('DurableObjectJournal meets the journal contract in a real Durable Object', async () => {
  const checks = await get('/journal/contract');
  assert.ok(checks.length >= 10);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
  const pending = await get('/journal/pending');
  assert.deepEqual(pending.map((e) => e.state), ['unknown'], 'storage kept the entries across requests');
});

test('DurableObjectJournal under a prefix (a storage shared with agents): the contract holds, its keys stay under the prefix', async () => {
  const r = await get('/journal/prefixed');
  for (const c of r.checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
  assert.ok(r.keys.length > 0);
  assert.ok(r.keys.every((k) => k.startsWith('p1:op:') || k.startsWith('p1:intent:')), JSON.stringify(r.keys));
  assert.ok(r.prefixedPending >= 1);
  assert.equal(r.plainUnchanged, true, 'the unprefixed journal in the same storage saw none of it');
  assert.equal(r.refused, 'TypeError invalid_type prefix');
});

test('DurableObjectLedgerStore meets the store contract in a real Durable Object; concurrent requests claim once', async () => {
  const checks = await get('/ledger-do/contract');
  assert.ok(checks.length >= 80, `${checks.length} checks (the purge and ledger parts ran)`);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
  const results = await Promise.all(Array.from({ length: 10 }, () => get('/ledger-do/claim?id=race-0001')));
  assert.equal(results.filter((r) => r.won).length, 1);
});

test('DurableObjectLedgerStore purges on the object\'s alarm: expired resolved rows go, unresolved and live ones stay', async () => {
  const start = await get('/ledger-do/alarm/start?object=alarm');
  assert.deepEqual(start.refused, ['RangeError too_small everyMs', 'RangeError too_small everyMs', 'RangeError not_finite everyMs', 'TypeError invalid_type everyMs', 'RangeError too_large everyMs']);
  assert.ok(start.at >= start.now + 150 && start.at < start.now + 5_000, JSON.stringify(start));
  assert.equal(start.again, start.at, 'an alarm already set is kept');
  let state;
  for (let i = 0; i < 60; i++) {
    state = await get('/ledger-do/alarm/state?object=alarm');
    if (state.alarms.length >= 2) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(state.alarms.length >= 2, `the alarm fired and was set again: ${JSON.stringify(state)}`);
  assert.equal(state.alarms[0], 1, 'the first alarm purged the one expired resolved row');
  assert.equal(state.alarms[1], 0);
  assert.deepEqual([state.expiredDone, state.expiredPending, state.liveDone], [false, true, true]);
  assert.ok(state.next !== null, 'the next alarm is set');
  assert.deepEqual(await get('/ledger-do/alarm/stop?object=alarm'), { next: null });
});

test('the transaction option in real workerd: D1 (one batch) and a Durable Object (one storage transaction) commit the write with its record, or neither', async () => {
  const expected = (raceRuns) => ({
    first: true, replay: true, writesA: 1,
    failed: { status: 'rejected', operationId: undefined, reason: 'rolled_back' },
    writesB: 0, statusB: 'not_found', racersAgree: true, writesC: 1, raceRuns,
  });
  const d1 = await get('/ledger-d1/atomic');
  // D1 runs the handlers before the batch: concurrent first calls may each run it; one batch commits.
  assert.ok(d1.raceRuns >= 1 && d1.raceRuns <= 4, JSON.stringify(d1));
  assert.deepEqual({ ...d1, failed: { ...d1.failed, operationId: undefined } }, expected(d1.raceRuns));
  const durable = await get('/ledger-do/atomic?object=atomic');
  assert.deepEqual({ ...durable, failed: { ...durable.failed, operationId: undefined } }, expected(1));
});

test('DurableObjectLedgerStore: rows written before the expiry index are indexed by the first purge; a stale entry never deletes its row', async () => {
  const r = await get('/ledger-do/legacy?object=legacy');
  assert.equal(r.purged, 151, JSON.stringify(r));
  assert.equal(r.later, 1, 'the live failed row, once it expired');
  assert.deepEqual(r.left, ['unknown', 'pending'], 'the unresolved rows stay, also one whose index entry is stale');
  assert.deepEqual(r.index, []);
});

test('D1LedgerStore meets the store contract in real workerd D1; the ledger runs over it', async () => {
  const checks = await get('/ledger-d1/contract');
  assert.ok(checks.length >= 80, `${checks.length} checks (the purge and ledger parts ran)`);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
  const flow = await get('/ledger-d1/flow');
  assert.deepEqual(flow, {
    first: 'execute',
    during: 'in_progress',
    replay: { action: 'replay', state: 'succeeded', result: { content: [{ type: 'text', text: 'opened T-1' }] } },
    conflict: 'conflict',
  });
});

test('a Worker invocation\'s subrequests (issue 20 §3): withRetry never starts an attempt the invocation cannot pay for, and the app keeps its reserve', async () => {
  // Every tools/call is refused with 503 + Retry-After: 0 (not processed: retryable even for a write); the
  // invocation has 8 subrequests, 1 kept for the app.
  const refusals = () => Array.from({ length: 20 }, () => ({ status: 503, retryAfter: 0 }));
  const calls = () => proxy.log.filter((l) => l.method === 'tools/call').length;
  // Uncounted, the retries spend what the app needed for its own answer: its fetch is refused.
  proxy.faults.push(...refusals());
  const blind = await get('/budget-call?limit=8&counted=0');
  proxy.faults.length = 0;
  assert.equal(blind.own, 'ERR_MCP_RETRY_SUBREQUEST_BUDGET', JSON.stringify(blind));
  assert.equal(blind.spent, 8);
  // Counted, the engine stops before the last room is gone: the app's own fetch goes out.
  proxy.faults.push(...refusals());
  const before = calls();
  const counted = await get('/budget-call?limit=8&counted=1');
  proxy.faults.length = 0;
  assert.equal(counted.status, 'failed', JSON.stringify(counted));
  assert.equal(counted.reason, 'subrequest_budget');
  assert.equal(calls() - before, counted.attempts, 'every attempt the engine admitted reached the server, no more');
  // It stops once less than an attempt's cost is left of the room (8 less the reserve of 1): an attempt needs its
  // request and the cancellation the SDK sends if it times out.
  const cost = ATTEMPT_SUBREQUESTS[''];
  assert.ok(counted.beforeOwn <= 7 && 7 - counted.beforeOwn < cost, `withRetry used the room, not the reserve: ${JSON.stringify(counted)}`);
  assert.equal(typeof counted.own, 'number', `the app's own fetch went out: ${JSON.stringify(counted)}`);
  assert.equal(counted.spent, counted.beforeOwn + 1);
});

test('deadlines on a Worker\'s clock (issue 20 §3): it stands still during CPU work (stood in for: local workerd\'s does not), and a call still ends at its deadline on it', async () => {
  for (const burn of [0, 30_000_000]) {
    const t0 = performance.now();
    const body = await get(`/clock-call?burn=${burn}`);
    const wall = performance.now() - t0;
    assert.equal(body.reason, 'deadline', JSON.stringify(body));
    assert.equal(body.status, 'unknown', 'attempts that timed out may have been delivered');
    assert.ok(body.attempts >= 2, JSON.stringify(body));
    // The deadline holds on the Worker's clock: not before 600 ms, and not later than one attempt past it.
    assert.ok(body.elapsed >= 590 && body.elapsed <= 600 + 250 + 150, `ended at ${body.elapsed} ms on the Worker's clock`);
    if (burn) {
      assert.equal(body.frozen, 0, 'the clock did not move during CPU work');
      assert.ok(wall >= body.elapsed, `wall ${wall} ms ≥ the Worker's ${body.elapsed} ms`);
    }
  }
});
