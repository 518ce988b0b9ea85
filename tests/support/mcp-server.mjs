// A real MCP server (the TypeScript SDK's McpServer over Streamable HTTP) on 127.0.0.1, with tools whose
// side effects the tests count. Stateful: one session per client, which a test can expire.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { z } from 'zod';

const text = (t) => ({ content: [{ type: 'text', text: t }] });

/** The effects the tools had, for the tests to count. */
export function makeEffects() {
  return { tickets: [], searches: 0, deletes: 0, keyed: new Map() };
}

function buildServer(effects, extraTools) {
  const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
  server.registerTool(
    'create_ticket',
    {
      description: 'Create a ticket (a write; not safe to repeat).',
      inputSchema: { title: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    async ({ title }) => {
      const id = `T-${effects.tickets.length + 1}`;
      effects.tickets.push({ id, title });
      return { ...text(`created ${id}`), structuredContent: { id } };
    },
  );
  server.registerTool(
    'create_ticket_keyed',
    {
      description: 'Create a ticket; repeat calls with the same operation_id return the first ticket.',
      inputSchema: { title: z.string(), operation_id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    // A minimal dedupe by operation id (the operation ledger of issue #4 replaces it).
    async ({ title, operation_id }) => {
      let id = effects.keyed.get(operation_id);
      if (!id) {
        id = `T-${effects.tickets.length + 1}`;
        effects.tickets.push({ id, title, operation_id });
        effects.keyed.set(operation_id, id);
      }
      return { ...text(`created ${id}`), structuredContent: { id } };
    },
  );
  server.registerTool(
    'search_tickets',
    { description: 'Search tickets.', inputSchema: { query: z.string() }, annotations: { readOnlyHint: true } },
    async ({ query }) => {
      effects.searches++;
      return text(`${effects.tickets.filter((t) => t.title.includes(query)).length} tickets match`);
    },
  );
  server.registerTool(
    'close_ticket',
    {
      description: 'Close a ticket. Claims to be read-only: it is not.',
      inputSchema: { id: z.string() },
      annotations: { readOnlyHint: true },
    },
    async () => {
      effects.deletes++;
      return text('closed');
    },
  );
  server.registerTool(
    'assign_ticket',
    { description: 'Assign a ticket; fails for unknown users.', inputSchema: { user: z.string() } },
    async ({ user }) => ({ ...text(`no such user: ${user}`), isError: true }),
  );
  extraTools?.(server, effects);
  return server;
}

/**
 * Starts the server; resolves to { url, effects, expireSessions(), close() }. `sse: true` answers over SSE
 * with event ids and an event store (resumable, ≤ 2025-11-25); the default answers with plain JSON.
 */
export async function startMcpServer({ extraTools, sse = false } = {}) {
  const effects = makeEffects();
  const sessions = new Map();
  const httpServer = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = raw ? JSON.parse(raw) : undefined;
      const sid = req.headers['mcp-session-id'];
      let transport = sid ? sessions.get(sid) : undefined;
      if (!transport) {
        if (sid) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        if (req.method !== 'POST' || !isInitializeRequest(body)) {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null }));
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: !sse,
          ...(sse ? { eventStore: new InMemoryEventStore() } : {}),
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        await buildServer(effects, extraTools).connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
  const { port } = httpServer.address();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    effects,
    expireSessions: () => sessions.clear(),
    close: () =>
      new Promise((r) => {
        httpServer.closeAllConnections?.();
        httpServer.close(() => r());
      }),
  };
}
