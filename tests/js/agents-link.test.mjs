// The Agents adapter's connection handling, step by step and deterministic: lost sessions, concurrent calls, a
// re-initialization that fails, installRetry's argument forms. The Agent here is a stand-in with the shape of
// agents 0.32's MCP client manager — its `connectToServer` does what agents' `MCPClientConnection.init` does:
// close the old client (its requests in flight reject "Connection closed"), put a new, unconnected client in
// its place, then connect it — over stand-in clients that throw the v2 SDK's error shapes. It exists to make
// timings reproducible; the adapter with the real agents and the real v2 client runs in workerd in
// tests/js/agents.test.mjs.
import test from 'node:test';
import assert from 'node:assert/strict';
import { retryingMcp, installRetry } from '../../pkg/agents.node.js';
import { OUTCOME_META_KEY } from '../../pkg/node.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sdkError = (name, code, message, data) => Object.assign(new Error(message), { name, code, ...(data ? { data } : {}) });

const TOOLS = [
  { name: 'create_ticket', inputSchema: { type: 'object', properties: { title: { type: 'string' } } }, annotations: { readOnlyHint: false, idempotentHint: false } },
  { name: 'create_ticket_keyed', inputSchema: { type: 'object', properties: { title: { type: 'string' }, operation_id: { type: 'string' } } }, annotations: { readOnlyHint: false } },
];

/** A "server": sessions, effects, and how long an answer takes. */
function makeServer() {
  let next = 0;
  return { live: new Set(), effects: 0, answerMs: () => 15, sent: 0, refuseConnect: false, connects: 0, newSession() { const s = `s${++next}`; this.live.add(s); return s; } };
}

class StandInClient {
  constructor(server) {
    this.server = server;
    this.transport = undefined;
    this.pending = new Set();
    this.seen = [];
  }
  async connect() {
    await sleep(5);
    if (this.server.refuseConnect) throw new Error('connect refused');
    this.transport = { sessionId: this.server.newSession() };
  }
  async close() {
    this.transport = undefined;
    for (const p of this.pending) p.reject(sdkError('SdkError', 'CONNECTION_CLOSED', 'Connection closed'));
  }
  listTools() {
    if (!this.transport) return Promise.reject(new Error('Not connected'));
    return Promise.resolve({ tools: TOOLS });
  }
  request(req, _schema, options) {
    if (!this.transport) return Promise.reject(new Error('Not connected')); // v2: before anything is sent
    // v2 (src 6177): an already aborted signal rejects before anything is sent.
    if (options?.signal?.aborted) return Promise.reject(sdkError('SdkError', 'REQUEST_TIMEOUT', String(options.signal.reason)));
    this.seen.push({ req, options });
    const session = this.transport.sessionId;
    return new Promise((resolve, reject) => {
      const p = { reject };
      this.pending.add(p);
      setTimeout(() => {
        this.pending.delete(p);
        if (!this.server.live.has(session)) {
          const body = '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Session not found"}}';
          return reject(sdkError('SdkHttpError', 'CLIENT_HTTP_NOT_IMPLEMENTED', `Error POSTing to endpoint: ${body}`, { status: 404, text: body }));
        }
        this.server.effects++;
        resolve({ content: [{ type: 'text', text: `done ${req.params.name}` }] });
      }, this.server.answerMs(this.server.sent++));
    });
  }
}

function standInAgent(server) {
  const data = new Map();
  const conn = { client: new StandInClient(server), connectionState: 'ready' };
  const agent = {
    ctx: {
      storage: {
        get: async (k) => data.get(k),
        put: async (k, v) => { if (typeof k === 'object') for (const [a, b] of Object.entries(k)) data.set(a, b); else data.set(k, v); },
        list: async ({ prefix }) => new Map([...data].filter(([k]) => k.startsWith(prefix))),
        delete: async (keys) => keys.filter((k) => data.delete(k)).length,
      },
    },
    mcp: {
      mcpConnections: { tickets: conn },
      async connectToServer() {
        server.connects++;
        await conn.client.close();
        conn.client = new StandInClient(server);
        conn.connectionState = 'connecting';
        try {
          await conn.client.connect();
        } catch (e) {
          conn.connectionState = 'failed';
          return { state: 'failed', error: String(e.message) };
        }
        conn.connectionState = 'ready';
        return { state: 'connected' };
      },
      async discoverIfConnected() { return { success: true }; },
      async waitForConnections() {},
      callTool: async () => ({ content: [{ type: 'text', text: 'original' }] }),
    },
  };
  return { agent, conn };
}

const POLICY = { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 40, attemptTimeoutMs: 2_000 } };

async function connected(server) {
  const s = standInAgent(server);
  await s.conn.client.connect();
  return s;
}

/** A connected stand-in Agent whose retrying client knows the tools, then a server that forgot every session. */
async function lostSession() {
  const server = makeServer();
  const { agent, conn } = await connected(server);
  const mcp = retryingMcp(agent, 'tickets', POLICY);
  await mcp.refreshTools();
  server.live.clear();
  return { server, conn, mcp };
}

test('six concurrent writes on a lost session: one re-initialization, each reads its own 404, all succeed', async () => {
  const { server, mcp } = await lostSession();
  server.answerMs = (i) => 10 + 8 * i; // the answers come back one after another, over 50 ms
  const outs = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => mcp.call({ name: n % 2 ? 'create_ticket' : 'create_ticket_keyed', arguments: { title: `t${n}` } })));
  assert.deepEqual(outs.map((o) => o.status), Array(6).fill('succeeded'), JSON.stringify(outs.map((o) => o.attempts.map((a) => a.outcome))));
  assert.deepEqual(outs.map((o) => o.attempts[0].outcome.status), Array(6).fill(404));
  assert.equal(server.connects, 1, 'one re-initialization for all six');
  assert.equal(server.effects, 6);
});

test('a slow 404 on the lost session joins the re-initialization under way; a call on the new client is not disturbed', async () => {
  // A's 404 at 15 ms → the engine re-sends at once after a new session → A re-initializes, waiting for B's
  // request still in flight on the old client (its 404 at 45 ms); B's recovery step joins that one
  // re-initialization. (The adapter would also skip a recovery step whose 404 came from a client already
  // replaced by a connected one; through withRetry that cannot come late — the engine re-sends at once after a
  // re-initialization, and closing the old client rejects what was still pending on it — so no test reaches it.)
  const { server, conn, mcp } = await lostSession();
  server.answerMs = (i) => (i === 1 ? 45 : 15);
  const a = mcp.call({ name: 'create_ticket', arguments: { title: 'a' } });
  const b = mcp.call({ name: 'create_ticket', arguments: { title: 'b' } });
  // A third call, sent on the new client after the re-initialization, must not be disturbed.
  const c = sleep(90).then(() => mcp.call({ name: 'create_ticket', arguments: { title: 'c' } }));
  const outs = await Promise.all([a, b, c]);
  assert.deepEqual(outs.map((o) => o.status), ['succeeded', 'succeeded', 'succeeded'], JSON.stringify(outs.map((o) => o.attempts.map((x) => x.outcome))));
  assert.deepEqual(outs.map((o) => o.attempts[0].outcome.status ?? o.attempts[0].outcome.kind), [404, 404, 'result']);
  assert.equal(server.connects, 1, 'one re-initialization');
  assert.ok(conn.client.transport, 'the new client is still connected');
  assert.equal(server.effects, 3);
});

test('a re-initialization that fails: the next sends are refused before any client has them ("not sent"), never unknown; the link heals', async () => {
  const { server, conn, mcp } = await lostSession();
  server.refuseConnect = true;
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'x' } });
  assert.equal(out.status, 'failed', JSON.stringify(out.attempts.map((a) => a.outcome)));
  assert.equal(out.attempts[0].outcome.status, 404);
  assert.ok(out.attempts.slice(1).every((a) => a.outcome.kind === 'network' && a.outcome.sent === 'no'), JSON.stringify(out.attempts.map((a) => a.outcome)));
  assert.equal(server.effects, 0);
  assert.equal(conn.client.transport, undefined, 'agents left an unconnected client in place');
  // The server takes connections again: the next call connects before it sends.
  server.refuseConnect = false;
  const again = await mcp.call({ name: 'create_ticket', arguments: { title: 'y' } });
  assert.equal(again.status, 'succeeded', JSON.stringify(again.attempts.map((a) => a.outcome)));
  assert.equal(server.effects, 1);
});

test('every attempt asks the client to hand back an input request (v2 would otherwise answer it and re-send by itself)', async () => {
  const server = makeServer();
  const { agent, conn } = await connected(server);
  const mcp = retryingMcp(agent, 'tickets', POLICY);
  await mcp.call({ name: 'create_ticket', arguments: { title: 'x' } });
  const sent = conn.client.seen.filter((s) => s.req.method === 'tools/call');
  assert.equal(sent.length, 1);
  assert.equal(sent[0].options.allowInputRequired, true);
  assert.equal(sent[0].options.timeout, 2_000);
});

test('installRetry reads agents\' callTool forms: (params, options), (params, undefined, options), (params, legacySchema, options)', async () => {
  const server = makeServer();
  const { agent, conn } = await connected(server);
  const undo = installRetry(agent, POLICY);
  const r1 = await agent.mcp.callTool({ serverId: 'tickets', name: 'tickets.create_ticket', arguments: { title: 'a' } });
  assert.equal(r1.content[0].text, 'done create_ticket', 'the server-qualified name is stripped, as agents does');
  // The caller's signal reaches the call in both option positions: aborted before sending → `failed`, nothing sent.
  const aborted = AbortSignal.abort();
  for (const r of [
    await agent.mcp.callTool({ serverId: 'tickets', name: 'create_ticket', arguments: { title: 'b' } }, undefined, { signal: aborted }),
    await agent.mcp.callTool({ serverId: 'tickets', name: 'create_ticket', arguments: { title: 'c' } }, { signal: aborted }),
  ]) {
    assert.equal(r.isError, true);
    assert.equal(r._meta[OUTCOME_META_KEY].status, 'failed');
  }
  const r3 = await agent.mcp.callTool({ serverId: 'tickets', name: 'create_ticket', arguments: { title: 'd' } }, { parse: (r) => ({ ...r, parsed: true }) }, {});
  assert.equal(r3.parsed, true, 'a legacy result schema is applied');
  assert.equal(conn.client.seen.filter((s) => s.req.method === 'tools/call').length, 2, 'the aborted calls sent nothing');
  assert.throws(() => installRetry(standInAgent(server).agent, { transport: () => {} }), (e) => e.code === 'conflicting_options' && e.field === 'transport');
  assert.throws(() => retryingMcp(standInAgent(server).agent, 'tickets', { reconnect: async () => {} }), (e) => e.code === 'conflicting_options' && e.field === 'reconnect');
  undo();
});
