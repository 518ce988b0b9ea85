// run: standalone
// proof.md, "Behind a proxy that re-sends POSTs": with behindRetryingProxy a 503 with Retry-After no longer licenses
// sending an unsafe tool again; a read is still retried. A real McpServer (stateless Streamable HTTP) on 127.0.0.1
// behind a small proxy of our own that answers the next tools/call 503 + Retry-After without forwarding it.
import assert from 'node:assert/strict';
import http from 'node:http';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch } from 'mcp-retry-policy';

const sent = [];
const upstream = http.createServer(async (req, res) => {
  const server = new McpServer({ name: 'sms', version: '1.0.0' });
  server.registerTool('send_sms', {
    description: 'Send a text message (a write without an operation id: unsafe to repeat).',
    inputSchema: { to: z.string(), text: z.string() },
    annotations: { readOnlyHint: false, idempotentHint: false },
  }, async ({ to, text }) => {
    sent.push({ to, text });
    return { content: [{ type: 'text', text: `sent to ${to}` }] };
  });
  server.registerTool('inbox', {
    description: 'Messages received.', inputSchema: {}, annotations: { readOnlyHint: true },
  }, async () => ({ content: [{ type: 'text', text: '0 messages' }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => transport.close());
  await server.connect(transport);
  await transport.handleRequest(req, res);
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));

let refuseNext = 0; // how many tools/call to answer 503 + Retry-After (as another replica would) without forwarding
const proxy = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  if (refuseNext > 0 && /"method":"tools\/call"/.test(body)) {
    refuseNext -= 1;
    return res.writeHead(503, { 'retry-after': '0' }).end('no healthy upstream');
  }
  const up = http.request({ host: '127.0.0.1', port: upstream.address().port, path: req.url, method: req.method, headers: req.headers }, (upRes) => {
    res.writeHead(upRes.statusCode, upRes.headers);
    upRes.pipe(res);
  });
  up.end(body);
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));

const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${proxy.address().port}/mcp`), { fetch: observeFetch() }));

// ANCHOR: proxy
const mcp = withRetry(client, { trusted: true, behindRetryingProxy: true });
// ANCHOR_END: proxy

// Behind a retrying proxy: the 503 + Retry-After may be a second replica's answer to a request the first one ran.
refuseNext = 1;
const sms = await mcp.call({ name: 'send_sms', arguments: { to: '+1555', text: 'hi' } });
assert.equal(sms.safety, 'unsafe');
assert.equal(sms.status, 'unknown', sms.message);
assert.equal(sms.attempts.length, 1, 'not sent again');
refuseNext = 1;
const read = await mcp.call({ name: 'inbox', arguments: {} });
assert.equal(read.status, 'succeeded', read.message);
assert.equal(read.attempts.length, 2, 'a read is still retried after the wait');

// Without it (the default): the same 503 + Retry-After proves "not processed", and the unsafe tool is re-sent.
const plain = withRetry(client, { trusted: true });
refuseNext = 1;
const again = await plain.call({ name: 'send_sms', arguments: { to: '+1555', text: 'hi' } });
assert.equal(again.status, 'succeeded', again.message);
assert.equal(again.attempts.length, 2);
assert.equal(sent.length, 1);

await client.close();
for (const s of [proxy, upstream]) {
  s.closeAllConnections();
  await new Promise((r) => s.close(r));
}
