// The status tool without McpServer: `statusTool(ledger, { tenant })` is a framework-neutral definition (name,
// description, JSON Schema, annotations, handler). Served here through the MCP SDK's low-level `Server` — no zod,
// no registerTool: tools/list lists the definition as it is, tools/call hands its arguments to the handler —
// beside a keyed write behind `withIdempotency`, over Streamable HTTP. The package's checker passes the server,
// a withRetry client resolves an operation through it, and the words the model reads are the shared ones.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryLedgerStore, OperationLedger, STATUS_TOOL_NAME, statusTool, withIdempotency } from '../../pkg/server.node.js';
import { withRetry } from '../../pkg/client.node.js';
import { checkServer } from '../../pkg/check/index.js';
import { STATUS_TOOL, STATUS_WORDS } from '../../pkg/generated/names.js';

const tenantOf = (extra) => extra?.authInfo?.clientId;
const tickets = [];
let web;
let url;

/** One low-level Server per request (stateless Streamable HTTP), with a keyed write and the status tool. */
function mcpServer(ledger) {
  const status = statusTool(ledger, { tenant: tenantOf });
  const open = withIdempotency(ledger, async ({ title }, extra) => {
    tickets.push({ title, tenant: tenantOf(extra) });
    return { content: [{ type: 'text', text: `opened T-${tickets.length}` }], structuredContent: { id: `T-${tickets.length}` } };
  }, { action: 'open_ticket', tenant: tenantOf });
  const openTool = {
    name: 'open_ticket',
    description: 'Open a ticket (keyed by operation_id).',
    inputSchema: { type: 'object', properties: { title: { type: 'string' }, operation_id: { type: 'string' } }, required: ['title', 'operation_id'] },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  };
  const server = new Server({ name: 'neutral-status-tool', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [openTool, { name: status.name, description: status.description, inputSchema: status.inputSchema, annotations: status.annotations }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const { name, arguments: args } = req.params;
    if (name === status.name) return status.handler(args, extra);
    if (name === 'open_ticket') return open(args, extra);
    return { isError: true, content: [{ type: 'text', text: `no tool ${name}` }] };
  });
  return server;
}

before(async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  web = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString('utf8');
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer) req.auth = { token: bearer, clientId: bearer, scopes: [] };
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = mcpServer(ledger);
    res.on('close', () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${web.address().port}/mcp`;
});
after(() => new Promise((r) => web.close(r)));

test('the definition is the shared one: JSON Schema, annotations, the default name', () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const t = statusTool(ledger, { tenant: tenantOf });
  assert.equal(t.name, STATUS_TOOL_NAME);
  assert.equal(t.description, STATUS_TOOL.description);
  assert.deepEqual(t.inputSchema, STATUS_TOOL.inputSchema);
  assert.deepEqual(t.inputSchema.required, ['action', 'operation_id']);
  assert.deepEqual(t.annotations, { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false });
  // Each definition is its own copy: one server's edit reaches no other.
  t.inputSchema.properties.action.maxLength = 1;
  assert.equal(statusTool(ledger, { tenant: tenantOf }).inputSchema.properties.action.maxLength, 256);
  assert.throws(() => statusTool({}, { tenant: tenantOf }), { name: 'TypeError', field: 'ledger' });
  assert.throws(() => statusTool(ledger, {}), { name: 'TypeError', field: 'tenant' });
  assert.throws(() => statusTool(ledger, { tenant: tenantOf, description: 7 }), { name: 'TypeError', field: 'description' });
});

test('served by the SDK low-level Server: the checker passes it; an operation resolves through it; the words are the shared ones', async () => {
  const report = await checkServer(url, {
    tool: 'open_ticket', args: { title: 'checked' }, headers: { authorization: 'Bearer alice' }, otherTenantHeaders: { authorization: 'Bearer bob' },
  });
  const failed = report.checks.filter((c) => c.status === 'fail').map((c) => `${c.key}: ${c.reason}`);
  assert.deepEqual(failed, [], 'no check failed');
  assert.equal(report.checks.find((c) => c.key === 'status_tool').status, 'pass');
  assert.equal(report.ok, true);

  const client = new Client({ name: 'neutral-status-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer carol' } } }));
  try {
    const mcp = withRetry(client, { trusted: true });
    const done = await mcp.call({ name: 'open_ticket', arguments: { title: 'neutral' } });
    assert.equal(done.status, 'succeeded');
    const resolved = await mcp.resolve(done.operationId, { tool: 'open_ticket' });
    assert.equal(resolved.status, 'succeeded', 'the status tool answered for the operation');
    // The tool's own answer: structured, and the sentence of the shared table.
    const asked = await client.callTool({ name: STATUS_TOOL_NAME, arguments: { action: 'open_ticket', operation_id: done.operationId } });
    assert.equal(asked.structuredContent.status, 'succeeded');
    assert.equal(asked.content[0].text, STATUS_WORDS.succeeded.split('{id}').join(done.operationId));
    const never = await client.callTool({ name: STATUS_TOOL_NAME, arguments: { action: 'open_ticket', operation_id: 'op-never-sent-0001' } });
    assert.equal(never.structuredContent.status, 'not_found');
    // No zod in front of it: the handler refuses a bad action itself.
    const bad = await client.callTool({ name: STATUS_TOOL_NAME, arguments: { action: '', operation_id: done.operationId } });
    assert.equal(bad.isError, true);
  } finally {
    await client.close();
  }
  assert.equal(tickets.filter((t) => t.tenant === 'carol').length, 1, 'the write ran once');
});
