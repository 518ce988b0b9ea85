// run: server create_ticket {"title":"Printer on fire"}
// The README's server quick start: `node server.mjs` (PORT, LEDGER_DB from the environment).
// ANCHOR: all
import http from 'node:http';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { OperationLedger, SqliteLedgerStore, registerStatusTool, withIdempotency } from 'mcp-retry-policy/server';

const ledger = new OperationLedger({ store: new SqliteLedgerStore(new Database(process.env.LEDGER_DB ?? 'ledger.db')) });
const tickets = []; // your ticket API
// The tenant is the authenticated caller — the token's subject, not the app's client id: a record is never
// replayed to anyone else. Here a stand-in for your token verifier reads it from "Authorization: Bearer <name>".
const tenant = (extra) => extra.authInfo?.extra?.sub;

function ticketDesk() {
  const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
  server.registerTool('create_ticket', {
    description: 'Open a ticket. Pass a fresh operation_id (a UUID) per ticket; reuse it to retry.',
    inputSchema: { title: z.string(), operation_id: z.string() },
    annotations: { readOnlyHint: false, idempotentHint: false },
  }, withIdempotency(ledger, async ({ title }) => {   // runs once per (tenant, operation_id)
    tickets.push(title);
    return { content: [{ type: 'text', text: `opened T-${tickets.length}` }], structuredContent: { id: `T-${tickets.length}` } };
  }, { action: 'create_ticket', tenant }));
  server.registerTool('search_tickets', {
    description: 'Search tickets by title.',
    inputSchema: { query: z.string() },
    annotations: { readOnlyHint: true },
  }, async ({ query }) => ({ content: [{ type: 'text', text: `${tickets.filter((t) => t.includes(query)).length} match` }] }));
  registerStatusTool(server, ledger, { tenant }); // `operation_status`: what happened to an operation id
  return server;
}

// Stateless Streamable HTTP: a server and a transport per request.
http.createServer(async (req, res) => {
  const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!bearer) return res.writeHead(401).end();
  req.auth = { token: bearer, clientId: 'ticket-desk-app', scopes: [], extra: { sub: bearer } };
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => transport.close());
  await ticketDesk().connect(transport);
  await transport.handleRequest(req, res);
}).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', function () {
  console.log(`listening on http://127.0.0.1:${this.address().port}/mcp`);
});
// ANCHOR_END: all
