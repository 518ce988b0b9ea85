// run: client
// client.md: withRetry with every common option, against the quick-start server (MCP_URL from the environment).
import assert from 'node:assert/strict';

const warnings = [];
process.on('warning', (w) => warnings.push(w));

// ANCHOR: all
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch, IndexedDbJournal, MemoryJournal } from 'mcp-retry-policy';

const serverUrl = process.env.MCP_URL ?? 'http://127.0.0.1:3000/mcp'; // your MCP server's Streamable HTTP endpoint
const client = new Client({ name: 'my-agent', version: '1.0.0' });
// observeFetch lets withRetry see the HTTP status and Retry-After of refused calls (the SDK hides them), and
// gives each request its own abort signal (the SDK's shared one would collect a listener per request in Node):
// one listener on the shared signal serves every request in flight, so 50 at once print no warning.
const transport = () => new StreamableHTTPClientTransport(new URL(serverUrl), {
  fetch: observeFetch(),
  requestInit: { headers: { Authorization: 'Bearer alice' } }, // the quick-start server's tenant
});
await client.connect(transport());

const mcp = withRetry(client, {
  transport,                              // fresh transports to re-initialize a lost session or renegotiate
  trusted: true,                          // believe this server's annotations (default: false, per the spec)
  tools: { send_email: 'unsafe' },        // per-tool overrides win: read_only | idempotent | keyed | unsafe
  // in a browser, IndexedDB: operation ids survive reloads (default, and here in Node: in memory)
  journal: globalThis.indexedDB ? new IndexedDbJournal() : new MemoryJournal(),
  policy: { maxAttempts: 3 },
  onEvent: (e) => console.debug(e.type, e.tool), // attempt, retry, breaker, give_up, done, journal_backlog
});

const toolCallId = 'call_1';                    // the model's tool-call id: the same intent gets the same operation id
const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'Printer on fire' } }, { intent: toolCallId });
// out = { status, result?, error?, operationId?, safety, attempts[], reason, message }
if (out.status === 'unknown') console.warn(out.message); // "create_ticket may or may not have taken effect: …"

// Or as a drop-in for client.callTool: the tool's own result when it answered; anything else becomes an isError
// result whose text tells the model what happened and what to do next, the whole outcome under
// _meta['dev.mcp-retry-policy/outcome'].
const result = await mcp.callTool({ name: 'search_tickets', arguments: { query: 'printer' } });
// ANCHOR_END: all

assert.equal(out.status, 'succeeded', out.message);
assert.equal(out.safety, 'keyed');
assert.ok(out.operationId, 'a keyed call carries an operation id');
assert.equal(out.attempts.length, 1);
assert.match(out.result.structuredContent.id, /^T-\d+$/);
assert.ok(!result.isError, 'search_tickets succeeded');
assert.match(result.content[0].text, /match/);

// The same intent gets the same operation id: the ledger replays the first ticket.
const again = await mcp.call({ name: 'create_ticket', arguments: { title: 'Printer on fire' } }, { intent: toolCallId });
assert.equal(again.operationId, out.operationId);
assert.deepEqual(again.result.structuredContent, out.result.structuredContent);

// A tool the server answered with an error: callTool gives its own result. A call that got no answer (here:
// aborted before it was sent) becomes an isError result with the outcome under _meta; the override made it unsafe.
const missing = await mcp.callTool({ name: 'send_email', arguments: {} });
assert.equal(missing.isError, true);
assert.match(missing.content[0].text, /not found/);
const aborted = await mcp.callTool({ name: 'send_email', arguments: {} }, { signal: AbortSignal.abort() });
assert.equal(aborted.isError, true);
const summary = aborted._meta['dev.mcp-retry-policy/outcome'];
assert.equal(summary.status, 'failed', JSON.stringify(summary));
assert.equal(summary.safety, 'unsafe');

// 50 calls at once: no MaxListenersExceededWarning.
const many = await Promise.all(Array.from({ length: 50 }, () => mcp.call({ name: 'search_tickets', arguments: { query: 'printer' } })));
assert.deepEqual(new Set(many.map((o) => o.status)), new Set(['succeeded']));
await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
assert.deepEqual(warnings.map((w) => w.name), []);
await client.close();
