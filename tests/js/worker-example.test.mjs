// examples/worker under `wrangler dev --local` (wrangler 4.86, the same workerd as miniflare here), driven over
// HTTP: its MCP server's keyed write runs once however often it is sent (the ledger in the Durable Object's
// storage), its status tool answers, and its /relay route calls the real MCP server behind the fault proxy
// through withRetry: a keyed write whose first answer is cut ends `succeeded` with one ticket upstream.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { startWranglerDev } from '../support/wrangler-dev.mjs';

let upstream;
let proxy;
let dev;
let base;

before(async () => {
  upstream = await startMcpServer();
  proxy = await startFaultProxy(upstream.url);
  dev = await startWranglerDev('worker', { vars: { UPSTREAM_MCP_URL: proxy.url } });
  base = dev.url;
});

after(async () => {
  await dev?.stop();
  await proxy?.close();
  await upstream?.close();
});

test('the Worker\'s MCP server: a keyed write sent twice runs once (the ledger in the Durable Object), the status tool answers', async () => {
  const client = new Client({ name: 'worker-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(tools, ['count_tickets', 'open_ticket', 'operation_status']);
    const id = `op-worker-${process.pid}`;
    const first = await client.callTool({ name: 'open_ticket', arguments: { title: 'from the test', operation_id: id } });
    const again = await client.callTool({ name: 'open_ticket', arguments: { title: 'from the test', operation_id: id } });
    assert.deepEqual(again.content, first.content);
    assert.equal((await client.callTool({ name: 'count_tickets', arguments: {} })).content[0].text, '1');
    const status = await client.callTool({ name: 'operation_status', arguments: { action: 'open_ticket', operation_id: id } });
    assert.equal(status.structuredContent.status, 'succeeded');
    assert.deepEqual(status.structuredContent.result.content, first.content);
  } finally {
    await client.close();
  }
});

test('the Worker calls another MCP server through withRetry: a keyed write whose first answer is cut → succeeded, one ticket upstream', async () => {
  proxy.faults.push('cut');
  const res = await fetch(`${base}/relay?tool=create_ticket_keyed&args=${encodeURIComponent(JSON.stringify({ title: 'relayed' }))}`);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.status, 'succeeded', body.message);
  assert.equal(body.attempts, 2);
  assert.equal(upstream.effects.tickets.length, 1);
  // An unsafe write cut the same way is unknown, sent once.
  proxy.faults.push('cut');
  const lost = await (await fetch(`${base}/relay?tool=create_ticket&args=${encodeURIComponent(JSON.stringify({ title: 'lost' }))}`)).json();
  assert.equal(lost.status, 'unknown');
  assert.equal(upstream.effects.tickets.length, 2);
});

test('the Worker\'s breaker is shared across its requests (a Durable Object): the fifth failing relay opens it, the next is shed without a call', async () => {
  const calls = () => proxy.log.filter((l) => l.method === 'tools/call').length;
  const relay = async () => (await fetch(`${base}/relay?tool=search_tickets&args=${encodeURIComponent(JSON.stringify({ query: 'storm' }))}`)).json();
  // An answered relay first: the failures in a row the earlier tests left in the object start again.
  assert.equal((await relay()).status, 'succeeded');
  proxy.faults.push(...Array.from({ length: 100 }, () => ({ status: 503 })));
  const before = calls();
  const outs = [];
  for (let i = 0; i < 6; i++) outs.push(await relay());
  const reached = calls() - before;
  proxy.faults.length = 0;
  const seen = JSON.stringify(outs.map((o) => `${o.status}/${o.reason}/${o.attempts}`));
  // Each relay is a fresh withRetry: alone, none would ever see five failing calls in a row.
  assert.deepEqual(outs.slice(0, 4).map((o) => `${o.reason}/${o.attempts}`), Array(4).fill('max_attempts/3'), seen);
  // The fifth in a row opened it; its own re-sends were held for the breaker's probes (and were them), so it
  // ends after its three attempts too, the last two 2 s apart at least.
  assert.equal(`${outs[4].reason}/${outs[4].attempts}`, 'max_attempts/3', `the fifth in a row opened it: ${seen}`);
  assert.equal(`${outs[5].status}/${outs[5].reason}/${outs[5].attempts}`, 'failed/breaker_open/0', seen);
  assert.equal(reached, 5 * 3, 'the shed relay sent nothing');
});
