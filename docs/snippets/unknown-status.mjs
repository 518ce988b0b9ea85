// run: standalone
// unknown.md: a keyed write whose every answer is lost ends `succeeded` on the client, from the server's status tool.
// A real McpServer (one session) behind a small proxy of our own on 127.0.0.1 that forwards each `open_ticket`
// call, lets the server commit and then closes the connection before any byte of the answer.
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryLedgerStore, OperationLedger, withIdempotency, withRetry, observeFetch } from 'mcp-retry-policy';

// --- the server of server.md: a keyed write behind the ledger; the tenant is the token's subject
const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
const principal = (extra) => extra.authInfo?.clientId;
const tickets = [];
const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
server.registerTool('open_ticket', {
  description: 'Open a ticket. Pass a fresh operation_id (a UUID) per ticket; reuse it to retry.',
  inputSchema: { title: z.string(), operation_id: z.string() },
  annotations: { readOnlyHint: false, idempotentHint: false },
}, withIdempotency(ledger, async ({ title }) => {
  tickets.push(title);
  return { content: [{ type: 'text', text: `opened T-${tickets.length}` }], structuredContent: { id: `T-${tickets.length}` } };
}, { action: 'open_ticket', tenant: principal }));
const serverTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, enableJsonResponse: true });
await server.connect(serverTransport);
const upstream = http.createServer((req, res) => {
  req.auth = { token: 'alice', clientId: 'alice', scopes: [] }; // stands in for your authentication
  serverTransport.handleRequest(req, res);
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));

// --- the proxy: every answer to open_ticket is lost after the server committed
let dropped = 0;
const agent = new http.Agent({ keepAlive: false });
const proxy = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const drop = /"method":"tools\/call"/.test(body) && JSON.parse(body).params?.name === 'open_ticket';
  const up = http.request({ host: '127.0.0.1', port: upstream.address().port, path: req.url, method: req.method, headers: req.headers, agent }, async (upRes) => {
    const answer = [];
    for await (const c of upRes) answer.push(c);
    if (drop) {
      dropped += 1;
      return req.socket.destroy();
    }
    res.writeHead(upRes.statusCode, upRes.headers).end(Buffer.concat(answer));
  });
  up.end(body);
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));

// --- the client of client.md, through the proxy
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${proxy.address().port}/mcp`), { fetch: observeFetch() }));

// ANCHOR: status
// Server: one call beside the write tools (same ledger, same tenant function).
import { registerStatusTool } from 'mcp-retry-policy';
registerStatusTool(server, ledger, { tenant: principal }); // tool `operation_status`; the token's subject

// Client: nothing to do — withRetry asks on its own when a keyed write ends unknown or pending.
const mcp = withRetry(client, { trusted: true });
const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'printer on fire' } });
// every answer cut → out.status 'succeeded', out.reason 'resolved_by_status', out.result = the first ticket

// Later (another tab, after a crash): ask about what the journal still holds.
for (const o of await mcp.reconcile()) console.log(o.operationId, o.status);  // or mcp.resolve(operationId)
// ANCHOR_END: status

assert.equal(out.status, 'succeeded', out.message);
assert.equal(out.reason, 'resolved_by_status');
assert.deepEqual(out.result.structuredContent, { id: 'T-1' });
assert.equal(dropped, 3, 'every attempt (maxAttempts 3) lost its answer');
assert.deepEqual(tickets, ['printer on fire'], 'the write ran once');
assert.deepEqual(await mcp.pendingOperations(), [], 'nothing left open');

// reconcile() and resolve(): a write left unknown (autoResolve off) is closed later from the status tool.
const later = withRetry(client, { trusted: true, autoResolve: false });
const open = await later.call({ name: 'open_ticket', arguments: { title: 'toner low' } });
assert.equal(open.status, 'unknown', open.message);
assert.equal((await later.pendingOperations()).length, 1);
const closed = await later.reconcile();
assert.deepEqual(closed.map((o) => [o.operationId, o.status, o.result?.structuredContent?.id]), [[open.operationId, 'succeeded', 'T-2']]);
assert.deepEqual(await later.pendingOperations(), []);
const again = await later.resolve(open.operationId, { tool: 'open_ticket' });
assert.equal(again.status, 'succeeded');
assert.deepEqual(tickets, ['printer on fire', 'toner low']);

await client.close();
await serverTransport.close();
for (const s of [proxy, upstream]) {
  s.closeAllConnections();
  await new Promise((r) => s.close(r));
}
