// Server A of the paused-process case, in a process of its own so that a test can stop it (SIGSTOP) and
// resume it (SIGCONT): an OperationLedger on a SQLite file, a tool behind withIdempotency whose handler tells
// the test it is running, waits for the test's `go`, then commits its effect — after checking its claim's
// signal (`mode` signal) or through the claim's fenced transaction (`mode` transaction).
//
//   node ledger-pause-child.mjs <pkg dir> <sqlite file> <leaseMs> <signal|transaction>
// Messages in: { call: operationId }, 'go'. Out: { ready }, { running }, { event }, { answer }.
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
const go = () => new Promise((resolve) => {
  const on = (m) => {
    if (m !== 'go') return;
    process.off('message', on);
    resolve();
  };
  process.on('message', on);
});
const tool = withIdempotency(ledger, async ({ operation_id: op }, extra) => {
  process.send({ running: true });
  await go();
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
