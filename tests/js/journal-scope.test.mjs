// One journal shared by the wrappers of two servers (the Agents adapter keeps one per agent): every entry is
// bound to the server its write went to. Two real McpServers with their own ledgers and status tools over
// Streamable HTTP on 127.0.0.1; server A behind the fault proxy, so its answer can be lost after it acted.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch, MemoryJournal, OperationLedger, MemoryLedgerStore } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';

let a;
let b;
let proxy;
const clients = [];
const statusAsked = { a: 0, b: 0 };

before(async () => {
  a = await startMcpServer({ ledger: new OperationLedger({ store: new MemoryLedgerStore() }) });
  b = await startMcpServer({ ledger: new OperationLedger({ store: new MemoryLedgerStore() }) });
  proxy = await startFaultProxy(a.url);
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy.close();
  await a.close();
  await b.close();
});

async function connect(url, who) {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  const fetch = observeFetch(async (input, init) => {
    if (typeof init?.body === 'string' && init.body.includes('"operation_status"')) statusAsked[who]++;
    return globalThis.fetch(input, init);
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch, requestInit: { headers: { authorization: 'Bearer alice' } } }));
  clients.push(client);
  return client;
}

const fast = { baseDelayMs: 10, maxDelayMs: 50, attemptTimeoutMs: 2_000, maxAttempts: 1 };

test("reconcile, resolve and intents stay with the entry's own server", async () => {
  const journal = new MemoryJournal();
  const onA = withRetry(await connect(proxy.url, 'a'), { trusted: true, policy: fast, journal, autoResolve: false });
  const onB = withRetry(await connect(b.url, 'b'), { trusted: true, policy: fast, journal, autoResolve: false });

  // A acts, its answer is lost: the entry stays unknown, bound to A.
  proxy.faults.push('cut');
  const lost = await onA.call({ name: 'open_ticket', arguments: { title: 'for A' } }, { intent: 'tool-call-1' });
  assert.equal(lost.status, 'unknown');
  assert.equal(a.effects.tickets.length, 1, 'A opened the ticket');
  const [entry] = await journal.pending();
  assert.equal(entry.server, new URL(proxy.url).origin + new URL(proxy.url).pathname);

  // B never hears of A's operation: not asked by reconcile, refused by resolve, its intent not reused.
  assert.deepEqual(await onB.reconcile(), []);
  assert.equal(statusAsked.b, 0, "B's status tool was not asked about A's operation");
  await assert.rejects(onB.resolve(lost.operationId), (e) => e instanceof RangeError && e.code === 'other_server');
  await assert.rejects(
    onB.call({ name: 'open_ticket', arguments: { title: 'for B' } }, { intent: 'tool-call-1' }),
    (e) => e instanceof RangeError && e.code === 'intent_reused' && /another server/.test(e.message),
  );
  assert.equal(b.effects.tickets.length, 0, "nothing was sent to B under A's operation id");
  assert.deepEqual((await onB.pendingOperations()).map((e) => e.operationId), [], "B's pending list holds only B's");
  assert.deepEqual((await journal.get(lost.operationId)).state, 'unknown');

  // A's own reconcile closes it through A's status tool.
  const [resolved] = await onA.reconcile();
  assert.equal(resolved.status, 'succeeded');
  assert.equal(resolved.reason, 'resolved_by_status');
  assert.equal(statusAsked.a, 1);
  assert.equal((await journal.get(lost.operationId)).state, 'succeeded');
});

test('entries written before they were bound to a server: listed by both, reconciled by neither, resolved on request', async () => {
  const journal = new MemoryJournal();
  await journal.begin({ tool: 'open_ticket', operationId: 'legacy-1', createdAt: 1 });
  const onA = withRetry(await connect(proxy.url, 'a'), { trusted: true, policy: fast, journal, autoResolve: false });
  const onB = withRetry(await connect(b.url, 'b'), { trusted: true, policy: fast, journal, autoResolve: false });
  const askedBefore = { ...statusAsked };
  assert.deepEqual((await onA.pendingOperations()).map((e) => e.operationId), ['legacy-1']);
  assert.deepEqual((await onB.pendingOperations()).map((e) => e.operationId), ['legacy-1']);
  assert.deepEqual(await onA.reconcile(), []);
  assert.deepEqual(await onB.reconcile(), []);
  assert.deepEqual(statusAsked, askedBefore, 'no server was asked about an entry nobody can place');
  // The app knows where it went: it asks that server's wrapper.
  const out = await onB.resolve('legacy-1');
  assert.equal(out.status, 'unknown');
  assert.equal(out.reason, 'status_not_found');
});

test('journalArguments: false keeps only what a retry and a status lookup need', async () => {
  const journal = new MemoryJournal();
  const mcp = withRetry(await connect(b.url, 'b'), { trusted: true, policy: fast, journal, journalArguments: false, server: 'tickets-eu' });
  const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'medical leave for alice' } });
  assert.equal(out.status, 'succeeded');
  const e = await journal.get(out.operationId);
  assert.equal(e.server, 'tickets-eu');
  assert.equal(e.arguments, undefined);
  assert.doesNotMatch(JSON.stringify(e), /medical/);
  assert.throws(() => withRetry(clients[0], { server: '' }), (err) => err instanceof TypeError && err.field === 'server');
  assert.throws(() => withRetry(clients[0], { journalArguments: 'no' }), (err) => err instanceof TypeError && err.field === 'journalArguments');
});
