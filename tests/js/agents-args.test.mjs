// The Agents adapter's arguments, in Node: wrong input is a typed error naming the field, installRetry is undone
// cleanly and refuses to stack. The object passed as the Agent here is a plain stand-in with the Agent's shape
// (the adapter only reads `agent.mcp` and `agent.ctx.storage`); the adapter against a real agents Agent in
// workerd is tests/js/agents.test.mjs.
import test from 'node:test';
import assert from 'node:assert/strict';
import { retryingMcp, installRetry, JOURNAL_PREFIX } from '../../pkg/agents.node.js';

function standIn() {
  const data = new Map();
  const storage = {
    get: async (k) => data.get(k),
    put: async (k, v) => {
      if (typeof k === 'object') for (const [kk, vv] of Object.entries(k)) data.set(kk, vv);
      else data.set(k, v);
    },
    list: async ({ prefix }) => new Map([...data].filter(([k]) => k.startsWith(prefix))),
    delete: async (keys) => keys.filter((k) => data.delete(k)).length,
  };
  const calls = [];
  const mcp = {
    mcpConnections: {},
    connectToServer: async () => ({ state: 'connected' }),
    callTool(params) {
      calls.push(params);
      return { content: [{ type: 'text', text: 'original' }] };
    },
  };
  return { agent: { mcp, ctx: { storage } }, calls, data };
}

test('retryingMcp refuses what is not an Agent, a server id or options, by name', () => {
  const { agent } = standIn();
  const refused = (f) => {
    try {
      f();
    } catch (e) {
      return `${e.name} ${e.code} ${e.field}`;
    }
    return 'accepted';
  };
  for (const bad of [undefined, null, 1, {}, { mcp: {} }, { mcp: { mcpConnections: {}, connectToServer() {} } }, new Proxy({}, {})]) {
    assert.equal(refused(() => retryingMcp(bad, 'tickets')), 'TypeError invalid_type agent');
  }
  for (const bad of [undefined, '', 7, {}, 'x'.repeat(300)]) assert.equal(refused(() => retryingMcp(agent, bad)), 'TypeError invalid_type serverId');
  assert.equal(refused(() => retryingMcp(agent, 'tickets', null)), 'TypeError invalid_type options');
  assert.equal(refused(() => installRetry(agent, { servers: 'tickets' })), 'TypeError invalid_type servers');
});

test('one retrying client per (agent, server); a call on a server that was never added is refused by name', async () => {
  const { agent } = standIn();
  const a = retryingMcp(agent, 'tickets', { trusted: true });
  assert.equal(retryingMcp(agent, 'tickets'), a);
  assert.notEqual(retryingMcp(agent, 'other'), a);
  assert.notEqual(retryingMcp(standIn().agent, 'tickets'), a);
  await assert.rejects(a.call({ name: 'search', arguments: {} }), (e) => e.code === 'no_connection' && e.field === 'serverId');
  assert.equal(JOURNAL_PREFIX, 'mcp-retry-policy:');
});

test('installRetry: other servers go to the original callTool; undo restores it; installing twice is refused', async () => {
  const { agent, calls } = standIn();
  const original = agent.mcp.callTool;
  const undo = installRetry(agent, { servers: ['tickets'] });
  assert.notEqual(agent.mcp.callTool, original);
  const passed = await agent.mcp.callTool({ serverId: 'elsewhere', name: 'x', arguments: {} });
  assert.equal(passed.content[0].text, 'original');
  assert.equal(calls.length, 1);
  assert.throws(() => installRetry(agent), (e) => e.code === 'already_installed');
  undo();
  assert.equal(agent.mcp.callTool, original);
  undo(); // twice: harmless
  assert.equal(agent.mcp.callTool, original);
});
