// run: standalone
// integrations.md: the AI SDK's `generateText` calling an MCP tool through `aiSdkTools(withRetry(client))`. The model
// is the AI SDK's own test model (`MockLanguageModelV3` from `ai/test`), scripted to call `open_ticket` once and
// then answer with what the tool returned; the MCP server is real and in this process (the SDK's McpServer over
// Streamable HTTP, the write behind the operation ledger). Checked: the model sees the ticket; the tool has no
// operation-id argument (idFromIntent); the same tool-call id again reuses the operation id (one ticket); and an
// outcome that is not known comes back as a tool result the model reads, not a thrown error.
import assert from 'node:assert/strict';
import http from 'node:http';
import { z } from 'zod';
import { MockLanguageModelV3 } from 'ai/test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { MemoryLedgerStore, OperationLedger, OutcomeUnknown, withIdempotency } from 'mcp-retry-policy';

// The MCP server: `open_ticket` behind the ledger; a title with "(slow)" stands in for a ticket API that timed out.
const tickets = [];
const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
const web = http.createServer(async (req, res) => {
  const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
  server.registerTool('open_ticket', {
    description: 'Open a support ticket.',
    inputSchema: { title: z.string(), operation_id: z.string() },
    annotations: { readOnlyHint: false, idempotentHint: false },
  }, withIdempotency(ledger, async ({ title }) => {
    if (title.includes('(slow)')) throw new OutcomeUnknown('the ticket API did not answer');
    tickets.push(title);
    return { content: [{ type: 'text', text: `opened T-${tickets.length}: ${title}` }] };
  }, { action: 'open_ticket', tenant: () => 'demo' }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => transport.close());
  await server.connect(transport);
  await transport.handleRequest(req, res);
});
await new Promise((r) => web.listen(0, '127.0.0.1', r));
process.env.MCP_URL = `http://127.0.0.1:${web.address().port}/mcp`;

// The model: in your app a provider's (`openai('gpt-4.1')`, …); here the AI SDK's mock, scripted.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const toolOutputs = [];
const scripted = (toolCallId, title) => new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const last = prompt.at(-1);
    if (last.role === 'tool') {
      const output = last.content[0].output;
      toolOutputs.push(output);
      return { content: [{ type: 'text', text: `Done: ${JSON.stringify(output.value)}` }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    }
    return { content: [{ type: 'tool-call', toolCallId, toolName: 'open_ticket', input: JSON.stringify({ title }) }], finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage, warnings: [] };
  },
});
let model = scripted('call_1', 'Printer on fire');

// ANCHOR: ai-sdk
import { generateText, stepCountIs } from 'ai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch } from 'mcp-retry-policy';
import { aiSdkTools } from 'mcp-retry-policy/ai-sdk';

const transport = () => new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), { fetch: observeFetch() });
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(transport());
const mcp = withRetry(client, { transport, trusted: true, idFromIntent: true });
const result = await generateText({ model, tools: await aiSdkTools(mcp), stopWhen: stepCountIs(5), prompt: 'The printer is on fire. Open a ticket.' });
// ANCHOR_END: ai-sdk

assert.match(result.text, /opened T-1: Printer on fire/, 'the model saw the ticket');
assert.deepEqual(tickets, ['Printer on fire']);
const tools = await aiSdkTools(mcp);
assert.deepEqual(Object.keys(tools), ['open_ticket']);
// The AI SDK tool's input schema: `title` only — the model never sees or invents an operation id.
const schema = tools.open_ticket.inputSchema.jsonSchema;
assert.deepEqual(Object.keys(schema.properties), ['title']);

// The same tool-call id again (a repeated tool call): the same operation id, replayed by the ledger — one ticket.
model = scripted('call_1', 'Printer on fire');
const again = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'The printer is on fire. Open a ticket.' });
assert.match(again.text, /opened T-1: Printer on fire/);
assert.equal(tickets.length, 1, 'one ticket for the repeated tool call');

// An outcome that is not known: a tool result the model reads (what happened, what to do), never a throw.
model = scripted('call_2', 'Printer on fire (slow)');
const lost = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'Open a ticket about the slow printer.' });
assert.match(JSON.stringify(toolOutputs.at(-1)), /may or may not have taken effect/);
assert.match(lost.text, /may or may not/);
assert.equal(tickets.length, 1);

await client.close();
web.close();
console.log(result.text);
