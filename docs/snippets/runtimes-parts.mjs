// run: client
// runtimes.md: withRetry's optional parts, against the quick-start server (MCP_URL). In Node the entry builds every
// part in (`parts` changes nothing); the browser entry has none — checked below by loading it beside this one.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { observeFetch } from 'mcp-retry-policy/client';

const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL ?? 'http://127.0.0.1:3000/mcp'), {
  fetch: observeFetch(), requestInit: { headers: { Authorization: 'Bearer alice' } },
}));

// ANCHOR: parts
import { withRetry } from 'mcp-retry-policy/client';
import { hedging, tasks } from 'mcp-retry-policy/parts';

const mcp = withRetry(client, { trusted: true, policy: { hedgeAfterMs: 150 }, parts: [hedging, tasks] });
// ANCHOR_END: parts

const found = await mcp.call({ name: 'search_tickets', arguments: { query: 'printer' } });
assert.equal(found.status, 'succeeded', found.message);
assert.deepEqual(mcp.engine.hedging, { hedgeAfterMs: 150, maxHedges: 1 });

// The browser entry (what a bundler resolves `mcp-retry-policy/client` to): its withRetry has no part built in.
// It shares the wasm module the Node entry already initialized, so it loads here as it is.
const browser = await import(new URL('./client.browser.js', import.meta.resolve('mcp-retry-policy/client')));
assert.throws(() => browser.withRetry(client, { trusted: true, policy: { hedgeAfterMs: 150 } }),
  (e) => e instanceof TypeError && e.code === 'part_missing' && /hedgeAfterMs/.test(e.message));
const handedIn = browser.withRetry(client, { trusted: true, policy: { hedgeAfterMs: 150 }, parts: [hedging, tasks] });
const viaBrowser = await handedIn.call({ name: 'search_tickets', arguments: { query: 'printer' } });
assert.equal(viaBrowser.status, 'succeeded', viaBrowser.message);
await client.close();
