// Issue 18, items 2 and 3, with the real MCP SDK server and client over HTTP: the status lookup finds an
// operation whatever action the server's withIdempotency named (the client asks by tool name), never across
// tenants; and a tenant is the token's principal — two users of one OAuth client id cannot read each
// other's results through the status tool, and an authorization hook decides which actions a caller reads.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { MemoryLedgerStore, OperationLedger, registerStatusTool, withIdempotency, withRetry } from '../../pkg/node.js';
import { startAuthServer } from '../support/ledger-auth-server.mjs';

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const opId = () => `op-${crypto.randomUUID()}`;
// One OAuth client (a pre-registered app, or a Client ID Metadata Document URL) used by two people.
const APP = 'https://app.example/oauth-client.json';
const tokens = {
  alice: { clientId: APP, sub: 'user-alice' },
  bob: { clientId: APP, sub: 'user-bob' },
  carol: { clientId: 'https://other.example/client.json', sub: 'user-carol' },
};
// What the README shows: the tenant is the token's subject.
const principal = (extra) => extra.authInfo?.extra?.sub;

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

async function start(register) {
  const s = await startAuthServer({ tokens, register });
  servers.push(s);
  return s;
}

async function connect(url, token) {
  const client = new Client({ name: 'ledger-principal-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  after(() => client.close());
  return client;
}

/** A server whose tool `tickets_create` records under the action `create_ticket`. */
function ticketDesk(ledger, effects, tenant, statusOptions = {}, writeOptions = {}) {
  return (server) => {
    registerStatusTool(server, ledger, { tenant, z, ...statusOptions });
    server.registerTool('tickets_create', {
      description: 'Open a ticket.',
      inputSchema: { title: z.string(), operation_id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    }, withIdempotency(ledger, async ({ title }, extra) => {
      effects.push({ title, by: tenant(extra) });
      return { ...text(`ticket for ${title}`), structuredContent: { ticket: `T-${effects.length}`, title } };
    }, { action: 'create_ticket', tenant, ...writeOptions }));
    server.registerTool('payroll_adjust', {
      description: 'Adjust a payroll entry.',
      inputSchema: { amount: z.number(), operation_id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    }, withIdempotency(ledger, async ({ amount }) => text(`adjusted by ${amount}`), { action: 'payroll_adjust', tenant, ...writeOptions }));
  };
}

test('item 2: resolve() finds a write whose tool (tickets_create) and ledger action (create_ticket) differ, with no extra configuration', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const effects = [];
  const { url } = await start(ticketDesk(ledger, effects, principal));
  const alice = await connect(url, 'alice');
  const id = opId();
  const first = await alice.callTool({ name: 'tickets_create', arguments: { title: 'alice: medical leave', operation_id: id } });
  assert.equal(first.structuredContent.ticket, 'T-1');
  const mcp = withRetry(alice, { trusted: true });
  const out = await mcp.resolve(id, { tool: 'tickets_create' });
  assert.deepEqual([out.status, out.reason], ['succeeded', 'resolved_by_status'], out.message);
  assert.deepEqual(out.result.structuredContent, first.structuredContent, 'the recorded result');
  assert.equal(effects.length, 1, 'nothing ran again to find out');
  // The ledger's own action name works too (a client that knows it).
  const byAction = await alice.callTool({ name: 'operation_status', arguments: { action: 'create_ticket', operation_id: id } });
  assert.equal(byAction.structuredContent.status, 'succeeded');
  // An unused id is still not_found: the wider lookup invents nothing.
  const unused = await mcp.resolve(opId(), { tool: 'tickets_create' });
  assert.deepEqual([unused.status, unused.reason], ['unknown', 'status_not_found']);
});

test('item 2: the wider lookup never crosses tenants: another principal, same id, same tool, reads not_found', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const { url } = await start(ticketDesk(ledger, [], principal));
  const id = opId();
  await (await connect(url, 'alice')).callTool({ name: 'tickets_create', arguments: { title: 'alice: medical leave', operation_id: id } });
  for (const who of ['bob', 'carol']) {
    const c = await connect(url, who);
    const out = await withRetry(c, { trusted: true }).resolve(id, { tool: 'tickets_create' });
    assert.deepEqual([out.status, out.reason], ['unknown', 'status_not_found'], `${who} learns nothing`);
    const raw = await c.callTool({ name: 'operation_status', arguments: { action: 'create_ticket', operation_id: id } });
    assert.equal(raw.structuredContent.status, 'not_found');
    assert.equal(raw.structuredContent.result, undefined);
  }
});

test('item 2: one id used by one principal under two actions is ambiguous for a tool name that is neither: unknown, never a guess', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const { url } = await start(ticketDesk(ledger, [], principal));
  const alice = await connect(url, 'alice');
  const id = opId();
  await alice.callTool({ name: 'tickets_create', arguments: { title: 'x', operation_id: id } });
  await alice.callTool({ name: 'payroll_adjust', arguments: { amount: 5, operation_id: id } });
  const asked = await alice.callTool({ name: 'operation_status', arguments: { action: 'no_such_tool', operation_id: id } });
  assert.equal(asked.structuredContent.status, 'unknown');
  assert.equal(asked.structuredContent.result, undefined);
  // Asked by its exact action, each answers its own.
  const exact = await alice.callTool({ name: 'operation_status', arguments: { action: 'payroll_adjust', operation_id: id } });
  assert.equal(exact.structuredContent.result.content[0].text, 'adjusted by 5');
});

test('item 3: two users of one OAuth client id: with the tenant from the token\'s subject, user B cannot read user A\'s result', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const effects = [];
  const { url } = await start(ticketDesk(ledger, effects, principal));
  const alice = await connect(url, 'alice');
  const bob = await connect(url, 'bob');
  const id = opId();
  await alice.callTool({ name: 'tickets_create', arguments: { title: 'alice: medical leave', operation_id: id } });
  const read = await bob.callTool({ name: 'operation_status', arguments: { action: 'tickets_create', operation_id: id } });
  assert.equal(read.structuredContent.status, 'not_found');
  assert.doesNotMatch(JSON.stringify(read), /medical leave/);
  // Bob replaying Alice's id is his own operation (it runs for him), never her result.
  const replay = await bob.callTool({ name: 'tickets_create', arguments: { title: 'alice: medical leave', operation_id: id } });
  assert.equal(replay.structuredContent.ticket, 'T-2');
  assert.deepEqual(effects.map((e) => e.by), ['user-alice', 'user-bob']);
});

test('item 3 (what the old examples did): the tenant from clientId makes both users one tenant, and B reads A\'s result', async () => {
  // Kept as the measured "before": the app id is not a principal.
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const byApp = (extra) => extra.authInfo?.clientId;
  const { url } = await start(ticketDesk(ledger, [], byApp));
  const id = opId();
  await (await connect(url, 'alice')).callTool({ name: 'tickets_create', arguments: { title: 'alice: medical leave', operation_id: id } });
  const read = await (await connect(url, 'bob')).callTool({ name: 'operation_status', arguments: { action: 'tickets_create', operation_id: id } });
  assert.equal(read.structuredContent.status, 'succeeded');
  assert.match(JSON.stringify(read.structuredContent.result), /medical leave/);
});

test('item 3: the status tool\'s authorize hook decides which caller reads which action; a refusal reads as not_found', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const asked = [];
  // An org-wide tenant (the app), narrowed by the hook: only payroll admins read payroll results.
  const org = (extra) => extra.authInfo?.clientId;
  const authorize = ({ tenant, action, operationId, extra }) => {
    asked.push({ tenant, action, operationId, sub: extra.authInfo?.extra?.sub });
    return action !== 'payroll_adjust' || extra.authInfo?.extra?.sub === 'user-alice';
  };
  const { url } = await start(ticketDesk(ledger, [], org, { authorize }));
  const alice = await connect(url, 'alice');
  const bob = await connect(url, 'bob');
  const id = opId();
  await alice.callTool({ name: 'payroll_adjust', arguments: { amount: -300, operation_id: id } });
  const own = await alice.callTool({ name: 'operation_status', arguments: { action: 'payroll_adjust', operation_id: id } });
  assert.equal(own.structuredContent.status, 'succeeded');
  const refused = await bob.callTool({ name: 'operation_status', arguments: { action: 'payroll_adjust', operation_id: id } });
  assert.equal(refused.structuredContent.status, 'not_found', 'refused exactly like an id never used');
  assert.equal(refused.structuredContent.result, undefined);
  assert.deepEqual(asked.at(-1), { tenant: APP, action: 'payroll_adjust', operationId: id, sub: 'user-bob' });
  // A hook that throws refuses too.
  const { url: url2 } = await start(ticketDesk(ledger, [], org, { authorize: () => { throw new Error('policy service down'); } }));
  const thrown = await (await connect(url2, 'alice')).callTool({ name: 'operation_status', arguments: { action: 'payroll_adjust', operation_id: id } });
  assert.equal(thrown.structuredContent.status, 'not_found');
  assert.doesNotMatch(JSON.stringify(thrown), /policy service/);
});

const org = (extra) => extra.authInfo?.clientId; // a tenant wider than one user: the organisation's app
const sub = (extra) => extra.authInfo?.extra?.sub;
const metaOf = (r) => r?._meta?.['dev.mcp-retry-policy/ledger'];

test('another user of the same tenant (the organisation): with `principal`, user B replaying A\'s operation_id and input is refused as a conflict, never given A\'s result', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const effects = [];
  const { url } = await start(ticketDesk(ledger, effects, org, {}, { principal: sub }));
  const alice = await connect(url, 'alice');
  const bob = await connect(url, 'bob');
  const id = opId();
  const args = { title: 'alice: medical leave', operation_id: id };
  const first = await alice.callTool({ name: 'tickets_create', arguments: args });
  assert.equal(first.structuredContent.ticket, 'T-1');
  const replay = await bob.callTool({ name: 'tickets_create', arguments: args });
  assert.equal(metaOf(replay)?.status, 'conflict', JSON.stringify(replay));
  assert.match(replay.content[0].text, /another caller/);
  assert.doesNotMatch(JSON.stringify(replay), /T-1|medical leave/);
  assert.equal(effects.length, 1, 'nothing ran for B either');
  // A's own retry still replays her result.
  const again = await alice.callTool({ name: 'tickets_create', arguments: args });
  assert.equal(again.structuredContent.ticket, 'T-1');
  // A request without a principal is refused before the ledger is read.
  const h = withIdempotency(ledger, async () => text('x'), { action: 'create_ticket', tenant: () => APP, principal: () => undefined });
  assert.equal(metaOf(await h(args, {})).reason, 'unauthenticated');
});

test('the same, without `principal` (the measured before): user B of the organisation receives A\'s result', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const { url } = await start(ticketDesk(ledger, [], org));
  const id = opId();
  const args = { title: 'alice: medical leave', operation_id: id };
  await (await connect(url, 'alice')).callTool({ name: 'tickets_create', arguments: args });
  const replay = await (await connect(url, 'bob')).callTool({ name: 'tickets_create', arguments: args });
  assert.equal(replay.structuredContent.ticket, 'T-1');
});

test('withIdempotency\'s `authorize` is asked on a replay too: a caller the write refuses gets rejected (unauthorized), never the recorded result nor whether the id was used', async () => {
  const events = [];
  const ledger = new OperationLedger({ store: new MemoryLedgerStore(), onEvent: (e) => events.push(e) });
  const asked = [];
  const authorize = ({ tenant, action, operationId, args, extra }) => {
    asked.push({ tenant, action, operationId, args, sub: sub(extra) });
    return action !== 'payroll_adjust' || sub(extra) === 'user-alice'; // only payroll admins adjust payroll
  };
  const { url } = await start(ticketDesk(ledger, [], org, {}, { authorize }));
  const alice = await connect(url, 'alice');
  const bob = await connect(url, 'bob');
  const id = opId();
  const args = { amount: -300, operation_id: id };
  const own = await alice.callTool({ name: 'payroll_adjust', arguments: args });
  assert.equal(own.content[0].text, 'adjusted by -300');
  const replay = await bob.callTool({ name: 'payroll_adjust', arguments: args });
  assert.deepEqual([metaOf(replay)?.status, metaOf(replay)?.reason], ['rejected', 'unauthorized'], JSON.stringify(replay));
  assert.doesNotMatch(JSON.stringify(replay), /adjusted/);
  const unused = await bob.callTool({ name: 'payroll_adjust', arguments: { amount: -300, operation_id: opId() } });
  assert.deepEqual(JSON.stringify(unused.content).replace(/op-[0-9a-f-]+/g, 'ID'), JSON.stringify(replay.content).replace(/op-[0-9a-f-]+/g, 'ID'), 'a used id and an unused one read the same');
  assert.deepEqual(asked.at(1), { tenant: APP, action: 'payroll_adjust', operationId: id, args, sub: 'user-bob' });
  // A hook that throws refuses too, told to onEvent.
  const h = withIdempotency(ledger, async () => text('x'), { action: 'payroll_adjust', tenant: () => APP, authorize: () => { throw new Error('policy service down'); } });
  const thrown = await h(args, {});
  assert.equal(metaOf(thrown).reason, 'unauthorized');
  assert.doesNotMatch(JSON.stringify(thrown), /policy service|adjusted/);
  assert.ok(events.some((e) => e.type === 'authorize_error'));
  assert.throws(() => withIdempotency(ledger, async () => ({}), { action: 'a', tenant: org, authorize: true }), (e) => e instanceof TypeError && e.field === 'authorize');
  assert.throws(() => withIdempotency(ledger, async () => ({}), { action: 'a', tenant: org, principal: 'sub' }), (e) => e instanceof TypeError && e.field === 'principal');
});

test('the status tool asks `authorize` before telling whether an id exists: an id used under two actions reads not_found to a caller refused both, as an unused one does', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const asked = [];
  const may = { 'user-alice': ['create_ticket', 'payroll_adjust', 'no_such_tool'], 'user-bob': [], 'user-carol': ['no_such_tool', 'create_ticket'] };
  const authorize = ({ action, operationId, extra }) => (asked.push([sub(extra), action, operationId]), may[sub(extra)].includes(action));
  const tokensOrg = { ...tokens, carol: { clientId: APP, sub: 'user-carol' } };
  const s = await startAuthServer({ tokens: tokensOrg, register: ticketDesk(ledger, [], org, { authorize }) });
  servers.push(s);
  const alice = await connect(s.url, 'alice');
  const id = opId();
  await alice.callTool({ name: 'tickets_create', arguments: { title: 'x', operation_id: id } });
  await alice.callTool({ name: 'payroll_adjust', arguments: { amount: 5, operation_id: id } });
  const read = async (who, opid) => (await (await connect(s.url, who)).callTool({ name: 'operation_status', arguments: { action: 'no_such_tool', operation_id: opid } })).structuredContent;
  assert.equal((await read('alice', id)).status, 'unknown', 'the owner, who may read both: ambiguous, never a guess');
  const bob = await read('bob', id);
  assert.deepEqual([bob.status, bob.result], ['not_found', undefined], 'refused: exactly as an id never used');
  const before = asked.length;
  assert.equal((await read('bob', opId())).status, 'not_found');
  assert.ok(asked.length > before, 'asked for an unused id too: the hook is asked before anything is read');
  // A caller who may read only one of the two actions reads that one: the other's existence stays hidden.
  const carol = await read('carol', id);
  assert.equal(carol.status, 'succeeded');
  assert.equal(carol.result.content[0].text, 'ticket for x');
});

test('item 3: registerStatusTool option errors are typed', () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const server = { registerTool: () => ({}) };
  assert.throws(() => registerStatusTool(server, ledger, { tenant: principal, authorize: 'yes' }),
    (e) => e instanceof TypeError && e.field === 'authorize' && e.code === 'invalid_type');
});
