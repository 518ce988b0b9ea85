// run: client
// The README's client quick start, against the server quick start (MCP_URL from the environment).
// ANCHOR: all
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch } from 'mcp-retry-policy';

const url = new URL(process.env.MCP_URL ?? 'http://127.0.0.1:3000/mcp');
// observeFetch lets withRetry see each answer's HTTP status and Retry-After (the SDK hides them).
const transport = () => new StreamableHTTPClientTransport(url, {
  fetch: observeFetch(),
  requestInit: { headers: { Authorization: 'Bearer alice' } },
});
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(transport());

const mcp = withRetry(client, {
  transport,      // a fresh transport, to start a new session when one is lost
  trusted: true,  // believe this server's annotations (default: false — every tool unsafe)
});

// A keyed write: withRetry gives it an operation id, keeps it before the first send, and re-sends it with the
// same id when an answer is lost. The server's ledger runs it once and replays the first outcome.
const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'Printer on fire' } });
console.log(out.status, out.operationId, out.result?.structuredContent); // succeeded 0b6f… { id: 'T-1' }
if (out.status === 'unknown') console.warn(out.message); // may or may not have happened: never a retry

// A read: retried with backoff and jitter on any transport failure.
const found = await mcp.call({ name: 'search_tickets', arguments: { query: 'Printer' } });
console.log(found.status, found.result.content[0].text); // succeeded 1 match
// ANCHOR_END: all
if (out.status !== 'succeeded' || found.status !== 'succeeded') throw new Error(`${out.status} ${found.status}`);
await client.close();
