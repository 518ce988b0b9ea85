// A real MCP server (the TypeScript SDK's McpServer over Streamable HTTP) on 127.0.0.1, with tools whose
// side effects the tests count. Stateful: one session per client, which a test can expire.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { OrderedEventStore } from './event-store.mjs';
import { listenLocal } from './listen.mjs';
import { z } from 'zod';
import { withIdempotency, OutcomeUnknown, registerStatusTool } from '../../pkg/node.js';

const text = (t) => ({ content: [{ type: 'text', text: t }] });

/** The effects the tools had, for the tests to count. */
export function makeEffects() {
  return { tickets: [], searches: 0, deletes: 0, keyed: new Map(), payments: [], assignAttempts: 0, downstream: { timeoutNext: 0 } };
}

const tenantOf = (extra) => extra?.authInfo?.clientId;

/** Write tools behind the operation ledger (issue #4), when the server has one, and its status tool (#8). */
function ledgerTools(server, effects, ledger) {
  registerStatusTool(server, ledger, { tenant: tenantOf, z });
  server.registerTool(
    'open_ticket',
    {
      description: 'Open a ticket. Pass a fresh operation_id per intended ticket; repeats with the same id return the first ticket.',
      inputSchema: { title: z.string(), priority: z.number().optional(), operation_id: z.string(), delayMs: z.number().optional() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    withIdempotency(ledger, async ({ title, priority, delayMs }, extra) => {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const id = `T-${effects.tickets.length + 1}`;
      effects.tickets.push({ id, title, priority, tenant: tenantOf(extra) });
      return { ...text(`opened ${id}`), structuredContent: { id } };
    }, { action: 'open_ticket', tenant: tenantOf, validate: ({ title }) => (title.trim() ? undefined : 'title must not be empty') }),
  );
  server.registerTool(
    'assign_ticket_once',
    { description: 'Assign a ticket (fails for unknown users).', inputSchema: { user: z.string(), operation_id: z.string() } },
    withIdempotency(ledger, async ({ user }) => {
      effects.assignAttempts++;
      return { ...text(`no such user: ${user}`), isError: true };
    }, { action: 'assign_ticket_once', tenant: tenantOf }),
  );
  server.registerTool(
    'submit_payment',
    { description: 'Submit a payment to the bank.', inputSchema: { cents: z.number(), operation_id: z.string() } },
    withIdempotency(ledger, async ({ cents, operation_id }) => {
      // The bank always books the payment; sometimes its answer is lost (a timeout after submission).
      effects.payments.push({ operation_id, cents });
      if (effects.downstream.timeoutNext > 0) {
        effects.downstream.timeoutNext--;
        throw new OutcomeUnknown('the bank did not answer within 5 s');
      }
      return { ...text(`paid ${cents}`), structuredContent: { paid: cents } };
    }, { action: 'submit_payment', tenant: tenantOf }),
  );
}

function buildServer(effects, extraTools, ledger) {
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
    'build_report',
    { description: 'Build a report slowly, reporting progress.', inputSchema: { steps: z.number() }, annotations: { readOnlyHint: true } },
    async ({ steps }, extra) => {
      for (let i = 1; i <= steps; i++) {
        await new Promise((r) => setTimeout(r, 150));
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: steps } });
        }
      }
      return text(`report of ${steps} steps`);
    },
  );
  server.registerTool(
    'assign_ticket',
    { description: 'Assign a ticket; fails for unknown users.', inputSchema: { user: z.string() } },
    async ({ user }) => ({ ...text(`no such user: ${user}`), isError: true }),
  );
  if (ledger) ledgerTools(server, effects, ledger);
  extraTools?.(server, effects);
  return server;
}

/**
 * Starts the server; resolves to { url, effects, expireSessions(), close() }. `sse: true` answers over SSE
 * with event ids and an event store (resumable, ≤ 2025-11-25); the default answers with plain JSON.
 * `retryInterval` (ms): the SDK transport's option that sends an SSE `retry:` field with its priming events.
 * `lostSession`: [status, JSON-RPC code, message] answered to an unknown session id (default 404, -32001).
 */
export async function startMcpServer({ extraTools, sse = false, ledger, retryInterval, lostSession } = {}) {
  const effects = makeEffects();
  const sessions = new Map();
  const httpServer = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = raw ? JSON.parse(raw) : undefined;
      // A stand-in for real authentication: "Authorization: Bearer <tenant>" names the tenant.
      const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (bearer) req.auth = { token: bearer, clientId: bearer, scopes: [] };
      const sid = req.headers['mcp-session-id'];
      let transport = sid ? sessions.get(sid) : undefined;
      if (!transport) {
        if (sid) {
          const [status, code, message] = lostSession ?? [404, -32001, 'Session not found'];
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
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
          ...(sse ? { eventStore: new OrderedEventStore() } : {}),
          ...(retryInterval !== undefined ? { retryInterval } : {}), // the SSE `retry:` field of its priming events
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        await buildServer(effects, extraTools, ledger).connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  const { url, close } = await listenLocal(httpServer);
  return {
    url,
    effects,
    expireSessions: () => sessions.clear(),
    close,
  };
}
