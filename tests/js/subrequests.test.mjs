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
