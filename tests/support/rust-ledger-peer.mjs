// The JS half of the cross-language ledger test (tests/rmcp_ledger.rs): the package's OperationLedger and
// withIdempotency over its SqliteLedgerStore (better-sqlite3), on the SQLite file the Rust ledger also uses.
//   (FILE: a SQLite file, or pg:{"host","port","user","database"} for the Postgres store)
//   node rust-ledger-peer.mjs run FILE TENANT   — runs the scripted operations (the same the Rust test runs) on a
//                                                 clock fixed at 1_000_000 ms; prints each answer's kind
//   node rust-ledger-peer.mjs status FILE TENANT ACTION ID — what the JS ledger's status lookup says
//   node rust-ledger-peer.mjs unknown FILE TENANT ID — a create_ticket {"title":"lost"} whose handler throws
//                                                 OutcomeUnknown: the JS ledger leaves the record unknown
//   node rust-ledger-peer.mjs unresolved FILE TENANT — the JS ledger's unresolved({ tenant }) and countUnresolved
//   node rust-ledger-peer.mjs fingerprint JSON   — the JS fingerprint of a JSON text's value
import Database from 'better-sqlite3';
import pg from 'pg';
import { OperationLedger, OutcomeUnknown, PostgresLedgerStore, SqliteLedgerStore, fingerprint, withIdempotency } from '../../pkg/node.js';

const [mode, file, tenant, action, id] = process.argv.slice(2);
if (mode === 'fingerprint') {
  process.stdout.write(`${JSON.stringify({ fingerprint: fingerprint(JSON.parse(file)) })}\n`);
  process.exit(0);
}
// FILE is a SQLite file, or `pg:` and a JSON connection ({ host, port, user, database }) for Postgres.
const pool = file.startsWith('pg:') ? new pg.Pool(JSON.parse(file.slice(3))) : undefined;
const store = pool ? new PostgresLedgerStore(pool) : new SqliteLedgerStore(new Database(file));
await store.ready;
const ledger = new OperationLedger({ store, now: () => 1_000_000 });
const exit = async () => {
  await pool?.end();
  process.exit(0);
};
if (mode === 'status') {
  const s = await ledger.status({ tenant, action, operationId: id });
  process.stdout.write(`${JSON.stringify(s)}\n`);
  await exit();
}
if (mode === 'unresolved') {
  const listed = await ledger.unresolved({ tenant });
  const counts = await ledger.countUnresolved({ tenant });
  process.stdout.write(`${JSON.stringify({ listed, counts })}\n`);
  await exit();
}
if (mode === 'unknown') {
  const lost = withIdempotency(ledger, async () => {
    throw new OutcomeUnknown('the bank timed out');
  }, { action: 'create_ticket', tenant: () => tenant });
  const r = await lost({ title: 'lost', operation_id: action }, {});
  process.stdout.write(`${JSON.stringify({ status: r._meta?.['dev.mcp-retry-policy/ledger']?.status })}\n`);
  await exit();
}
const runs = { n: 0 };
const tool = withIdempotency(ledger, async ({ title }) => {
  runs.n++;
  return title === 'bad'
    ? { isError: true, content: [{ type: 'text', text: `refused ${title}` }] }
    : { content: [{ type: 'text', text: `created ${title}` }], structuredContent: { title, n: 1.5 } };
}, { action: 'create_ticket', tenant: () => tenant });
const out = [];
for (const [opId, args] of JSON.parse(process.env.OPS)) {
  const r = await tool({ ...args, operation_id: opId }, {});
  out.push(r._meta?.['dev.mcp-retry-policy/ledger']?.status ?? (r.isError ? 'tool_error' : 'result'));
}
process.stdout.write(`${JSON.stringify({ answers: out, runs: runs.n })}\n`);
await exit();
