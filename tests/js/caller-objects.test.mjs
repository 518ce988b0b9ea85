// A caller's objects stay the caller's: what withRetry was handed, and what it hands out, cannot change how a call
// ends. Found by a review of the client face: params re-read at every attempt (a reused params object sent
// another tool under the first one's safety), listeners given the engine's live decision, a journal entry kept
// by reference and cloned after it was stored. Against the real SDK client and server behind the fault proxy.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryJournal, withRetry } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';

let server;
let proxy;
before(async () => {
  server = await startMcpServer();
  proxy = await startFaultProxy(server.url);
});
after(async () => {
  await proxy?.close();
  await server?.close();
});

async function wrapped(options = {}) {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
  return { client, mcp: withRetry(client, { trusted: true, seed: 1, policy: { baseDelayMs: 1, maxDelayMs: 2 }, ...options }) };
}

test('params reused by the caller for its next call: every attempt sends what the call was given', async () => {
  const { client, mcp } = await wrapped();
  const from = proxy.log.length;
  const tickets = server.effects.tickets.length;
  const p = { name: 'search_tickets', arguments: { query: 'first' } };
  proxy.faults.push('drop'); // the read's first answer is lost: a read-only tool is sent again
  const pending = mcp.call(p);
  p.name = 'create_ticket'; // the app fills the same object for its next call
  p.arguments = { title: 'reused params' };
  const out = await pending;
  await client.close();
  const sent = proxy.log.slice(from).filter((l) => l.method === 'tools/call').map((l) => `${l.tool}:${l.fault}`);
  assert.deepEqual(sent, ['search_tickets:drop', 'search_tickets:pass'], 'before: create_ticket:drop, create_ticket:pass (two tickets)');
  assert.equal(server.effects.tickets.length, tickets, 'no ticket was made');
  assert.equal(out.status, 'succeeded');
});

test('a listener that labels the engine\'s decision in place does not change how the call ends', async () => {
  const { client, mcp } = await wrapped({
    onEvent: (e) => {
      if (e.decision) e.decision.status = 'succeeded';
      if (e.classification) e.classification.delivery = 'not_delivered';
      if (e.outcome) e.outcome.sent = 'no';
    },
  });
  proxy.faults.push('drop'); // the write ran; its answer was lost
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'labelled' } });
  await client.close();
  assert.equal(out.status, 'unknown', 'before: succeeded, "create_ticket succeeded."');
  assert.match(out.message, /may or may not have taken effect/);
  assert.equal(out.attempts.length, 1, 'not sent again');
});

test('MemoryJournal: an entry it cannot copy is refused by name with nothing stored; later changes to the arguments do not reach it', async () => {
  const j = new MemoryJournal();
  await assert.rejects(j.begin({ operationId: 'op-a', tool: 'w', arguments: { f() {} } }), (e) => e instanceof TypeError && e.code === 'not_cloneable' && e.field === 'arguments');
  assert.deepEqual(await j.pending(), [], 'before: the entry was stored, then every pending() threw DataCloneError');
  assert.equal(await j.get('op-a'), undefined);
  const args = { title: 'kept' };
  await j.begin({ operationId: 'op-b', tool: 'w', arguments: args });
  args.title = 'changed';
  assert.equal((await j.get('op-b')).arguments.title, 'kept');
  assert.equal((await j.pending()).length, 1);
});

test('a journal of the app\'s own that does not answer with the entry is refused by name, nothing sent', async () => {
  const broken = { begin: async () => undefined, settle: async () => undefined, pending: async () => [] };
  const { client, mcp } = await wrapped({ journal: broken });
  const from = proxy.log.length;
  await assert.rejects(mcp.call({ name: 'create_ticket_keyed', arguments: { title: 'no entry' } }), (e) => e instanceof TypeError && e.field === 'journal');
  await client.close();
  assert.equal(proxy.log.slice(from).filter((l) => l.method === 'tools/call').length, 0, 'before: sent with operation_id undefined');
});
