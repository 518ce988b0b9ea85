// run: server open_ticket {"title":"Printer on fire"}
// unknown.md: the status tool and withIdempotency on punkpeye's FastMCP (httpStream; PORT from the environment,
// 0 for a free one). The tests run the package's checker against it as two tenants (Authorization: Bearer <tenant>).
import net from 'node:net';
import { FastMCP } from 'fastmcp';
import { MemoryLedgerStore, OperationLedger } from 'mcp-retry-policy/server';

const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
const tickets = []; // your ticket API
const server = new FastMCP({
  name: 'ticket-desk (FastMCP)',
  version: '1.0.0',
  // FastMCP hands each tool what `authenticate` returned as `context.session`: here the tenant from a stand-in
  // for your authentication ("Authorization: Bearer <tenant>"); in your app, the token's subject.
  authenticate: async (request) => {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!bearer) throw new Response(null, { status: 401, statusText: 'Unauthorized' });
    return { tenant: bearer };
  },
});

// ANCHOR: fastmcp
import { jsonSchemaAdapter } from 'fastmcp';
import { z } from 'zod';
import { statusTool, withIdempotency } from 'mcp-retry-policy/server';

server.addTool({
  name: 'open_ticket',
  description: 'Open a ticket. Pass a fresh operation_id (a UUID) per ticket; reuse it to retry.',
  parameters: z.object({ title: z.string(), operation_id: z.string() }),
  annotations: { readOnlyHint: false, idempotentHint: false },
  execute: withIdempotency(ledger, async ({ title }) => {
    tickets.push(title);
    return { content: [{ type: 'text', text: `opened T-${tickets.length}` }], structuredContent: { id: `T-${tickets.length}` } };
  }, { action: 'open_ticket', tenant: (context) => context.session?.tenant }),
});
const status = statusTool(ledger, { tenant: (context) => context.session?.tenant });
server.addTool({ name: status.name, description: status.description, annotations: status.annotations,
  parameters: jsonSchemaAdapter(status.inputSchema), execute: (args, context) => status.handler(args, context) });
// ANCHOR_END: fastmcp

// FastMCP does not tell the port it got: take a free one first.
let port = Number(process.env.PORT ?? 8080);
if (port === 0) {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  port = probe.address().port;
  await new Promise((r) => probe.close(r));
}
await server.start({ transportType: 'httpStream', httpStream: { port, host: '127.0.0.1', endpoint: '/mcp' } });
console.log(`listening on http://127.0.0.1:${port}/mcp`);
