// An MCP server built on punkpeye's FastMCP with the package's server half: `node examples/fastmcp-server/server.mjs
// [--port 8080]`. `open_ticket` runs once per operation id (withIdempotency over the operation ledger) and the
// read-only status tool (`statusTool`, the framework-neutral definition) answers what happened to an id — both for
// the caller's tenant, which FastMCP's `authenticate` reads from `Authorization: Bearer <tenant>` (in your app:
// your token's subject). `mcp-retry-policy check http://127.0.0.1:8080/mcp --tool open_ticket --args
// '{"title":"x"}' --header 'Authorization: Bearer alice' --other-tenant-header 'Authorization: Bearer bob'` passes
// it; tests/js/fastmcp-example.test.mjs runs exactly that, and a withRetry client whose first answer is cut.
import { FastMCP, jsonSchemaAdapter } from 'fastmcp';
import { z } from 'zod';
import { MemoryLedgerStore, OperationLedger, statusTool, withIdempotency } from 'mcp-retry-policy/server';

const port = Number(process.argv[process.argv.indexOf('--port') + 1]) || 8080;
const tickets = [];
const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
// FastMCP hands each tool the session `authenticate` returned, as `context.session`.
const tenant = (context) => context?.session?.tenant;

const server = new FastMCP({
  name: 'ticket-desk (FastMCP)',
  version: '1.0.0',
  authenticate: async (request) => {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!bearer) throw new Response(null, { status: 401, statusText: 'Unauthorized' });
    return { tenant: bearer };
  },
});

// ANCHOR: tools
server.addTool({
  name: 'open_ticket',
  description: 'Open a support ticket. Pass a fresh operation_id (a UUID) per ticket; reuse it to retry.',
  parameters: z.object({ title: z.string(), operation_id: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  execute: withIdempotency(ledger, async ({ title }, context) => {
    tickets.push({ title, tenant: tenant(context) });
    const id = `T-${tickets.length}`;
    return { content: [{ type: 'text', text: `opened ${id}` }], structuredContent: { id } };
  }, { action: 'open_ticket', tenant }),
});

// The status tool as a plain definition: FastMCP takes its JSON Schema through `jsonSchemaAdapter`.
const status = statusTool(ledger, { tenant });
server.addTool({
  name: status.name,
  description: status.description,
  parameters: jsonSchemaAdapter(status.inputSchema),
  annotations: status.annotations,
  execute: (args, context) => status.handler(args, context),
});
// ANCHOR_END: tools

// How many tickets a tenant has (read-only): what the example's test reads to count the writes from outside.
server.addTool({
  name: 'count_tickets',
  description: 'How many tickets the caller has opened.',
  parameters: z.object({}),
  annotations: { readOnlyHint: true },
  execute: async (_args, context) => String(tickets.filter((t) => t.tenant === tenant(context)).length),
});

await server.start({ transportType: 'httpStream', httpStream: { port, host: '127.0.0.1', endpoint: '/mcp' } });
console.log(`listening on http://127.0.0.1:${port}/mcp`);
