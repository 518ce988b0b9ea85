// One racing process for the multi-process ledger tests (tests/js/postgres.test.mjs, tests/js/ledger.test.mjs).
// `node ledger-racer.mjs '<config JSON>'` opens its own store — `{ kind: 'postgres', connection }` or
// `{ kind: 'sqlite', file, durability }` — and its own OperationLedger, wraps a handler in withIdempotency
// whose effect is a row in the `effects` table of the same database, prints `ready`, then for each stdin line
// `{ id, holdMs }` calls the handler once and prints `{ id, ran, status, text }`; `{ exit: true }` ends it.
// The parent writes each line to every racer at once: they race for the same operation id.
// With `transaction: true` in the config the handler writes its effect through the store's transaction
// (withIdempotency's `transaction` option). `{ id, crashAfterWrite: true }` writes the effect, prints
// `written` and then waits for ever: the parent kills the process there, between the write and the record.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { LEDGER_META_KEY, OperationLedger, PostgresLedgerStore, SqliteLedgerStore, withIdempotency } from '../../pkg/node.js';

const config = JSON.parse(process.argv[2]);
let store;
let effect;
let close;
if (config.kind === 'postgres') {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ ...config.connection, max: 4 });
  // Every racer creates the table at once (a fresh database): the store's setup must survive that.
  store = new PostgresLedgerStore(pool);
  await store.ready;
  effect = (id, tx) => (tx ?? pool).query('INSERT INTO effects (operation_id, pid) VALUES ($1, $2)', [id, process.pid]);
  close = () => pool.end();
} else {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(config.file);
  store = new SqliteLedgerStore(db, { durability: config.durability });
  const insert = db.prepare('INSERT INTO effects (operation_id, pid) VALUES (?, ?)');
  effect = async (id, tx) => (tx ? tx.prepare('INSERT INTO effects (operation_id, pid) VALUES (?, ?)') : insert).run(id, process.pid);
  close = async () => db.close();
}

const ledger = new OperationLedger({ store });
const ran = new Set();
const handler = withIdempotency(ledger, async ({ operation_id, holdMs, crashAfterWrite }, _extra, tx) => {
  ran.add(operation_id);
  await effect(operation_id, tx);
  if (crashAfterWrite) {
    console.log('written');
    await new Promise(() => setInterval(() => {}, 1000)); // until killed
  }
  await sleep(holdMs);
  return { content: [{ type: 'text', text: `done by ${process.pid}` }] };
}, { action: 'race', tenant: () => 'acme', transaction: config.transaction === true });

console.log('ready');
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.exit) break;
  const r = await handler({ operation_id: message.id, holdMs: message.holdMs, ...(message.crashAfterWrite ? { crashAfterWrite: true } : {}) });
  console.log(JSON.stringify({ id: message.id, ran: ran.has(message.id), status: r._meta?.[LEDGER_META_KEY]?.status ?? null, text: r.content?.[0]?.text }));
}
await close();
