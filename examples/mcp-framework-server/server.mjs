// An MCP server built on mcp-framework (QuantGeekDev's class-based `MCPTool`s on an `MCPServer` with its HTTP stream
// transport) with the package's server half: `node examples/mcp-framework-server/server.mjs [--port 8080]`.
// `open_ticket` runs once per operation id (withIdempotency over the operation ledger) and the read-only status tool
// (`statusTool`, the framework-neutral definition) answers what happened to an id — both for the caller's tenant,
// which the framework's own auth hook (an `AuthProvider` on the transport) reads from `Authorization: Bearer
// <tenant>` (in your app: your token's subject); mcp-framework hands what it returns to the tool's request as
// `getRequestContext()`. `mcp-retry-policy check http://127.0.0.1:8080/mcp --tool open_ticket --args
// '{"title":"x"}' --header 'Authorization: Bearer alice' --other-tenant-header 'Authorization: Bearer bob'` passes
// it; tests/js/framework-examples.test.mjs runs exactly that, and a withRetry client whose first answer is cut.
// The tools are classes added with `server.addTool` (the framework's programmatic registration) rather than files
// under `tools/` of a build directory, so the example is this one file.
// Beware (mcp-framework 0.2.22): its HTTP stream transport connects ONE SDK `Server` to all sessions and `send()`s
// every outgoing message to every session (dist/transports/http/server.js), so while two sessions each have a
// request in flight under the same JSON-RPC id, one can be handed the other's answer (seen: a pending call of
// tenant alice answered with tenant bob's count_tickets result). The ledger still runs each write once for its own
// tenant; an answer crossing sessions is the transport's, and no tool can prevent it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HttpStreamTransport, MCPServer, MCPTool, getRequestContext } from 'mcp-framework';
import { MemoryLedgerStore, OperationLedger, statusTool, withIdempotency } from 'mcp-retry-policy/server';

// mcp-framework reads a tool's schema with `instanceof z.ZodObject` against the zod it imports itself (its peer
// is zod 3.x). This repository's top-level zod is 4 (the other examples'), so the schemas here are built with the
// zod mcp-framework resolves, its ES module entry; in your app, with zod 3 installed, that is `import { z } from 'zod'`.
const frameworkRequire = createRequire(fileURLToPath(import.meta.resolve('mcp-framework')));
const zodDir = dirname(frameworkRequire.resolve('zod/package.json'));
const zodEntry = JSON.parse(readFileSync(join(zodDir, 'package.json'), 'utf8')).exports['.'].import;
const { z } = await import(pathToFileURL(join(zodDir, zodEntry)).href);

const port = Number(process.argv[process.argv.indexOf('--port') + 1]) || 8080;
const tickets = [];
const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
// What the auth provider returned as `data`, for this request (mcp-framework's request context).
const tenant = (ctx) => ctx?.tenant;

// The framework's auth hook: `authenticate(req)` → `{ data }` (or false: 401), on every request of the transport.
class BearerTenant {
  async authenticate(req) {
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    return bearer ? { data: { tenant: bearer } } : false;
  }

  getAuthError() {
    return { status: 401, message: 'Unauthorized' };
  }
}

// An `MCPTool` whose handler answers a whole `CallToolResult`. mcp-framework's own `toolCall` passes what `execute`
// returns through `createSuccessResponse`, which turns anything but a content block (or an array of them) into one
// text block of its JSON, and sets `structuredContent` only through `outputSchemaShape`: `isError`, `_meta` (the
// ledger's answer for clients) and a free `structuredContent` cannot come out of `execute`. So these tools override
// `toolCall` — the method MCPServer calls for tools/call, and whose result it returns as is — keeping the
// framework's own input validation (`validateInput`, the zod schema) and its error answer.
class ResultTool extends MCPTool {
  async toolCall(request) {
    try {
      const input = await this.validateInput(request.params.arguments ?? {});
      // A fresh context object per call (the ledger keeps the call's claim on it), with the request's auth data.
      return await this.handle(input, { ...getRequestContext() });
    } catch (error) {
      return this.createErrorResponse(error);
    }
  }
}

const openTicket = withIdempotency(ledger, async ({ title }, ctx) => {
  tickets.push({ title, tenant: tenant(ctx) });
  const id = `T-${tickets.length}`;
  return { content: [{ type: 'text', text: `opened ${id}` }], structuredContent: { id } };
}, { action: 'open_ticket', tenant });

class OpenTicket extends ResultTool {
  name = 'open_ticket';
  description = 'Open a support ticket. Pass a fresh operation_id (a UUID) per ticket; reuse it to retry.';
  annotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
  schema = z.object({
    title: z.string().describe('What the ticket is about.'),
    operation_id: z.string().describe('A fresh id (a UUID) per ticket; the same one to retry it.'),
  });

  handle(input, ctx) {
    return openTicket(input, ctx);
  }
}

// The status tool as a plain definition. An MCPTool's input schema is a zod object (mcp-framework makes the JSON
// Schema from it and validates with it; there is no way to give it JSON Schema): so the same two strings, with the
// definition's limits and descriptions — mcp-framework lists them back as the definition's JSON Schema.
const status = statusTool(ledger, { tenant });
const described = status.inputSchema.properties;

class OperationStatus extends ResultTool {
  name = status.name;
  description = status.description;
  annotations = status.annotations;
  schema = z.object({
    action: z.string().min(described.action.minLength).max(described.action.maxLength).describe(described.action.description),
    operation_id: z.string().describe(described.operation_id.description),
  });

  handle(input, ctx) {
    return status.handler(input, ctx);
  }
}

// How many tickets a tenant has (read-only): what the example's test reads to count the writes from outside.
class CountTickets extends MCPTool {
  name = 'count_tickets';
  description = 'How many tickets the caller has opened.';
  annotations = { readOnlyHint: true };
  schema = z.object({});
  useStringify = false;

  async execute() {
    return String(tickets.filter((t) => t.tenant === tenant(getRequestContext())).length);
  }
}

const server = new MCPServer({
  name: 'ticket-desk (mcp-framework)',
  version: '1.0.0',
  basePath: dirname(fileURLToPath(import.meta.url)), // no tools/ folder here to discover: the tools are added below
  transport: {
    type: 'http-stream',
    options: { port, host: '127.0.0.1', endpoint: '/mcp', auth: { provider: new BearerTenant() } },
  },
});
server.addTool(OpenTicket);
server.addTool(OperationStatus);
server.addTool(CountTickets);

// `MCPServer.start()` resolves only once the server stops, and the framework has no "ready" hook; its HTTP stream
// transport's `start()` resolves when its http server listens, so that is where this example says so.
const startTransport = HttpStreamTransport.prototype.start;
HttpStreamTransport.prototype.start = async function start() {
  await startTransport.call(this);
  console.log(`listening on http://127.0.0.1:${port}/mcp`);
};
await server.start();
// It resolves once stopped (SIGINT, SIGTERM): exit then, not when idle keep-alive sockets time out.
process.exit(0);
