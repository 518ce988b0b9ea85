// A real MCP server (the TypeScript SDK's McpServer over Streamable HTTP, stateless: one server per request)
// on 127.0.0.1 whose requests carry the AuthInfo a real OAuth verifier would produce: the bearer token is
// looked up in `tokens` (token → { clientId, sub }), and the subject goes where the SDK's bearer middleware
// leaves a verifier's extra claims, `authInfo.extra.sub`. `register(server)` adds the tools under test.
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { listenLocal } from './listen.mjs';

/** Starts the server; resolves to { url, close() }. */
export async function startAuthServer({ tokens, register }) {
  const httpServer = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = raw ? JSON.parse(raw) : undefined;
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      const who = token ? tokens[token] : undefined;
      if (who) req.auth = { token, clientId: who.clientId, scopes: who.scopes ?? [], extra: { sub: who.sub } };
      const server = new McpServer({ name: 'ledger-under-test', version: '1.0.0' });
      register(server);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  const { url, close } = await listenLocal(httpServer);
  return { url, close };
}
