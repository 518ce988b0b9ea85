// An MCP server on the TypeScript SDK v2 (`@modelcontextprotocol/server`: `McpServer` per request through
// `createMcpHandler`, 2026-07-28, no sessions) with the package's server half: `node examples/v2-server/server.mjs
// [--port 8080]`. `open_ticket` runs once per operation id (withIdempotency) and the read-only status tool
// (`registerStatusTool`) answers what happened to an id — for the caller's tenant, which v2 hands a tool as
// `ctx.http.authInfo` (here set from `Authorization: Bearer <tenant>`; in your app: your token verifier's). The
// ledger lives outside the per-request factory: every request's server shares it. tests/js/framework-examples.test.mjs
// runs the checker against it, and a withRetry client whose first answer is cut.
import http from 'node:http';
import { Readable } from 'node:stream';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { MemoryLedgerStore, OperationLedger, registerStatusTool, withIdempotency } from 'mcp-retry-policy/server';

const port = Number(process.argv[process.argv.indexOf('--port') + 1]) || 8080;
const tickets = [];
const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
// ANCHOR: tools
const tenant = (ctx) => ctx?.http?.authInfo?.clientId;

const handler = createMcpHandler(async () => {
  const server = new McpServer({ name: 'ticket-desk (SDK v2)', version: '1.0.0' });
  server.registerTool(
    'open_ticket',
    {
      description: 'Open a support ticket. Pass a fresh operation_id (a UUID) per ticket; reuse it to retry.',
      inputSchema: z.object({ title: z.string(), operation_id: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    withIdempotency(ledger, async ({ title }, ctx) => {
      tickets.push({ title, tenant: tenant(ctx) });
      const id = `T-${tickets.length}`;
      return { content: [{ type: 'text', text: `opened ${id}` }], structuredContent: { id } };
    }, { action: 'open_ticket', tenant }),
  );
  registerStatusTool(server, ledger, { tenant });
  // ANCHOR_END: tools
  server.registerTool(
    'count_tickets',
    { description: 'How many tickets the caller has opened.', inputSchema: z.object({}), annotations: { readOnlyHint: true } },
    async (_args, ctx) => ({ content: [{ type: 'text', text: String(tickets.filter((t) => t.tenant === tenant(ctx)).length) }] }),
  );
  return server;
});

// node:http in front of the handler's fetch: the bearer token names the tenant (a stand-in for real verification).
const web = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const ac = new AbortController();
  res.on('close', () => ac.abort());
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method, headers, signal: ac.signal, ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
  });
  const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!bearer) {
    res.writeHead(401, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' }, id: null }));
  }
  const response = await handler.fetch(request, { authInfo: { token: bearer, clientId: bearer, scopes: [] } });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return res.end();
  Readable.fromWeb(response.body).on('error', () => res.destroy()).pipe(res);
});
web.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/mcp`));
