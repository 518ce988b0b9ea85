// run: server open_ticket {"title":"Printer on fire"}
// server.md: `transaction: true` on SQLite — the tickets and the ledger in one file; the claim, the handler's
// INSERT and the record commit together or not at all. A real McpServer over Streamable HTTP (stateless; PORT and
// LEDGER_DB from the environment). Before it says "listening on", it checks itself: one call is one row and its
// record, a repeat replays it without a second row, and a handler that throws after its INSERT is rolled back
// (`rejected`, reason `rolled_back`; no row, no record). The tests then run the package's checker against it.
import http from 'node:http';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LEDGER_META_KEY } from 'mcp-retry-policy';

// ANCHOR: transaction
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { OperationLedger, SqliteLedgerStore, registerStatusTool, withIdempotency } from 'mcp-retry-policy';

const db = new Database(process.env.LEDGER_DB ?? 'app.db');  // the tickets and the ledger in one file
db.exec('CREATE TABLE IF NOT EXISTS tickets (id INTEGER PRIMARY KEY, title TEXT NOT NULL)');
const ledger = new OperationLedger({ store: new SqliteLedgerStore(db) });
const tenant = (extra) => extra.authInfo?.extra?.sub;        // the token's subject

function ticketDesk() {
  const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
  server.registerTool('open_ticket', { inputSchema: { title: z.string(), operation_id: z.string() } },
    withIdempotency(ledger, async ({ title }, extra, tx) => {
      const { lastInsertRowid } = tx.prepare('INSERT INTO tickets (title) VALUES (?)').run(title);
      return { content: [{ type: 'text', text: `opened T-${lastInsertRowid}` }] };
    }, { action: 'open_ticket', tenant, transaction: true }));
  registerStatusTool(server, ledger, { tenant });
  return server;
}
// ANCHOR_END: transaction

// A write that fails after its INSERT, for the self-check below (not registered on the server).
const failing = withIdempotency(ledger, async ({ title }, extra, tx) => {
  tx.prepare('INSERT INTO tickets (title) VALUES (?)').run(title);
  throw new Error('the mail server refused the confirmation');
}, { action: 'open_ticket_failing', tenant, transaction: true });

// Stateless Streamable HTTP; a stand-in for your token verifier: "Authorization: Bearer <user>" is the subject.
const web = http.createServer(async (req, res) => {
  const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!bearer) return res.writeHead(401).end();
  req.auth = { token: bearer, clientId: 'ticket-desk-app', scopes: [], extra: { sub: bearer } };
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => transport.close());
  await ticketDesk().connect(transport);
  await transport.handleRequest(req, res);
});
await new Promise((r) => web.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', r));
const url = `http://127.0.0.1:${web.address().port}/mcp`;

// The self-check.
const rows = () => db.prepare('SELECT COUNT(*) AS n FROM tickets').get().n;
const rowsBefore = rows();
const client = new Client({ name: 'self-check', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer carol' } } }));
const id = randomUUID();
const first = await client.callTool({ name: 'open_ticket', arguments: { title: 'Printer on fire', operation_id: id } });
const again = await client.callTool({ name: 'open_ticket', arguments: { title: 'Printer on fire', operation_id: id } });
assert.match(first.content[0].text, /^opened T-\d+$/);
assert.deepEqual(again.content, first.content, 'the repeat replays the first ticket');
assert.equal(rows(), rowsBefore + 1, 'one row for the two calls');
const status = await client.callTool({ name: 'operation_status', arguments: { action: 'open_ticket', operation_id: id } });
assert.equal(status.structuredContent.status, 'succeeded', 'the record committed with the row');
await client.close();
const carol = { authInfo: { token: 'carol', clientId: 'ticket-desk-app', scopes: [], extra: { sub: 'carol' } } };
const failed = await failing({ title: 'never stored', operation_id: randomUUID() }, carol);
assert.deepEqual({ ...failed._meta[LEDGER_META_KEY], operationId: undefined }, { status: 'rejected', reason: 'rolled_back', operationId: undefined });
assert.equal(rows(), rowsBefore + 1, 'the failed handler\'s INSERT was rolled back');
assert.equal(db.prepare("SELECT COUNT(*) AS n FROM tickets WHERE title = 'never stored'").get().n, 0);

console.log(`listening on ${url}`);
