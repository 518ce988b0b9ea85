// PostgresLedgerStore against a real PostgreSQL: a throwaway cluster (tests/support/postgres.mjs) started for
// this file and stopped at its end. The store contract (store, ledger over it, purge), the expiry index, the
// table created by racing processes, and three Node processes racing one operation id: executed once.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { MemoryLedgerStore, OperationLedger, PostgresLedgerStore, withIdempotency, LEDGER_META_KEY } from '../../pkg/node.js';
import { build } from 'esbuild';
import { runLedgerStoreContract } from '../support/ledger-store-contract.mjs';
import { startPostgres } from '../support/postgres.mjs';
import { assertEachRanOnce, killBetweenWriteAndRecord, raceThroughProcesses } from '../support/ledger-race.mjs';
import { runSkewCase } from '../support/ledger-fence-case.mjs';
import * as pkg from '../../pkg/node.js';

let server;
let pool;
const pools = [];
const poolFor = (database) => {
  const p = new pg.Pool({ ...server.connection, database });
  pools.push(p);
  return p;
};

before(async () => {
  server = await startPostgres();
  pool = poolFor('postgres');
});

after(async () => {
  for (const p of pools) await p.end().catch(() => {});
  server?.stop();
});

test('PostgresLedgerStore meets the store contract (store, ledger over it, purge)', async () => {
  const store = new PostgresLedgerStore(pool);
  await store.ready;
  const checks = await runLedgerStoreContract(store, { OperationLedger, MemoryLedgerStore });
  assert.ok(checks.length >= 80, `${checks.length} checks`);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
  // Through the unix socket too: the same rows.
  const bySocket = new pg.Pool({ ...server.connection, host: server.socketDir });
  pools.push(bySocket);
  const { rows } = await bySocket.query('SELECT count(*)::int AS n FROM mcp_operation_ledger');
  const { rows: tcp } = await pool.query('SELECT count(*)::int AS n FROM mcp_operation_ledger');
  assert.equal(rows[0].n, tcp[0].n);
  assert.ok(rows[0].n > 10);
});

test('the schema: BIGINT milliseconds, the key as primary key, a partial expiry index that purge uses', async () => {
  const { rows: columns } = await pool.query(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'mcp_operation_ledger' ORDER BY ordinal_position`);
  assert.deepEqual(Object.fromEntries(columns.map((c) => [c.column_name, c.data_type])), {
    tenant: 'text', action: 'text', operation_id: 'text', state: 'text', fingerprint: 'text',
    lease_until_ms: 'bigint', created_ms: 'bigint', expires_ms: 'bigint', version: 'bigint', result: 'text',
  });
  const { rows: indexes } = await pool.query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'mcp_operation_ledger' ORDER BY indexname`);
  assert.equal(indexes.length, 3, JSON.stringify(indexes));
  assert.match(indexes[1].indexdef, /UNIQUE INDEX mcp_operation_ledger_pkey .*\(tenant, action, operation_id\)/);
  // Operators' listing of unresolved rows (issue 18): a partial index over pending/unknown rows alone.
  assert.match(indexes[2].indexdef, /INDEX mcp_operation_ledger_unresolved .*\(tenant, action, created_ms\) WHERE \(state = ANY \(ARRAY\['pending'::text, 'unknown'::text\]\)\)/);
  assert.match(indexes[0].indexdef, /INDEX mcp_operation_ledger_expiry .*\(expires_ms\) WHERE \(state = ANY \(ARRAY\['succeeded'::text, 'failed'::text\]\)\)/);
  // The planner can answer the purge from the index (sequential scans off: the table here is small).
  const client = await pool.connect();
  try {
    await client.query('SET enable_seqscan = off');
    const plan = (await client.query(`EXPLAIN DELETE FROM mcp_operation_ledger WHERE state IN ('succeeded', 'failed') AND expires_ms <= 5`)).rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(plan, /mcp_operation_ledger_expiry/, plan);
  } finally {
    client.release();
  }
  // Integers beyond 32 bits come back as the numbers they were.
  const store = new PostgresLedgerStore(pool);
  const key = { tenant: 't', action: 'a', operationId: 'op-bigint-1' };
  const record = { state: 'succeeded', fingerprint: 'f', leaseUntilMs: 4_102_444_800_000, createdMs: 1_764_547_200_000, expiresMs: 9_007_199_254_740_991, version: 2 ** 40 };
  assert.equal(await store.insert(key, record), true);
  assert.deepEqual((await store.get(key)).record, record);
});

test('bad input: a typed error before any query', async () => {
  assert.throws(() => new PostgresLedgerStore(undefined), (e) => e instanceof TypeError && e.code === 'invalid_type' && e.field === 'pool');
  assert.throws(() => new PostgresLedgerStore({ connect() {} }), (e) => e instanceof TypeError && e.field === 'pool');
  const store = new PostgresLedgerStore(pool);
  for (const tenant of ['nul\0tenant', 'lone \ud800 surrogate']) {
    await assert.rejects(store.get({ tenant, action: 'a', operationId: 'op-12345678' }), (e) => e instanceof RangeError && e.field === 'key' && e.code === 'invalid_value');
  }
  const key = { tenant: 't', action: 'a', operationId: 'op-badresult' };
  await store.insert(key, { state: 'pending', fingerprint: 'f', leaseUntilMs: 0, createdMs: 0, expiresMs: 0, version: 1 });
  await assert.rejects(store.replace(key, 1, { state: 'succeeded', fingerprint: 'f', leaseUntilMs: 0, createdMs: 0, expiresMs: 0, version: 2 }, 'a\0b'),
    (e) => e instanceof RangeError && e.field === 'result');
  assert.equal((await store.get(key)).record.state, 'pending', 'nothing written');
});

test('ready: a server that is not there rejects ready (no unhandled rejection); the next call tries again', async () => {
  const down = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 2_000 });
  pools.push(down);
  const store = new PostgresLedgerStore(down);
  await assert.rejects(store.ready, /ECONNREFUSED|connect/);
  await assert.rejects(store.get({ tenant: 't', action: 'a', operationId: 'op-12345678' }), /ECONNREFUSED|connect/);
  // A store over a live pool whose first setup failed recovers: a pool that fails once, then works.
  let calls = 0;
  const flaky = { query: (q) => (calls++ === 0 ? Promise.reject(new Error('server starting up')) : pool.query(q)) };
  const recovering = new PostgresLedgerStore(flaky);
  await assert.rejects(recovering.ready, /starting up/);
  await recovering.ready;
  assert.equal(await recovering.get({ tenant: 't', action: 'a', operationId: 'op-never-written' }), undefined);
});

test('six connections creating the table at once all succeed (without the advisory lock, CREATE TABLE IF NOT EXISTS collides)', async () => {
  for (let round = 0; round < 4; round++) {
    const schema = `ddl_${round}_${process.pid}`;
    await pool.query(`CREATE SCHEMA ${schema}`);
    const each = Array.from({ length: 6 }, () => new pg.Pool({ ...server.connection, options: `-c search_path=${schema}` }));
    pools.push(...each);
    await Promise.all(each.map((p) => p.query('SELECT 1'))); // connected: the setups arrive together
    const setups = await Promise.allSettled(each.map((p) => new PostgresLedgerStore(p).ready));
    assert.deepEqual(setups.filter((r) => r.status === 'rejected').map((r) => r.reason.message), [], `round ${round}`);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename = 'mcp_operation_ledger'`, [schema]);
    assert.equal(rows[0].n, 1);
    await Promise.all(each.map((p) => p.end()));
  }
});

test('three Node processes race one operation id through withIdempotency: the handler runs once (counted in Postgres)', async () => {
  // A fresh database: the three also race to create the ledger table.
  const database = `race_${process.pid}`;
  await pool.query(`CREATE DATABASE ${database}`);
  const race = poolFor(database);
  await race.query('CREATE TABLE effects (operation_id TEXT NOT NULL, pid INTEGER NOT NULL)');
  const rounds = Array.from({ length: 10 }, (_, i) => ({ id: `op-race-${i}-${process.pid}`, holdMs: i % 2 ? 0 : 150 }));
  const results = await raceThroughProcesses({ kind: 'postgres', connection: { ...server.connection, database } }, rounds);
  const seen = await assertEachRanOnce(results, async (id) => (await race.query('SELECT count(*)::int AS n FROM effects WHERE operation_id = $1', [id])).rows[0].n);
  assert.ok(seen.in_progress >= 5, `the held rounds answer in_progress: ${JSON.stringify(seen)}`);
  const { rows } = await race.query(`SELECT state, count(*)::int AS n FROM mcp_operation_ledger GROUP BY state`);
  assert.deepEqual(rows, [{ state: 'succeeded', n: 10 }]);
});

test('transaction option (Postgres): kill -9 between the business write and the record leaves neither; three processes then run it once, both', async () => {
  const database = `kill_${process.pid}`;
  await pool.query(`CREATE DATABASE ${database}`);
  const db = poolFor(database);
  await db.query('CREATE TABLE effects (operation_id TEXT NOT NULL, pid INTEGER NOT NULL)');
  await new PostgresLedgerStore(db).ready;
  const effects = async (id) => (await db.query('SELECT count(*)::int AS n FROM effects WHERE operation_id = $1', [id])).rows[0].n;
  const state = async (id) => (await db.query('SELECT state FROM mcp_operation_ledger WHERE operation_id = $1', [id])).rows[0]?.state;
  const config = { kind: 'postgres', connection: { ...server.connection, database } };

  // Without the option: the effect committed, the record pending (the unknown the option removes).
  await killBetweenWriteAndRecord(config, 'op-kill-plain');
  assert.equal(await effects('op-kill-plain'), 1);
  assert.equal(await state('op-kill-plain'), 'pending');
  // With it: the killed connection's transaction is rolled back by the server — neither.
  await killBetweenWriteAndRecord({ ...config, transaction: true }, 'op-kill-atomic');
  // The server notices the dead connection and rolls back; wait (bounded) until its backend is gone.
  for (let i = 0; i < 100; i++) {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`, [database]);
    if (rows[0].n === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(await effects('op-kill-atomic'), 0, 'the business write was rolled back');
  assert.equal(await state('op-kill-atomic'), undefined, 'and the claim with it');

  const rounds = [{ id: 'op-kill-atomic', holdMs: 150 }, ...Array.from({ length: 4 }, (_, i) => ({ id: `op-atomic-${i}`, holdMs: i % 2 ? 0 : 150 }))];
  const results = await raceThroughProcesses({ ...config, transaction: true }, rounds);
  const seen = await assertEachRanOnce(results, effects);
  assert.equal(seen.in_progress, 0, `no claim is ever visible alone: the others wait on the row, then replay (${JSON.stringify(seen)})`);
  assert.equal(await state('op-kill-atomic'), 'succeeded');
});

test('transaction option (Postgres, one process): a throw rolls back the write and the claim; a caught SQL error inside still rolls back', async () => {
  const store = new PostgresLedgerStore(pool);
  await store.ready;
  await pool.query('CREATE TABLE IF NOT EXISTS tickets (id SERIAL PRIMARY KEY, op TEXT NOT NULL)');
  const ledger = new OperationLedger({ store });
  let mode = 'throw';
  const handler = withIdempotency(ledger, async ({ operation_id }, _extra, client) => {
    await client.query('INSERT INTO tickets (op) VALUES ($1)', [operation_id]);
    if (mode === 'throw') throw new Error('no');
    if (mode === 'swallow') await client.query('SELECT 1/0').catch(() => {}); // the transaction is aborted now
    return { content: [{ type: 'text', text: 'ok' }] };
  }, { action: 'tx_pg', tenant: () => 'acme', transaction: true });
  const count = async (id) => (await pool.query('SELECT count(*)::int AS n FROM tickets WHERE op = $1', [id])).rows[0].n;
  const id = `op-pg-tx-${process.pid}`;
  assert.equal((await handler({ operation_id: id }))._meta[LEDGER_META_KEY].reason, 'rolled_back');
  mode = 'swallow';
  assert.equal((await handler({ operation_id: id }))._meta[LEDGER_META_KEY].reason, 'rolled_back');
  assert.equal(await count(id), 0);
  assert.deepEqual(await ledger.status({ tenant: 'acme', action: 'tx_pg', operationId: id }), { status: 'not_found' });
  mode = 'ok';
  assert.deepEqual(await handler({ operation_id: id }), { content: [{ type: 'text', text: 'ok' }] });
  assert.deepEqual(await handler({ operation_id: id }), { content: [{ type: 'text', text: 'ok' }] });
  assert.equal(await count(id), 1);
  assert.equal((await ledger.status({ tenant: 'acme', action: 'tx_pg', operationId: id })).status, 'succeeded');
  // A handler that ends the transaction itself (COMMIT on the client), then throws: its write stands, so the
  // answer is unknown — before, rolled_back ("nothing took effect") with the ticket written.
  mode = 'commit-then-throw';
  const committed = withIdempotency(ledger, async ({ operation_id }, _extra, client) => {
    await client.query('INSERT INTO tickets (op) VALUES ($1)', [operation_id]);
    await client.query('COMMIT');
    throw new Error('after its own commit');
  }, { action: 'tx_pg', tenant: () => 'acme', transaction: true });
  const id2 = `op-pg-tx-commit-${process.pid}`;
  const answer = (await committed({ operation_id: id2 }))._meta[LEDGER_META_KEY];
  assert.equal(answer.status, 'unknown', JSON.stringify(answer));
  assert.equal(await count(id2), 1, 'the write stands');
});

test('only the node entries carry PostgresLedgerStore: the browser and workerd module graphs do not reach it', async () => {
  const graph = async (entry) => {
    const r = await build({ entryPoints: [new URL(`../../pkg/${entry}`, import.meta.url).pathname], bundle: true, write: false, format: 'esm', platform: 'neutral', external: ['*.wasm', 'node:*'], metafile: true, logLevel: 'silent' });
    return { inputs: Object.keys(r.metafile.inputs), text: r.outputFiles[0].text };
  };
  for (const entry of ['browser.js', 'workerd.js', 'server.browser.js', 'server.workerd.js']) {
    const { inputs, text } = await graph(entry);
    assert.ok(inputs.some((i) => i.endsWith('server/stores.js')), `${entry}: the graph was read`);
    assert.ok(!inputs.some((i) => i.endsWith('server/postgres.js')) && !text.includes('PostgresLedgerStore'), `${entry} reaches the Postgres store`);
  }
  for (const entry of ['node.js', 'server.node.js']) {
    const { inputs } = await graph(entry);
    assert.ok(inputs.some((i) => i.endsWith('server/postgres.js')), `${entry} carries the Postgres store`);
  }
  const node = await import('../../pkg/node.js');
  assert.equal(node.PostgresLedgerStore, PostgresLedgerStore);
});

test('a clock 1,100 ms behind on a 1.5 s lease, two pools as two servers: the fenced transaction refuses the stale run\'s commit', { timeout: 30_000 }, async () => {
  await pool.query('CREATE TABLE IF NOT EXISTS fence_effects (op TEXT NOT NULL, by TEXT NOT NULL, n SERIAL)');
  const out = await runSkewCase(pkg, {
    make: async ({ a, b }) => Promise.all([a, b].map(async (o) => {
      const store = new PostgresLedgerStore(poolFor('postgres'));
      await store.ready;
      return new OperationLedger({ store, ...o });
    })),
    write: (client, op, by) => client.query('INSERT INTO fence_effects (op, by) VALUES ($1, $2)', [op, by]),
    direct: (op, by) => pool.query('INSERT INTO fence_effects (op, by) VALUES ($1, $2)', [op, by]),
    read: async (op) => (await pool.query('SELECT by FROM fence_effects WHERE op = $1', [op])).rows[0]?.by,
    count: async (op) => (await pool.query('SELECT by FROM fence_effects WHERE op = $1 ORDER BY n', [op])).rows.map((r) => r.by),
  });
  const detail = JSON.stringify(out);
  assert.deepEqual(out.effects, ['B'], `one commit: ${detail}`);
  assert.deepEqual([out.a.text, out.b.text], ['B', 'B'], `both callers get the one result: ${detail}`);
});
