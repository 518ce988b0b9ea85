// Server A of the paused-process case, in a process of its own: an OperationLedger on a SQLite file, a tool
// behind withIdempotency whose handler is paused mid-run — it stops itself (SIGSTOP) while waiting on a short
// timer, as a process frozen by its host, a debugger or a long GC would be — and, once the test has resumed it
// (SIGCONT), commits its effect: after checking its claim's signal (`mode` signal) or through the claim's
// fenced transaction (`mode` transaction). Its timer was due before the lease's renewal, so on resume the
// handler goes on before any renewal has told it anything.
//
//   node ledger-pause-child.mjs <pkg dir> <sqlite file> <leaseMs> <signal|transaction>
// Messages in: { call: operationId }. Out: { ready }, { event }, { answer }.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';

const [pkgDir, file, leaseMs, mode] = process.argv.slice(2);
const { OperationLedger, SqliteLedgerStore, claimOf, withIdempotency } = await import(pathToFileURL(join(pkgDir, 'node.js')).href);

const db = new Database(file);
db.pragma('busy_timeout = 5000');
db.exec('CREATE TABLE IF NOT EXISTS effects (op TEXT NOT NULL, by TEXT NOT NULL)');
const done = (op) => db.prepare('SELECT by FROM effects WHERE op = ?').get(op);
const ledger = new OperationLedger({
  store: new SqliteLedgerStore(db),
  leaseMs: Number(leaseMs),
  // The README's hook: look it up downstream; not there → not done.
  reconcile: async ({ operationId }) => (done(operationId) ? { status: 'succeeded', result: { content: [{ type: 'text', text: done(operationId).by }] } } : { status: 'not_done' }),
  onEvent: (e) => process.send({ event: { type: e.type, reason: e.reason } }),
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tool = withIdempotency(ledger, async ({ operation_id: op }, extra) => {
  const wake = sleep(1); // due long before the first renewal (a third of the lease)
  process.kill(process.pid, 'SIGSTOP'); // paused here, until the test resumes it
  await wake;
  if (mode === 'signal') {
    const { signal } = claimOf(extra); // read afresh, right before committing
    if (signal.aborted) throw signal.reason;
    db.prepare('INSERT INTO effects (op, by) VALUES (?, ?)').run(op, 'A');
  } else {
    await claimOf(extra).transaction((tx) => tx.prepare('INSERT INTO effects (op, by) VALUES (?, ?)').run(op, 'A'));
  }
  return { content: [{ type: 'text', text: 'A' }] };
}, { action: 'transfer', tenant: () => 'org-1' });

process.on('message', async (m) => {
  if (m?.call) process.send({ answer: await tool({ operation_id: m.call }, {}) });
});
process.send({ ready: true });
