// An MCP server built on tmcp (paoloricciuti's schema-agnostic `McpServer`, with `@tmcp/adapter-zod` and the HTTP
// transport `@tmcp/transport-http`) with the package's server half: `node examples/tmcp-server/server.mjs
// [--port 8080]`. `open_ticket` runs once per operation id (withIdempotency over the operation ledger) and the
// read-only status tool (`statusTool`, the framework-neutral definition) answers what happened to an id — both for
// the caller's tenant. tmcp hands a tool only its validated arguments; the request's context is `server.ctx`
// (AsyncLocalStorage), whose `custom` is what the transport's `respond(request, custom)` was given: here the tenant,
// read from `Authorization: Bearer <tenant>` in front of the transport (in your app: your token's subject).
// `mcp-retry-policy check http://127.0.0.1:8080/mcp --tool open_ticket --args '{"title":"x"}' --header
// 'Authorization: Bearer alice' --other-tenant-header 'Authorization: Bearer bob'` passes it;
// tests/js/framework-examples.test.mjs runs exactly that, and a withRetry client whose first answer is cut.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { McpServer } from 'tmcp';
import { ZodJsonSchemaAdapter } from '@tmcp/adapter-zod';
import { HttpTransport } from '@tmcp/transport-http';
import { z } from 'zod';
import { MemoryLedgerStore, OperationLedger, statusTool, withIdempotency } from 'mcp-retry-policy/server';

const port = Number(process.argv[process.argv.indexOf('--port') + 1]) || 8080;
const tickets = [];
const ledger = new OperationLedger({ store: new MemoryLedgerStore() });

const server = new McpServer(
  { name: 'ticket-desk (tmcp)', version: '1.0.0', description: 'Support tickets, safe to retry' },
  { adapter: new ZodJsonSchemaAdapter(), capabilities: { tools: { listChanged: true } } },
);
// The request context withIdempotency and the status tool read the tenant from: tmcp's `server.ctx` for this call
// (a fresh object per read, so the ledger's per-call claim stays with this call).
const tenant = (ctx) => ctx?.custom?.tenant;
const withContext = (handler) => (args) => handler(args, server.ctx);

server.tool(
  {
    name: 'open_ticket',
    description: 'Open a support ticket. Pass a fresh operation_id (a UUID) per ticket; reuse it to retry.',
    schema: z.object({ title: z.string(), operation_id: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  withContext(withIdempotency(ledger, async ({ title }, ctx) => {
    tickets.push({ title, tenant: tenant(ctx) });
    const id = `T-${tickets.length}`;
    return { content: [{ type: 'text', text: `opened ${id}` }], structuredContent: { id } };
  }, { action: 'open_ticket', tenant })),
);

// The status tool as a plain definition. tmcp has no way to register a raw JSON Schema: a tool's `schema` is a
// Standard Schema (validated on every call) that the server's one adapter turns into JSON Schema for tools/list.
// So its JSON Schema is converted to zod with zod's own `z.fromJSONSchema` (the same two required strings, the
// same limits and descriptions; the adapter lists it back as that JSON Schema plus `$schema` and the
// `additionalProperties: {}` JSON Schema means anyway), and its handler is called as is.
const status = statusTool(ledger, { tenant });
server.tool(
  {
    name: status.name,
    description: status.description,
    schema: z.fromJSONSchema(status.inputSchema),
    annotations: status.annotations,
  },
  withContext(status.handler),
);

// How many tickets a tenant has (read-only): what the example's test reads to count the writes from outside.
server.tool(
  { name: 'count_tickets', description: 'How many tickets the caller has opened.', annotations: { readOnlyHint: true } },
  () => ({ content: [{ type: 'text', text: String(tickets.filter((t) => t.tenant === tenant(server.ctx)).length) }] }),
);

// tmcp's HTTP transport serves a request on any Mcp-Session-Id, one it never issued included (it looks the
// client's info up in its session manager, and carries on without it when there is none), where the spec says
// 404 — how a client learns that its session is gone and initializes again. So the ids the transport mints (its
// `getSessionId` option) are kept here, and a request on any other id is answered 404 in front of it.
const sessions = new Set();
const transport = new HttpTransport(server, {
  path: '/mcp',
  allowedOrigins: [],
  getSessionId: () => {
    const id = randomUUID();
    sessions.add(id);
    return id;
  },
});
const reply = (res, status, code, message) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
};

// node:http in front of the transport's fetch-style `respond`: the bearer token names the tenant (a stand-in for
// real verification), handed to tmcp as the request's custom context.
const web = http.createServer(async (req, res) => {
  const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!bearer) return reply(res, 401, -32001, 'Unauthorized');
  const session = req.headers['mcp-session-id'];
  if (session !== undefined && !sessions.has(session)) return reply(res, 404, -32001, 'Session not found');
  if (req.method === 'DELETE' && session !== undefined) sessions.delete(session);
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const ac = new AbortController();
  res.on('close', () => ac.abort());
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method, headers, signal: ac.signal,
    ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
  });
  const response = (await transport.respond(request, { tenant: bearer })) ?? new Response(null, { status: 404 });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return res.end();
  Readable.fromWeb(response.body).on('error', () => res.destroy()).pipe(res);
});
web.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/mcp`));
