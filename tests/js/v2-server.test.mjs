// 2026-07-28 against a real peer: the TypeScript SDK v2 server (`@modelcontextprotocol/server` 2.4.0,
// `createMcpHandler`, no sessions) behind our node:http adapter (tests/support/v2-server.mjs), and the v2
// client (`@modelcontextprotocol/client` 2.4.0) negotiating 2026-07-28 with `server/discover`. Before this,
// the revision was tested only by telling the engine `revision: '2026-07-28'` over a 2025-era server.
// Measured before the change: a tool asking for a title ended `failed (input_required_unhandled)` — "no input
// handler is configured" — although the client had one; a cut response stream on an unsafe write took the
// whole attempt timeout (60 003 ms) to end `unknown`.
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { withRetry, MemoryJournal } from '../../pkg/node.js';
import { startV2Server } from '../support/v2-server.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';

let server;
const clients = [];
before(async () => {
  server = await startV2Server();
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await server.close();
});
beforeEach(() => {
  server.log.length = 0;
  server.cuts.length = 0;
  server.effects.tickets.length = 0;
  server.effects.phases.length = 0;
  server.effects.keyed.clear();
  server.effects.badEchoes = 0;
  server.effects.charges.length = 0;
  server.effects.notes.length = 0;
  server.effects.declareRegion = true;
  server.effects.toolsTtlMs = undefined;
});

const asked = [];
// The user, as an elicitation handler: a title, then a priority.
async function answer(request) {
  asked.push(request.params.message);
  return { action: 'accept', content: /^Prio/.test(request.params.message) ? { priority: 2 } : { title: 'printer on fire' } };
}
async function v2client({ handler = answer, capabilities = { elicitation: { form: {} } } } = {}) {
  const client = new Client({ name: 'v2-agent', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } });
  if (handler) client.setRequestHandler('elicitation/create', handler);
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  clients.push(client);
  return client;
}
const fast = { baseDelayMs: 10, maxDelayMs: 50 };
const calls = () => server.calls();
const kinds = (out) => out.attempts.map((a) => a.outcome.resultType ?? a.outcome.kind);

test('the peer: the v2 client negotiates 2026-07-28 and, with an elicitation handler, completes two input rounds by itself', async () => {
  const client = await v2client();
  assert.equal(client.transport.protocolVersion, '2026-07-28');
  asked.length = 0;
  const res = await client.callTool({ name: 'file_ticket', arguments: {} });
  assert.equal(res.isError, undefined, JSON.stringify(res));
  assert.deepEqual(asked, ['Title?', 'Priority?']);
  assert.equal(server.effects.tickets.length, 1);
});

test('input_required: withRetry carries the rounds through the client\'s own handler — new id each round, requestState byte-exact, the first phase once', async () => {
  const events = [];
  const mcp = withRetry(await v2client(), { trusted: true, policy: fast, onEvent: (e) => events.push(e) });
  asked.length = 0;
  const out = await mcp.call({ name: 'file_ticket', arguments: {} });
  assert.equal(out.status, 'succeeded', out.message);
  assert.deepEqual(kinds(out), ['input_required', 'input_required', 'result']);
  assert.deepEqual(out.attempts.slice(0, 2).map((a) => a.decision.reason), ['continue_input', 'continue_input']);
  assert.deepEqual(asked, ['Title?', 'Priority?']);
  assert.deepEqual(server.effects.tickets.map((t) => [t.title, t.priority]), [['printer on fire', 2]]);
  const sent = calls();
  assert.equal(sent.length, 3);
  assert.equal(new Set(sent.map((c) => c.id)).size, 3, 'a new JSON-RPC id per round');
  assert.equal(sent.filter((c) => c.params.inputResponses === undefined && c.params.requestState === undefined).length, 1, 'the first phase went out once');
  // Each round echoes the requestState the server minted for it, as the same string (spaces, quotes, ✓, \n).
  const minted = [...server.effects.minted];
  assert.deepEqual(sent.slice(1).map((c) => c.params.requestState), minted.slice(-2));
  assert.equal(server.effects.badEchoes, 0);
  assert.deepEqual(sent[2].params.inputResponses, { priority: { action: 'accept', content: { priority: 2 } } });
  assert.deepEqual(sent.map((c) => c.params.arguments), [{}, {}, {}]);
  assert.deepEqual(events.filter((e) => e.type === 'input').map((e) => [e.round, e.answered]), [[1, ['title']], [2, ['priority']]]);
});

test('input_required with no handler for it stops input_required_unhandled (failed), and says so', async () => {
  // The client declares elicitation but registers no handler for it.
  const mcp = withRetry(await v2client({ handler: null }), { trusted: true, policy: fast });
  const out = await mcp.call({ name: 'create_ticket_asking', arguments: {} });
  assert.equal(out.status, 'failed');
  assert.equal(out.reason, 'input_required_unhandled');
  assert.equal(out.message, 'create_ticket_asking did not take effect: the server asked for input and no input handler is configured. It is safe to call it again later.');
  assert.equal(calls().length, 1);
  assert.equal(server.effects.tickets.length, 0);
});

test('a handler that fails ends the call input_not_given (failed: the server was told nothing it may act on)', async () => {
  const mcp = withRetry(await v2client({ handler: async () => { throw new Error('the dialog crashed'); } }), { trusted: true, policy: fast });
  const out = await mcp.call({ name: 'create_ticket_asking', arguments: {} });
  assert.equal(out.status, 'failed');
  assert.equal(out.reason, 'input_not_given');
  assert.equal(out.message, 'create_ticket_asking did not take effect: the server asked for input and it could not be given. It is safe to call it again later.');
  assert.equal(out.error.message, 'the dialog crashed');
  assert.equal(calls().length, 1);
});

test('input rounds count against the call\'s deadline: a user slower than the deadline ends it at the deadline', async () => {
  const slow = (request) => new Promise((r) => setTimeout(() => r({ action: 'accept', content: { title: request.params.message } }), 3_000));
  const mcp = withRetry(await v2client({ handler: slow }), { trusted: true, policy: { ...fast, totalTimeoutMs: 400 } });
  const t0 = Date.now();
  const out = await mcp.call({ name: 'create_ticket_asking', arguments: {} });
  const ms = Date.now() - t0;
  assert.equal(out.status, 'failed');
  assert.equal(out.reason, 'deadline');
  assert.ok(ms < 1_500, `took ${ms} ms`);
  assert.equal(calls().length, 1, 'the round was not sent without its input');
});

test('a later round whose stream breaks after the tool acted: unsafe → unknown at once, nothing re-sent (neither round nor first phase)', async () => {
  const mcp = withRetry(await v2client(), { trusted: true, policy: fast });
  server.cuts.push((m) => m.params.name === 'file_ticket' && /"step":2/.test(m.params.requestState ?? ''));
  const t0 = Date.now();
  const out = await mcp.call({ name: 'file_ticket', arguments: { slowMs: 300 } });
  const ms = Date.now() - t0;
  assert.equal(out.status, 'unknown', out.message);
  assert.equal(out.reason, 'unsafe_after_unknown');
  assert.deepEqual(kinds(out), ['input_required', 'input_required', 'stream_broken']);
  assert.ok(ms < 5_000, `took ${ms} ms (attempt timeout 60 s)`);
  assert.equal(calls().length, 3);
  assert.equal(server.effects.tickets.length, 1, 'the last round acted once');
  assert.match(out.message, /^file_ticket may or may not have taken effect: /);
});

test('a later round whose stream breaks on a keyed tool: that round is sent again (same requestState, same operation id), one ticket', async () => {
  const mcp = withRetry(await v2client(), { trusted: true, policy: fast, journal: new MemoryJournal() });
  asked.length = 0;
  server.cuts.push((m) => m.params.name === 'file_ticket_keyed' && /"step":2/.test(m.params.requestState ?? ''));
  const out = await mcp.call({ name: 'file_ticket_keyed', arguments: { slowMs: 50 } });
  assert.equal(out.status, 'succeeded', out.message);
  assert.deepEqual(kinds(out), ['input_required', 'input_required', 'stream_broken', 'result']);
  const sent = calls();
  assert.equal(sent.length, 4);
  assert.deepEqual(sent[3].params.requestState, sent[2].params.requestState, 'the same round, not the first phase');
  assert.deepEqual(sent[3].params.inputResponses, sent[2].params.inputResponses);
  assert.equal(new Set(sent.map((c) => c.params.arguments.operation_id)).size, 1);
  assert.notEqual(sent[3].id, sent[2].id);
  assert.deepEqual(asked, ['Title?', 'Priority?'], 'the user was not asked again');
  assert.equal(server.effects.tickets.length, 1);
});

test('a round refused after the server took earlier input in ends unknown, not failed (the server may have acted on it)', async () => {
  // Round 3 cannot reach the server (it is gone: connection refused, provably not sent, twice).
  const handler = async (request) => {
    if (/^Prio/.test(request.params.message)) {
      await server.close();
      await new Promise((r) => setTimeout(r, 200)); // let the client's pool see its kept-alive socket close
    }
    return answer(request);
  };
  const mcp = withRetry(await v2client({ handler }), { trusted: true, policy: { ...fast, maxAttempts: 2 } });
  try {
    const out = await mcp.call({ name: 'file_ticket', arguments: {} });
    assert.deepEqual(out.attempts.slice(2).map((a) => a.outcome), [{ kind: 'network', sent: 'no' }, { kind: 'network', sent: 'no' }]);
    assert.equal(out.status, 'unknown', out.message);
    assert.equal(out.reason, 'max_attempts');
  } finally {
    server = await startV2Server();
  }
});

test('a broken response stream (no resumption in 2026-07-28) on an unsafe write: unknown at once instead of at the 60 s attempt timeout', async () => {
  const mcp = withRetry(await v2client(), { trusted: true });
  server.cuts.push('create_ticket');
  const t0 = Date.now();
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'cut', slowMs: 300 } });
  const ms = Date.now() - t0;
  assert.equal(out.status, 'unknown');
  assert.deepEqual(out.attempts.map((a) => a.outcome), [{ kind: 'stream_broken', eventIdSeen: false }]);
  assert.ok(ms < 3_000, `took ${ms} ms`);
  assert.equal(calls().length, 1, 'not re-sent');
  assert.equal(server.effects.tickets.length, 1);
});

test('a broken response stream on a keyed write: re-sent at once with the same operation id, one ticket', async () => {
  const mcp = withRetry(await v2client(), { trusted: true, policy: fast });
  server.cuts.push('create_ticket_keyed');
  const t0 = Date.now();
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'cut keyed', slowMs: 300 } });
  const ms = Date.now() - t0;
  assert.equal(out.status, 'succeeded', out.message);
  assert.deepEqual(out.attempts.map((a) => a.outcome.kind), ['stream_broken', 'result']);
  assert.ok(ms < 3_000, `took ${ms} ms`);
  const sent = calls();
  assert.equal(sent.length, 2);
  assert.equal(sent[0].params.arguments.operation_id, out.operationId);
  assert.equal(sent[1].params.arguments.operation_id, out.operationId);
  assert.equal(server.effects.tickets.length, 1);
});

test('the v1 client against the v2 server: 2025-11-25 over its stateless fallback, where the server cannot ask for input — its own tool error, not retried', async () => {
  const client = new ClientV1({ name: 'v1-agent', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  await client.connect(new TransportV1(new URL(server.url)));
  clients.push(client);
  assert.equal(client.transport.protocolVersion, '2025-11-25');
  const mcp = withRetry(client, { trusted: true, policy: fast });
  const plain = await mcp.call({ name: 'create_ticket', arguments: { title: 'v1' } });
  assert.equal(plain.status, 'succeeded');
  const out = await mcp.call({ name: 'create_ticket_asking', arguments: {} });
  assert.equal(out.status, 'tool_error');
  assert.match(out.result.content[0].text, /Cannot request input 'title' \(elicitation\/create\)/);
  assert.equal(calls().filter((c) => c.tool === 'create_ticket_asking').length, 1);
});

test('2025-era input (a server-initiated elicitation request, TS SDK 1.32 server) stays the client\'s own business, for v1 and v2 alike', async () => {
  const old = await startMcpServer({
    sse: true,
    extraTools: (srv, effects) => srv.registerTool(
      'create_ticket_asking',
      { description: 'Create a ticket; asks for its title.', inputSchema: {}, annotations: { readOnlyHint: false } },
      async () => {
        const r = await srv.server.elicitInput({ message: 'Title?', requestedSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] } });
        effects.tickets.push({ title: r.content?.title });
        return { content: [{ type: 'text', text: `created ${r.content?.title}` }] };
      },
    ),
  });
  try {
    const v1 = new ClientV1({ name: 'v1-agent', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    v1.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { title: 'from v1' } }));
    const v2 = new Client({ name: 'v2-agent', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    v2.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { title: 'from v2' } }));
    await v1.connect(new TransportV1(new URL(old.url)));
    await v2.connect(new StreamableHTTPClientTransport(new URL(old.url)));
    clients.push(v1, v2);
    for (const [client, title] of [[v1, 'from v1'], [v2, 'from v2']]) {
      const out = await withRetry(client, { trusted: true, policy: fast }).call({ name: 'create_ticket_asking', arguments: {} });
      assert.equal(out.status, 'succeeded', out.message);
      assert.equal(out.attempts.length, 1);
      assert.equal(out.result.content[0].text, `created ${title}`);
    }
    assert.deepEqual(old.effects.tickets.map((t) => t.title), ['from v1', 'from v2']);
  } finally {
    await old.close();
  }
});

// A code a handler relays. The TS SDK v2 `McpServer` (2.4.0) answers a tool's thrown -32020 or -32022 as an
// `isError` result, not as the HTTP 400 its transport gives a real mismatch: the call is a tool error, charged once.
// (The case where a handler's code does reach the wire as a 400 — the Python SDK 2.x, rmcp, a proxy — is
// tests/js/with-retry.test.mjs's: nothing confirms the mismatch, so an unsafe tool ends unknown.)
for (const code of [-32020, -32022]) {
  test(`a relayed ${code} from an unsafe tool on the real v2 McpServer: a tool error, charged once, never re-sent`, async () => {
    const client = await v2client();
    assert.equal(client.transport.protocolVersion, '2026-07-28');
    const mcp = withRetry(client, { trusted: true, policy: fast, seed: 5 });
    const out = await mcp.call({ name: 'charge', arguments: { amount: 42, relay: code } });
    assert.equal(server.effects.charges.length, 1);
    assert.equal(out.status, 'tool_error');
    assert.equal(out.attempts.length, 1);
  });
}

// 2026-07-28 `x-mcp-header`: the server's transport checks the `Mcp-Param-*` headers against the body before
// dispatch. withRetry sends through `client.request`, so it mirrors them itself (the SDK's `callTool` does).
test('a tool with an x-mcp-header argument: the Mcp-Param header goes with the call, and the server runs it once', async () => {
  const client = await v2client();
  const mcp = withRetry(client, { trusted: true, policy: fast, seed: 3 });
  const tools = await mcp.refreshTools();
  assert.equal(tools.get('post_note').inputSchema.properties.region['x-mcp-header'], 'Region', 'the server lists the declaration');
  const out = await mcp.call({ name: 'post_note', arguments: { region: 'eu-west', text: 'hello' } });
  assert.equal(out.status, 'succeeded', JSON.stringify(out.attempts.map((a) => a.outcome)));
  assert.equal(out.attempts.length, 1);
  assert.deepEqual(server.effects.notes.map((n) => n.region), ['eu-west']);
});

test('a real -32020: the server added a header declaration after the list the call went out under — confirmed, re-sent with the header, run once', async () => {
  server.effects.declareRegion = false;
  server.effects.toolsTtlMs = 60_000; // the list stays fresh: the call goes out under it
  const client = await v2client();
  const mcp = withRetry(client, { trusted: true, policy: fast, seed: 3 });
  await mcp.refreshTools(); // the old list: no declaration
  server.effects.declareRegion = true; // the server now mirrors `region` (a deploy between the list and the call)
  const out = await mcp.call({ name: 'post_note', arguments: { region: 'eu-west', text: 'hello' } });
  assert.equal(out.status, 'succeeded', JSON.stringify(out.attempts.map((a) => a.outcome)));
  assert.deepEqual(server.effects.notes.map((n) => n.region), ['eu-west'], 'run once');
  assert.equal(out.attempts.length, 2);
  // (The v2 client raises the 400's JSON-RPC error as a ProtocolError: the code is the outcome.)
  assert.equal(out.attempts[0].outcome.code ?? out.attempts[0].outcome.jsonrpcCode, -32020);
  assert.equal(out.attempts[0].outcome.mismatchConfirmed, true, 'the fresh list added the declaration');
  assert.equal(out.attempts[0].classification.delivery, 'not_processed');
});

test("the tools/list ttlMs: a list the server calls fresh is not fetched again before the call; one it calls stale (ttlMs 0) is", async () => {
  const count = () => server.log.filter((m) => m.method === 'tools/list').length;
  for (const [ttl, lists] of [[60_000, 0], [0, 1]]) {
    server.effects.toolsTtlMs = ttl;
    const mcp = withRetry(await v2client(), { trusted: true, policy: fast, seed: 3 });
    await mcp.refreshTools();
    const before = count();
    assert.equal((await mcp.call({ name: 'post_note', arguments: { region: 'eu', text: 'x' } })).status, 'succeeded');
    assert.equal(count() - before, lists, `ttlMs ${ttl}`);
  }
});
