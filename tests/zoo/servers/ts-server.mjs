// A real MCP server of the TypeScript SDK, run as its own process by the zoo, so that a fault can kill it.
//   node ts-server.mjs --sdk new|old --name ts-1.32 --port P --effects FILE --ledger DB --wire json|sse
// `new` is the SDK 1.32 in the root node_modules (zod 4); `old` is 1.20.2 (2025-06-18) from tests/zoo's own
// node_modules with its own zod 3. Both are imported by absolute path, so neither picks up the other's zod.
//
// Every tool takes an `intent` (one per zoo case) and records what it did as a JSON line in FILE:
// start · effect (the tool's write, with an id the result repeats) · end · tool_error · kill. The zoo reads
// that file to know the truth. A request's fault comes in the `x-zoo-fault` header (set by the zoo's client
// for one attempt; proxies pass it on): see FAULTS below.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const zooModules = path.resolve(here, '../node_modules');
const sdkDir = args.sdk === 'old' ? path.join(zooModules, 'sdk-old') : path.join(root, 'node_modules/@modelcontextprotocol/sdk');
const zodEntry = args.sdk === 'old' ? path.join(zooModules, 'zod/index.js') : path.join(root, 'node_modules/zod/index.js');
const load = (p) => import(pathToFileURL(p).href);

const { McpServer } = await load(path.join(sdkDir, 'dist/esm/server/mcp.js'));
const { StreamableHTTPServerTransport } = await load(path.join(sdkDir, 'dist/esm/server/streamableHttp.js'));
const { isInitializeRequest } = await load(path.join(sdkDir, 'dist/esm/types.js'));
const { z } = await load(zodEntry);
const { withIdempotency, OperationLedger, SqliteLedgerStore, registerStatusTool } = await load(path.join(root, 'pkg/node.js'));
const { OrderedEventStore } = await load(path.join(root, 'tests/support/event-store.mjs'));
const { default: Database } = await load(path.join(root, 'node_modules/better-sqlite3/lib/index.js'));

const NAME = args.name;
const SLOW_MS = Number(args.slow ?? 900);
const effectsFd = fs.openSync(args.effects, 'a');
const record = (ev) => fs.writeSync(effectsFd, `${JSON.stringify({ ...ev, srv: NAME, pid: process.pid, at: Date.now() })}\n`);

// The operation ledger survives a crash (SQLite), and reconciles a claim whose handler died from the truth
// downstream: here, the effects file (the "ticket system" the tool writes to).
function effectOf(operationId) {
  const lines = fs.readFileSync(args.effects, 'utf8').split('\n');
  for (const l of lines) {
    if (!l.includes(operationId)) continue;
    const e = JSON.parse(l);
    if (e.ev === 'effect' && e.op === operationId && e.srv === NAME) return e;
  }
  return undefined;
}
const ledger = new OperationLedger({
  store: new SqliteLedgerStore(new Database(args.ledger)),
  leaseMs: Number(args.lease ?? 1500),
  reconcile: async ({ operationId }) => {
    const e = effectOf(operationId);
    return e ? { status: 'succeeded', result: resultFor(e.tool, e.id) } : { status: 'not_done' };
  },
});

// Faults for the request in flight, by intent (the zoo runs one call at a time per server).
const faults = new Map();
const resultFor = (tool, id) => ({ content: [{ type: 'text', text: `${tool} done, effect:${id}` }] });

function tool(name, fn) {
  return async (input, extra) => {
    const { intent } = input;
    const f = faults.get(intent);
    faults.delete(intent);
    const fault = f?.fault ?? 'pass';
    const exec = randomUUID();
    record({ ev: 'start', tool: name, intent, exec, fault });
    try {
      await new Promise((r) => setTimeout(r, 5)); // the tool's own I/O
      if (f && args.wire === 'sse') {
        // An SSE answer starts (headers, the priming event) while the tool runs: make it so before the fault
        // strikes, every time, so that a case means the same thing on every run and machine.
        for (let i = 0; i < 100 && !f.res.headersSent; i++) await new Promise((r) => setTimeout(r, 5));
        await new Promise((r) => setTimeout(r, 10));
      }
      if (fault === 'kill_during') {
        record({ ev: 'kill', tool: name, intent, exec });
        process.kill(process.pid, 'SIGKILL');
        await new Promise(() => {});
      }
      if (fault === 'tool_error') {
        record({ ev: 'tool_error', tool: name, intent, exec });
        return { content: [{ type: 'text', text: `${name} refused: the zoo asked for a tool error` }], isError: true };
      }
      if (fault === 'slow') await new Promise((r) => setTimeout(r, SLOW_MS));
      const id = randomUUID().slice(0, 8);
      record({ ev: 'effect', tool: name, intent, exec, id, op: input.operation_id });
      await fn?.(input);
      const result = resultFor(name, id);
      if (fault === 'cut_after_commit') {
        // Committed; the connection goes before one byte of the answer.
        f.req.socket.destroy();
      } else if (fault === 'midstream' && args.wire === 'sse') {
        // Committed; an event goes out on the response stream, then the stream is cut before the result.
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: `committed ${id}` } });
        await new Promise((r) => setTimeout(r, 30));
        f.req.socket.destroy();
      } else if (fault === 'midstream') {
        f.cutBody = true; // JSON: the answer starts, then the connection dies mid-body (see below)
      }
      return result;
    } finally {
      record({ ev: 'end', tool: name, intent, exec });
    }
  };
}

function buildServer() {
  const server = new McpServer({ name: `zoo-${NAME}`, version: '1.0.0' }, { capabilities: { logging: {} } });
  const intent = z.string();
  server.registerTool(
    'lookup',
    { description: 'Look a ticket up (read-only).', inputSchema: { intent }, annotations: { readOnlyHint: true } },
    tool('lookup'),
  );
  server.registerTool(
    'set_status',
    {
      description: 'Set a ticket status (idempotent: the same input twice has no further effect).',
      inputSchema: { intent, status: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    tool('set_status'),
  );
  server.registerTool(
    'create_ticket',
    {
      description: 'Create a ticket (a write; not safe to repeat).',
      inputSchema: { intent, title: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    tool('create_ticket'),
  );
  server.registerTool(
    'open_ticket',
    {
      description: 'Open a ticket; repeats with the same operation_id return the first ticket.',
      inputSchema: { intent, title: z.string(), operation_id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    withIdempotency(ledger, tool('open_ticket'), { action: 'open_ticket', tenant: () => 'zoo' }),
  );
  // The ledger's read-only status tool (#8): withRetry asks it when a keyed write ends unknown or pending. This
  // SDK's own zod (zod 3 for SDK 1.20, 4 for 1.32), so the tool's schema is one the server understands.
  registerStatusTool(server, ledger, { tenant: () => 'zoo', z });
  return server;
}

// Cuts a JSON answer in the middle of its body: headers and half the bytes go out, then the socket dies.
function cutMidBody(res) {
  const write = res.write.bind(res);
  const cut = (chunk) => {
    const b = Buffer.from(chunk ?? '');
    if (!res.headersSent) res.flushHeaders?.();
    write(b.subarray(0, Math.max(1, Math.floor(b.length / 2))));
    setTimeout(() => res.socket?.destroy(), 20);
    return true;
  };
  res.write = cut;
  res.end = (chunk) => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') cut(chunk);
    else setTimeout(() => res.socket?.destroy(), 20);
    return res;
  };
}

const sessions = new Map();
const httpServer = http.createServer(async (req, res) => {
  try {
    if (req.url === '/health') return res.writeHead(200).end(`ok ${NAME} ${process.pid}`);
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = raw ? JSON.parse(raw) : undefined;
    const fault = req.headers['x-zoo-fault'];
    if (fault && body?.method === 'tools/call') {
      if (fault === 'drop_before') return req.socket.destroy(); // received, never dispatched
      const entry = { fault, req, res };
      faults.set(body.params?.arguments?.intent, entry);
      // A JSON answer is written after the tool returned: patch the writer now, cut when it writes.
      const origWriteHead = res.writeHead.bind(res);
      res.writeHead = (...a) => {
        if (entry.cutBody) {
          res.writeHead = origWriteHead;
          const r = origWriteHead(...a);
          cutMidBody(res);
          return r;
        }
        return origWriteHead(...a);
      };
    }
    const sid = req.headers['mcp-session-id'];
    let transport = sid ? sessions.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null }));
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: args.wire !== 'sse',
        ...(args.wire === 'sse' ? { eventStore: new OrderedEventStore(), retryInterval: 100 } : {}),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      await buildServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent && !res.destroyed) res.writeHead(500).end(String(e));
  }
});
// A write to a socket the fault destroyed is expected; nothing else should be swallowed silently.
process.on('uncaughtException', (e) => {
  if (/EPIPE|ECONNRESET|ERR_STREAM_DESTROYED|ERR_STREAM_WRITE_AFTER_END|write after end/.test(`${e.code} ${e.message}`)) return;
  console.error(e);
  process.exit(70);
});
process.stdin.on('end', () => process.exit(0)); // the zoo went away: so do we
process.stdin.resume();
httpServer.listen(Number(args.port), '127.0.0.1', () => console.log(`READY ${NAME} ${process.pid}`));
