// An AI SDK agent whose MCP tool calls are safe to retry: `node examples/ai-sdk/agent.mjs`.
//
// It starts a small MCP ticket server on 127.0.0.1 (in your app: the server you already use), connects the
// official MCP SDK client through withRetry and hands the tools to `generateText`. The model here is the AI
// SDK's own mock, scripted to open one ticket; in your app it is a provider model (e.g. `openai('gpt-4.1')`),
// and nothing else changes. tests/js/ai-sdk.test.mjs runs the same loop with its answers cut.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { MemoryLedgerStore, OperationLedger, observeFetch, withIdempotency, withRetry } from 'mcp-retry-policy';
import { aiSdkTools } from 'mcp-retry-policy/ai-sdk';

// ── The MCP server: one write tool behind the operation ledger ───────────────────────────────────────────
const tickets = [];
const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
const sessions = new Map();
const web = http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const message = body ? JSON.parse(body) : undefined;
  let transport = sessions.get(req.headers['mcp-session-id']);
  if (!transport) {
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, onsessioninitialized: (id) => sessions.set(id, transport) });
    const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
    server.registerTool('open_ticket', {
      description: 'Open a support ticket.',
      inputSchema: { title: z.string(), operation_id: z.string() },
    }, withIdempotency(ledger, async ({ title }) => {
      tickets.push(title);
      return { content: [{ type: 'text', text: `opened T-${tickets.length}: ${title}` }] };
    }, { action: 'open_ticket', tenant: () => 'demo' }));
    await server.connect(transport);
  }
  await transport.handleRequest(req, res, message);
});
await new Promise((r) => web.listen(0, '127.0.0.1', r));
const url = new URL(`http://127.0.0.1:${web.address().port}/mcp`);

// ── The agent ────────────────────────────────────────────────────────────────────────────────────────────
const transport = () => new StreamableHTTPClientTransport(url, { fetch: observeFetch() });
const client = new Client({ name: 'agent', version: '1.0.0' });
await client.connect(transport());
const mcp = withRetry(client, {
  transport, // a fresh transport when the session must be re-established
  trusted: true, // this server's annotations are ours
  idFromIntent: true, // the model never sees or invents operation ids: its tool-call id is the intent
  onEvent: (e) => e.type === 'attempt' && console.log(`attempt ${e.attempt} of ${e.tool}: ${e.classification.cause} → ${e.decision.action}`),
});
const tools = await aiSdkTools(mcp);

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => (prompt.at(-1).role === 'tool'
    ? { content: [{ type: 'text', text: `Done: ${prompt.at(-1).content[0].output.value[0].text}` }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
    : { content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'open_ticket', input: JSON.stringify({ title: 'Printer on fire' }) }], finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage, warnings: [] }),
});

const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'The printer is on fire. Open a ticket.' });
console.log(result.text);
console.log(`tickets on the server: ${tickets.length}`);

await client.close();
web.closeAllConnections?.();
web.close();
