// run: server open_ticket {"title":"Printer on fire"}
// unknown.md: the status tool as a plain definition (`statusTool`), served by the SDK's low-level `Server` beside a
// `withIdempotency` write. Stateless Streamable HTTP (PORT from the environment); the tests run the package's
// checker against it as two tenants (Authorization: Bearer <tenant>), and a withRetry client below.
import http from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { MemoryLedgerStore, OperationLedger, withIdempotency } from 'mcp-retry-policy/server';

const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
const tickets = [];
// Your write tools, as the low-level Server lists and calls them.
const writeTools = [{
  name: 'open_ticket',
  description: 'Open a ticket. Pass a fresh operation_id (a UUID) per ticket; reuse it to retry.',
  inputSchema: { type: 'object', properties: { title: { type: 'string' }, operation_id: { type: 'string' } }, required: ['title', 'operation_id'] },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
}];
const openTicket = withIdempotency(ledger, async ({ title }) => {
  tickets.push(title);
  return { content: [{ type: 'text', text: `opened T-${tickets.length}` }], structuredContent: { id: `T-${tickets.length}`, title } };
}, { action: 'open_ticket', tenant: (extra) => extra.authInfo?.clientId });
function callWriteTool(params, extra) {
  if (params.name === 'open_ticket') return openTicket(params.arguments ?? {}, extra);
  throw new McpError(ErrorCode.InvalidParams, `Tool ${params.name} not found`);
}

// ANCHOR: lowlevel
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { statusTool } from 'mcp-retry-policy/server';

const status = statusTool(ledger, { tenant: (extra) => extra.authInfo?.clientId });
function ticketDesk() { // a Server per session (here per request: stateless)
  const server = new Server({ name: 'ticket-desk', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...writeTools, { name: status.name, description: status.description, inputSchema: status.inputSchema, annotations: status.annotations }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra) =>
    params.name === status.name ? status.handler(params.arguments, extra) : callWriteTool(params, extra));
  return server;
}
// ANCHOR_END: lowlevel

http.createServer(async (req, res) => {
  const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!bearer) return res.writeHead(401).end();
  req.auth = { token: bearer, clientId: bearer, scopes: [] }; // stands in for your authentication
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => transport.close());
  await ticketDesk().connect(transport);
  await transport.handleRequest(req, res);
}).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', function () {
  const url = `http://127.0.0.1:${this.address().port}/mcp`;
  selfTest(url).then(() => console.log(`listening on ${url}`), (e) => {
    console.error(e);
    process.exit(1);
  });
});

// Before it says it listens (the tests wait for that): a withRetry client resolves a write through the status tool,
// and another tenant reads nothing of it.
async function selfTest(url) {
  const { default: assert } = await import('node:assert/strict');
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { withRetry } = await import('mcp-retry-policy');
  const connect = async (tenant) => {
    const client = new Client({ name: 'self-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${tenant}` } } }));
    return client;
  };
  const alice = await connect('alice');
  const mcp = withRetry(alice, { trusted: true });
  const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'self-test' } });
  assert.equal(out.status, 'succeeded', out.message);
  assert.equal(out.safety, 'keyed');
  const resolved = await mcp.resolve(out.operationId, { tool: 'open_ticket' });
  assert.equal(resolved.status, 'succeeded', resolved.message);
  assert.deepEqual(resolved.result.structuredContent, out.result.structuredContent);
  const bob = await connect('bob');
  const asked = await bob.callTool({ name: 'operation_status', arguments: { action: 'open_ticket', operation_id: out.operationId } });
  assert.equal(asked.structuredContent.status, 'not_found');
  await alice.close();
  await bob.close();
}
