// run: standalone
// operations.md: OpenTelemetry on both halves, with the real SDK (@opentelemetry/sdk-trace-base and sdk-metrics,
// their in-memory exporters; the AsyncLocalStorage context manager, the W3C propagator). A real McpServer over
// Streamable HTTP whose write goes through a ledger with `opentelemetry`, and a withRetry client with it: one keyed
// write, then the spans and metrics are read back — the call span and its attempt span, the attempt-duration
// histogram, the ledger's answer counter and its unresolved gauge, and the attempt's traceparent on the server.
import assert from 'node:assert/strict';
import http from 'node:http';
import { z } from 'zod';
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryLedgerStore, observeFetch, withIdempotency } from 'mcp-retry-policy';

// Your SDK setup, as you already have it (here in memory, to read back).
const spans = new InMemorySpanExporter();
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
const meterProvider = new MeterProvider({ readers: [reader] });
api.metrics.setGlobalMeterProvider(meterProvider);

// The server: a keyed write behind `ledger` (made below), stateless Streamable HTTP.
const store = new MemoryLedgerStore();
const seenMeta = [];
const tickets = [];
const web = http.createServer(async (req, res) => {
  const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
  server.registerTool('open_ticket', {
    inputSchema: { title: z.string(), operation_id: z.string() },
    annotations: { readOnlyHint: false, idempotentHint: false },
  }, withIdempotency(ledger, async ({ title }, extra) => {
    seenMeta.push(extra._meta ?? {});
    tickets.push(title);
    return { content: [{ type: 'text', text: `opened T-${tickets.length}` }] };
  }, { action: 'open_ticket', tenant: () => 'user-4711' }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => transport.close());
  await server.connect(transport);
  await transport.handleRequest(req, res);
});
await new Promise((r) => web.listen(0, '127.0.0.1', r));
// The client: the SDK's, connected below.
const client = new Client({ name: 'my-agent', version: '1.0.0' });

// ANCHOR: otel
import * as otel from '@opentelemetry/api';
import { OperationLedger, withRetry } from 'mcp-retry-policy';

const mcp = withRetry(client, { trusted: true, opentelemetry: otel });
const ledger = new OperationLedger({ store, opentelemetry: otel });   // server: answer and incident counters, the unresolved gauge
// ANCHOR_END: otel

await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${web.address().port}/mcp`), { fetch: observeFetch() }));
const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'Printer on fire' } });
assert.equal(out.status, 'succeeded', out.message);

// Spans: the call and its one attempt, both `tools/call open_ticket`, the attempt a child of the call.
const named = spans.getFinishedSpans().filter((s) => s.name === 'tools/call open_ticket');
assert.equal(named.length, 2, named.map((s) => s.name).join(', '));
const callSpan = named.find((s) => s.attributes['mcp_retry_policy.status'] !== undefined);
const attemptSpan = named.find((s) => s !== callSpan);
assert.equal(callSpan.attributes['mcp_retry_policy.status'], 'succeeded');
assert.equal(callSpan.attributes['gen_ai.tool.name'], 'open_ticket');
assert.equal(callSpan.attributes['mcp_retry_policy.operation_id'], out.operationId);
assert.equal(attemptSpan.parentSpanContext?.spanId ?? attemptSpan.parentSpanId, callSpan.spanContext().spanId);
// The attempt's trace context reached the server in params._meta.
assert.match(seenMeta[0].traceparent, new RegExp(`^00-${attemptSpan.spanContext().traceId}-${attemptSpan.spanContext().spanId}-0[01]$`));

// Metrics, after a collection.
await reader.forceFlush();
const metrics = exporter.getMetrics().at(-1).scopeMetrics.flatMap((sm) => sm.metrics);
const metric = (name) => metrics.find((m) => m.descriptor.name === name);
const duration = metric('mcp.client.operation.duration');
assert.equal(duration.dataPoints.length, 1);
assert.equal(duration.dataPoints[0].value.count, 1, 'one attempt');
assert.equal(duration.dataPoints[0].attributes['gen_ai.tool.name'], 'open_ticket');
const answers = metric('mcp_retry_policy.ledger.answers').dataPoints.map((p) => [p.attributes['mcp_retry_policy.ledger.answer'], p.attributes['mcp_retry_policy.ledger.action'], p.value]);
assert.deepEqual(answers, [['execute', 'open_ticket', 1]]);
const unresolved = metric('mcp_retry_policy.ledger.unresolved').dataPoints.map((p) => `${p.attributes['mcp_retry_policy.ledger.action']}/${p.attributes['mcp_retry_policy.ledger.state']}=${p.value}`).sort();
assert.deepEqual(unresolved, ['open_ticket/pending=0', 'open_ticket/unknown=0']);

await client.close();
web.close();
await meterProvider.shutdown();
console.log('OpenTelemetry: call and attempt spans, traceparent on the server, the duration histogram, the ledger counter and gauge');
