// A long life stays bounded, and quiet. The default journal (MemoryJournal) forgets resolved entries by count and
// by age (counted here, not weighed: heap numbers are noisy; the soak in benches/js/soak.mjs weighs them), never a
// pending or unknown one, and says `journal_backlog` when those pile up; its options are checked by name. And 50
// calls in flight on one shared signal — the SDK transport's, through observeFetch, and a caller's, through
// withRetry — hold one listener on it and print no warning (Node warns past 10). Real SDK servers and clients:
// McpServer over the SDK's InMemoryTransport, and over Streamable HTTP on 127.0.0.1 with Node's fetch.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as api from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { MemoryJournal, observeFetch, withRetry } from '../../pkg/client.node.js';
import { startMcpServer } from '../support/mcp-server.mjs';

const warnings = [];
process.on('warning', (w) => warnings.push(`${w.name}: ${w.message}`));
/** The warnings emitted so far, after the turn in which Node emits them (process.emitWarning is deferred). */
async function warningsNow() {
  await new Promise((r) => setImmediate(r));
  return [...warnings];
}

/** A real McpServer in process with a keyed write (`book`: declares operation_id) and a read, and its client. */
async function inProcess() {
  const server = new McpServer({ name: 'long-life', version: '1.0.0' });
  server.registerTool('book', { inputSchema: { seat: z.number(), operation_id: z.string() } }, async ({ seat }) => ({ content: [{ type: 'text', text: `booked ${seat}` }] }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'long-life', version: '1.0.0' });
  await client.connect(a);
  return { client, close: async () => { await client.close(); await server.close(); } };
}

test('MemoryJournal refuses bad retention options by name, with a code', () => {
  const bad = [
    [{ maxSettled: Number.NaN }, RangeError, 'maxSettled', 'not_finite'],
    [{ maxSettled: -1 }, RangeError, 'maxSettled', 'too_small'],
    [{ maxSettled: Infinity }, RangeError, 'maxSettled', 'not_finite'],
    [{ maxSettled: 1.5 }, RangeError, 'maxSettled', 'not_integer'],
    [{ maxSettled: '100' }, TypeError, 'maxSettled', 'invalid_type'],
    [{ settledTtlMs: -Infinity }, RangeError, 'settledTtlMs', 'not_finite'],
    [{ settledTtlMs: -5 }, RangeError, 'settledTtlMs', 'too_small'],
    [{ settledTtlMs: 2 ** 60 }, RangeError, 'settledTtlMs', 'too_large'],
    [{ settledTtlMs: null }, TypeError, 'settledTtlMs', 'invalid_type'],
    [{ backlogThreshold: 0 }, RangeError, 'backlogThreshold', 'too_small'],
    [{ backlogThreshold: 10n }, TypeError, 'backlogThreshold', 'invalid_type'],
    [{ maxSetled: 5 }, TypeError, 'maxSetled', 'unknown_option'],
    [null, TypeError, 'options', 'invalid_type'],
    [7, TypeError, 'options', 'invalid_type'],
  ];
  for (const [options, type, field, code] of bad) {
    assert.throws(() => new MemoryJournal(options), (e) => e instanceof type && e.field === field && e.code === code, JSON.stringify(options, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)));
  }
  assert.deepEqual(new MemoryJournal().stats(), { entries: 0, unresolved: 0, backlogThreshold: 1_000 });
  assert.equal(new MemoryJournal({ maxSettled: 0, settledTtlMs: 0, backlogThreshold: 1 }).stats().backlogThreshold, 1);
});

test('5,000 keyed calls, each its own intent, through one wrapper: the journal keeps only the last maxSettled', async () => {
  const s = await inProcess();
  try {
    const journal = new MemoryJournal({ maxSettled: 500 });
    const mcp = withRetry(s.client, { journal });
    const ids = [];
    for (let i = 0; i < 5_000; i++) {
      const o = await mcp.call({ name: 'book', arguments: { seat: i } }, { intent: `seat-${i}` });
      assert.equal(o.status, 'succeeded');
      ids.push(o.operationId);
    }
    assert.deepEqual(journal.stats(), { entries: 500, unresolved: 0, backlogThreshold: 1_000 });
    assert.equal(await journal.get(ids[0]), undefined, 'the first call is forgotten');
    assert.equal(await journal.get(ids[4_499]), undefined, 'and the one just before the last 500');
    assert.equal((await journal.get(ids[4_500]))?.state, 'succeeded', 'the last 500 are kept');
    // A kept intent still names its first call (same operation id); a forgotten one makes a new entry.
    const again = await mcp.call({ name: 'book', arguments: { seat: 4_999 } }, { intent: 'seat-4999' });
    assert.equal(again.operationId, ids[4_999]);
    const fresh = await mcp.call({ name: 'book', arguments: { seat: 0 } }, { intent: 'seat-0' });
    assert.notEqual(fresh.operationId, ids[0]);
    assert.equal(journal.stats().entries, 500);
  } finally {
    await s.close();
  }
});

test('the default journal: at most 10,000 resolved entries, and a day of them by the wrapper\'s clock', async () => {
  const journal = new MemoryJournal();
  for (let i = 0; i < 12_000; i++) {
    await journal.begin({ tool: 't', operationId: `op-${i}`, intent: `i-${i}`, createdAt: i });
    await journal.settle(`op-${i}`, i % 2 ? 'succeeded' : 'failed', i);
  }
  assert.equal(journal.stats().entries, 10_000);
  assert.equal(await journal.get('op-1999'), undefined);
  assert.equal((await journal.get('op-2000'))?.state, 'failed');
  // By age, on the times the wrapper gives (its `now`): settled more than settledTtlMs before the newest time go.
  const s = await inProcess();
  try {
    let clock = 1_000_000;
    const aged = new MemoryJournal({ settledTtlMs: 1_000 });
    const mcp = withRetry(s.client, { journal: aged, now: () => clock });
    for (let i = 0; i < 300; i++) {
      clock += 10;
      assert.equal((await mcp.call({ name: 'book', arguments: { seat: i } }, { intent: `aged-${i}` })).status, 'succeeded');
    }
    // Each call settles at its clock; entries settled at or before clock − 1,000 are gone: the last 100 stay.
    assert.equal(aged.stats().entries, 100);
  } finally {
    await s.close();
  }
});

test('retention matches a plain model over 20,000 random begins, settles (again, back to unknown) and purges', async () => {
  let seed = 7;
  const rand = (n) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n);
  const max = 50;
  const ttl = 400;
  const journal = new MemoryJournal({ maxSettled: max, settledTtlMs: ttl });
  // The model: entries, and the resolved ones in the order of their last settlement.
  const model = new Map();
  let order = [];
  let latest = -Infinity;
  const sweep = (at) => {
    latest = Math.max(latest, at);
    while (order.length && (order.length > max || model.get(order[0]).settledAt <= latest - ttl)) model.delete(order.shift());
  };
  const OPEN = ['pending', 'unknown'];
  let t = 0;
  for (let step = 0; step < 20_000; step++) {
    t += rand(5);
    const id = `op-${rand(400)}`;
    const op = rand(10);
    if (op < 4) {
      await journal.begin({ tool: 't', operationId: id, createdAt: t });
      if (!model.has(id)) model.set(id, { state: 'pending', settledAt: undefined });
      sweep(t);
    } else if (op < 9) {
      const status = ['succeeded', 'failed', 'tool_error', 'unknown', 'pending'][rand(5)];
      const at = t - rand(50); // times need not come in order
      await journal.settle(id, status, at);
      const e = model.get(id);
      if (e) {
        e.state = status;
        e.settledAt = at;
        order = order.filter((x) => x !== id);
        if (!OPEN.includes(status)) order.push(id);
      }
      if (e) sweep(at);
    } else {
      const before = t - rand(300);
      const n = await journal.purge(before);
      const gone = order.filter((x) => model.get(x).settledAt <= before);
      assert.equal(n, gone.length, `purge at step ${step}`);
      for (const x of gone) model.delete(x);
      order = order.filter((x) => !gone.includes(x));
    }
    const open = [...model.values()].filter((e) => OPEN.includes(e.state)).length;
    assert.deepEqual(journal.stats(), { entries: model.size, unresolved: open, backlogThreshold: 1_000 }, `step ${step}`);
  }
  const kept = new Set((await journal.pending()).map((e) => e.operationId));
  for (const [id, e] of model) if (OPEN.includes(e.state)) assert.ok(kept.has(id), id);
});

test('pending and unknown entries are never forgotten; a backlog is told once per level as journal_backlog', async () => {
  const s = await inProcess();
  try {
    const journal = new MemoryJournal({ maxSettled: 10, backlogThreshold: 100 });
    // What a previous life left: 150 writes never settled, 20 of them unknown.
    for (let i = 0; i < 150; i++) await journal.begin({ tool: 'book', operationId: `old-${i}`, createdAt: 0 });
    for (let i = 0; i < 20; i++) await journal.settle(`old-${i}`, 'unknown', 1);
    const events = [];
    const mcp = withRetry(s.client, { journal, onEvent: (e) => e.type === 'journal_backlog' && events.push(e) });
    for (let i = 0; i < 1_000; i++) await mcp.call({ name: 'book', arguments: { seat: i } }, { intent: `b-${i}` });
    assert.equal(journal.stats().unresolved, 150);
    assert.ok(journal.stats().entries <= 160, `${journal.stats().entries} entries`);
    assert.equal((await mcp.pendingOperations()).length, 150, 'every unresolved entry is still listed');
    assert.equal(events.length, 1, 'said once at the first level, not once a call');
    assert.deepEqual({ ...events[0], callId: undefined }, { type: 'journal_backlog', tool: 'book', unresolved: 151, threshold: 100, callId: undefined, server: 'long-life' });
    for (let i = 150; i < 200; i++) await journal.begin({ tool: 'book', operationId: `old-${i}`, createdAt: 2 });
    await mcp.call({ name: 'book', arguments: { seat: 1 } }, { intent: 'b-next' });
    assert.equal(events.length, 2);
    assert.equal(events[1].unresolved, 201);
    // Resolved (as resolve/reconcile do: settle), they go like any other.
    for (let i = 0; i < 200; i++) await journal.settle(`old-${i}`, 'succeeded', 3);
    assert.equal(journal.stats().unresolved, 0);
    assert.ok(journal.stats().entries <= 10);
  } finally {
    await s.close();
  }
});

test('with opentelemetry, the journals\' unresolved entries are a gauge, summed, each journal once', async () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  const gauge = async () => {
    await reader.forceFlush();
    const all = exporter.getMetrics().at(-1)?.scopeMetrics.flatMap((sm) => sm.metrics) ?? [];
    return all.find((m) => m.descriptor.name === 'mcp_retry_policy.journal.unresolved')?.dataPoints.map((p) => p.value);
  };
  const s = await inProcess();
  try {
    const journal = new MemoryJournal();
    for (let i = 0; i < 3; i++) await journal.begin({ tool: 'book', operationId: `g-${i}`, createdAt: 0 });
    const mcp = withRetry(s.client, { journal, opentelemetry: api });
    withRetry(s.client, { journal, opentelemetry: api }); // a second wrapper on the same journal counts it once
    const other = withRetry(s.client, { opentelemetry: api, journal: new MemoryJournal() });
    await other.journal.begin({ tool: 'book', operationId: 'g-other', createdAt: 0 });
    assert.deepEqual(await gauge(), [4]);
    assert.equal((await mcp.call({ name: 'book', arguments: { seat: 1 } }, { intent: 'g' })).status, 'succeeded');
    await journal.settle('g-0', 'succeeded', 1);
    assert.deepEqual(await gauge(), [3]);
  } finally {
    await s.close();
    api.metrics.disable();
  }
});

// 50 in flight: a tool the server holds until the test lets it go, counting arrivals.
let http;
let arrived = 0;
let arrivals = [];
let gate;
const hold = () => {
  let open;
  gate = new Promise((r) => (open = r));
  return open;
};
const when = (n) => new Promise((r) => (arrived >= n ? r() : arrivals.push([n, r])));
before(async () => {
  http = await startMcpServer({
    extraTools: (server) => server.registerTool('wait_here', { inputSchema: { n: z.number() }, annotations: { readOnlyHint: true } }, async ({ n }) => {
      arrived++;
      arrivals = arrivals.filter(([k, r]) => (arrived >= k ? (r(), false) : true));
      await gate;
      return { content: [{ type: 'text', text: `done ${n}` }] };
    }),
  });
});
after(() => http?.close());

async function connectHttp() {
  const transport = new StreamableHTTPClientTransport(new URL(http.url), { fetch: observeFetch() });
  const client = new Client({ name: 'long-life', version: '1.0.0' });
  await client.connect(transport);
  return { client, shared: transport._abortController.signal };
}

test('50 calls in flight through observeFetch: one listener on the transport\'s signal, no warning', async () => {
  const { client, shared } = await connectHttp();
  const seen = (await warningsNow()).length;
  try {
    arrived = 0;
    const open = hold();
    const calls = Array.from({ length: 50 }, (_, n) => client.callTool({ name: 'wait_here', arguments: { n } }, undefined, { timeout: 600_000 }));
    await when(50);
    const listeners = getEventListeners(shared, 'abort').length;
    open();
    const results = await Promise.all(calls);
    assert.equal(results.length, 50);
    assert.ok(listeners <= 1, `${listeners} abort listeners on the shared signal with 50 requests in flight`);
    assert.deepEqual((await warningsNow()).slice(seen), []);
  } finally {
    await client.close();
  }
});

test('50 calls in flight through withRetry on one caller\'s signal: one listener, no warning, and its abort still ends each', async () => {
  const { client, shared } = await connectHttp();
  const seen = (await warningsNow()).length;
  try {
    const mcp = withRetry(client, { trusted: true });
    arrived = 0;
    let open = hold();
    const caller = new AbortController();
    let calls = Array.from({ length: 50 }, (_, n) => mcp.call({ name: 'wait_here', arguments: { n } }, { signal: caller.signal }));
    await when(50);
    const onCaller = getEventListeners(caller.signal, 'abort').length;
    const onShared = getEventListeners(shared, 'abort').length;
    open();
    assert.ok((await Promise.all(calls)).every((o) => o.status === 'succeeded'));
    assert.ok(onCaller <= 1, `${onCaller} abort listeners on the caller's signal with 50 calls in flight`);
    assert.ok(onShared <= 1, `${onShared} abort listeners on the transport's signal`);
    assert.equal(getEventListeners(caller.signal, 'abort').length, 0, 'none left when the calls are done');
    // What aborts what is unchanged: the caller's abort reaches every call in flight.
    arrived = 0;
    open = hold();
    calls = Array.from({ length: 50 }, (_, n) => mcp.call({ name: 'wait_here', arguments: { n } }, { signal: caller.signal }));
    await when(50);
    caller.abort(new Error('the user went away'));
    const ended = await Promise.all(calls);
    open();
    assert.ok(ended.every((o) => o.status !== 'succeeded' && o.attempts.at(-1)?.outcome.kind === 'aborted'), JSON.stringify(ended[0]));
    assert.deepEqual((await warningsNow()).slice(seen), []);
  } finally {
    await client.close();
  }
});
