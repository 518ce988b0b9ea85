// examples/agents under `wrangler dev --local` (wrangler 4.86, workerd): a Cloudflare `agents` 0.32 Agent whose
// MCP client manager (a `@modelcontextprotocol/client` v2 Client per server) calls the real MCP server behind the
// fault proxy through `mcp-retry-policy/agents`, the journal in the Agent's own Durable Object storage.
// Driven over HTTP; the effects are counted on the MCP server.
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { startWranglerDev } from '../support/wrangler-dev.mjs';

let server;
let proxy;
let dev;
let base;

before(async () => {
  server = await startMcpServer();
  proxy = await startFaultProxy(server.url);
  dev = await startWranglerDev('agents', { vars: { TICKETS_MCP_URL: proxy.url, ATTEMPT_TIMEOUT_MS: 1000 }, portBase: 8900 });
  base = `${dev.url}/agents/ticket-agent/desk`;
});

after(async () => {
  await dev?.stop();
  await proxy?.close();
  await server?.close();
});

beforeEach(() => {
  proxy.faults.length = 0;
});

async function post(op, body) {
  const res = await fetch(`${base}/${op}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  assert.equal(res.status, 200, `${op}: ${text.slice(0, 2000)}\n${dev.log().slice(-2000)}`);
  return JSON.parse(text);
}
const tickets = () => server.effects.tickets.length;
const kinds = (out) => out.attempts.map((a) => a.outcome.kind);

test('a plain call through the Agent\'s own MCP client (agents 0.32, SDK v2) succeeds', async () => {
  const out = await post('call', { tool: 'search_tickets', arguments: { query: 'a' } });
  assert.equal(out.status, 'succeeded');
  assert.equal(out.state, 'ready');
  assert.match(out.text, /tickets match/);
});

test('a keyed write whose answer was cut is retried with the same operation id: one ticket', async () => {
  const before = tickets();
  proxy.faults.push('cut');
  const out = await post('call', { tool: 'create_ticket_keyed', arguments: { title: 'cut keyed' }, intent: 'i-keyed-1' });
  assert.equal(out.status, 'succeeded');
  assert.deepEqual(kinds(out), ['network', 'result']);
  assert.equal(tickets() - before, 1);
  assert.ok(server.effects.keyed.has(out.operationId));
});

test('an unsafe write whose answer was cut stops unknown after one attempt', async () => {
  const before = tickets();
  proxy.faults.push('cut');
  const out = await post('call', { tool: 'create_ticket', arguments: { title: 'cut unsafe' } });
  assert.equal(out.status, 'unknown');
  assert.equal(out.reason, 'unsafe_after_unknown');
  assert.equal(out.attempts.length, 1);
  assert.equal(tickets() - before, 1, 'it ran once; it was not sent again');
  assert.match(out.message, /may or may not have/);
});

test('a 503 (HTTP status read from the v2 client) and a JSON-RPC -32603 are retried on a keyed write', async () => {
  proxy.faults.push({ status: 503, retryAfter: '0' }, { jsonrpcError: -32603 });
  const out = await post('call', { tool: 'create_ticket_keyed', arguments: { title: '503' }, intent: 'i-503' });
  assert.equal(out.status, 'succeeded');
  assert.deepEqual(out.attempts.map((a) => [a.outcome.kind, a.outcome.status ?? a.outcome.code]), [['http', 503], ['jsonrpc_error', -32603], ['result', undefined]]);
});

test('the attempt timeout reaches the v2 client: an answer held 2.5 s times out at 1 s and the read is retried', async () => {
  proxy.faults.push({ hold: 2_500 });
  const t0 = Date.now();
  const out = await post('call', { tool: 'search_tickets', arguments: { query: 'held' } });
  assert.equal(out.status, 'succeeded');
  assert.deepEqual(kinds(out), ['timeout', 'result']);
  assert.ok(Date.now() - t0 < 2_400, `${Date.now() - t0} ms`);
});

test('a lost session (404) is re-initialized through the agents manager: new session, connection ready', async () => {
  const first = await post('call', { tool: 'search_tickets', arguments: { query: 'x' } });
  server.expireSessions();
  const out = await post('call', { tool: 'create_ticket_keyed', arguments: { title: 'after 404' }, intent: 'i-404' });
  assert.equal(out.status, 'succeeded', JSON.stringify(out.attempts));
  assert.equal(out.attempts[0].outcome.status, 404);
  assert.deepEqual([out.attempts[0].action, out.attempts[0].recover], ['retry', 'reinitialize']);
  assert.notEqual(out.session, first.session);
  assert.equal(out.state, 'ready');
});

test('six concurrent writes (three unsafe) after a lost session: each gets its own 404, one re-initialization, all succeed', async () => {
  // The adapter lets the requests in flight on the lost session settle before the manager closes the old
  // client: each then reads 404 (not processed — safe to send again even for an unsafe tool) instead of
  // "connection closed" (maybe processed — an unsafe tool would end unknown).
  server.expireSessions();
  const before = tickets();
  const outs = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => post('call', {
    tool: n % 2 ? 'create_ticket' : 'create_ticket_keyed', arguments: { title: `race ${n}` }, intent: `i-race-${n}`,
  })));
  const why = JSON.stringify(outs.map((o) => o.attempts));
  assert.deepEqual(outs.map((o) => o.status), Array(6).fill('succeeded'), why);
  // A call's first attempt reads 404 if it went out on the lost session, or a result if it arrived after the
  // re-initialization began (it waits for it); never a closed connection.
  const firsts = outs.map((o) => o.attempts[0].outcome);
  assert.ok(firsts.every((f) => f.status === 404 || f.kind === 'result'), why);
  assert.ok(firsts.some((f) => f.status === 404), why);
  assert.equal(new Set(outs.map((o) => o.session)).size, 1, 'one new session');
  assert.equal(tickets() - before, 6);
});

test('getAITools() after installRetry: an unsafe write cut mid-answer throws the outcome\'s words for the model', async () => {
  const before = tickets();
  const ok = await post('tool', { via: 'agents', tool: 'search_tickets', arguments: { query: 'ai' }, toolCallId: 'tc-a' });
  assert.equal(ok.ok, true);
  proxy.faults.push('cut');
  const out = await post('tool', { via: 'agents', tool: 'create_ticket', arguments: { title: 'ai unsafe' }, toolCallId: 'tc-b' });
  assert.equal(out.ok, false);
  assert.match(out.error, /create_ticket may or may not have taken effect/);
  assert.equal(tickets() - before, 1);
});

test('aiSdkTools(retryingMcp(agent)): the model\'s tool-call id is the intent; the same tool call again is one ticket', async () => {
  const before = tickets();
  proxy.faults.push('cut');
  const first = await post('tool', { via: 'ai-sdk', tool: 'create_ticket_keyed', arguments: { title: 'from the model' }, toolCallId: 'tc-keyed-7' });
  assert.equal(first.ok, true, JSON.stringify(first));
  const again = await post('tool', { via: 'ai-sdk', tool: 'create_ticket_keyed', arguments: { title: 'from the model' }, toolCallId: 'tc-keyed-7' });
  assert.deepEqual(again.output.content, first.output.content);
  assert.equal(tickets() - before, 1);
});

test('the journal lives in the Agent\'s storage: a keyed write that never got an answer is listed as unresolved', async () => {
  for (let i = 0; i < 20; i++) proxy.faults.push('cut');
  const out = await post('call', { tool: 'create_ticket_keyed', arguments: { title: 'never answered' }, intent: 'i-lost' });
  proxy.faults.length = 0;
  assert.equal(out.status, 'unknown', JSON.stringify(out));
  const pending = await (await fetch(`${base}/unresolved`)).json();
  const entry = pending.find((e) => e.operationId === out.operationId);
  assert.ok(entry, JSON.stringify(pending));
  assert.equal(entry.state, 'unknown');
  assert.equal(entry.intent, 'i-lost');
  assert.equal(entry.tool, 'create_ticket_keyed');
});
