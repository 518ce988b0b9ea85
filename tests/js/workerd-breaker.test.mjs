// The shared breaker in real workerd (issue 20 §4): four Workers (four isolates, each with its own engine), one
// real MCP server behind the fault proxy, an outage of every tools/call (503). Independent breakers: each Worker
// learns of the outage alone and probes alone. Shared (a SharedBreaker over a real Durable Object holding a
// DurableObjectBreakerState): fewer tools/call reach the upstream during the outage, one probe at a time, and
// after the upstream recovers every Worker is through within the same time as alone.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { bundleWorker, modules } from '../support/workerd-bundle.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { ATTEMPT_SUBREQUESTS } from '../../pkg/generated/names.js';

const WORKERS = 4;
const OUTAGE_MS = 2_500;
const RUN_MS = 4_000;
const EVERY_MS = 100;
let mf;
let server;
let proxy;

before(async () => {
  server = await startMcpServer();
  proxy = await startFaultProxy(server.url);
  const scriptPath = await bundleWorker('breaker-worker.mjs', 'breaker-bundle.js');
  const worker = (i) => ({
    name: `w${i}`,
    ...modules,
    scriptPath,
    // The object lives in the first Worker; the others reach it through their binding.
    durableObjects: { BREAKER: i === 0 ? 'BreakerObject' : { className: 'BreakerObject', scriptName: 'w0' } },
    bindings: { MCP_URL: proxy.url },
  });
  mf = new Miniflare({ workers: Array.from({ length: WORKERS }, (_, i) => worker(i)) });
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  await proxy?.close();
  await server?.close();
});

/** One storm: every Worker calls for RUN_MS; every tools/call fails for the first OUTAGE_MS. */
async function storm(mode) {
  const run = `${mode}-${Date.now()}`;
  const fetchers = await Promise.all(Array.from({ length: WORKERS }, (_, i) => mf.getWorker(`w${i}`)));
  const from = proxy.log.length;
  // A slow refusal (150 ms), so that the Workers' probes overlap: what the probe lease is for.
  proxy.faults.push(...Array.from({ length: 100_000 }, () => ({ status: 503, delayMs: 150 })));
  let recoveredAt;
  let recoveredLog;
  const recovery = new Promise((r) => setTimeout(r, OUTAGE_MS)).then(() => {
    proxy.faults.length = 0;
    recoveredAt = Date.now();
    recoveredLog = proxy.log.length;
  });
  const bodies = await Promise.all(fetchers.map(async (f) => {
    const res = await f.fetch(`http://w/run?mode=${mode}&ms=${RUN_MS}&every=${EVERY_MS}&run=${run}`);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return body;
  }));
  await recovery;
  const intoOutage = proxy.log.slice(from, recoveredLog).filter((l) => l.method === 'tools/call' && l.fault?.status === 503).length;
  // Per Worker: how long after the recovery its first call that succeeded started (a call that started during
  // the outage and succeeded counts from the recovery: 0).
  const through = bodies.map((b) => {
    const first = b.calls.find((c) => c.status === 'succeeded' && c.at + 50 >= recoveredAt);
    return first ? Math.max(0, first.at - recoveredAt) : Infinity;
  });
  const probes = bodies.reduce((n, b) => n + b.probes, 0);
  const calls = bodies.reduce((n, b) => n + b.calls.length, 0);
  return { intoOutage, through, probes, calls, stats: bodies.map((b) => b.stats) };
}

test('four Workers into one outage: shared, fewer tools/call reach the upstream, one probe at a time; the same recovery', async () => {
  const alone = await storm('alone');
  const shared = await storm('shared');
  const figures = JSON.stringify({ alone, shared });
  console.log(`# tools/call into the ${OUTAGE_MS} ms outage: independent ${alone.intoOutage} (probes ${alone.probes}), shared ${shared.intoOutage} (probes ${shared.probes}); first call through after recovery, ms: independent ${alone.through.join(', ')}; shared ${shared.through.join(', ')}`);
  assert.ok(alone.calls > WORKERS * 10 && shared.calls > WORKERS * 10, figures);
  assert.ok(shared.intoOutage < alone.intoOutage, figures);
  assert.ok(shared.probes * 2 <= alone.probes, `probes: ${figures}`);
  // Every Worker used the object (it answered), and no call went without an answer from it.
  for (const s of shared.stats) assert.ok(s.reads + s.reports + s.probesGranted > 0 && s.unreachable === 0, figures);
  // Recovery: every Worker's first call after the upstream is back is through within the open time, a call's
  // period and a sync (300 + 100 + 200 ms) plus slack, either way. Shared, the others learn of the one probe's
  // answer at their next refresh (a quarter of the ttl while shedding) instead of from a probe of their own: no
  // later than alone by more than a refresh, a slow refusal and a call's period (50 + 150 + 100 ms) plus slack.
  for (const r of [alone, shared]) for (const t of r.through) assert.ok(t <= 1_000, `recovery: ${figures}`);
  assert.ok(Math.max(...shared.through) <= Math.max(...alone.through) + 400, `recovery: ${figures}`);
});

test('a withRetry per request (a fresh engine each): alone, no breaker ever opens; shared, the fleet\'s fifth failing call opens it for every later request', async () => {
  const w = await mf.getWorker('w1');
  const once = async (mode, run) => {
    const res = await w.fetch(`http://w/once?mode=${mode}&run=${run}`);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return body;
  };
  const calls = () => proxy.log.filter((l) => l.method === 'tools/call').length;
  for (const mode of ['alone', 'shared']) {
    const run = `once-${mode}-${Date.now()}`;
    proxy.faults.push(...Array.from({ length: 1_000 }, () => ({ status: 503 })));
    const before = calls();
    const outs = [];
    for (let i = 0; i < 8; i++) outs.push(await once(mode, run));
    const reached = calls() - before;
    proxy.faults.length = 0;
    if (mode === 'alone') {
      assert.equal(reached, 8, 'every request sent its call into the outage');
      assert.ok(outs.every((o) => o.breaker === 'closed' && o.reason !== 'breaker_open'), JSON.stringify(outs));
    } else {
      assert.equal(reached, 5, `five failing calls across requests opened the shared breaker: ${JSON.stringify(outs)}`);
      assert.equal(outs[4].breaker, 'open');
      assert.deepEqual(outs.slice(5).map((o) => `${o.status}/${o.reason}/${o.attempts}`), Array(3).fill('failed/breaker_open/0'));
    }
    // Recovered: after the open time a request's probe (the lease's) closes it, and the next request goes through.
    await new Promise((r) => setTimeout(r, 350));
    const probe = await once(mode, run);
    assert.equal(probe.status, 'succeeded', JSON.stringify(probe));
    assert.equal((await once(mode, run)).status, 'succeeded');
  }
});

test('DurableObjectBreakerState meets its contract in a real Durable Object (reached from another Worker)', async () => {
  const res = await (await mf.getWorker('w2')).fetch('http://w/contract');
  const checks = await res.json();
  assert.equal(res.status, 200, JSON.stringify(checks));
  assert.ok(checks.length >= 39, `${checks.length} checks`);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
});

test('a Durable Object request is a subrequest: with a SubrequestBudget the shared breaker\'s are counted, and never take the next attempt\'s or the app\'s reserve', async () => {
  const res = await (await mf.getWorker('w1')).fetch(`http://w/budget?limit=16&run=budget-${Date.now()}`);
  const body = await res.json();
  const detail = JSON.stringify(body);
  assert.equal(res.status, 200, detail);
  for (const c of body.calls) assert.equal(c.spent, c.counted, `every request counted, the object's too: ${detail}`);
  assert.ok(body.asked >= 3 && body.sent >= 3, detail);
  const cost = ATTEMPT_SUBREQUESTS['']; // an attempt's request, and the cancellation if it times out
  assert.ok(body.remaining >= 1 && body.remaining - 1 < cost, `the app's reserve (1) is left, and less than an attempt more: ${detail}`);
  const last = body.calls.at(-1);
  assert.deepEqual([last.room < cost, last.status, last.reason, last.attempts], [true, 'failed', 'subrequest_budget', 0], detail);
  for (const c of body.calls.slice(0, -1)) assert.ok(c.room >= cost && c.attempts >= 1 && c.status === 'succeeded', `the object never took what a call needed: ${detail}`);
  assert.ok(body.stats.unpaid >= 1, detail);
});

// A hostile party: anything that reaches the object (an isolate with a bug, a clock far ahead, a caller with intent).
const raw = async (run, bodies) => (await (await mf.getWorker('w3')).fetch(`http://w/raw?run=${run}`, { method: 'POST', body: JSON.stringify(bodies) })).json();
const onceIn = async (run, skew = 0) => {
  const res = await (await mf.getWorker('w1')).fetch(`http://w/once?mode=shared&run=${run}&skew=${skew}`);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
};
const toolCalls = () => proxy.log.filter((l) => l.method === 'tools/call').length;
/** `n` honest requests, each its own withRetry (a fresh engine): how many reached the server, how they ended. */
async function honest(run, n) {
  const before = toolCalls();
  const outs = [];
  for (let i = 0; i < n; i++) outs.push(await onceIn(run));
  return { reached: toolCalls() - before, ends: outs.map((o) => `${o.status}/${o.reason}`) };
}
const OPEN_MS = 300; // the breaker's open time in /once

test('one report from the far future (sinceMs 2^53 − 1) opens the shared breaker for at most openMs after the object received it', async () => {
  const run = `future-${Date.now()}`;
  const [bad] = await raw(run, [{ op: 'report', server: 'tickets', snapshot: { state: 'open', sinceMs: Number.MAX_SAFE_INTEGER } }]);
  const answered = Date.now();
  assert.equal(bad.status, 200, JSON.stringify(bad));
  assert.ok(bad.body.state === 'open' && bad.body.sinceMs <= answered, `taken as received, not as told: ${JSON.stringify(bad.body)}`);
  // Past its open time (from the object's receipt), twenty honest requests all reach the server and succeed.
  await new Promise((r) => setTimeout(r, OPEN_MS + 20));
  const h = await honest(run, 20);
  assert.deepEqual(h, { reached: 20, ends: Array(20).fill('succeeded/succeeded') }, JSON.stringify(h));
  // The same report on another server: the probe lease goes to the first honest asker that adopted it.
  const [other] = await raw(run, [{ op: 'report', server: 'other', snapshot: { state: 'open', sinceMs: Number.MAX_SAFE_INTEGER } }]);
  const [lease] = await raw(run, [{ op: 'probe', server: 'other', holder: 'honest', sinceMs: other.body.sinceMs, nowMs: Date.now(), leaseMs: 1_000 }]);
  assert.equal(lease.body.granted, true, JSON.stringify(lease));
});

test('an isolate whose clock runs 60 s ahead trips the shared breaker: the others are shed for openMs, not 60 s more', async () => {
  const run = `skew-${Date.now()}`;
  proxy.faults.push(...Array.from({ length: 5 }, () => ({ status: 503 })));
  const skewed = [];
  for (let i = 0; i < 5; i++) skewed.push(await onceIn(run, 60_000));
  proxy.faults.length = 0;
  assert.equal(skewed[4].breaker, 'open', `the fleet's fifth failing call opened it: ${JSON.stringify(skewed)}`);
  const [stored] = await raw(run, [{ op: 'read', server: 'tickets' }]);
  assert.ok(stored.body.state === 'open' && stored.body.sinceMs <= Date.now(), `stored on the object's clock: ${JSON.stringify(stored.body)}`);
  await new Promise((r) => setTimeout(r, OPEN_MS + 20));
  const h = await honest(run, 20);
  assert.deepEqual(h, { reached: 20, ends: Array(20).fill('succeeded/succeeded') }, JSON.stringify(h));
});

test('what the object keeps is bounded: a server name over 256 characters and a server over maxServers (256) are refused by name', async () => {
  const run = `bounds-${Date.now()}`;
  const report = (server) => ({ op: 'report', server, snapshot: { state: 'closed', sinceMs: 1 }, counted: 'failure' });
  const [long] = await raw(run, [report('n'.repeat(490))]);
  assert.deepEqual([long.status, long.body.error?.code, long.body.error?.field], [400, 'too_large', 'server'], JSON.stringify(long));
  const answers = await raw(run, Array.from({ length: 300 }, (_, i) => report(`server-${i}`)));
  const kept = answers.filter((a) => a.status === 200).length;
  assert.equal(kept, 256, `kept ${kept} of 300`);
  for (const a of answers.slice(256)) assert.deepEqual([a.status, a.body.error.code, a.body.error.field], [400, 'too_many_servers', 'server'], JSON.stringify(a));
  const [again] = await raw(run, [report('server-7')]);
  assert.deepEqual([again.status, again.body.failures], [200, 2], 'a kept server still counts');
  const [stray] = await raw(run, [{ op: 'probe', server: 'server-7', holder: 'h', sinceMs: 0, leaseMs: 1, untilMs: Number.MAX_SAFE_INTEGER }]);
  assert.deepEqual([stray.status, stray.body.error?.field], [400, 'body.untilMs'], 'a field its op does not read is named');
});
