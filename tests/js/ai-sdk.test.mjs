// The Vercel AI SDK adapter ('mcp-retry-policy/ai-sdk') in a real tool loop: `generateText` from `ai` v6 with
// the AI SDK's own mock model (`MockLanguageModelV3`, the one thing faked), the real SDK client through
// withRetry, and the real MCP server behind the fault proxy. A keyed write whose first answer is cut ends with
// one effect and the model sees the ticket; an unsafe write cut the same way ends `unknown`, which the model
// reads as a tool result (never a thrown error).
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { observeFetch, withRetry } from '../../pkg/node.js';
import { aiSdkTools } from '../../pkg/ai-sdk.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { z } from 'zod';

let server;
let proxy;
const clients = [];

before(async () => {
  server = await startMcpServer({
    extraTools: (s, effects) => s.registerTool('archive_ticket_keyed', {
      description: 'Archive a ticket; repeats with the same operation_id archive it once.',
      inputSchema: { id: z.string(), operation_id: z.string() },
    }, async ({ id }) => {
      effects.deletes++;
      return { content: [{ type: 'text', text: `archived ${id}` }] };
    }),
  });
  proxy = await startFaultProxy(server.url);
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy?.close();
  await server?.close();
});

beforeEach(() => {
  proxy.faults.length = 0;
  server.effects.tickets.length = 0;
  server.effects.keyed.clear();
});

async function retrying() {
  const transport = () => new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: observeFetch() });
  const client = new Client({ name: 'ai-sdk-agent', version: '1.0.0' });
  await client.connect(transport());
  clients.push(client);
  return withRetry(client, { transport, trusted: true, idFromIntent: true, policy: { baseDelayMs: 10, maxDelayMs: 50, attemptTimeoutMs: 2_000 } });
}

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** The AI SDK's mock model: step 1 calls `toolName` with `input`; step 2 answers with the tool output it was given. */
function scriptedModel(toolCallId, toolName, input) {
  const seen = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1);
      if (last.role === 'tool') {
        seen.push(...last.content);
        return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      }
      return { content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }], finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage, warnings: [] };
    },
  });
  return { model, seen };
}

const textOf = (part) => part.output.value.map((v) => v.text).join(' ');

test('the tools the model sees: the server\'s, with the operation-id argument hidden (idFromIntent)', async () => {
  const tools = await aiSdkTools(await retrying(), { clientName: 'desk' });
  assert.ok(tools.create_ticket_keyed && tools.search_tickets && tools.create_ticket);
  assert.equal(tools.create_ticket_keyed.type, 'dynamic');
  const schema = tools.create_ticket_keyed.inputSchema.jsonSchema;
  assert.deepEqual(Object.keys(schema.properties), ['title']);
  assert.ok(!(schema.required ?? []).includes('operation_id'));
  assert.equal(tools.search_tickets.metadata.annotations.readOnlyHint, true);
  assert.equal(tools.search_tickets.metadata.clientName, 'desk');
});

test('a keyed write whose first answer is cut: retried with the same operation id, one ticket, the model sees it', async () => {
  const { model, seen } = scriptedModel('call_1', 'create_ticket_keyed', { title: 'printer on fire' });
  proxy.faults.push('cut');
  const result = await generateText({ model, tools: await aiSdkTools(await retrying()), stopWhen: stepCountIs(3), prompt: 'open a ticket' });
  assert.equal(result.text, 'done');
  assert.equal(server.effects.tickets.length, 1, 'one effect');
  assert.equal(seen.length, 1);
  assert.match(textOf(seen[0]), /created T-1/);
  const toolResult = result.steps[0].toolResults[0];
  assert.equal(toolResult.toolCallId, 'call_1');
  assert.equal(toolResult.output.isError, undefined);
});

test('an unsafe write whose first answer is cut: unknown, read by the model as a tool result, not an exception; not re-sent', async () => {
  const { model, seen } = scriptedModel('call_2', 'create_ticket', { title: 'coffee machine leaks' });
  proxy.faults.push('cut');
  const result = await generateText({ model, tools: await aiSdkTools(await retrying()), stopWhen: stepCountIs(3), prompt: 'open a ticket' });
  assert.equal(server.effects.tickets.length, 1, 'it ran once (its answer was lost) and was not sent again');
  assert.equal(result.steps[0].content.filter((p) => p.type === 'tool-error').length, 0, 'no thrown error');
  assert.equal(seen.length, 1);
  assert.match(textOf(seen[0]), /may or may not have taken effect/);
  assert.equal(result.steps[0].toolResults[0].output._meta['dev.mcp-retry-policy/outcome'].status, 'unknown');
});

test('the same tool call executed again reuses its operation id (the server replays); an intent reused for another tool is refused by name', async () => {
  const mcp = await retrying();
  const tools = await aiSdkTools(mcp);
  const first = await tools.create_ticket_keyed.execute({ title: 'once' }, { toolCallId: 'call_3', messages: [] });
  const again = await tools.create_ticket_keyed.execute({ title: 'once' }, { toolCallId: 'call_3', messages: [] });
  assert.deepEqual(again, first);
  assert.equal(server.effects.tickets.length, 1);
  await assert.rejects(tools.archive_ticket_keyed.execute({ id: 'T-1' }, { toolCallId: 'call_3', messages: [] }),
    (e) => e instanceof RangeError && e.code === 'intent_reused' && e.field === 'intent' && /create_ticket_keyed/.test(e.message));
  await assert.rejects(aiSdkTools({}), (e) => e instanceof TypeError && e.field === 'mcp');
});

test('examples/ai-sdk/agent.mjs runs as written (the package linked under its name, as an app has it)', async () => {
  const { execFileSync } = await import('node:child_process');
  const { mkdirSync, rmSync, symlinkSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const root = fileURLToPath(new URL('../../', import.meta.url));
  mkdirSync(`${root}examples/node_modules`, { recursive: true });
  rmSync(`${root}examples/node_modules/mcp-retry-policy`, { force: true, recursive: true });
  symlinkSync('../../pkg', `${root}examples/node_modules/mcp-retry-policy`, 'dir');
  const out = execFileSync(process.execPath, [`${root}examples/ai-sdk/agent.mjs`], { encoding: 'utf8', timeout: 30_000 });
  assert.match(out, /Done: opened T-1: Printer on fire/);
  assert.match(out, /tickets on the server: 1/);
});
