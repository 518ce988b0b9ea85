// The TypeScript SDK servers of the peer matrix, each its own process on 127.0.0.1:
//   node ts_peer.mjs --sdk v1|v1-old|v2 --port P --effects FILE
// v1      @modelcontextprotocol/sdk 1.32.2 (root node_modules, zod 4): McpServer + StreamableHTTPServerTransport,
//         stateful (a session map; an unknown session id → 404 -32001, as the zoo's server), SSE answers
// v1-old  the same with 1.20.2 (npm alias sdk-old in tests/zoo, its own zod 3)
// v2      @modelcontextprotocol/server 2.4.0 (tests/peers): createMcpHandler(factory) behind a small node:http
//         adapter; 2026-07-28, no sessions (2025-era traffic falls back to stateless serving)
// Tools as every peer (see py_peer.py); effects appended to FILE, read back for the keyed dedupe; GET /counts,
// GET /health (`ok SDK PID`).
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
const load = (p) => import(pathToFileURL(p).href);
const SDK = args.sdk;

// ---- the effects ("database")
const effects = () => {
  try {
    return fs.readFileSync(args.effects, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};
function effect(tool, intent, op) {
  if (op !== undefined) {
    const seen = effects().find((e) => e.op === op);
    if (seen) return seen.id;
  }
  const id = randomUUID().slice(0, 8);
  fs.appendFileSync(args.effects, `${JSON.stringify({ srv: SDK, intent, tool, id, op, pid: process.pid })}\n`);
  return id;
}
const counts = () => effects().reduce((m, e) => ((m[e.intent] = (m[e.intent] ?? 0) + 1), m), {});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (s) => ({ content: [{ type: 'text', text: s }] });

// ---- the tools, written once for both SDK generations
async function registerTools(server, z, { progress, afterEffectError }) {
  const base = { intent: z.string(), title: z.string().optional(), delay_ms: z.number().optional() };
  const shape = (s) => (SDK === 'v2' ? z.object(s) : s); // v2 takes a Standard Schema, v1 a zod raw shape
  const create = (tool, keyed) => async (a) => {
    const id = effect(tool, a.intent, keyed ? a.operation_id : undefined);
    await sleep(a.delay_ms ?? 0);
    return text(`${tool} done, effect:${id}`);
  };
  server.registerTool('create_ticket', { description: 'Create a ticket (not idempotent).', inputSchema: shape(base) }, create('create_ticket', false));
  server.registerTool(
    'create_ticket_keyed',
    { description: 'Create a ticket, once per operation_id.', inputSchema: shape({ ...base, operation_id: z.string() }) },
    create('create_ticket_keyed', true),
  );
  server.registerTool(
    'slow',
    {
      description: 'Works for a while, reporting progress.',
      inputSchema: shape({ intent: z.string(), steps: z.number().optional(), ms: z.number().optional() }),
      annotations: { readOnlyHint: true },
    },
    async (a, extra) => {
      const steps = a.steps ?? 5;
      for (let i = 0; i < steps; i++) {
        await sleep(a.ms ?? 200);
        await progress(extra, i + 1, steps);
      }
      return text(`slow done, effect:${effect('slow', a.intent)}`);
    },
  );
  server.registerTool('fail_plain', { description: 'Raises an error (the tool\'s own).', inputSchema: shape(base) }, async () => {
    throw new Error('fail_plain: the tool failed');
  });
  server.registerTool('fail_after_effect', { description: 'Acts, then a protocol error.', inputSchema: shape(base) }, async (a) => {
    const id = effect('fail_after_effect', a.intent);
    return afterEffectError(id);
  });
  server.registerTool(
    'bad_output',
    { description: 'Acts, then returns output its schema refuses.', inputSchema: shape(base), outputSchema: shape({ n: z.number() }) },
    async (a) => {
      const id = effect('bad_output', a.intent);
      return { ...text(`bad_output done, effect:${id}`), structuredContent: { n: `effect:${id}` } };
    },
  );
}

// ---- v1: McpServer + StreamableHTTPServerTransport, stateful
async function v1Handler() {
  const zoo = path.join(root, 'tests/zoo/node_modules');
  const sdkDir = SDK === 'v1-old' ? path.join(zoo, 'sdk-old') : path.join(root, 'node_modules/@modelcontextprotocol/sdk');
  const { McpServer } = await load(path.join(sdkDir, 'dist/esm/server/mcp.js'));
  const { StreamableHTTPServerTransport } = await load(path.join(sdkDir, 'dist/esm/server/streamableHttp.js'));
  const { isInitializeRequest, McpError } = await load(path.join(sdkDir, 'dist/esm/types.js'));
  const { z } = await load(SDK === 'v1-old' ? path.join(zoo, 'zod/index.js') : path.join(root, 'node_modules/zod/index.js'));
  const build = async () => {
    const server = new McpServer({ name: `peers-${SDK}`, version: '1.0.0' });
    await registerTools(server, z, {
      progress: (extra, progress, total) =>
        extra._meta?.progressToken === undefined
          ? undefined
          : extra.sendNotification({ method: 'notifications/progress', params: { progressToken: extra._meta.progressToken, progress, total } }),
      // McpServer turns every error a tool throws into an isError result, except -32042 (URL elicitation
      // required), which it passes through as the JSON-RPC error of the tools/call (sdk dist/esm/server/mcp.js).
      afterEffectError: () => {
        throw new McpError(-32042, 'URL elicitation required', { elicitations: [{ mode: 'url', elicitationId: randomUUID(), url: 'http://127.0.0.1/confirm', message: 'confirm' }] });
      },
    });
    return server;
  };
  const sessions = new Map();
  return async (req, res, body) => {
    const sid = req.headers['mcp-session-id'];
    let transport = sid ? sessions.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }));
      }
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, transport) });
      await (await build()).connect(transport);
    }
    await transport.handleRequest(req, res, body);
  };
}

// ---- v2: createMcpHandler behind node:http
async function v2Handler() {
  const mod = path.join(here, '../node_modules/@modelcontextprotocol/server/dist/index.mjs');
  const { McpServer, createMcpHandler, inputRequired } = await load(mod);
  const { z } = await load(path.join(root, 'node_modules/zod/index.js'));
  const handler = createMcpHandler(async () => {
    const server = new McpServer({ name: 'peers-v2', version: '1.0.0' });
    await registerTools(server, z, {
      progress: (ctx, progress, total) =>
        ctx.mcpReq._meta?.progressToken === undefined
          ? undefined
          : ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: ctx.mcpReq._meta.progressToken, progress, total } }),
      // An input request the client's capabilities do not cover: the server answers -32021 after the handler
      // ran (mcp-*.mjs `_invokeInputRequiredCapableHandler`: the check runs on the handler's return value).
      afterEffectError: (id) =>
        inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({ message: `confirm ${id}?`, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }),
          },
        }),
    });
    return server;
  });
  return async (req, res, body) => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      ...(req.method === 'POST' || req.method === 'DELETE' ? { body: body === undefined ? undefined : JSON.stringify(body) } : {}),
      signal: ac.signal,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return res.end();
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
    } finally {
      res.end();
    }
  };
}

const handle = SDK === 'v2' ? await v2Handler() : await v1Handler();
const httpServer = http.createServer(async (req, res) => {
  try {
    if (req.url === '/health') return res.writeHead(200).end(`ok ${SDK} ${process.pid}`);
    if (req.url === '/counts') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts()));
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString('utf8');
    await handle(req, res, raw ? JSON.parse(raw) : undefined);
  } catch (e) {
    if (!res.headersSent && !res.destroyed) res.writeHead(500).end(String(e));
  }
});
process.on('uncaughtException', (e) => {
  if (/EPIPE|ECONNRESET|ERR_STREAM_DESTROYED|ERR_STREAM_WRITE_AFTER_END|write after end|aborted/i.test(`${e.code} ${e.message}`)) return;
  console.error(e);
  process.exit(70);
});
process.stdin.on('end', () => process.exit(0)); // the matrix went away: so do we
process.stdin.resume();
httpServer.listen(Number(args.port), '127.0.0.1', () => console.log(`READY ${SDK} ${process.pid}`));
