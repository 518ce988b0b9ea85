// Issue 18, item 1, as the issue measured it: lease 200 ms, a handler that takes 700 ms, a reconcile hook that
// answers not_done (the README's pattern: "look it up downstream; not found → not done" — and downstream has
// nothing until the handler's write lands at its end), 50 calls of one operation id spread over the handler's
// run. Counts how many times the handler ran, on a real store: memory, or a SQLite file through two
// connections (two ledgers, as two processes would have), or Postgres through two pools.
//
// Also a script: `node tests/support/ledger-lease-case.mjs <pkg dir>` prints the counts for that build (how
// the "before" was measured against the package built from the commit before the fix).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs the case with `ledgers` (one or more OperationLedgers over one store; calls alternate between them).
 * Resolves to { executions, answers, events, maxStallMs } — answers counted by the ledger's `_meta` status (or
 * 'result' for the handler's own result or a replay), the ledger's events by type, and the longest the event
 * loop was blocked meanwhile (measured apart from the ledger: a synchronous fsync of a SQLite write on a busy
 * disk, a GC pause or a starved CPU stops the renewals' timer too — a stall longer than what is left of the
 * lease after a renewal lets another run claim it, which no lease can prevent; the fence is for that).
 */
export async function runLeaseCase(pkg, makeLedger, { calls = 50, handlerMs = 700, leaseMs = 200 } = {}) {
  const downstream = new Map(); // what the handler wrote, by operation id (written at the end of its run)
  let executions = 0;
  const reconcile = async ({ operationId }) => (downstream.has(operationId)
    ? { status: 'succeeded', result: { content: [{ type: 'text', text: downstream.get(operationId) }] } }
    : { status: 'not_done' });
  const events = {};
  // The package before the fix had no onEvent (its ledger refuses unknown options).
  const onEvent = pkg.claimOf ? { onEvent: (e) => { events[e.type] = (events[e.type] ?? 0) + 1; } } : {};
  const ledgers = await makeLedger({ leaseMs, ttlMs: 60_000, reconcile, ...onEvent });
  const handlers = ledgers.map((ledger) => pkg.withIdempotency(ledger, async ({ title, operation_id: id }) => {
    executions++;
    await sleep(handlerMs);
    downstream.set(id, `ticket ${title}`);
    return { content: [{ type: 'text', text: `opened ticket ${title}` }] };
  }, { action: 'open_ticket', tenant: (extra) => extra.authInfo?.extra?.sub }));
  const id = `op-${crypto.randomUUID()}`;
  const extra = () => ({ authInfo: { clientId: 'app', extra: { sub: 'user-1' } } });
  const answers = {};
  const runs = [];
  const stalls = monitorEventLoopDelay({ resolution: 5 });
  stalls.enable();
  for (let i = 0; i < calls; i++) {
    runs.push(handlers[i % handlers.length]({ title: 'lease', operation_id: id }, extra()).then((r) => {
      const s = r?._meta?.['dev.mcp-retry-policy/ledger']?.status ?? 'result';
      answers[s] = (answers[s] ?? 0) + 1;
    }));
    await sleep(handlerMs / calls);
  }
  await Promise.all(runs);
  await sleep(leaseMs); // anything still scheduled settles
  stalls.disable();
  return { executions, answers, events, maxStallMs: Math.round(stalls.max / 1e6) };
}

/** Two ledgers over one SQLite file, each on its own connection (as two processes). */
export function sqliteLedgers(pkg, Database) {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-lease-'));
  const file = join(dir, 'ledger.db');
  const dbs = [];
  return {
    make: async (options) => [0, 1].map(() => {
      const db = new Database(file);
      db.pragma('busy_timeout = 5000');
      dbs.push(db);
      return new pkg.OperationLedger({ store: new pkg.SqliteLedgerStore(db), ...options });
    }),
    close: () => {
      for (const db of dbs) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = process.argv[2] ?? 'pkg';
  const pkg = await import(pathToFileURL(join(dir, 'node.js')).href);
  const { default: Database } = await import('better-sqlite3');
  const memory = await runLeaseCase(pkg, async (o) => [new pkg.OperationLedger({ store: new pkg.MemoryLedgerStore(), ...o })]);
  const sqlite = sqliteLedgers(pkg, Database);
  const onSqlite = await runLeaseCase(pkg, sqlite.make);
  sqlite.close();
  console.log(JSON.stringify({ memory, sqliteTwoConnections: onSqlite }));
}
