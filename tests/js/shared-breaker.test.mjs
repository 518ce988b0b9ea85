// The shared breaker (issue 20 §4) in Node: the engine's snapshot/adopt through JS (a closed engine whose last
// attempt was answered does not take another's open state), typed refusals, the
// DurableObjectBreakerState's rules, and a SharedBreaker whose object is unreachable: the local breaker decides,
// no call waits on it longer than its timeout, no outcome changes. The real Durable Object runs in
// tests/js/workerd-breaker.test.mjs; here its storage is a Map (the storage API's get/put, a stand-in: a Durable
// Object's storage exists only inside workerd).
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RetryEngine, withRetry, SharedBreaker, DurableObjectBreakerState, SubrequestBudget } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { ATTEMPT_SUBREQUESTS } from '../../pkg/generated/names.js';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { runBreakerStateContract } from '../support/breaker-state-contract.mjs';

// No refill with time: these cases count tokens exactly (the refill is `engine.test.mjs`'s and the core's)
const policy = { breaker: { consecutiveFailures: 2, openMs: 500 }, budget: { refillPerSecond: 0 } };
const refused = (f, name, code, field) => {
  try {
    f();
  } catch (e) {
    assert.equal(`${e.name} ${e.code} ${e.field}`, `${name} ${code} ${field}`);
    return;
  }
  assert.fail('not refused');
};
const fail = (engine, t) => {
  const c = engine.begin(t);
  engine.admit(c, t);
  const step = engine.record(c, { kind: 'http', status: 503 }, 'read_only', t);
  c.free();
  return step;
};

test('RetryEngine: a snapshot out, a newer one adopted, an older one ignored; the budget only goes down', () => {
  const a = new RetryEngine(policy, { seed: 1 });
  const b = new RetryEngine(policy, { seed: 2 });
  assert.deepEqual(a.sharedSnapshot(), { state: 'closed', sinceMs: 0, failures: 0, budgetTokens: 10 });
  fail(a, 100);
  assert.equal(a.sharedSnapshot().failures, 1);
  assert.equal(fail(a, 101).breaker.to, 'open');
  const s = a.sharedSnapshot();
  assert.deepEqual(s, { state: 'open', sinceMs: 101, failures: 0, budgetTokens: 9 }, 'the first call retried once');
  assert.equal(b.adoptShared(s), 'open');
  assert.equal(b.admit(b.begin(300), 300).decision.reason, 'breaker_open', 'b fails fast on what a learned');
  assert.equal(b.probeDue(600), false);
  assert.equal(b.probeDue(601), true);
  assert.equal(b.adoptShared({ state: 'closed', sinceMs: 50 }), 'open', 'an older close changes nothing');
  assert.equal(b.adoptShared({ state: 'half_open', sinceMs: 601 }), 'half_open', 'a probe out elsewhere');
  assert.equal(b.probeDue(602), false);
  assert.equal(b.adoptShared({ state: 'closed', sinceMs: 700, budgetTokens: 4.5 }), 'closed');
  assert.equal(b.budgetTokens, 4.5);
  assert.equal(b.adoptShared({ budgetTokens: 9 }), 'closed');
  assert.equal(b.budgetTokens, 4.5, 'a higher count never refills');
  const off = new RetryEngine({ breaker: false, budget: false });
  assert.deepEqual(off.sharedSnapshot(), {});
  assert.equal(off.adoptShared(s), undefined);
  assert.equal(off.probeDue(0), false);
  // Confirmation: an engine whose own last attempt was answered keeps calling; after a failure of its own it sheds.
  const c = new RetryEngine(policy, { seed: 3 });
  const ok = c.begin(50);
  c.admit(ok, 50);
  c.record(ok, { kind: 'result' }, 'read_only', 50);
  assert.equal(c.adoptShared(s), 'closed');
  fail(c, 120);
  assert.equal(c.adoptShared(s), 'open');
  // The fleet's failures in a row count toward the next trip; the trip is a failure of the engine's own.
  const d = new RetryEngine(policy, { seed: 4 });
  assert.equal(d.adoptShared({ failures: 1 }), 'closed');
  assert.equal(d.sharedSnapshot().failures, 1);
  assert.equal(fail(d, 10).breaker?.to, 'open', 'one failure of its own after one of the fleet: two in a row');
});

test('RetryEngine.adoptShared refuses bad snapshots by name', () => {
  const e = new RetryEngine();
  refused(() => e.adoptShared({ state: 'ajar', sinceMs: 1 }), 'RangeError', 'invalid_value', 'snapshot.state');
  refused(() => e.adoptShared({ state: 'open' }), 'TypeError', 'missing', 'snapshot.sinceMs');
  refused(() => e.adoptShared({ sinceMs: 5 }), 'TypeError', 'missing', 'snapshot.state');
  refused(() => e.adoptShared({ state: 'open', sinceMs: -1 }), 'RangeError', 'negative', 'snapshot.sinceMs');
  refused(() => e.adoptShared({ state: 'open', sinceMs: 1.5 }), 'RangeError', 'not_integer', 'snapshot.sinceMs');
  refused(() => e.adoptShared({ state: 'open', sinceMs: '1' }), 'TypeError', 'invalid_type', 'snapshot.sinceMs');
  refused(() => e.adoptShared({ budgetTokens: NaN }), 'RangeError', 'not_finite', 'snapshot.budgetTokens');
  refused(() => e.adoptShared({ failures: 1.5 }), 'RangeError', 'not_integer', 'snapshot.failures');
  refused(() => e.adoptShared({ failures: -2 }), 'RangeError', 'negative', 'snapshot.failures');
  refused(() => e.adoptShared({ open: true }), 'TypeError', 'unknown_option', 'snapshot.open');
  refused(() => e.adoptShared(null), 'TypeError', 'invalid_type', 'snapshot');
  refused(() => e.probeDue('now'), 'TypeError', 'invalid_type', 'nowMs');
  assert.equal(e.breakerState, 'closed', 'nothing was adopted');
});

/** A Durable Object storage's get/put over a Map (see the header). */
const mapStorage = () => {
  const m = new Map();
  return { get: async (k) => structuredClone(m.get(k)), put: async (k, v) => void m.set(k, structuredClone(v)), map: m };
};

test('DurableObjectBreakerState meets its contract (the newest report wins, one probe lease, the fleet\'s failures in a row, bad input named)', async () => {
  const checks = await runBreakerStateContract((options) => new DurableObjectBreakerState(mapStorage(), options));
  assert.ok(checks.length >= 39, `${checks.length} checks`);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
  refused(() => new DurableObjectBreakerState({}), 'TypeError', 'invalid_type', 'storage');
  refused(() => new DurableObjectBreakerState(mapStorage(), { prefix: 7 }), 'TypeError', 'invalid_type', 'prefix');
  refused(() => new DurableObjectBreakerState(mapStorage(), { other: 1 }), 'TypeError', 'unknown_option', 'options.other');
  refused(() => new DurableObjectBreakerState(mapStorage(), { maxServers: 0 }), 'RangeError', 'invalid_value', 'maxServers');
  refused(() => new DurableObjectBreakerState(mapStorage(), { maxServers: '9' }), 'TypeError', 'invalid_type', 'maxServers');
  refused(() => new DurableObjectBreakerState(mapStorage(), { now: 5 }), 'TypeError', 'invalid_type', 'now');
});

test('a snapshot from the future (a bad object, a clock far ahead) is taken as begun at the engine\'s now: shed for openMs, then a probe', async () => {
  // RetryEngine.adoptShared with the engine's now: the core takes a later state as begun now.
  const e = new RetryEngine(policy, { seed: 5 });
  assert.equal(e.adoptShared({ state: 'open', sinceMs: Number.MAX_SAFE_INTEGER }, 1_000), 'open');
  assert.deepEqual([e.probeDue(1_499), e.probeDue(1_500)], [false, true]);
  assert.equal(e.sharedSnapshot().sinceMs, 1_000);
  refused(() => e.adoptShared({ state: 'open', sinceMs: 1 }, -1), 'RangeError', 'negative', 'nowMs');
  // Through a SharedBreaker whose object answers one snapshot from the future, then honestly.
  let answers = 0;
  const stub = {
    fetch: async (url, init) => {
      const body = JSON.parse(init.body);
      const future = { state: 'open', sinceMs: Number.MAX_SAFE_INTEGER, failures: 0 };
      if (body.op === 'probe') return Response.json({ granted: true, snapshot: { state: 'half_open', sinceMs: body.nowMs, failures: 0 } });
      return Response.json(answers++ === 0 ? future : { ...body.snapshot, failures: 0 });
    },
  };
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
  const mcp = withRetry(client, { trusted: true, seed: 1, sharedBreaker: new SharedBreaker(stub, { ttlMs: 0 }), policy: { maxAttempts: 1, breaker: { openMs: 200 } } });
  const search = async () => {
    const o = await mcp.call({ name: 'search_tickets', arguments: { query: 'future' } });
    return `${o.status}/${o.reason}`;
  };
  assert.equal(await search(), 'failed/breaker_open', 'shed at first: the snapshot said open');
  await new Promise((r) => setTimeout(r, 220));
  assert.equal(await search(), 'succeeded/succeeded', 'its open time ran from the engine\'s now, not from 2^53 − 1: the probe went');
  await client.close();
});

test('SharedBreaker refuses bad options by name; withRetry refuses what is not one', () => {
  refused(() => new SharedBreaker({}), 'TypeError', 'invalid_type', 'stub');
  const stub = { fetch: async () => new Response('{}') };
  refused(() => new SharedBreaker(stub, { ttlMs: -1 }), 'RangeError', 'too_small', 'ttlMs');
  refused(() => new SharedBreaker(stub, { timeoutMs: 0 }), 'RangeError', 'too_small', 'timeoutMs');
  refused(() => new SharedBreaker(stub, { timeoutMs: 1.5 }), 'RangeError', 'not_integer', 'timeoutMs');
  refused(() => new SharedBreaker(stub, { server: '' }), 'TypeError', 'invalid_type', 'server');
  refused(() => new SharedBreaker(stub, { lease: 1 }), 'TypeError', 'unknown_option', 'options.lease');
  refused(() => withRetry({ request() {} }, { sharedBreaker: stub }), 'TypeError', 'invalid_type', 'sharedBreaker');
});

let server;
let proxy;
before(async () => {
  server = await startMcpServer();
  proxy = await startFaultProxy(server.url);
});
after(async () => {
  await proxy?.close();
  await server?.close();
});

test('an unreachable shared state (hanging, throwing, answering nonsense): the local breaker decides, no call waits past the timeout, outcomes unchanged', async () => {
  const stubs = {
    hanging: { fetch: () => new Promise(() => {}) },
    throwing: { fetch: async () => { throw new Error('the object is gone'); } },
    nonsense: { fetch: async () => Response.json({ state: 'ajar', sinceMs: -4, granted: 'yes', snapshot: 7 }) },
  };
  // The same five calls without a shared breaker, then with each unreachable one: the same outcomes.
  const run = async (name, shared) => {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
    const mcp = withRetry(client, {
      trusted: true, seed: 1, ...(shared ? { sharedBreaker: shared } : {}), policy: { maxAttempts: 1, breaker: { consecutiveFailures: 2, openMs: 200 } },
    });
    const search = async () => {
      const o = await mcp.call({ name: 'search_tickets', arguments: { query: name } });
      return `${o.status}/${o.reason}/${mcp.engine.breakerState}`;
    };
    const t0 = Date.now();
    const seen = [await search()];
    proxy.faults.push({ status: 503 }, { status: 503 });
    seen.push(await search(), await search(), await search());
    await new Promise((r) => setTimeout(r, 220));
    seen.push(await search());
    const ms = Date.now() - t0;
    await client.close();
    return { seen, ms };
  };
  const alone = await run('alone');
  assert.equal(alone.seen[2].split('/')[2], 'open', 'the local breaker opened');
  assert.equal(alone.seen[3].split('/')[1], 'breaker_open');
  assert.equal(alone.seen[4], 'succeeded/succeeded/closed');
  for (const [name, stub] of Object.entries(stubs)) {
    const shared = new SharedBreaker(stub, { timeoutMs: 50, ttlMs: 0 });
    const r = await run(name, shared);
    assert.deepEqual(r.seen, alone.seen, name);
    // Five calls, each asking the object at most twice (a refresh; a transition or a probe), 50 ms each at most.
    assert.ok(r.ms < alone.ms + 5 * 2 * 50 + 200, `${name}: ${r.ms} ms (alone ${alone.ms} ms)`);
    assert.ok(shared.stats.unreachable >= 5, `${name}: ${JSON.stringify(shared.stats)}`);
    assert.equal(shared.stats.reads + shared.stats.reports + shared.stats.probesGranted, 0);
  }
});

test('in a Worker invocation the object\'s requests are subrequests: counted in the budget, never the next attempt\'s nor the app\'s reserve', async () => {
  // The invocation's budget pays for the transport's requests and the shared breaker's; ttlMs 0: every call
  // refreshes, so the breaker would spend as much as the calls.
  const budget = new SubrequestBudget({ limit: 16, reserve: 1 });
  let sent = 0;
  let asked = 0;
  const state = new DurableObjectBreakerState(mapStorage());
  const stub = { fetch: (url, init) => { asked++; return state.fetch(new Request(url, init)); } };
  const shared = new SharedBreaker(stub, { ttlMs: 0, timeoutMs: 500 });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: (u, i) => { sent++; return budget.fetch(u, i); } }));
  const mcp = withRetry(client, {
    trusted: true, seed: 1, sharedBreaker: shared, subrequestBudget: budget,
    policy: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, breaker: { consecutiveFailures: 10, openMs: 500 } },
  });
  proxy.faults.push({ status: 503 }); // one counted failure: the breaker reports it, and the answer after it
  const seen = [];
  for (let i = 0; i < 20; i++) {
    const room = budget.room;
    const o = await mcp.call({ name: 'search_tickets', arguments: { query: `budget ${i}` } });
    seen.push({ room, status: o.status, reason: o.reason, attempts: o.attempts.length });
    assert.equal(budget.spent, sent + asked, `every request is counted, the object's too: ${JSON.stringify({ spent: budget.spent, sent, asked })}`);
    if (o.reason === 'subrequest_budget') break;
  }
  await client.close();
  const detail = JSON.stringify({ seen, stats: shared.stats, spent: budget.spent });
  assert.ok(asked >= 3, `the object was asked: ${detail}`);
  assert.equal(seen[0].attempts, 2, `the first call retried its 503: ${detail}`);
  // An attempt needs 2 of the room (its request, and the cancellation the SDK sends if it times out).
  const cost = ATTEMPT_SUBREQUESTS[''];
  assert.ok(budget.remaining >= budget.reserve && budget.remaining - budget.reserve < cost, `the app's reserve is left, and less than an attempt more: ${detail}`);
  const last = seen.at(-1);
  assert.deepEqual([last.room < cost, last.status, last.reason, last.attempts], [true, 'failed', 'subrequest_budget', 0], detail);
  // The object never took what a call needed: every call that started with room for an attempt sent one.
  for (const c of seen.slice(0, -1)) assert.ok(c.room >= cost && c.attempts >= 1 && c.status === 'succeeded', detail);
  assert.ok(shared.stats.unpaid >= 1, detail);
});
