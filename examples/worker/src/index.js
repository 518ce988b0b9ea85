// The example Worker (examples/worker/wrangler.toml):
// - POST /mcp: an MCP server (the SDK's McpServer over its web-standard Streamable HTTP transport, stateless) in a
//   Durable Object, whose write tool `open_ticket` goes through the operation ledger (DurableObjectLedgerStore:
//   the object's own storage), with the status tool beside it;
// - GET /relay?tool=…&args=…: calls the MCP server at UPSTREAM_MCP_URL through withRetry and answers the outcome;
//   its breaker is shared with every other request and isolate calling that server, through the `Breakers` Durable
//   Object (SharedBreaker + DurableObjectBreakerState): a withRetry made per request still sees the fleet's outage.
// For D1 instead of the Durable Object's storage: `new D1LedgerStore(env.DB)` (a `[[d1_databases]]` binding).
import { DurableObject } from 'cloudflare:workers';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import {
  DurableObjectBreakerState, DurableObjectLedgerStore, OperationLedger, SharedBreaker, observeFetch, registerStatusTool, withIdempotency, withRetry,
} from 'mcp-retry-policy';

const tenant = () => 'example';

export class TicketDesk extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.ledger = new OperationLedger({ store: new DurableObjectLedgerStore(ctx.storage) });
  }

  async fetch(request) {
    const server = new McpServer({ name: 'ticket-desk-worker', version: '1.0.0' });
    server.registerTool('open_ticket', {
      description: 'Open a ticket. Repeats with the same operation_id return the first ticket.',
      inputSchema: { title: z.string(), operation_id: z.string() },
    }, withIdempotency(this.ledger, async ({ title }) => {
      const n = ((await this.ctx.storage.get('tickets')) ?? 0) + 1;
      await this.ctx.storage.put('tickets', n);
      return { content: [{ type: 'text', text: `opened T-${n}: ${title}` }], structuredContent: { id: `T-${n}` } };
    }, { action: 'open_ticket', tenant }));
    server.registerTool('count_tickets', { description: 'How many tickets exist.', inputSchema: {}, annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: 'text', text: String((await this.ctx.storage.get('tickets')) ?? 0) }] }));
    registerStatusTool(server, this.ledger, { tenant, z });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    return transport.handleRequest(request);
  }
}

// ANCHOR: breakers
/** The breaker state shared by every isolate calling the upstream: stored here, decided by each engine. */
export class Breakers extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.state = new DurableObjectBreakerState(ctx.storage);
  }

  fetch(request) {
    return this.state.fetch(request);
  }
}
// ANCHOR_END: breakers

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/mcp') return env.DESK.get(env.DESK.idFromName('desk')).fetch(request);
    // ANCHOR: relay
    if (url.pathname === '/relay') {
      const transport = () => new StreamableHTTPClientTransport(new URL(env.UPSTREAM_MCP_URL), { fetch: observeFetch() });
      const client = new Client({ name: 'example-worker', version: '1.0.0' });
      await client.connect(transport());
      try {
        // One object per upstream server; a snapshot refreshed at most once a second, a probe only under its lease.
        const sharedBreaker = new SharedBreaker(env.BREAKERS.get(env.BREAKERS.idFromName(env.UPSTREAM_MCP_URL)));
        const mcp = withRetry(client, { transport, trusted: true, sharedBreaker });
        const out = await mcp.call({ name: url.searchParams.get('tool'), arguments: JSON.parse(url.searchParams.get('args') ?? '{}') });
        return Response.json({ status: out.status, reason: out.reason, attempts: out.attempts.length, operationId: out.operationId, message: out.message });
      } finally {
        await client.close();
      }
    }
    // ANCHOR_END: relay
    return new Response('POST /mcp (an MCP server behind the operation ledger) · GET /relay?tool=…&args=… (withRetry to UPSTREAM_MCP_URL)\n', { status: 404 });
  },
};
