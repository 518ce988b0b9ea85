// OpenTelemetry with the real SDK (sdk-trace-base and sdk-metrics with their in-memory exporters, the
// AsyncLocalStorage context manager, the W3C trace-context propagator): withRetry's spans, events, histogram
// and trace context in `params._meta`, against the real MCP server behind the fault proxy; the ledger's answer
// counter; and nothing at all when `opentelemetry` is not given.
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import Database from 'better-sqlite3';
import { MemoryLedgerStore, OperationLedger, SqliteLedgerStore, observeFetch, withIdempotency, withRetry } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';

const spans = new InMemorySpanExporter();
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const meterProvider = new MeterProvider({ readers: [reader] });
const seenMeta = [];
let server;
let proxy;
const clients = [];

before(async () => {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(tracerProvider);
  api.metrics.setGlobalMeterProvider(meterProvider);
  server = await startMcpServer({
    extraTools: (s) => s.registerTool('echo_meta', { description: 'Echoes the request _meta', inputSchema: { n: z.number() }, annotations: { readOnlyHint: true } },
      async (_args, extra) => {
        seenMeta.push(extra._meta ?? {});
        return { content: [{ type: 'text', text: 'ok' }] };
      }),
  });
  proxy = await startFaultProxy(server.url);
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy?.close();
  await server?.close();
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  api.trace.disable();
  api.metrics.disable();
  api.propagation.disable();
  api.context.disable();
});

beforeEach(() => {
  spans.reset();
  proxy.faults.length = 0;
  seenMeta.length = 0;
});

async function connect() {
  const client = new Client({ name: 'otel-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: observeFetch() }));
  clients.push(client);
  return client;
}

const fast = { baseDelayMs: 10, maxDelayMs: 50, attemptTimeoutMs: 2_000 };
const byName = (name) => spans.getFinishedSpans().filter((s) => s.name === name);
const parentOf = (s) => s.parentSpanContext?.spanId ?? s.parentSpanId;

async function histogram(name) {
  await reader.forceFlush();
  const all = metricExporter.getMetrics().at(-1)?.scopeMetrics.flatMap((sm) => sm.metrics) ?? [];
  return all.find((m) => m.descriptor.name === name);
}

test('a call whose first answer was cut: a call span, two attempt spans (resend_count), a retry event, traceparent in _meta, the duration histogram', async () => {
  const client = await connect();
  const events = [];
  const mcp = withRetry(client, { trusted: true, policy: fast, seed: 1, opentelemetry: api, onEvent: (e) => events.push(e) });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'echo_meta', arguments: { n: 1 } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.attempts.length, 2);

  const all = byName('tools/call echo_meta');
  assert.equal(all.length, 3, all.map((s) => s.name).join(', '));
  const call = all.find((s) => !all.some((p) => p.spanContext().spanId === parentOf(s)) && s.attributes['mcp_retry_policy.status']);
  const attempts = all.filter((s) => parentOf(s) === call.spanContext().spanId);
  assert.equal(attempts.length, 2);
  for (const s of [call, ...attempts]) {
    assert.equal(s.kind, api.SpanKind.CLIENT);
    assert.equal(s.attributes['mcp.method.name'], 'tools/call');
    assert.equal(s.attributes['gen_ai.tool.name'], 'echo_meta');
    assert.equal(s.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.match(String(s.attributes['mcp.session.id']), /^[0-9a-f-]{36}$/);
    assert.equal(s.attributes['mcp.protocol.version'], client.transport.protocolVersion);
  }
  assert.equal(call.attributes['mcp_retry_policy.status'], 'succeeded');
  assert.equal(call.attributes['mcp_retry_policy.attempts'], 2);
  assert.equal(call.attributes['mcp_retry_policy.safety'], 'read_only');
  assert.equal(call.attributes['error.type'], undefined);
  assert.equal(call.status.code, api.SpanStatusCode.UNSET);
  const [first, second] = attempts.sort((a, b) => (a.startTime[0] - b.startTime[0]) || (a.startTime[1] - b.startTime[1]));
  assert.equal(first.attributes['http.request.resend_count'], undefined);
  assert.equal(first.attributes['error.type'], first.attributes['error.type'] && String(first.attributes['error.type']));
  assert.ok(first.attributes['error.type'], 'the cut attempt has an error.type');
  assert.equal(first.status.code, api.SpanStatusCode.ERROR);
  assert.equal(second.attributes['http.request.resend_count'], 1);
  assert.equal(second.attributes['error.type'], undefined);
  const retry = call.events.find((e) => e.name === 'mcp_retry_policy.retry');
  assert.ok(retry, 'a retry event');
  assert.equal(retry.attributes['mcp_retry_policy.reason'], out.attempts[0].decision.reason);
  assert.equal(retry.attributes['mcp_retry_policy.delay_ms'], out.attempts[0].decision.delayMs);
  assert.equal(retry.attributes['mcp_retry_policy.cause'], out.attempts[0].classification.cause);

  // The server saw each attempt's own trace context, unprefixed in params._meta.
  assert.equal(seenMeta.length, 2, 'the cut attempt reached the server too');
  for (const [i, s] of [first, second].entries()) {
    const { traceId, spanId } = s.spanContext();
    assert.equal(seenMeta[i].traceparent, `00-${traceId}-${spanId}-01`);
  }
  assert.equal(first.spanContext().traceId, call.spanContext().traceId);

  const h = await histogram('mcp.client.operation.duration');
  assert.equal(h.descriptor.unit, 's');
  const points = h.dataPoints.filter((p) => p.attributes['gen_ai.tool.name'] === 'echo_meta');
  assert.equal(points.reduce((n, p) => n + p.value.count, 0), 2, 'one per attempt');
  assert.ok(points.every((p) => p.attributes['mcp.session.id'] === undefined), 'no session id on a metric');
  assert.ok(points.some((p) => p.attributes['error.type']), 'the failed attempt is recorded with its error.type');

  // The events name the call and the server, and carry durations.
  for (const e of events) {
    assert.equal(e.callId, 1);
    assert.equal(e.server, 'ticket-desk');
  }
  assert.ok(events.filter((e) => e.type === 'attempt').every((e) => typeof e.durationMs === 'number'));
  assert.equal(typeof events.find((e) => e.type === 'done').durationMs, 'number');
});

test('a tool error is error.type tool_error on the call span; an unsafe write cut is unknown, with the attempt\'s error.type', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1, opentelemetry: api });
  const failed = await mcp.call({ name: 'assign_ticket', arguments: { user: 'nobody' } });
  assert.equal(failed.status, 'tool_error');
  const [call] = byName('tools/call assign_ticket').filter((s) => s.attributes['mcp_retry_policy.status']);
  assert.equal(call.attributes['error.type'], 'tool_error');
  assert.equal(call.status.code, api.SpanStatusCode.ERROR);

  proxy.faults.push('cut');
  const lost = await mcp.call({ name: 'create_ticket', arguments: { title: 'x' } });
  assert.equal(lost.status, 'unknown');
  const [unknown] = byName('tools/call create_ticket').filter((s) => s.attributes['mcp_retry_policy.status']);
  assert.equal(unknown.attributes['mcp_retry_policy.status'], 'unknown');
  assert.equal(unknown.attributes['mcp_retry_policy.reason'], 'unsafe_after_unknown');
  assert.ok(unknown.attributes['error.type']);
  assert.equal(unknown.status.code, api.SpanStatusCode.ERROR);
});

test('without opentelemetry nothing is recorded and _meta carries no trace context', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1 });
  const out = await mcp.call({ name: 'echo_meta', arguments: { n: 2 } });
  assert.equal(out.status, 'succeeded');
  assert.equal(spans.getFinishedSpans().length, 0);
  assert.equal(seenMeta[0].traceparent, undefined);
  assert.throws(() => withRetry({ request() {} }, { opentelemetry: {} }), (e) => e instanceof TypeError && e.field === 'opentelemetry');
});

test('the ledger counts its answers: execute, replay, conflict, in_progress, rejected', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore(), opentelemetry: api });
  let release;
  const gate = new Promise((r) => { release = r; });
  const handler = withIdempotency(ledger, async ({ title, hold }) => {
    if (hold) await gate;
    return { content: [{ type: 'text', text: `opened ${title}` }] };
  }, { action: 'open_ticket', tenant: () => 'acme' });
  await handler({ title: 'a', operation_id: 'op-otel-0001' });
  await handler({ title: 'a', operation_id: 'op-otel-0001' });
  await handler({ title: 'b', operation_id: 'op-otel-0001' });
  const held = handler({ title: 'c', hold: true, operation_id: 'op-otel-0002' });
  await handler({ title: 'c', hold: true, operation_id: 'op-otel-0002' });
  release();
  await held;
  await handler({ title: 'd', operation_id: 'bad' });
  const counter = await histogram('mcp_retry_policy.ledger.answers');
  const counts = Object.fromEntries(counter.dataPoints.map((p) => [p.attributes['mcp_retry_policy.ledger.answer'], p.value]));
  assert.deepEqual(counts, { execute: 2, replay: 1, conflict: 1, in_progress: 1, rejected: 1 });
  assert.ok(counter.dataPoints.every((p) => p.attributes['mcp_retry_policy.ledger.action'] === 'open_ticket'));
  assert.throws(() => new OperationLedger({ store: new MemoryLedgerStore(), opentelemetry: { metrics: {} } }), (e) => e instanceof TypeError && e.field === 'opentelemetry');
});

const ACTION = 'mcp_retry_policy.ledger.action';
const STATE = 'mcp_retry_policy.ledger.state';

/** The unresolved gauge's points for actions starting with `prefix`: `{ 'action/state': value }`, after a collection. */
async function unresolvedPoints(prefix) {
  const gauge = await histogram('mcp_retry_policy.ledger.unresolved');
  const points = (gauge?.dataPoints ?? []).filter((p) => p.attributes[ACTION]?.startsWith(prefix));
  for (const p of points) assert.deepEqual(Object.keys(p.attributes).sort(), [ACTION, STATE], 'by action and state only: never by tenant');
  return Object.fromEntries(points.map((p) => [`${p.attributes[ACTION]}/${p.attributes[STATE]}`, p.value]));
}

test('the ledger observes its unresolved records: a gauge by action and state (not tenant), one count query per unresolvedCacheMs', async () => {
  // The real memory store; its count is counted (and can be made to fail) to see what a collection costs.
  const inner = new MemoryLedgerStore();
  let counted = 0;
  let down = false;
  const store = {
    get: (k) => inner.get(k),
    insert: (k, r) => inner.insert(k, r),
    replace: (k, v, r, res) => inner.replace(k, v, r, res),
    countUnresolved: async (f) => {
      counted++;
      if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return inner.countUnresolved(f);
    },
  };
  let clock = 1_764_000_000_000;
  const events = [];
  const ledger = new OperationLedger({ store, opentelemetry: api, now: () => clock, onEvent: (e) => events.push(e) });
  const tenant = (x) => x.sub;
  const failing = withIdempotency(ledger, async () => { throw new Error('downstream timeout'); }, { action: 'gauge_charge', tenant });
  let release;
  const gate = new Promise((r) => { release = r; });
  const slow = withIdempotency(ledger, async () => (await gate, { content: [] }), { action: 'gauge_ship', tenant });
  withIdempotency(ledger, async () => ({ content: [] }), { action: 'gauge_quiet', tenant });
  await failing({ operation_id: 'op-gauge-0001' }, { sub: 'tenant-a' });
  await failing({ operation_id: 'op-gauge-0002' }, { sub: 'tenant-b' });
  const running = slow({ operation_id: 'op-gauge-0003' }, { sub: 'tenant-a' });
  await new Promise((r) => setImmediate(r)); // its claim is written

  const zero = { 'gauge_charge/pending': 0, 'gauge_ship/unknown': 0, 'gauge_quiet/pending': 0, 'gauge_quiet/unknown': 0 };
  // Two tenants' unknown records summed into one series; a registered action with none reads 0.
  assert.deepEqual(await unresolvedPoints('gauge_'), { ...zero, 'gauge_charge/unknown': 2, 'gauge_ship/pending': 1 });
  assert.equal(counted, 1);
  // Within the cache period another collection does not ask the store (and shows the cached count).
  await failing({ operation_id: 'op-gauge-0004' }, { sub: 'tenant-c' });
  assert.equal((await unresolvedPoints('gauge_'))['gauge_charge/unknown'], 2);
  assert.equal(counted, 1, 'one count query per unresolvedCacheMs');
  clock += 5_000;
  release();
  await running;
  assert.deepEqual(await unresolvedPoints('gauge_'), { ...zero, 'gauge_charge/unknown': 3, 'gauge_ship/pending': 0 });
  assert.equal(counted, 2);
  // A store that fails: told (store_error, during countUnresolved), and not asked again within the period.
  down = true;
  clock += 5_000;
  await reader.forceFlush();
  await reader.forceFlush();
  assert.equal(counted, 3);
  assert.ok(events.some((e) => e.type === 'store_error' && e.during === 'countUnresolved'), JSON.stringify(events.map((e) => e.type)));
  down = false;
  clock += 5_000;
  assert.equal((await unresolvedPoints('gauge_'))['gauge_charge/unknown'], 3);
  assert.equal(counted, 4);
  assert.throws(() => new OperationLedger({ store, opentelemetry: api, unresolvedCacheMs: -1 }), (e) => e instanceof TypeError && e.field === 'unresolvedCacheMs');
});

test('the unresolved gauge on a SQLite store (its count query), unresolvedCacheMs: 0 asks on every collection', async () => {
  const db = new Database(':memory:');
  try {
    const ledger = new OperationLedger({ store: new SqliteLedgerStore(db), opentelemetry: api, unresolvedCacheMs: 0 });
    const failing = withIdempotency(ledger, async () => { throw new Error('downstream timeout'); }, { action: 'gauge_sql', tenant: (x) => x.sub });
    await failing({ operation_id: 'op-gauge-sql-1' }, { sub: 'tenant-a' });
    assert.deepEqual(await unresolvedPoints('gauge_sql'), { 'gauge_sql/pending': 0, 'gauge_sql/unknown': 1 });
    await failing({ operation_id: 'op-gauge-sql-2' }, { sub: 'tenant-b' });
    assert.deepEqual(await unresolvedPoints('gauge_sql'), { 'gauge_sql/pending': 0, 'gauge_sql/unknown': 2 });
  } finally {
    db.close();
  }
});
