// A real TypeScript SDK v2 server (`@modelcontextprotocol/server` 2.4.0: `createMcpHandler`, per-request
// McpServer instances, 2026-07-28 without sessions, 2025-era traffic through its stateless legacy fallback)
// behind a small node:http adapter of our own on 127.0.0.1. `@modelcontextprotocol/node` (the SDK's own
// adapter) stops at 2.1.2, so the adapter is written here: Node request → fetch Request → handler.fetch →
// Response streamed back. The adapter can also cut a tools/call's response stream after its first SSE event
// (`cuts`), after the tool has acted: what a proxy or a dropped connection does mid-answer.
import http from 'node:http';
import { Readable } from 'node:stream';
import { createMcpHandler, McpServer, ProtocolError, UnsupportedProtocolVersionError, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { listenLocal } from './listen.mjs';

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The effects the tools had, for the tests to count. */
export function makeV2Effects() {
  return { tickets: [], phases: [], keyed: new Map(), minted: new Set(), badEchoes: 0, charges: [], notes: [], declareRegion: true, toolsTtlMs: undefined };
}

// A requestState with bytes a careless client would alter (spaces, quotes, non-ASCII, a trailing newline):
// the server checks each echo against what it minted, byte for byte.
let mintSeq = 0;
function mint(effects, payload) {
  const state = `v1 "${++mintSeq}" ✓ ${JSON.stringify(payload)} \n`;
  effects.minted.add(state);
  return state;
}
function echoed(effects, ctx) {
  const state = ctx.mcpReq.requestState();
  if (state === undefined) return undefined;
  if (!effects.minted.has(state)) {
    effects.badEchoes++;
    return null;
  }
  return JSON.parse(state.slice(state.indexOf('{'), state.lastIndexOf('}') + 1));
}

const titleSchema = z.object({ title: z.string() });
const prioritySchema = z.object({ priority: z.number() });
const ask = (key, message, schema) => ({ [key]: inputRequired.elicit({ message, requestedSchema: schema }) });

function buildServer(effects) {
  // `toolsTtlMs`: the tools/list lifetime the server states (2026-07-28 caching; the SDK's default is 0).
  const cacheHints = effects.toolsTtlMs !== undefined ? { cacheHints: { 'tools/list': { ttlMs: effects.toolsTtlMs } } } : {};
  const server = new McpServer({ name: 'ticket-desk-v2', version: '2.0.0' }, { capabilities: { logging: {} }, ...cacheHints });
  const unsafe = { readOnlyHint: false, destructiveHint: false, idempotentHint: false };
  // One input round: the ticket's title is asked for, then the ticket is created.
  server.registerTool(
    'create_ticket_asking',
    { description: 'Create a ticket; asks for its title.', inputSchema: z.object({}), annotations: unsafe },
    async (_args, ctx) => {
      effects.phases.push({ tool: 'create_ticket_asking', requestId: ctx.mcpReq.id });
      const given = acceptedContent(ctx.mcpReq.inputResponses, 'title', titleSchema);
      if (!given) return inputRequired({ inputRequests: ask('title', 'Title of the ticket?', titleSchema), requestState: mint(effects, { step: 1 }) });
      if (echoed(effects, ctx) === null) return { ...text('requestState was altered'), isError: true };
      const id = `T-${effects.tickets.length + 1}`;
      effects.tickets.push({ id, title: given.title });
      return { ...text(`created ${id}`), structuredContent: { id } };
    },
  );
  // Two input rounds: the title, then (with the title carried in requestState) the priority. A keyed variant
  // dedupes by operation id. `slowMs`: the last round acts, sends a progress notification (the answer turns
  // into an SSE stream), waits, then answers — a stream the adapter can cut after the tool acted.
  const twoRounds = (keyed) => async (args, ctx) => {
    effects.phases.push({ tool: keyed ? 'file_ticket_keyed' : 'file_ticket', requestId: ctx.mcpReq.id });
    const title = acceptedContent(ctx.mcpReq.inputResponses, 'title', titleSchema);
    const state = echoed(effects, ctx);
    if (state === null) return { ...text('requestState was altered'), isError: true };
    if (!state && !title) return inputRequired({ inputRequests: ask('title', 'Title?', titleSchema), requestState: mint(effects, { step: 1 }) });
    if (state?.step === 1 && title) {
      return inputRequired({ inputRequests: ask('priority', 'Priority?', prioritySchema), requestState: mint(effects, { step: 2, title: title.title }) });
    }
    const priority = acceptedContent(ctx.mcpReq.inputResponses, 'priority', prioritySchema);
    if (state?.step !== 2 || !priority) return { ...text('out of order'), isError: true };
    let id = keyed ? effects.keyed.get(args.operation_id) : undefined;
    if (!id) {
      id = `T-${effects.tickets.length + 1}`;
      effects.tickets.push({ id, title: state.title, priority: priority.priority, ...(keyed ? { operation_id: args.operation_id } : {}) });
      if (keyed) effects.keyed.set(args.operation_id, id);
    }
    if (args.slowMs) {
      await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: `created ${id}` } });
      await sleep(args.slowMs);
    }
    return { ...text(`created ${id}`), structuredContent: { id } };
  };
  server.registerTool(
    'file_ticket',
    { description: 'File a ticket; asks for a title, then a priority.', inputSchema: z.object({ slowMs: z.number().optional() }), annotations: unsafe },
    twoRounds(false),
  );
  server.registerTool(
    'file_ticket_keyed',
    {
      description: 'File a ticket; repeats with the same operation_id return the first ticket.',
      inputSchema: z.object({ operation_id: z.string(), slowMs: z.number().optional() }),
      annotations: unsafe,
    },
    twoRounds(true),
  );
  // No input: acts, then streams a notification and answers after `slowMs` (the broken-stream case).
  const write = (keyed) => async (args, ctx) => {
    let id = keyed ? effects.keyed.get(args.operation_id) : undefined;
    if (!id) {
      id = `T-${effects.tickets.length + 1}`;
      effects.tickets.push({ id, title: args.title, ...(keyed ? { operation_id: args.operation_id } : {}) });
      if (keyed) effects.keyed.set(args.operation_id, id);
    }
    await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: `created ${id}` } });
    await sleep(args.slowMs ?? 0);
    return { ...text(`created ${id}`), structuredContent: { id } };
  };
  server.registerTool(
    'create_ticket',
    { description: 'Create a ticket (a write; not safe to repeat).', inputSchema: z.object({ title: z.string(), slowMs: z.number().optional() }), annotations: unsafe },
    write(false),
  );
  server.registerTool(
    'create_ticket_keyed',
    {
      description: 'Create a ticket; repeats with the same operation_id return the first ticket.',
      inputSchema: z.object({ title: z.string(), operation_id: z.string(), slowMs: z.number().optional() }),
      annotations: unsafe,
    },
    write(true),
  );
  // A write whose `region` argument is mirrored as the `Mcp-Param-Region` header (2026-07-28 `x-mcp-header`): the
  // server's transport refuses a call without it (or with another value) before dispatch, with -32020.
  // `declareRegion: false` lists it without the declaration (a server that adds it later).
  const region = effects.declareRegion ? z.string().meta({ 'x-mcp-header': 'Region' }) : z.string();
  server.registerTool(
    'post_note',
    { description: 'Post a note to a region (a write; not safe to repeat).', inputSchema: z.object({ region, text: z.string() }), annotations: unsafe },
    async (args) => {
      effects.notes.push(args);
      return { ...text(`posted to ${args.region}`), structuredContent: { posted: effects.notes.length } };
    },
  );
  // A gateway-style write: it charges, then relays what its downstream MCP server answered — on the first
  // charge of a `relay` code, that peer's -32020 (header mismatch) or -32022 (unsupported version). The SDK
  // answers a handler's ProtocolError as it answers its transport's own: HTTP 400 with the code.
  server.registerTool(
    'charge',
    {
      description: 'Charge a card through the payments MCP server (a write; not safe to repeat).',
      inputSchema: z.object({ amount: z.number(), relay: z.number().optional() }),
      annotations: unsafe,
    },
    async (args) => {
      effects.charges.push(args.amount);
      if (args.relay !== undefined && effects.charges.length === 1) {
        if (args.relay === -32022) throw new UnsupportedProtocolVersionError({ supported: ['2026-07-28'], requested: '2025-03-26' });
        throw new ProtocolError(args.relay, 'downstream: header mismatch');
      }
      return { ...text(`charged ${args.amount}`), structuredContent: { charged: args.amount } };
    },
  );
  return server;
}

const bodyOf = (req) => new Promise((resolve, reject) => {
  const parts = [];
  req.on('data', (c) => parts.push(c)).on('end', () => resolve(Buffer.concat(parts))).on('error', reject);
});
function jsonOf(body) {
  try {
    return body.length ? JSON.parse(body.toString('utf8')) : undefined;
  } catch {
    return undefined; // not JSON: the handler answers it
  }
}

/**
 * Starts the server; resolves to { url, effects, log, cuts, close() }. `log`: one entry per JSON-RPC request
 * the adapter saw ({ method, id, tool, params }). `cuts`: a queue of tool names (or predicates on the JSON-RPC
 * message); the next tools/call that matches the head has its response stream cut after the first SSE event
 * (the server's handler goes on to its end).
 */
export async function startV2Server() {
  const effects = makeV2Effects();
  const log = [];
  const cuts = [];
  const handler = createMcpHandler(() => buildServer(effects), { onerror: () => {} });
  const httpServer = http.createServer(async (req, res) => {
    try {
      const body = await bodyOf(req);
      const message = jsonOf(body);
      if (message?.method) log.push({ method: message.method, id: message.id, tool: message.params?.name, params: message.params, at: Date.now() });
      const next = message?.method === 'tools/call' ? cuts[0] : undefined;
      const cut = next !== undefined && (typeof next === 'function' ? next(message) : next === message.params?.name) ? cuts.shift() : undefined;
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      const url = new URL(req.url, `http://${req.headers.host}`);
      const request = new Request(url, { method: req.method, headers, ...(body.length ? { body } : {}) });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body) return res.end();
      const stream = Readable.fromWeb(response.body);
      if (!cut) return stream.pipe(res);
      // Cut after the first SSE event: the tool has acted; the rest of its answer never arrives.
      let seen = '';
      stream.on('data', (c) => {
        seen += c.toString('utf8');
        res.write(c);
        if (seen.includes('\n\n')) {
          stream.destroy();
          setTimeout(() => req.socket.destroy(), 10);
        }
      });
      stream.on('end', () => res.end());
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
      else req.socket.destroy();
    }
  });
  const listening = await listenLocal(httpServer);
  return {
    url: listening.url,
    effects,
    log,
    cuts,
    calls: () => log.filter((l) => l.method === 'tools/call'),
    close: async () => {
      await handler.close().catch(() => {});
      await listening.close();
    },
  };
}
