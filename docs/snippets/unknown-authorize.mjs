// run: standalone
// unknown.md, "Who may read what": the status tool's tenant is an organisation, and `authorize` lets only payroll
// admins read `payroll_adjust` records. A real McpServer (stateless Streamable HTTP) on 127.0.0.1, in process; its
// stand-in authentication reads "Authorization: Bearer <user>" from a table of users.
import assert from 'node:assert/strict';
import http from 'node:http';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryLedgerStore, OperationLedger, registerStatusTool, withIdempotency } from 'mcp-retry-policy/server';

// Who is who: the org is the tenant, the subject the principal. Mallory's token carries no scopes at all.
const users = {
  ada: { org: 'acme', scopes: ['payroll:read'] },
  bob: { org: 'acme', scopes: [] },
  eve: { org: 'globex', scopes: ['payroll:read'] },
  mallory: { org: 'acme' },
};
const incidents = [];
const ledger = new OperationLedger({ store: new MemoryLedgerStore(), onEvent: (e) => incidents.push(e) });
const org = (extra) => extra.authInfo?.extra?.org;
const sub = (extra) => extra.authInfo?.extra?.sub;
let runs = 0;

function desk() {
  const server = new McpServer({ name: 'hr-desk', version: '1.0.0' });
  const write = (action) => server.registerTool(action, {
    description: `${action}: pass a fresh operation_id (a UUID); reuse it to retry.`,
    inputSchema: { note: z.string(), operation_id: z.string() },
    annotations: { readOnlyHint: false, idempotentHint: false },
  }, withIdempotency(ledger, async ({ note }) => {
    runs += 1;
    return { content: [{ type: 'text', text: `${action} done` }], structuredContent: { action, note, run: runs } };
  }, { action, tenant: org, principal: sub }));
  write('payroll_adjust');
  write('open_ticket');
  // ANCHOR: authorize
  registerStatusTool(server, ledger, {
    tenant: (extra) => extra.authInfo?.extra?.org,                       // the organisation is the tenant here
    authorize: ({ action, extra }) => action !== 'payroll_adjust' || extra.authInfo?.scopes.includes('payroll:read'),
  });
  // ANCHOR_END: authorize
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  const name = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  const user = users[name];
  if (!user) return res.writeHead(401).end();
  req.auth = { token: name, clientId: 'hr-app', scopes: user.scopes, extra: { org: user.org, sub: name } };
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => transport.close());
  await desk().connect(transport);
  await transport.handleRequest(req, res);
});
await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
const url = new URL(`http://127.0.0.1:${httpServer.address().port}/mcp`);

const clients = {};
for (const name of Object.keys(users)) {
  clients[name] = new Client({ name, version: '1.0.0' });
  await clients[name].connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${name}` } } }));
}
const statusOf = async (who, action, operationId) =>
  (await clients[who].callTool({ name: 'operation_status', arguments: { action, operation_id: operationId } })).structuredContent.status;

const pay = await clients.ada.callTool({ name: 'payroll_adjust', arguments: { note: '+5%', operation_id: 'op-pay-1' } });
assert.equal(pay.structuredContent.action, 'payroll_adjust');
const ticket = await clients.ada.callTool({ name: 'open_ticket', arguments: { note: 'chair', operation_id: 'op-ticket-1' } });
assert.equal(ticket.structuredContent.action, 'open_ticket');

assert.equal(await statusOf('ada', 'payroll_adjust', 'op-pay-1'), 'succeeded', 'a payroll admin reads it');
assert.equal(await statusOf('bob', 'payroll_adjust', 'op-pay-1'), 'not_found', 'the same org without the scope reads nothing');
assert.equal(await statusOf('bob', 'payroll_adjust', 'op-never-used'), 'not_found', '… exactly as an id never used');
assert.equal(await statusOf('bob', 'open_ticket', 'op-pay-1'), 'not_found', 'asked under another action: refused for the one it is found under');
assert.equal(await statusOf('bob', 'open_ticket', 'op-ticket-1'), 'succeeded', 'other actions: the whole org');
assert.equal(await statusOf('eve', 'payroll_adjust', 'op-pay-1'), 'not_found', 'another org: nothing, scope or not');
// An authorize that throws (mallory's token has no scopes) answers not_found too, and the ledger's onEvent hears it.
assert.equal(await statusOf('mallory', 'payroll_adjust', 'op-pay-1'), 'not_found');
assert.deepEqual(incidents.map((e) => e.type), ['authorize_error']);
assert.equal(runs, 2);

for (const c of Object.values(clients)) await c.close();
httpServer.closeAllConnections();
await new Promise((r) => httpServer.close(r));
