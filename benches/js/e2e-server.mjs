// The end-to-end bench's server, in its own process: the MCP TypeScript SDK's McpServer over Streamable HTTP
// (one session per client, JSON responses) on 127.0.0.1, one read-only tool that does nothing. Prints its URL, then serves
// until its stdin closes.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

function newServer() {
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}
const sessions = new Map();
const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  let transport = sessions.get(req.headers['mcp-session-id']);
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
httpServer.keepAliveTimeout = 60_000;
await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
console.log(`http://127.0.0.1:${httpServer.address().port}/mcp`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
