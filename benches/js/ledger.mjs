// Benchmark §6: the operation ledger's cost per store, through the real path a tool call takes —
// `withIdempotency(ledger, handler)` (fingerprint, the store's get and atomic claim, the handler, the versioned
// finish). Memory, SQLite in WAL (`durability` full and normal, and a rollback journal for reference: what the
// store ran in before WAL), and Postgres on a throwaway local cluster with the server's default durability
// (fsync on, synchronous_commit on), when PostgreSQL is installed. `benches/js/run.mjs --only=ledger` runs it;
// `node benches/js/ledger.mjs` runs it alone (after `bash scripts/build.sh`). Nothing here asserts a time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { MemoryLedgerStore, OperationLedger, PostgresLedgerStore, SqliteLedgerStore, withIdempotency } from '../../pkg/node.js';
import { startPostgres } from '../../tests/support/postgres.mjs';
import { fmt, median } from './measure.mjs';

const CONCURRENT = 50;

/** The tool's own work in the benchmark: nothing, so what is measured is the ledger. */
const bare = async ({ title }) => ({ content: [{ type: 'text', text: `opened ${title}` }] });

/** µs per call of the async `fn`: the median of `rounds` loops of at least `minMs` each, after a warm-up. */
async function perCall(fn, { rounds = 5, minMs = 300 } = {}) {
  for (let i = 0; i < 20; i++) await fn();
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t = process.hrtime.bigint();
    let n = 0;
    let ms;
    do {
      await fn();
      n++;
      ms = Number(process.hrtime.bigint() - t) / 1e6;
    } while (ms < minMs);
    times.push((ms * 1000) / n);
  }
  return median(times);
}

/** ms for `CONCURRENT` first executions started together: the median of 7 rounds. */
async function concurrently(call) {
  const times = [];
  for (let r = 0; r < 8; r++) {
    const t = process.hrtime.bigint();
    await Promise.all(Array.from({ length: CONCURRENT }, () => call()));
    if (r > 0) times.push(Number(process.hrtime.bigint() - t) / 1e6); // round 0 warms up
  }
  return median(times);
}

/** The three measurements of one store through withIdempotency (`transaction`: its option). */
async function measureStore(store, { transaction = false } = {}) {
  const ledger = new OperationLedger({ store });
  const tool = withIdempotency(ledger, bare, { action: 'open_ticket', tenant: () => 'acme', transaction });
  let seq = 0;
  const fresh = () => tool({ title: 'bench', operation_id: `op-bench-${process.pid}-${seq++}` });
  const first = await perCall(fresh);
  const replayId = `op-bench-replay-${process.pid}`;
  await tool({ title: 'bench', operation_id: replayId });
  const replay = await perCall(() => tool({ title: 'bench', operation_id: replayId }));
  const together = await concurrently(fresh);
  return { first, replay, together };
}

/** The §6 table. `say` prints a line. */
export async function ledgerSection({ say }) {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
  const rows = [];
  const open = [];
  const sqlite = (name, setup, options) => {
    const db = new Database(join(dir, `${name}.db`));
    open.push(db);
    setup?.(db);
    return new SqliteLedgerStore(db, options);
  };
  let pg;
  let pool;
  let postgresNote;
  try {
    const handler = await perCall(() => bare({ title: 'bench' }));
    rows.push(['the bare handler alone (no ledger)', { first: handler }]);
    rows.push(['memory (`MemoryLedgerStore`)', await measureStore(new MemoryLedgerStore())]);
    rows.push(['SQLite, WAL, `durability: \'full\'` (default)', await measureStore(sqlite('full'))]);
    rows.push(['SQLite, WAL, `durability: \'full\'`, `transaction: true` (claim, write and record: one commit)', await measureStore(sqlite('full-tx'), { transaction: true })]);
    rows.push(['SQLite, WAL, `durability: \'normal\'`', await measureStore(sqlite('normal', undefined, { durability: 'normal' }))]);
    rows.push(['SQLite, rollback journal (`journal_mode=TRUNCATE`), synchronous FULL — before WAL, for reference',
      await measureStore(sqlite('rollback', (db) => db.pragma('journal_mode = TRUNCATE')))]);
    try {
      pg = await startPostgres({ fsync: true });
      const { default: Pg } = await import('pg');
      pool = new Pg.Pool({ ...pg.connection, max: 10 });
      const store = new PostgresLedgerStore(pool);
      await store.ready;
      const show = async (name) => (await pool.query(`SHOW ${name}`)).rows[0][name];
      const version = (await pool.query('SHOW server_version')).rows[0].server_version;
      postgresNote = `Postgres ${version} on 127.0.0.1 (TCP), a pool of 10; fsync=${await show('fsync')}, synchronous_commit=${await show('synchronous_commit')}, ` +
        `wal_sync_method=${await show('wal_sync_method')}.`;
      rows.push(['Postgres (`PostgresLedgerStore`, pg Pool)', await measureStore(store)]);
      rows.push(['Postgres, `transaction: true`', await measureStore(store, { transaction: true })]);
    } catch (e) {
      postgresNote = `Postgres: not run (${String(e?.message ?? e).split('\n')[0]}).`;
      rows.push(['Postgres (`PostgresLedgerStore`, pg Pool)', undefined]);
      rows.push(['Postgres, `transaction: true`', undefined]);
    }
  } finally {
    await pool?.end();
    pg?.stop();
    for (const db of open) db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  say();
  say(`## 6. The operation ledger per store: withIdempotency around a handler that does nothing (µs per call; median of 5)`);
  say();
  say(`| store | first execution (µs) | first executions / s | replay (µs) | ${CONCURRENT} concurrent first executions (ms total) |`);
  say('|---|---:|---:|---:|---:|');
  for (const [name, r] of rows) {
    if (!r) say(`| ${name} | not run | not run | not run | not run |`);
    else if (r.replay === undefined) say(`| ${name} | ${fmt(r.first, 2)} | ${fmt(1e6 / r.first, 0)} | – | – |`);
    else say(`| ${name} | ${fmt(r.first, 1)} | ${fmt(1e6 / r.first, 0)} | ${fmt(r.replay, 1)} | ${fmt(r.together, 1)} |`);
  }
  say();
  say(`A first execution is a read, an atomic claim (one committed write) and a finish (another) — with \`transaction: true\` ` +
    `the claim, the handler's writes and the record are one commit; a replay is one read. ` +
    `SQLite and Postgres files on ${tmpdir()}. ${postgresNote}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await ledgerSection({ say: (s = '') => console.log(s) });
}
