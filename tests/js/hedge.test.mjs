// Hedged reads end to end: withRetry over the real TypeScript SDK client and McpServer (Streamable HTTP on
// 127.0.0.1). A tool slow on its first call and fast after: a hedged read returns the copy's answer early and
// the server sees `notifications/cancelled` for the first (the SDK aborts the handler's signal); an unsafe and
// a keyed tool are never hedged; an empty retry budget stops hedges.
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { withRetry, observeFetch } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';

const SLOW_MS = 1_500;
const seen = { calls: new Map(), cancelled: [] };

/** A tool whose first call (per name) takes SLOW_MS and whose later calls answer at once. */
function slowFirst(server, name, annotations, inputSchema = {}) {
  server.registerTool(name, { description: `${name}: slow on its first call`, inputSchema, annotations }, async (_args, extra) => {
    const n = (seen.calls.get(name) ?? 0) + 1;
    seen.calls.set(name, n);
    if (n === 1) {
      const cancelled = await new Promise((resolve) => {
        const t = setTimeout(() => resolve(false), SLOW_MS);
        extra.signal.addEventListener('abort', () => { clearTimeout(t); resolve(true); }, { once: true });
      });
      if (cancelled) seen.cancelled.push(name);
    }
    return { content: [{ type: 'text', text: `${name} answer ${n}` }] };
  });
}

let server;
let proxy;
const clients = [];
before(async () => {
  server = await startMcpServer({
    extraTools: (s) => {
      slowFirst(s, 'slow_read', { readOnlyHint: true });
      slowFirst(s, 'slow_idempotent', { readOnlyHint: false, destructiveHint: false, idempotentHint: true });
      slowFirst(s, 'slow_write', { readOnlyHint: false, destructiveHint: true, idempotentHint: false });
      slowFirst(s, 'slow_keyed', { readOnlyHint: false, destructiveHint: true, idempotentHint: false }, { operation_id: z.string() });
    },
  });
  proxy = await startFaultProxy(server.url);
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy.close();
  await server.close();
});
beforeEach(() => {
  seen.calls.clear();
  seen.cancelled.length = 0;
  proxy.faults.length = 0;
});

async function connect(v2 = false, url = server.url) {
  const client = v2 ? new ClientV2({ name: 'hedge-test-v2', version: '1.0.0' }) : new Client({ name: 'hedge-test', version: '1.0.0' });
  const Transport = v2 ? TransportV2 : StreamableHTTPClientTransport;
  await client.connect(new Transport(new URL(url), { fetch: observeFetch() }));
  clients.push(client);
  return client;
}

const policy = { hedgeAfterMs: 100, attemptTimeoutMs: 5_000 };
const waitFor = async (f) => {
  for (let i = 0; i < 100 && !f(); i++) await new Promise((r) => setTimeout(r, 20));
};

for (const [tool, v2] of [['slow_read', false], ['slow_idempotent', false], ['slow_read', true]]) {
  test(`${tool}${v2 ? ' (SDK v2 client)' : ''}: the hedge's answer wins early; the first copy is cancelled at the server`, async () => {
    const events = [];
    const mcp = withRetry(await connect(v2), { trusted: true, policy, seed: 1, onEvent: (e) => events.push(e) });
    const t0 = Date.now();
    const out = await mcp.call({ name: tool, arguments: {} });
    const took = Date.now() - t0;
    assert.equal(out.status, 'succeeded');
    assert.equal(out.result.content[0].text, `${tool} answer 2`, 'the hedge answered');
    assert.ok(took < SLOW_MS - 500, `answered in ${took} ms, not after the slow first copy (${SLOW_MS} ms)`);
    await waitFor(() => seen.cancelled.length > 0);
    assert.deepEqual(seen.cancelled, [tool], 'the server saw notifications/cancelled for the first copy');
    assert.deepEqual(events.filter((e) => e.type === 'hedge').map((e) => e.phase), ['sent', 'won']);
    assert.equal(events.filter((e) => e.type === 'attempt').length, 1, 'one attempt recorded: the winner');
    assert.deepEqual(mcp.engine.hedgeCounts, { sent: 1, won: 1, requestsInFlight: 0, hedgesInFlight: 0 });
  });
}

for (const tool of ['slow_write', 'slow_keyed']) {
  test(`${tool}: never hedged — one request, the slow answer`, async () => {
    const events = [];
    const mcp = withRetry(await connect(), { trusted: true, policy, seed: 1, onEvent: (e) => events.push(e) });
    const t0 = Date.now();
    const out = await mcp.call({ name: tool, arguments: {} });
    assert.equal(out.status, 'succeeded');
    assert.ok(Date.now() - t0 >= SLOW_MS - 50);
    assert.equal(seen.calls.get(tool), 1, 'the server ran it once');
    assert.deepEqual(events.filter((e) => e.type === 'hedge').map((e) => [e.phase, e.refusal]), [['refused', 'safety']]);
    assert.equal(mcp.engine.hedgeCounts.sent, 0);
  });
}

// A name proves nothing on an untrusted server: a write that carries the status tool's name (here the wrapper's
// `statusTool` is `slow_write`, as any server may name a write `operation_status`) is not a read. Before, the name
// made it read-only: hedged, it ran twice.
test('untrusted: a write named as the status tool is not hedged — the server runs it once', async () => {
  const events = [];
  const mcp = withRetry(await connect(), { policy, seed: 1, statusTool: 'slow_write', onEvent: (e) => events.push(e) });
  const out = await mcp.call({ name: 'slow_write', arguments: {} });
  assert.equal(out.status, 'succeeded');
  assert.equal(seen.calls.get('slow_write'), 1, 'the server ran it once');
  assert.deepEqual(events.filter((e) => e.type === 'hedge').map((e) => [e.phase, e.refusal]), [['refused', 'safety']]);
});

test('an empty retry budget stops hedges: the read waits for its slow copy', async () => {
  const events = [];
  const mcp = withRetry(await connect(), { trusted: true, policy: { ...policy, budget: { capacity: 0.5 } }, seed: 1, onEvent: (e) => events.push(e) });
  const t0 = Date.now();
  const out = await mcp.call({ name: 'slow_read', arguments: {} });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.result.content[0].text, 'slow_read answer 1');
  assert.ok(Date.now() - t0 >= SLOW_MS - 50);
  assert.deepEqual(events.filter((e) => e.type === 'hedge').map((e) => [e.phase, e.refusal]), [['refused', 'budget']]);
  assert.equal(seen.calls.get('slow_read'), 1);
});

test('a copy that fails (its connection reset) waits for the others: the slow first answer is the call\'s', async () => {
  const events = [];
  const mcp = withRetry(await connect(false, proxy.url), { trusted: true, policy, seed: 1, onEvent: (e) => events.push(e) });
  proxy.faults.push('pass', 'reset'); // the first copy goes through (slow); the hedge's connection is reset
  const out = await mcp.call({ name: 'slow_read', arguments: {} });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.result.content[0].text, 'slow_read answer 1');
  // The next tick asks again: maxHedges (1) is spent.
  assert.deepEqual(events.filter((e) => e.type === 'hedge').map((e) => [e.phase, e.refusal]), [['sent', undefined], ['failed', undefined], ['refused', 'max_hedges']]);
  assert.equal(events.filter((e) => e.type === 'attempt').length, 1, 'no retry: the first copy answered');
  assert.deepEqual(seen.cancelled, []);
  assert.deepEqual(mcp.engine.hedgeCounts, { sent: 1, won: 0, requestsInFlight: 0, hedgesInFlight: 0 });
});
