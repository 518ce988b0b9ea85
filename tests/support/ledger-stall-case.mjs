// Issue 18, item 5: with `transaction: true` on SQLite, one slow handler (tenant A, 1,500 ms inside its
// transaction) and a fast call of another tenant on the same store: how long the fast call waits. Also a
// script: `node tests/support/ledger-stall-case.mjs <pkg dir> [transactionTimeoutMs]` prints the numbers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves to { fastMs, slow } — the fast call's wait, and the slow call's answer (`_meta` status/reason or 'result'). */
export async function runStallCase(pkg, Database, storeOptions, { slowMs = 1_500 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-stall-'));
  const db = new Database(join(dir, 'app.db'));
  try {
    db.exec('CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT)');
    const ledger = new pkg.OperationLedger({ store: new pkg.SqliteLedgerStore(db, storeOptions) });
    const tenant = (extra) => extra.sub;
    const slow = pkg.withIdempotency(ledger, async ({ title }, _extra, tx) => {
      tx.prepare('INSERT INTO tickets (title) VALUES (?)').run(title);
      await sleep(slowMs); // a downstream call, awaited inside the transaction
      tx.prepare('INSERT INTO tickets (title) VALUES (?)').run(`${title} (second write)`);
      return { content: [{ type: 'text', text: 'slow done' }] };
    }, { action: 'slow', tenant, transaction: true });
    const fast = pkg.withIdempotency(ledger, async () => ({ content: [{ type: 'text', text: 'fast done' }] }), { action: 'fast', tenant });
    const slowRun = slow({ title: 'slow', operation_id: 'op-slow-00001' }, { sub: 'tenant-a' });
    await sleep(50);
    const t0 = performance.now();
    await fast({ operation_id: 'op-fast-00001' }, { sub: 'tenant-b' });
    const fastMs = Math.round(performance.now() - t0);
    const r = await slowRun;
    await sleep(slowMs); // a timed-out handler finishes its sleep and tries its second write
    const meta = r?._meta?.['dev.mcp-retry-policy/ledger'];
    const tickets = db.prepare('SELECT title FROM tickets').all().map((t) => t.title);
    return { fastMs, slow: meta ? `${meta.status}/${meta.reason}` : 'result', tickets };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const pkg = await import(pathToFileURL(join(process.argv[2] ?? 'pkg', 'node.js')).href);
  const { default: Database } = await import('better-sqlite3');
  const timeout = process.argv[3] ? { transactionTimeoutMs: Number(process.argv[3]) } : undefined;
  console.log(JSON.stringify(await runStallCase(pkg, Database, timeout)));
}
