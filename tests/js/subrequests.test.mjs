// SubrequestBudget alone (client/subrequests.js): typed refusals of bad options, counting, the reserve, and a
// fetch that refuses — without fetching — once the invocation's requests are spent (read by withRetry as "not
// sent"). The budget binding a real call in workerd: tests/js/workerd.test.mjs.
import test from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { SubrequestBudget, SUBREQUEST_BUDGET_SPENT } from '../../pkg/client.node.js';
import { errorOutcome } from '../../pkg/client/attempt.js';
import { listenLocal } from '../support/listen.mjs';

test('bad options are refused by name', () => {
  const bad = [
    [undefined, TypeError, 'options', 'invalid_type'],
    [{}, TypeError, 'limit', 'invalid_type'],
    [{ limit: '50' }, TypeError, 'limit', 'invalid_type'],
    [{ limit: NaN }, RangeError, 'limit', 'not_finite'],
    [{ limit: Infinity }, RangeError, 'limit', 'not_finite'],
    [{ limit: 2.5 }, RangeError, 'limit', 'not_integer'],
    [{ limit: 0 }, RangeError, 'limit', 'too_small'],
    [{ limit: -1 }, RangeError, 'limit', 'too_small'],
    [{ limit: 1e9 }, RangeError, 'limit', 'too_large'],
    [{ limit: 50, reserve: 50 }, RangeError, 'reserve', 'too_large'],
    [{ limit: 50, reserve: -1 }, RangeError, 'reserve', 'too_small'],
    [{ limit: 50, spent: 51 }, RangeError, 'spent', 'too_large'],
    [{ limit: 50, extra: 1 }, TypeError, 'extra', 'unknown_option'],
  ];
  for (const [options, type, field, code] of bad) {
    assert.throws(() => new SubrequestBudget(options), (e) => e instanceof type && e.field === field && e.code === code, JSON.stringify(options));
  }
  const b = new SubrequestBudget({ limit: 5 });
  assert.throws(() => b.spend(-1), (e) => e instanceof RangeError && e.field === 'n');
  assert.throws(() => b.spend('1'), (e) => e instanceof TypeError && e.field === 'n');
  assert.equal(b.spent, 0, 'a refused spend counts nothing');
});

test('counting: remaining, the reserve kept out of room, spend()', () => {
  const b = new SubrequestBudget({ limit: 5, reserve: 2 });
  assert.deepEqual([b.limit, b.reserve, b.spent, b.remaining, b.room], [5, 2, 0, 5, 3]);
  assert.equal(b.spend(2), 3);
  assert.deepEqual([b.spent, b.remaining, b.room], [2, 3, 1]);
  b.spend(10);
  assert.deepEqual([b.spent, b.remaining, b.room], [5, 0, 0], 'spent saturates at the limit');
});

test('fetch counts each request, and refuses without fetching once none are left', async () => {
  let served = 0;
  const server = await listenLocal(http.createServer((req, res) => {
    served++;
    res.end('ok');
  }));
  try {
    const b = new SubrequestBudget({ limit: 2, reserve: 0 });
    const { fetch } = b; // bound: handed to a transport as a plain function
    assert.equal(await (await fetch(server.url)).text(), 'ok');
    assert.equal(await (await fetch(server.url)).text(), 'ok');
    const refused = await fetch(server.url).catch((e) => e);
    assert.equal(refused.code, SUBREQUEST_BUDGET_SPENT);
    assert.equal(refused.name, 'SubrequestBudgetError');
    assert.equal(served, 2, 'the third request never reached the server');
    assert.equal(b.spent, 2);
    // withRetry reads the refusal as a request that was never sent, bare or wrapped as a cause.
    assert.deepEqual(errorOutcome(refused, { sent: true }), { kind: 'network', sent: 'no' });
    assert.deepEqual(errorOutcome(new Error('fetch failed', { cause: refused }), { sent: true }), { kind: 'network', sent: 'no' });
  } finally {
    await server.close();
  }
});

test('an attempt that times out: the cancellation the SDK sends for it is paid from the room, never the app\'s reserve', async () => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { withRetry } = await import('../../pkg/node.js');
  const { startMcpServer } = await import('../support/mcp-server.mjs');
  const server = await startMcpServer();
  let budget = new SubrequestBudget({ limit: 1_000, reserve: 0 }); // the connect's requests
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { fetch: (u, i) => budget.fetch(u, i) }));
  const mcp = withRetry(client, { trusted: true, seed: 1, subrequestBudget: () => budget, policy: { maxAttempts: 1, attemptTimeoutMs: 200 } });
  await mcp.refreshTools();
  try {
    // room 1: before, the attempt went out, timed out, and its notifications/cancelled took the reserve (0 left).
    for (const [room, sent] of [[1, false], [2, true]]) {
      budget = new SubrequestBudget({ limit: 10, reserve: 1, spent: 10 - 1 - room });
      const out = await mcp.call({ name: 'build_report', arguments: { steps: 10 } });
      await new Promise((r) => setTimeout(r, 100)); // the cancellation, if any, has gone out
      const seen = `room ${room}: ${out.status}/${out.reason}, ${budget.remaining} left (reserve 1)`;
      assert.equal(out.attempts.length, sent ? 1 : 0, seen);
      assert.equal(out.reason, sent ? 'max_attempts' : 'subrequest_budget', seen);
      assert.ok(budget.remaining >= budget.reserve, seen);
    }
  } finally {
    await client.close();
    await server.close();
  }
});
