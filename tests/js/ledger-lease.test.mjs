// Issue 18, item 1: a write never runs twice while its first run may still be going. The case on real
// stores (memory; a SQLite file through two connections, as two processes; Postgres through two pools), the
// claim signal and the refused late finish when the lease cannot be kept, the fence handed to the handler.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import * as pkg from '../../pkg/node.js';
import { runLeaseCase, sqliteLedgers } from '../support/ledger-lease-case.mjs';
import { postgresBin, startPostgres } from '../support/postgres.mjs';

const { MemoryLedgerStore, OperationLedger, PostgresLedgerStore, claimOf, withIdempotency, LeaseLost } = pkg;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tenant = (extra) => extra.authInfo?.extra?.sub;
const extra = (sub = 'user-1') => ({ authInfo: { clientId: 'app', extra: { sub } } });
const metaOf = (r) => r?._meta?.['dev.mcp-retry-policy/ledger'];

/**
 * The case ran once: one execution — unless this process stalled (measured by the case, apart from
 * the ledger) for longer than what is left of the 200 ms lease after a renewal (two thirds of it), which no
 * lease can outlast and the README says so ("a process stall longer than the lease is what the fence is
 * for"). Then a further execution is allowed only as the README promises it: each stale run was told
 * (`lease_lost`) and its finish refused (`late_finish`). Seen once in CI: a 200+ ms stall on a SQLite file
 * (each write is fsynced) with two executions, both told.
 */
function assertOneExecution(t, out, leaseMs = 200) {
  const detail = JSON.stringify(out);
  if (out.maxStallMs < (leaseMs * 2) / 3) {
    assert.equal(out.executions, 1, detail);
    return;
  }
  t.diagnostic(`the event loop stalled ${out.maxStallMs} ms (lease ${leaseMs} ms): a second run is allowed only fenced — ${detail}`);
  assert.ok(out.executions >= 1, detail);
  const extra = out.executions - 1; // a long stall can let more than one run take over (seen: 960 ms, 3 runs, each told)
  assert.ok((out.events.lease_lost ?? 0) >= extra, `every stale run was told: ${detail}`);
  assert.ok((out.events.late_finish ?? 0) >= extra, `every stale finish was refused: ${detail}`);
}

test('item 1, the issue\'s case on the memory store: lease 200 ms, handler 700 ms, hook not_done, 50 calls → one execution', async (t) => {
  const out = await runLeaseCase(pkg, async (o) => [new OperationLedger({ store: new MemoryLedgerStore(), ...o })]);
  assertOneExecution(t, out);
  assert.equal(out.answers.unknown ?? 0, 0, JSON.stringify(out));
  assert.ok(out.answers.in_progress >= 40, JSON.stringify(out));
});

test('item 1, the issue\'s case on a SQLite file through two connections: one execution', async (t) => {
  const sqlite = sqliteLedgers(pkg, Database);
  try {
    const out = await runLeaseCase(pkg, sqlite.make);
    assertOneExecution(t, out);
  } finally {
    sqlite.close();
  }
});

test('item 1, the issue\'s case on Postgres through two pools: one execution', { skip: postgresBin() ? false : 'PostgreSQL is not installed' }, async (t) => {
  const server = await startPostgres();
  const pools = [0, 1].map(() => new pg.Pool({ ...server.connection, database: 'postgres' }));
  try {
    const out = await runLeaseCase(pkg, async (o) => {
      const stores = pools.map((p) => new PostgresLedgerStore(p));
      await Promise.all(stores.map((s) => s.ready));
      return stores.map((store) => new OperationLedger({ store, ...o }));
    });
    assertOneExecution(t, out);
  } finally {
    for (const p of pools) await p.end();
    server.stop();
  }
});

/** A real memory store whose writes can be made to fail (a store that went down); reads keep working. */
function flakyStore() {
  const store = new MemoryLedgerStore();
  const state = { down: false };
  return {
    state,
    get: (k) => store.get(k),
    insert: (k, r) => store.insert(k, r),
    replace: async (k, v, r, res) => {
      if (state.down) throw new Error('connect ECONNREFUSED 10.0.0.7:5432 (user ledger_rw)');
      return store.replace(k, v, r, res);
    },
  };
}

test('item 1: a lease that cannot be renewed aborts the handler\'s signal; another process reconciles only after it; the late finish is refused and told', { timeout: 10_000 }, async () => {
  const store = flakyStore();
  const events = [];
  const onEvent = (e) => events.push(e);
  const reconcile = async () => ({ status: 'not_done' });
  const a = new OperationLedger({ store, leaseMs: 300, reconcile, onEvent });
  const b = new OperationLedger({ store, leaseMs: 300, reconcile, onEvent }); // another process: no live claim here
  const seen = [];
  const handler = async ({ n }, ex) => {
    const claim = claimOf(ex);
    seen.push({ n, fence: claim.fence });
    if (seen.length === 1) {
      store.state.down = true; // renewals fail from now on
      await Promise.race([new Promise((resolve) => claim.signal.addEventListener('abort', resolve, { once: true })), sleep(2_000)]);
      if (claim.signal.aborted) seen.push({ aborted: claim.signal.reason });
      store.state.down = false;
      await sleep(300); // …and it goes on anyway, past the point where it was told to stop
    }
    return { content: [{ type: 'text', text: `run ${n}` }] };
  };
  const id = `op-${crypto.randomUUID()}`;
  const first = withIdempotency(a, handler, { action: 'w', tenant })({ n: 1, operation_id: id }, extra());
  await sleep(100);
  // While the first run's lease is live, the other process hears in_progress (never the hook).
  const during = await withIdempotency(b, handler, { action: 'w', tenant })({ n: 1, operation_id: id }, extra());
  assert.equal(metaOf(during).status, 'in_progress');
  const until = Date.now() + 2_000;
  while (!seen.some((s) => s.aborted) && Date.now() < until) await sleep(10);
  const aborted = seen.find((s) => s.aborted)?.aborted;
  assert.ok(aborted instanceof LeaseLost && aborted.reason === 'not_renewed', String(aborted));
  assert.ok(events.some((e) => e.type === 'lease_lost' && e.reason === 'not_renewed'));
  assert.ok(events.some((e) => e.type === 'store_error' && e.during === 'renew'));
  await sleep(120); // the lease (300 ms) has now ended on b's clock
  const second = await withIdempotency(b, handler, { action: 'w', tenant })({ n: 1, operation_id: id }, extra());
  assert.equal(second.content[0].text, 'run 1', 'reconciled not_done: runs again');
  const firstAnswer = await first;
  assert.equal(firstAnswer.content[0].text, 'run 1');
  const late = events.filter((e) => e.type === 'late_finish');
  assert.equal(late.length, 1, 'the stale run\'s finish was refused and told');
  const fences = seen.filter((s) => s.fence !== undefined).map((s) => s.fence);
  assert.equal(fences.length, 2);
  assert.ok(fences[1] > fences[0], `the later claim is fenced above the stale one: ${fences}`);
  // The record is the second run's, not overwritten by the stale one.
  const s = await b.status({ tenant: 'user-1', action: 'w', operationId: id });
  assert.equal(s.status, 'succeeded');
});

test('item 1: a renewal that hangs does not hold the claim past the give-up point: the signal aborts while the store has not answered', { timeout: 10_000 }, async () => {
  // A store whose renewals hang for 1.5 s and then fail (a connection that stopped answering). Before, the
  // owner waited on the hung write: the signal stayed quiet past the lease's end, when another process may
  // reconcile and run it again; and after the error it judged "late" by the clock from before the wait.
  const inner = new MemoryLedgerStore();
  let renewals = 0;
  const store = {
    get: (k) => inner.get(k),
    insert: (k, r) => inner.insert(k, r),
    replace: async (k, v, r, res) => {
      if (r.state === 'pending') {
        renewals++;
        await sleep(1_500);
        throw new Error('read ECONNRESET');
      }
      return inner.replace(k, v, r, res);
    },
  };
  const events = [];
  let asked = 0;
  const ledger = new OperationLedger({ store, leaseMs: 300, onEvent: (e) => events.push(e), reconcile: async () => (asked++, { status: 'not_done' }) });
  let abortedAt;
  let runs = 0;
  const started = Date.now();
  const handler = withIdempotency(ledger, async (_args, ex) => {
    runs++;
    const { signal } = claimOf(ex);
    await Promise.race([new Promise((r) => signal.addEventListener('abort', r, { once: true })), sleep(2_500)]);
    if (signal.aborted) abortedAt = Date.now() - started;
    await sleep(400); // it goes on a while after being told: still running here
    return { content: [{ type: 'text', text: 'stopped' }] };
  }, { action: 'w', tenant });
  const id = `op-${crypto.randomUUID()}`;
  const first = handler({ operation_id: id }, extra());
  await sleep(450); // the stored lease (300 ms) has ended; the handler still runs in this process
  const again = await handler({ operation_id: id }, extra());
  assert.equal(metaOf(again)?.status, 'in_progress', 'the handler still running here: never the hook');
  await first;
  assert.deepEqual([runs, asked], [1, 0]);
  assert.ok(renewals >= 1, 'a renewal was in flight');
  // The first renewal goes at 100 ms; the owner gives up once only a third is left (200 ms) — well before the
  // hung write answers (1.6 s) and before the lease ends (300 ms).
  assert.ok(abortedAt !== undefined && abortedAt < 300, `aborted at ${abortedAt} ms`);
  const lost = events.find((e) => e.type === 'lease_lost');
  assert.equal(lost?.reason, 'not_renewed');
});

test('item 1: while this process holds a live claim, the hook is not asked even when the stored lease ran out', async () => {
  // A store whose renewals are slow to land (each write waits): the stored lease runs out meanwhile.
  const inner = new MemoryLedgerStore();
  let asked = 0;
  const store = {
    get: (k) => inner.get(k),
    insert: (k, r) => inner.insert(k, r),
    replace: async (k, v, r, res) => {
      if (r.state === 'pending') await sleep(250);
      return inner.replace(k, v, r, res);
    },
  };
  const ledger = new OperationLedger({ store, leaseMs: 90, reconcile: async () => (asked++, { status: 'not_done' }) });
  let runs = 0;
  const h = withIdempotency(ledger, async () => (runs++, await sleep(400), { content: [] }), { action: 'w', tenant });
  const id = `op-${crypto.randomUUID()}`;
  const first = h({ operation_id: id }, extra());
  await sleep(200);
  const again = await h({ operation_id: id }, extra());
  assert.equal(metaOf(again).status, 'in_progress');
  const st = await ledger.status({ tenant: 'user-1', action: 'w', operationId: id });
  assert.equal(st.status, 'in_progress');
  await first;
  assert.deepEqual([runs, asked], [1, 0]);
});

test('item 1: the handler\'s claim: fence, signal, key; an operator cannot release a live run', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore(), leaseMs: 150 });
  let claim;
  let release;
  const h = withIdempotency(ledger, async (_args, ex) => {
    claim = claimOf(ex);
    await sleep(400);
    return { content: [] };
  }, { action: 'w', tenant });
  const id = `op-${crypto.randomUUID()}`;
  const run = h({ operation_id: id }, extra());
  await sleep(250); // past the first lease: renewed since
  await assert.rejects(ledger.release({ tenant: 'user-1', action: 'w', operationId: id }, { reason: 'checked' }),
    (e) => e.code === 'lease_live');
  await run;
  assert.deepEqual([claim.tenant, claim.action, claim.operationId, claim.fence, claim.signal.aborted], ['user-1', 'w', id, 1, false]);
  assert.equal(claimOf({}), undefined);
  assert.equal(claimOf(undefined), undefined);
});

test('item 1: a handler that ends while a renewal is in flight: stop waits for it, and the outcome is recorded (no late finish)', async () => {
  // A store whose renewals land at once but answer late (a database that committed, then a slow reply).
  const inner = new MemoryLedgerStore();
  const events = [];
  const store = {
    get: (k) => inner.get(k),
    insert: (k, r) => inner.insert(k, r),
    replace: async (k, v, r, res) => {
      const ok = await inner.replace(k, v, r, res);
      if (r.state === 'pending') await sleep(200);
      return ok;
    },
  };
  const ledger = new OperationLedger({ store, leaseMs: 300, onEvent: (e) => events.push(e) });
  // Renewed every 100 ms: the first renewal is in flight from 100 to 300 ms; the handler ends at 150.
  const h = withIdempotency(ledger, async () => (await sleep(150), { content: [{ type: 'text', text: 'done' }] }), { action: 'w', tenant });
  const id = `op-${crypto.randomUUID()}`;
  await h({ operation_id: id }, extra());
  assert.deepEqual(events.filter((e) => e.type === 'late_finish'), []);
  const s = await ledger.status({ tenant: 'user-1', action: 'w', operationId: id });
  assert.equal(s.status, 'succeeded');
});

test('item 1: claimOf on a frozen request context (kept aside, not on the object) and on a plain one', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  const seen = [];
  const h = withIdempotency(ledger, async (_args, ex) => {
    const c = claimOf(ex);
    seen.push([c.tenant, c.action, c.fence, c.signal.aborted, typeof c.stop]);
    return { content: [] };
  }, { action: 'w', tenant });
  const frozen = Object.freeze(extra());
  await h({ operation_id: `op-${crypto.randomUUID()}` }, frozen);
  await h({ operation_id: `op-${crypto.randomUUID()}` }, extra());
  assert.deepEqual(seen, [['user-1', 'w', 1, false, 'undefined'], ['user-1', 'w', 1, false, 'undefined']]);
  assert.ok(claimOf(frozen), 'the frozen context still finds its claim');
});

after(() => {});
