// withRetry around the MCP TypeScript SDK's *second* generation client (`@modelcontextprotocol/client` 2.x, the
// one Cloudflare `agents` ≥ 0.20 builds its connections on), against the same real McpServer (SDK v1 server)
// behind our fault proxy. v2 differs from v1 where withRetry looks: `request()` takes only a Standard Schema
// as the result schema (anything else is read as the options, dropping the attempt's timeout and signal), and
// its errors are `SdkHttpError` / `SdkError` / `ProtocolError` instead of `StreamableHTTPError` / `McpError`.
// Each test here failed before withRetry knew v2 (measured: a 503 read as "network, maybe sent", a held answer
// waited 2.5 s in one attempt, a lost session never re-initialized).
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { withRetry, observeFetch, MemoryJournal } from '../../pkg/node.js';
import { errorOutcome } from '../../pkg/client/attempt.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';

let server;
let proxy;
const clients = [];

before(async () => {
  server = await startMcpServer();
  proxy = await startFaultProxy(server.url);
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy.close();
  await server.close();
});
beforeEach(() => {
  proxy.faults.length = 0;
  server.effects.tickets.length = 0;
  server.effects.searches = 0;
  server.effects.keyed.clear();
});

const transport = () => new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: observeFetch() });
async function connect() {
  const client = new Client({ name: 'v2-agent', version: '1.0.0' });
  await client.connect(transport());
  clients.push(client);
  return client;
}
const fast = { baseDelayMs: 10, maxDelayMs: 50, attemptTimeoutMs: 1_000 };

test('v2: the client is the second generation, and a plain call succeeds through withRetry', async () => {
  const client = await connect();
  assert.equal(typeof client.request, 'function');
  assert.equal(typeof StreamableHTTPClientTransport, 'function');
  const mcp = withRetry(client, { trusted: true, policy: fast, seed: 1, transport });
  const out = await mcp.call({ name: 'search_tickets', arguments: { query: 'x' } });
  assert.equal(out.status, 'succeeded', JSON.stringify(out.attempts.map((a) => a.outcome)));
  assert.match(out.result.content[0].text, /tickets match/);
});

test('v2: a 503 is read as HTTP 503 with its Retry-After (not "network, maybe sent"), and a keyed write retried once', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1, transport, journal: new MemoryJournal() });
  proxy.faults.push({ status: 503, retryAfter: '0' });
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'a' } });
  assert.equal(out.status, 'succeeded');
  assert.deepEqual(out.attempts[0].outcome, { kind: 'http', status: 503, hadSession: true, retryAfterMs: 0 });
  assert.equal(server.effects.tickets.length, 1);
});

test('v2: an unsafe write whose 503 came after the gateway forwarded stops unknown, the tool ran once', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1, transport });
  proxy.faults.push({ status: 503, afterForward: true });
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'b' } });
  assert.equal(out.status, 'unknown');
  assert.equal(out.attempts.length, 1);
  assert.equal(out.attempts[0].outcome.kind, 'http');
  assert.equal(server.effects.tickets.length, 1);
});

test('v2: the attempt timeout reaches the client (the held answer times out at 1 s and the read is retried)', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1, transport });
  proxy.faults.push({ hold: 2_500 });
  const t0 = Date.now();
  const out = await mcp.call({ name: 'search_tickets', arguments: { query: 'x' } });
  const ms = Date.now() - t0;
  assert.equal(out.status, 'succeeded');
  assert.deepEqual(out.attempts.map((a) => a.outcome.kind), ['timeout', 'result']);
  assert.ok(ms < 2_400, `took ${ms} ms: the timeout did not reach the v2 request`);
});

test('v2: a response cut mid-body on a keyed write is retried with the same id: one effect', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1, transport });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'c' } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.attempts.length, 2);
  assert.equal(server.effects.tickets.length, 1);
  assert.deepEqual([...server.effects.keyed.keys()], [out.operationId]);
});

test('v2: a server JSON-RPC error is a ProtocolError with its code (-32603 retried on a keyed write)', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1, transport });
  proxy.faults.push({ jsonrpcError: -32603 });
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'd' } });
  assert.equal(out.status, 'succeeded');
  assert.deepEqual(out.attempts[0].outcome, { kind: 'jsonrpc_error', code: -32603 });
});

test('v2: a lost session (404) is re-initialized over a fresh transport and the call goes through', async () => {
  const client = await connect();
  const mcp = withRetry(client, { trusted: true, policy: fast, seed: 1, transport });
  await mcp.listToolsForModel(); // tools known before the session goes: the tools/call itself reads the 404
  const before = client.transport.sessionId;
  server.expireSessions();
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'e' } });
  assert.equal(out.status, 'succeeded', JSON.stringify(out.attempts.map((a) => [a.outcome, a.decision.action])));
  assert.equal(out.attempts[0].outcome.kind, 'http');
  assert.equal(out.attempts[0].outcome.status, 404);
  assert.notEqual(client.transport.sessionId, before);
  assert.equal(server.effects.tickets.length, 1);
});

test('v2 error shapes, one by one (the classes the client throws, as the SDK builds them)', async () => {
  const ctx = { aborted: false, sent: true, hadSession: true };
  const sdkError = (name, code, message, data) => Object.assign(new Error(message), { name, code, data });
  // Our own timer: SdkError REQUEST_TIMEOUT with { timeout }. The same code without it is someone else's abort.
  assert.deepEqual(errorOutcome(sdkError('SdkError', 'REQUEST_TIMEOUT', 'Request timed out', { timeout: 10 }), ctx), { kind: 'timeout' });
  assert.deepEqual(errorOutcome(sdkError('SdkError', 'REQUEST_TIMEOUT', 'AbortError'), ctx), { kind: 'network', sent: 'maybe' });
  // A closed connection proves nothing about the request: maybe sent.
  assert.deepEqual(errorOutcome(sdkError('SdkError', 'CONNECTION_CLOSED', 'Connection closed'), ctx), { kind: 'network', sent: 'maybe' });
  // A server's -32001 is not our timeout.
  assert.deepEqual(errorOutcome(sdkError('ProtocolError', -32001, 'Request timeout'), ctx), { kind: 'jsonrpc_error', code: -32001 });
  // The body's JSON-RPC code rides along with the status, as with v1.
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32020, message: 'x' } });
  assert.deepEqual(
    errorOutcome(sdkError('SdkHttpError', 'CLIENT_HTTP_NOT_IMPLEMENTED', `Error POSTing to endpoint: ${body}`, { status: 400, text: body }), ctx),
    { kind: 'http', status: 400, hadSession: true, jsonrpcCode: -32020 },
  );
  // An SdkHttpError without a usable status, or from a path that never answers a tools/call (the GET stream,
  // the session DELETE): maybe sent, whatever status it carries.
  assert.deepEqual(errorOutcome(sdkError('SdkHttpError', 'CLIENT_HTTP_NOT_IMPLEMENTED', 'x', {}), ctx), { kind: 'network', sent: 'maybe' });
  assert.deepEqual(errorOutcome(sdkError('SdkHttpError', 'CLIENT_HTTP_FAILED_TO_OPEN_STREAM', 'x', { status: 405 }), ctx), { kind: 'network', sent: 'maybe' });
  assert.deepEqual(errorOutcome(sdkError('SdkHttpError', 'CLIENT_HTTP_FAILED_TO_TERMINATE_SESSION', 'x', { status: 404 }), ctx), { kind: 'network', sent: 'maybe' });
  // The Agents adapter's own refusal, thrown instead of calling an unconnected client: not sent.
  assert.deepEqual(errorOutcome(Object.assign(new Error('not connected'), { code: 'ERR_MCP_RETRY_NOT_CONNECTED' }), ctx), { kind: 'network', sent: 'no' });
});
