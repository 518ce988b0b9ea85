// run: server open_ticket {"title":"Printer on fire"}
// server.md: the operation ledger in full — SQLite store, TTL and lease, a reconcile hook that asks the ticket API,
// the token's subject as the tenant, claimOf's fence and signal passed downstream, OutcomeUnknown for a timeout.
// A real McpServer over Streamable HTTP (stateless: a server per request; PORT and LEDGER_DB from the environment).
// Before it says "listening on", it checks itself over HTTP: a create whose answer timed out is `unknown`, and the
// next call with the same id is answered from the reconcile hook (the ticket exists), with no second ticket. The
// tests then run the package's checker against it as two tenants (Authorization: Bearer <tenant>).
import http from 'node:http';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LEDGER_META_KEY } from 'mcp-retry-policy';

// ANCHOR: ledger
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { OperationLedger, SqliteLedgerStore, withIdempotency, registerStatusTool, OutcomeUnknown, claimOf } from 'mcp-retry-policy';

// Your ticket API. A stand-in here: it keeps tickets by (tenant, request id), refuses a write whose fence is
// older than one it has seen for that request, and "times out" on a title with "(slow)" in it — after creating it.
const tickets = {
  rows: [],
  async create({ tenant, title, requestId, fence }, { signal }) {
    signal.throwIfAborted();                                 // the claim was lost: do not write
    const seen = this.rows.find((t) => t.tenant === tenant && t.requestId === requestId);
    if (seen && seen.fence >= fence) throw new Error('stale fence: refused');
    const t = { id: `T-${this.rows.length + 1}`, tenant, title, requestId, fence };
    this.rows.push(t);
    return title.includes('(slow)') ? { timedOut: true } : t;
  },
  async findByRequestId(tenant, requestId) {
    return this.rows.find((t) => t.tenant === tenant && t.requestId === requestId);
  },
};
const ticketResult = (t) => ({ content: [{ type: 'text', text: `opened ${t.id}` }], structuredContent: { id: t.id } });

const ledger = new OperationLedger({
  store: new SqliteLedgerStore(new Database(process.env.LEDGER_DB ?? 'ledger.db')),  // or Memory, Postgres, DurableObject, D1
  ttlMs: 24 * 3600_000,                                      // how long outcomes are replayable (default 24 h)
  leaseMs: 60_000,                                           // how long a claim holds unrenewed (default 60 s)
  reconcile: async ({ tenant, operationId }) => {            // optional: find out what happened downstream
    const t = await tickets.findByRequestId(tenant, operationId);  // this tenant's ticket, never another's
    return t ? { status: 'succeeded', result: ticketResult(t) } : { status: 'not_done' };
  },
  onEvent: (e) => console.warn('ledger:', e.type, e.key),   // store errors, lost leases, late finishes …
});

// The tenant is the principal whose results these are: the token's subject, not the app's client id.
const principal = (extra) => extra.authInfo?.extra?.sub;    // what your token verifier put in AuthInfo.extra

function ticketDesk() {
  const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
  server.registerTool('open_ticket', {
    description: 'Open a ticket. Pass a fresh operation_id (a UUID) per intended ticket; repeat calls with the same id return the first ticket.',
    inputSchema: { title: z.string(), operation_id: z.string() },
    annotations: { readOnlyHint: false, idempotentHint: false },
  }, withIdempotency(ledger, async ({ title, operation_id }, extra) => {
    const { tenant, fence, signal } = claimOf(extra);         // the claim's fencing token, and its lease's signal
    const t = await tickets.create({ tenant, title, requestId: operation_id, fence }, { signal });  // pass both downstream
    if (t.timedOut) throw new OutcomeUnknown('the ticket API did not answer');  // recorded as unknown, never success
    return ticketResult(t);
  }, { action: 'open_ticket', tenant: principal }));
  registerStatusTool(server, ledger, { tenant: principal }); // `operation_status`, for this tenant's records only
  return server;
}
// ANCHOR_END: ledger

// Stateless Streamable HTTP: a server and a transport per request. A stand-in for your token verifier reads
// "Authorization: Bearer <user>": every user comes through one OAuth client (the app), the subject is the user.
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

// The self-check: a timed-out create is `unknown` (never a success); the repeat is resolved by the hook.
const client = new Client({ name: 'self-check', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer carol' } } }));
const id = randomUUID();
const lost = await client.callTool({ name: 'open_ticket', arguments: { title: 'Printer on fire (slow)', operation_id: id } });
assert.equal(lost._meta?.[LEDGER_META_KEY]?.status, 'unknown', JSON.stringify(lost));
assert.match(lost.content[0].text, /the ticket API did not answer/);
const again = await client.callTool({ name: 'open_ticket', arguments: { title: 'Printer on fire (slow)', operation_id: id } });
assert.equal(again.isError, undefined, JSON.stringify(again));
assert.deepEqual(again.structuredContent, { id: 'T-1' }, 'the reconcile hook found the ticket');
assert.equal(tickets.rows.length, 1, 'no second ticket');
const status = await client.callTool({ name: 'operation_status', arguments: { action: 'open_ticket', operation_id: id } });
assert.equal(status.structuredContent.status, 'succeeded');
await client.close();

console.log(`listening on ${url}`);
