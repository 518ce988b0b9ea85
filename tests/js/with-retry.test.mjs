// withRetry around the real MCP SDK client, against a real McpServer over Streamable HTTP on 127.0.0.1, with
// our fault-injecting proxy between them. Side effects are counted on the server.
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch, MemoryJournal, OUTCOME_META_KEY, RetryCall } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';

let server;
let proxy;
const clients = [];

before(async () => {
  server = await startMcpServer();
  proxy = await startFaultProxy(server.url);
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy.close();
  await server.close();
});
beforeEach(() => {
  proxy.faults.length = 0;
  proxy.log.length = 0;
  server.effects.tickets.length = 0;
  server.effects.searches = 0;
  server.effects.deletes = 0;
  server.effects.keyed.clear();
});

async function connect(url = proxy.url, transportOptions = {}) {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: observeFetch(), ...transportOptions }));
  clients.push(client);
  return client;
}

const fast = { baseDelayMs: 10, maxDelayMs: 50, attemptTimeoutMs: 2_000 };

test('a read-only tool whose response was cut is retried and succeeds', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1 });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'search_tickets', arguments: { query: 'x' } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.safety, 'read_only');
  assert.equal(out.attempts.length, 2);
  assert.equal(out.attempts[0].classification.delivery, 'unknown');
  assert.equal(out.attempts[0].decision.action, 'retry');
  assert.equal(server.effects.searches, 2, 'the cut attempt ran on the server too (harmless: read-only)');
  assert.match(out.result.content[0].text, /tickets match/);
});

test('each call frees its engine state when it ends, whatever the end (no slot waits for the collector)', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 1 });
  const free = RetryCall.prototype.free;
  let freed = 0;
  RetryCall.prototype.free = function () {
    freed++;
    return free.call(this);
  };
  try {
    proxy.faults.push('cut');
    assert.equal((await mcp.call({ name: 'search_tickets', arguments: { query: 'x' } })).status, 'succeeded');
    proxy.faults.push('cut');
    assert.equal((await mcp.call({ name: 'create_ticket', arguments: { title: 't' } })).status, 'unknown');
    const aborted = new AbortController();
    aborted.abort();
    assert.notEqual((await mcp.call({ name: 'search_tickets', arguments: { query: 'y' } }, { signal: aborted.signal })).status, 'succeeded');
  } finally {
    RetryCall.prototype.free = free;
  }
  assert.equal(freed, 3);
});

test("a result the server's SDK rejects after the tool ran (-32602) is unknown, never 'did not take effect'", async () => {
  // A content block of a type the SDK does not know (a newer revision's, an extension's): TS SDK 1.32.2's Server
  // runs the handler, then answers -32602 "Invalid tools/call result". The tool ran once; nothing proves it
  // did not, so the call is unknown and an unsafe tool is not sent again.
  const { CallToolResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
  let runs = 0;
  const future = { content: [{ type: 'hologram', frames: 3 }], isError: false };
  assert.equal(CallToolResultSchema.safeParse(future).success, false, 'the SDK schema rejects it');
  const own = await startMcpServer({
    extraTools: (s) => s.registerTool('project_hologram', { description: 'returns a newer content block' }, async () => {
      runs++;
      return future;
    }),
  });
  try {
    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(own.url), { fetch: observeFetch() }));
    const mcp = withRetry(client, { policy: fast, seed: 1, trusted: true, tools: { project_hologram: 'read_only' } });
    const unsafe = await withRetry(client, { policy: fast, seed: 1 }).call({ name: 'project_hologram', arguments: {} });
    assert.equal(unsafe.status, 'unknown', JSON.stringify(unsafe.attempts));
    assert.equal(unsafe.attempts[0].outcome.code, -32602);
    assert.equal(unsafe.attempts.length, 1);
    assert.equal(runs, 1, 'the tool ran once, and was not sent again');
    const readOnly = await mcp.call({ name: 'project_hologram', arguments: {} });
    assert.equal(readOnly.status, 'unknown', 'permanent: the same request fails the same way, so no retry');
    assert.equal(runs, 2);
    await client.close();
  } finally {
    await own.close();
  }
});

test('an unsafe tool whose response was cut is not retried: unknown, exactly one ticket', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 2 });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'printer on fire' } });
  assert.equal(out.status, 'unknown');
  assert.equal(out.reason, 'unsafe_after_unknown');
  assert.equal(out.attempts.length, 1);
  assert.equal(server.effects.tickets.length, 1, 'the write happened once');
  assert.equal(proxy.calls().length, 1, 'and was sent once');
  assert.match(out.message, /may or may not have taken effect/);
  assert.match(out.message, /may do it twice/);
});

test('503 with Retry-After is retried even for an unsafe tool, after the server\'s wait; one ticket', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 3 });
  proxy.faults.push({ status: 503, retryAfter: 1 });
  const t0 = Date.now();
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'a' } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.attempts.length, 2);
  assert.deepEqual(out.attempts[0].outcome, { kind: 'http', status: 503, hadSession: true, retryAfterMs: 1000 });
  assert.equal(out.attempts[0].classification.delivery, 'not_processed');
  assert.ok(out.attempts[0].decision.delayMs >= 1000, 'Retry-After is the floor');
  assert.ok(Date.now() - t0 >= 1000);
  assert.equal(server.effects.tickets.length, 1);
});

test('429 with Retry-After is a refusal and retried; without it, or a reset, an unsafe tool stops unknown', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 4 });
  proxy.faults.push({ status: 429, retryAfter: 0 });
  let out = await mcp.call({ name: 'create_ticket', arguments: { title: 'b' } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.attempts[0].classification.verdict, 'throttled');
  assert.equal(out.attempts[0].classification.delivery, 'not_processed');
  // No Retry-After: nothing tells a rate limiter's refusal from an answer after the work was done.
  proxy.faults.push({ status: 429 });
  out = await mcp.call({ name: 'create_ticket', arguments: { title: 'b2' } });
  assert.equal(out.status, 'unknown');
  assert.equal(out.reason, 'unsafe_after_unknown');
  assert.equal(out.attempts.length, 1, 'not re-sent');
  proxy.faults.push('reset');
  out = await mcp.call({ name: 'create_ticket', arguments: { title: 'c' } });
  // The server never saw it, but the client cannot know that: the honest answer is unknown.
  assert.equal(out.status, 'unknown');
  assert.equal(server.effects.tickets.length, 1);
});

test('a gateway 502/503/504 — or a 408/409 — after it forwarded: an unsafe tool stops unknown with one ticket; a read-only one retries', async () => {
  // 408/409 prove nothing about MCP processing (a server answers 408 at its own timeout while the work goes on;
  // the idempotency-key draft's 409 needs an Idempotency-Key header): before #17 both re-sent the unsafe tool.
  for (const status of [502, 503, 504, 408, 409]) {
    const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 40 + status });
    const before = server.effects.tickets.length;
    proxy.faults.push({ status, afterForward: true });
    const out = await mcp.call({ name: 'create_ticket', arguments: { title: `gw ${status}` } });
    assert.equal(out.status, 'unknown', `${status}`);
    assert.equal(out.reason, 'unsafe_after_unknown');
    assert.equal(out.attempts.length, 1, 'never re-sent');
    assert.equal(server.effects.tickets.length, before + 1, 'the server did act: exactly once');
    proxy.faults.push({ status, afterForward: true });
    const read = await mcp.call({ name: 'search_tickets', arguments: { query: 'q' } });
    assert.equal(read.status, 'succeeded');
    assert.equal(read.attempts.length, 2);
  }
});

test('the body of a non-2xx answer is read: -32020 inside a 400 refreshes tools/list, -32022 renegotiates (2026-07-28)', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 41, revision: '2026-07-28' });
  const before = server.effects.tickets.length;
  // A read: refreshed and re-sent, whatever the mismatch rests on.
  proxy.faults.push({ status: 400, jsonrpcBody: -32020 });
  const read = await mcp.call({ name: 'search_tickets', arguments: { query: 'x' } });
  assert.equal(read.status, 'succeeded');
  assert.equal(read.attempts[0].outcome.jsonrpcCode, -32020);
  assert.equal(read.attempts[0].classification.cause, 'jsonrpc_header_mismatch');
  assert.equal(read.attempts[0].decision.recover, 'refresh_tools');
  // An unsafe write: the fresh list shows no changed header declaration, so nothing confirms the mismatch (a
  // handler may relay the code after it ran): unknown, not sent again.
  proxy.faults.push({ status: 400, jsonrpcBody: -32020 });
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'refresh' } });
  assert.equal(out.status, 'unknown');
  assert.equal(out.reason, 'unsafe_after_unknown');
  assert.equal(out.attempts[0].classification.delivery, 'unknown');
  assert.equal(out.attempts.length, 1);
  assert.match(out.message, /header or protocol-version mismatch, which a tool can also relay/);
  assert.equal(server.effects.tickets.length, before);
  // -32022 inside a 400 whose `supported` excludes the version this request carried: confirmed, so renegotiate
  // (a new session), then the call goes through once.
  const carried = mcp.engine && (await connect()).transport.protocolVersion;
  assert.equal(typeof carried, 'string');
  proxy.faults.push({ status: 400, jsonrpcBody: -32022, jsonrpcData: { supported: ['2099-01-01'], requested: carried } });
  const renegotiated = await mcp.call({ name: 'create_ticket', arguments: { title: 'renegotiate' } });
  assert.equal(renegotiated.status, 'succeeded');
  assert.equal(renegotiated.attempts[0].outcome.mismatchConfirmed, true);
  assert.equal(renegotiated.attempts[0].decision.recover, 'renegotiate');
  assert.equal(server.effects.tickets.length, before + 1);
  // The same -32022 listing the version it carried (a relayed one): unknown for the unsafe write.
  proxy.faults.push({ status: 400, jsonrpcBody: -32022, jsonrpcData: { supported: [carried], requested: '2099-01-01' } });
  const relayed = await mcp.call({ name: 'create_ticket', arguments: { title: 'relayed' } });
  assert.equal(relayed.status, 'unknown');
  assert.equal(relayed.attempts[0].outcome.mismatchConfirmed, undefined);
  assert.equal(server.effects.tickets.length, before + 1);
  // A body code without a meaning of its own leaves the status to decide: 503 + -32603 is unknown.
  proxy.faults.push({ status: 503, jsonrpcBody: -32603 });
  const again = await mcp.call({ name: 'create_ticket', arguments: { title: 'internal' } });
  assert.equal(again.status, 'unknown');
  assert.equal(again.attempts[0].classification.cause, 'jsonrpc_internal_error');
});

test('isError is the tool saying no: returned as is, never retried', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 5 });
  const out = await mcp.call({ name: 'assign_ticket', arguments: { user: 'nobody' } });
  assert.equal(out.status, 'tool_error');
  assert.equal(out.attempts.length, 1);
  assert.equal(out.result.isError, true);
  assert.equal(mcp.engine.breakerState, 'closed');
  const dropIn = await mcp.callTool({ name: 'assign_ticket', arguments: { user: 'nobody' } });
  assert.deepEqual(dropIn.content, [{ type: 'text', text: 'no such user: nobody' }]);
});

test('a server that claims readOnlyHint is not believed unless trusted', async () => {
  const untrusted = withRetry(await connect(), { policy: fast, seed: 6 });
  proxy.faults.push('cut');
  const out = await untrusted.call({ name: 'close_ticket', arguments: { id: 'T-1' } });
  assert.equal(out.safety, 'unsafe');
  assert.equal(out.status, 'unknown');
  assert.equal(server.effects.deletes, 1, 'no second close');
  // The same tool from a server the app trusts is retried: trust is the app's decision.
  const trusting = withRetry(await connect(), { trusted: true, policy: fast, seed: 6 });
  proxy.faults.push('cut');
  const again = await trusting.call({ name: 'close_ticket', arguments: { id: 'T-1' } });
  assert.equal(again.safety, 'read_only');
  assert.equal(again.status, 'succeeded');
  // A per-tool override wins over everything.
  const overridden = withRetry(await connect(), { trusted: true, tools: { close_ticket: 'unsafe' }, policy: fast });
  proxy.faults.push('cut');
  assert.equal((await overridden.call({ name: 'close_ticket', arguments: { id: 'T-1' } })).status, 'unknown');
});

test('a keyed write gets one operation id, persisted before the first send, reused on the retry: one ticket', async () => {
  const order = [];
  const inner = new MemoryJournal();
  const journal = {
    begin: async (e) => {
      order.push(`journal:${proxy.calls().length} calls seen`);
      return inner.begin(e);
    },
    settle: (...a) => inner.settle(...a),
    pending: () => inner.pending(),
  };
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, journal, seed: 7 });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'keyed' } }, { intent: 'tool-call-1' });
  assert.equal(out.safety, 'keyed');
  assert.equal(out.status, 'succeeded');
  assert.deepEqual(order, ['journal:0 calls seen'], 'persisted before anything was sent');
  assert.match(out.operationId, /^[0-9a-f-]{36}$/);
  assert.equal(server.effects.tickets.length, 1, 'the retry was deduped by the server');
  assert.deepEqual([...server.effects.keyed.keys()], [out.operationId], 'both attempts carried the same id');
  assert.equal((await inner.get(out.operationId)).state, 'succeeded');
  // The same intent again (say, after a crash and restart) reuses the id, never a new one.
  const again = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'keyed' } }, { intent: 'tool-call-1' });
  assert.equal(again.operationId, out.operationId);
  assert.equal(server.effects.tickets.length, 1);
  // A caller-given id is kept as is.
  const own = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'mine', operation_id: 'my-own-id' } });
  assert.equal(own.operationId, 'my-own-id');
});

test('an unknown keyed write stays pending in the journal and says how to check', async () => {
  const journal = new MemoryJournal();
  const mcp = withRetry(await connect(), { trusted: true, policy: { ...fast, maxAttempts: 1 }, journal, seed: 8 });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'lost' } });
  assert.equal(out.status, 'unknown');
  assert.match(out.message, new RegExp(`same operation_id ${out.operationId}`));
  const pending = await mcp.pendingOperations();
  assert.deepEqual(pending.map((e) => [e.operationId, e.state]), [[out.operationId, 'unknown']]);
});

test('abort during the backoff ends the call at once: failed if nothing may have landed, unknown if it may', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: { ...fast, maxRetryAfterMs: 60_000 }, seed: 9 });
  proxy.faults.push({ status: 503, retryAfter: 30 });
  let ac = new AbortController();
  setTimeout(() => ac.abort(), 150);
  let t0 = Date.now();
  let out = await mcp.call({ name: 'create_ticket', arguments: { title: 'x' } }, { signal: ac.signal });
  assert.ok(Date.now() - t0 < 5_000, 'did not wait out the Retry-After');
  assert.equal(out.status, 'failed');
  assert.equal(out.reason, 'aborted');
  assert.equal(server.effects.tickets.length, 0);

  proxy.faults.push('cut', { status: 503, retryAfter: 30 });
  ac = new AbortController();
  setTimeout(() => ac.abort(), 400);
  t0 = Date.now();
  out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'y' } }, { signal: ac.signal });
  assert.ok(Date.now() - t0 < 5_000);
  assert.equal(out.status, 'unknown', 'the first attempt may have landed');
  assert.equal(out.reason, 'aborted');
});

test('an abort during an attempt is told apart from a timeout', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: { ...fast, attemptTimeoutMs: 300, maxAttempts: 1 }, seed: 10 });
  proxy.faults.push({ hold: 1_000 });
  let out = await mcp.call({ name: 'search_tickets', arguments: { query: 'q' } });
  assert.deepEqual(out.attempts[0].outcome, { kind: 'timeout' });
  assert.equal(out.status, 'unknown');
  proxy.faults.push({ hold: 1_000 });
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  out = await mcp.call({ name: 'search_tickets', arguments: { query: 'q' } }, { signal: ac.signal });
  assert.deepEqual(out.attempts[0].outcome, { kind: 'aborted', sent: 'maybe' });
  assert.equal(out.status, 'unknown');
  await new Promise((r) => setTimeout(r, 1_000)); // let the held answers drain
});

test('progress resets the per-attempt timeout when asked to; the call deadline stays the cap', async () => {
  // Progress needs a stream to travel on: an SSE server.
  const sseServer = await startMcpServer({ sse: true });
  try {
    const policy = { ...fast, attemptTimeoutMs: 400, maxAttempts: 1 };
    const plain = withRetry(await connect(sseServer.url), { trusted: true, policy });
    const timedOut = await plain.call({ name: 'build_report', arguments: { steps: 6 } });
    assert.deepEqual(timedOut.attempts[0].outcome, { kind: 'timeout' });
    const seen = [];
    const patient = withRetry(await connect(sseServer.url), { trusted: true, policy, resetTimeoutOnProgress: true });
    const done = await patient.call({ name: 'build_report', arguments: { steps: 6 } }, { onprogress: (p) => seen.push(p.progress) });
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
    const capped = withRetry(await connect(sseServer.url), { trusted: true, policy: { ...policy, totalTimeoutMs: 500 }, resetTimeoutOnProgress: true });
    const cut = await capped.call({ name: 'build_report', arguments: { steps: 6 } });
    assert.deepEqual(cut.attempts[0].outcome, { kind: 'timeout' }, 'progress never extends past the deadline');
    await new Promise((r) => setTimeout(r, 700));
  } finally {
    await sseServer.close();
  }
});

test('the total deadline stops retries', async () => {
  const mcp = withRetry(await connect(), {
    trusted: true,
    policy: { baseDelayMs: 10, maxDelayMs: 20, attemptTimeoutMs: 400, totalTimeoutMs: 700, maxAttempts: 10 },
    seed: 11,
  });
  proxy.faults.push({ hold: 900 }, { hold: 900 }, { hold: 900 });
  const t0 = Date.now();
  const out = await mcp.call({ name: 'search_tickets', arguments: { query: 'q' } });
  assert.equal(out.status, 'unknown');
  assert.ok(['deadline', 'max_attempts'].includes(out.reason), out.reason);
  assert.equal(out.reason, 'deadline');
  assert.ok(Date.now() - t0 < 1_500, `took ${Date.now() - t0} ms`);
  await new Promise((r) => setTimeout(r, 1_000));
});

test('the breaker opens after repeated 503s, fails fast without sending, then half-opens and closes', async () => {
  const events = [];
  const mcp = withRetry(await connect(), {
    trusted: true,
    policy: { ...fast, maxAttempts: 1, breaker: { consecutiveFailures: 3, openMs: 300 } },
    onEvent: (e) => {
      if (e.type === 'breaker') events.push(`${e.from}→${e.to}`);
      if (e.type === 'give_up') events.push(`give_up:${e.reason}`);
    },
    seed: 12,
  });
  proxy.faults.push({ status: 503 }, { status: 503 }, { status: 503 });
  // A 503 without Retry-After may come from a gateway after it forwarded the request: unknown, not failed.
  for (let i = 0; i < 3; i++) assert.equal((await mcp.call({ name: 'search_tickets', arguments: { query: 'q' } })).status, 'unknown');
  assert.equal(mcp.engine.breakerState, 'open');
  const sent = proxy.calls().length;
  const fastFail = await mcp.call({ name: 'search_tickets', arguments: { query: 'q' } });
  assert.equal(fastFail.status, 'failed');
  assert.equal(fastFail.reason, 'breaker_open');
  assert.equal(fastFail.attempts.length, 0);
  assert.equal(proxy.calls().length, sent, 'nothing was sent');
  assert.match(fastFail.message, /paused/);
  await new Promise((r) => setTimeout(r, 350));
  const probe = await mcp.call({ name: 'search_tickets', arguments: { query: 'q' } });
  assert.equal(probe.status, 'succeeded');
  assert.equal(mcp.engine.breakerState, 'closed');
  assert.deepEqual(events, ['give_up:max_attempts', 'give_up:max_attempts', 'closed→open', 'give_up:max_attempts',
    'give_up:breaker_open', 'open→half_open', 'half_open→closed']);
});

test('an expired session (404) is re-initialized once and the call goes through', async () => {
  const client = await connect();
  const mcp = withRetry(client, { trusted: true, policy: fast, seed: 13 });
  assert.equal(mcp.engine.revision, 'unknown', 'no version negotiated yet: the conservative reading');
  await mcp.call({ name: 'search_tickets', arguments: { query: 'warm' } });
  assert.equal(mcp.engine.revision, '2025-11-25', 'learned from the negotiated protocol version');
  const before = client.transport.sessionId;
  server.expireSessions();
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'after expiry' } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.attempts[0].classification.recover, 'reinitialize');
  assert.notEqual(client.transport.sessionId, before);
  assert.equal(server.effects.tickets.length, 1);
});

/** A `transport` factory for withRetry that counts the sessions it made. */
function countedTransports() {
  const counter = { made: 0 };
  counter.transport = () => {
    counter.made++;
    return new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: observeFetch() });
  };
  return counter;
}

test('a session that expired before the first call: tools/list is recovered first, so a keyed tool keeps its operation id', async () => {
  const client = await connect();
  const fresh = countedTransports();
  const mcp = withRetry(client, { trusted: true, policy: fast, seed: 17, transport: fresh.transport });
  server.expireSessions(); // before withRetry ever listed the tools
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'first call' } });
  assert.equal(out.status, 'succeeded', JSON.stringify(out));
  assert.equal(out.safety, 'keyed');
  assert.equal(out.attempts.length, 1, 'the call itself went out once, on the new session');
  assert.ok(server.effects.keyed.has(out.operationId));
  assert.equal(fresh.made, 1);
  assert.equal(server.effects.tickets.length, 1);
});

test('six concurrent writes on an expired session (three unsafe): one re-initialization, each reads its own 404, all succeed', async () => {
  const client = await connect();
  const fresh = countedTransports();
  const mcp = withRetry(client, { trusted: true, policy: fast, seed: 16, transport: fresh.transport });
  await mcp.call({ name: 'search_tickets', arguments: { query: 'warm' } });
  const before = client.transport.sessionId;
  server.expireSessions();
  // The server's 404s come back one after another (the proxy holds each a little longer), so the first one's
  // re-initialization happens while the others are still in flight on the old session.
  for (let i = 0; i < 6; i++) proxy.faults.push({ hold: 10 + 15 * i });
  const outs = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => mcp.call({ name: n % 2 ? 'create_ticket' : 'create_ticket_keyed', arguments: { title: `race ${n}` } })));
  const why = JSON.stringify(outs.map((o) => o.attempts.map((a) => a.outcome)));
  assert.deepEqual(outs.map((o) => o.status), Array(6).fill('succeeded'), why);
  assert.deepEqual(outs.map((o) => o.attempts[0].outcome.status), Array(6).fill(404), why);
  assert.equal(fresh.made, 1, 'one new session for all six');
  assert.notEqual(client.transport.sessionId, before);
  assert.equal(server.effects.tickets.length, 6);
});

test('transport: a factory of fresh transports re-initializes a lost session (no private SDK fields read)', async () => {
  let made = 0;
  const client = await connect();
  const mcp = withRetry(client, {
    trusted: true,
    policy: fast,
    seed: 14,
    transport: () => {
      made++;
      return new StreamableHTTPClientTransport(new URL(proxy.url));
    },
  });
  await mcp.call({ name: 'search_tickets', arguments: { query: 'warm' } });
  const before = client.transport.sessionId;
  server.expireSessions();
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'factory' } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.attempts[0].classification.recover, 'reinitialize');
  assert.equal(made, 1);
  assert.notEqual(client.transport.sessionId, before);
  assert.throws(() => withRetry(client, { transport: () => null, reconnect: async () => {} }), (e) => e instanceof TypeError && e.code === 'conflicting_options');
  // A factory that does not make a transport: the recovery fails, the call never left — failed, nothing sent.
  const bad = withRetry(await connect(), { trusted: true, policy: fast, seed: 15, transport: () => ({}) });
  await bad.call({ name: 'search_tickets', arguments: { query: 'warm' } });
  server.expireSessions();
  const sentBefore = server.effects.tickets.length;
  const broken = await bad.call({ name: 'create_ticket', arguments: { title: 'no transport' } });
  assert.notEqual(broken.status, 'succeeded');
  assert.equal(server.effects.tickets.length, sentBefore);
});

test('callTool is a drop-in: a non-succeeded call becomes an isError result for the model, with the outcome in _meta', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: fast, seed: 14 });
  proxy.faults.push('cut');
  const res = await mcp.callTool({ name: 'create_ticket', arguments: { title: 'z' } });
  assert.equal(res.isError, true);
  assert.match(res.content[0].text, /may or may not have taken effect/);
  const meta = res._meta[OUTCOME_META_KEY];
  assert.equal(meta.status, 'unknown');
  assert.equal(meta.attempts.length, 1);
  assert.doesNotThrow(() => JSON.stringify(res));
  const ok = await mcp.callTool({ name: 'create_ticket', arguments: { title: 'z2' } });
  assert.equal(ok.isError, undefined);
  assert.deepEqual(ok.structuredContent, { id: 'T-2' });
});

test('a server that cannot be reached at all: connection refused is provably not sent', async () => {
  const client = await connect();
  const mcp = withRetry(client, { trusted: true, policy: { ...fast, maxAttempts: 2 }, seed: 15, tools: { create_ticket: 'unsafe' } });
  await mcp.refreshTools();
  await proxy.close(); // nothing listens on the proxy's port any more
  await new Promise((r) => setTimeout(r, 200)); // let the client's pool see its kept-alive socket close
  try {
    const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'nowhere' } });
    assert.deepEqual(out.attempts.map((a) => a.outcome), [{ kind: 'network', sent: 'no' }, { kind: 'network', sent: 'no' }]);
    assert.equal(out.status, 'failed', 'refused twice: definitely not done');
    assert.equal(out.reason, 'max_attempts');
  } finally {
    proxy = await startFaultProxy(server.url);
  }
});

test('bad options throw typed errors naming the field', async () => {
  const client = await connect();
  const cases = [
    [{ trusted: 'yes' }, TypeError, 'invalid_type', 'trusted'],
    [{ tools: { x: 'safe' } }, RangeError, 'invalid_value', 'tools.x'],
    [{ retries: 3 }, TypeError, 'unknown_option', 'retries'],
    [{ policy: { maxAttempts: -1 } }, RangeError, 'negative', 'maxAttempts'],
    [{ journal: {} }, TypeError, 'invalid_type', 'journal'],
    [{ onEvent: 1 }, TypeError, 'invalid_type', 'onEvent'],
  ];
  for (const [o, type, code, field] of cases) {
    assert.throws(() => withRetry(client, o), (e) => e instanceof type && e.code === code && e.field === field, JSON.stringify(o));
  }
  assert.throws(() => withRetry({}, {}), (e) => e instanceof TypeError && e.field === 'client');
  await assert.rejects(withRetry(client).call({}), (e) => e instanceof TypeError && e.field === 'params.name');
});

test('a stream that broke after an SSE event id is resumed, not re-sent: one ticket even for an unsafe tool', async () => {
  const sseServer = await startMcpServer({ sse: true });
  const sseProxy = await startFaultProxy(sseServer.url);
  try {
    // The SDK waits 1 s before it reconnects: leave the attempt plenty of time, even on a loaded machine.
    const mcp = withRetry(await connect(sseProxy.url), { trusted: true, policy: { ...fast, attemptTimeoutMs: 15_000 }, seed: 16 });
    sseProxy.faults.push('cut');
    const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'resumable' } });
    assert.equal(out.status, 'succeeded');
    assert.equal(out.attempts.length, 1, 'the SDK resumed the stream inside the attempt');
    assert.equal(sseServer.effects.tickets.length, 1);
    assert.equal(sseProxy.calls().length, 1, 'tools/call was sent once');
    const after = sseProxy.log.slice(sseProxy.log.findIndex((l) => l.method === 'tools/call') + 1);
    assert.ok(after.some((l) => l.method === 'GET'), 'the answer came back over a GET with Last-Event-ID');
  } finally {
    await sseProxy.close();
    await sseServer.close();
  }
});

test('when the SDK does not resume by itself, withRetry resumes with the resumption token instead of re-sending', async () => {
  const sseServer = await startMcpServer({ sse: true });
  const sseProxy = await startFaultProxy(sseServer.url);
  try {
    const client = await connect(sseProxy.url, { reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 10, maxReconnectionDelay: 10, reconnectionDelayGrowFactor: 1 } });
    // Our timeout ends the first attempt (the SDK will not reconnect); the resume then has as long.
    const mcp = withRetry(client, { trusted: true, policy: { ...fast, attemptTimeoutMs: 2_000, maxAttempts: 2 }, seed: 18 });
    sseProxy.faults.push('cut');
    const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'resumed by us' } });
    assert.equal(out.status, 'succeeded');
    assert.deepEqual(out.attempts.map((a) => a.outcome.kind), ['stream_broken', 'result']);
    assert.equal(out.attempts[0].decision.recover, 'resume_stream');
    assert.equal(sseServer.effects.tickets.length, 1, 'resumed, not re-sent');
    assert.equal(sseProxy.calls().length, 1);
  } finally {
    await sseProxy.close();
    await sseServer.close();
  }
});

test('-32020 (2026-07-28 header mismatch) refreshes the tool list, then re-sends once', async () => {
  let lists = 0;
  const client = await connect();
  const listTools = client.listTools.bind(client);
  client.listTools = (...a) => {
    lists++;
    return listTools(...a);
  };
  const mcp = withRetry(client, { trusted: true, policy: fast, revision: '2026-07-28', seed: 17 });
  await mcp.refreshTools();
  lists = 0;
  proxy.faults.push({ jsonrpcError: -32020 });
  const out = await mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'after refresh' } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.attempts[0].classification.recover, 'refresh_tools');
  assert.equal(out.attempts[0].decision.delayMs, 0);
  // One listing before the call (at 2026-07-28 a list without ttlMs is stale at once: caching.mdx), one for the
  // check after the -32020, which the recovery step shares (not a third).
  assert.equal(lists, 2, 'tools/list before the call, and once for the check and the step');
  assert.equal(server.effects.tickets.length, 1);
  // The tool list changed this tool's x-mcp-header declarations since the call went out (the server's side of a
  // real mismatch, seen through the list): confirmed, so an unsafe write is re-sent after the refresh.
  const declared = (tools) => ({ ...tools, tools: tools.tools.map((t) => (t.name !== 'create_ticket' ? t
    : { ...t, inputSchema: { ...t.inputSchema, properties: { ...t.inputSchema.properties, title: { ...t.inputSchema.properties.title, 'x-mcp-header': 'Title' } } } })) });
  let listing = 0; // the call's own listing (stale at once) still shows the old schema; the check's shows the new
  client.listTools = async (...a) => (listing++ === 0 ? (x) => x : declared)(await listTools(...a));
  proxy.faults.push({ jsonrpcError: -32020 });
  const confirmed = await mcp.call({ name: 'create_ticket', arguments: { title: 'declared' } });
  assert.equal(confirmed.status, 'succeeded');
  assert.equal(confirmed.attempts[0].outcome.mismatchConfirmed, true);
  assert.equal(confirmed.attempts[0].classification.delivery, 'not_processed');
  assert.equal(server.effects.tickets.length, 2);
  // Unchanged since (the list already declares it): a second -32020 proves nothing for the unsafe write.
  proxy.faults.push({ jsonrpcError: -32020 });
  assert.equal((await mcp.call({ name: 'create_ticket', arguments: { title: 'again' } })).status, 'unknown');
  assert.equal(server.effects.tickets.length, 2);
  client.listTools = listTools;
  // Under 2025-11-25, -32020 means nothing in particular: the work may have happened.
  const old = withRetry(client, { trusted: true, policy: fast, revision: '2025-11-25' });
  proxy.faults.push({ jsonrpcError: -32020 });
  assert.equal((await old.call({ name: 'create_ticket', arguments: { title: 'x' } })).status, 'unknown');
});
