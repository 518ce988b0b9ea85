// run: client
// unknown.md, "The model cannot mint a fresh id": idFromIntent against the quick-start server (MCP_URL).
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch } from 'mcp-retry-policy';

const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL ?? 'http://127.0.0.1:3000/mcp'), {
  fetch: observeFetch(), requestInit: { headers: { Authorization: 'Bearer alice' } },
}));
// A stand-in for the model: it picks create_ticket, and makes up an operation id of its own.
const seen = [];
const model = {
  async nextToolCall(tools) {
    seen.push(tools);
    return { id: 'call_7', name: 'create_ticket', arguments: { title: 'Printer on fire', operation_id: 'made-up-by-the-model' } };
  },
};

// ANCHOR: intent
const mcp = withRetry(client, { trusted: true, idFromIntent: true });
const tools = await mcp.listToolsForModel();                       // no operation_id in the keyed tools' schemas
const toolCall = await model.nextToolCall(tools);                  // your model's turn: { id, name, arguments }
const out = await mcp.call({ name: toolCall.name, arguments: toolCall.arguments }, { intent: toolCall.id }); // same tool call → same id
// ANCHOR_END: intent

const create = seen[0].find((t) => t.name === 'create_ticket');
assert.ok(create, 'the model sees create_ticket');
assert.ok(!('operation_id' in (create.inputSchema.properties ?? {})), JSON.stringify(create.inputSchema));
assert.ok(!(create.inputSchema.required ?? []).includes('operation_id'));
assert.equal(out.status, 'succeeded', out.message);
assert.notEqual(out.operationId, 'made-up-by-the-model', 'the id in the arguments is ignored');
// The same tool call again (a retry of it): the same operation id, so the ledger replays the first ticket.
const again = await mcp.call({ name: toolCall.name, arguments: toolCall.arguments }, { intent: toolCall.id });
assert.equal(again.operationId, out.operationId);
assert.deepEqual(again.result.structuredContent, out.result.structuredContent);
// A new tool call is a new intent: a new id, a new ticket.
const other = await mcp.call({ name: 'create_ticket', arguments: { title: 'Printer on fire' } }, { intent: 'call_8' });
assert.notEqual(other.operationId, out.operationId);
assert.notDeepEqual(other.result.structuredContent, out.result.structuredContent);
await client.close();
