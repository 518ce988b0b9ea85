// run: standalone
// operations.md: releasing unresolved operations, one and in bulk, on a real store (SQLite through better-sqlite3,
// a file in a temporary directory). Handlers that cannot tell whether they committed leave real `unknown` records:
// a payment whose bank timed out (OutcomeUnknown), and a flood of ticket writes whose handler throws. The operators'
// calls below run on them; after a release, the next call with the same operation id executes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { LEDGER_META_KEY, OperationLedger, OutcomeUnknown, SqliteLedgerStore, withIdempotency } from 'mcp-retry-policy';

const dir = mkdtempSync(join(tmpdir(), 'operations-'));
const ledger = new OperationLedger({ store: new SqliteLedgerStore(new Database(join(dir, 'ledger.db'))) });
const tenant = (extra) => extra.authInfo?.extra?.sub;
// What the MCP SDK hands a tool handler, for a caller whose token's subject is `sub`.
const as = (sub) => ({ authInfo: { token: sub, clientId: 'app', scopes: [], extra: { sub } } });
const statusOf = (answer) => answer._meta?.[LEDGER_META_KEY]?.status ?? (answer.isError ? 'error' : 'executed');

// A payment whose bank does not answer the first time: its record ends `unknown`.
let bankUp = false;
let payments = 0;
const submitPayment = withIdempotency(ledger, async ({ amount }) => {
  if (!bankUp) throw new OutcomeUnknown('the bank did not answer');
  payments += 1;
  return { content: [{ type: 'text', text: `paid ${amount}` }] };
}, { action: 'submit_payment', tenant });
assert.equal(statusOf(await submitPayment({ amount: 40, operation_id: 'pay-0001-abcd' }, as('user-4711'))), 'unknown');
assert.equal(statusOf(await submitPayment({ amount: 40, operation_id: 'pay-0001-abcd' }, as('user-4711'))), 'unknown', 'never run again on its own');

// ANCHOR: release
const key = { tenant: 'user-4711', action: 'submit_payment', operationId: 'pay-0001-abcd' };
const out = await ledger.release(key, { reason: 'bank statement 2026-11-30 has no such payment (OPS-42)' });
// → { released: true, previousState: 'unknown', record: { state: 'released', version: 3, … } }
// ANCHOR_END: release
assert.equal(out.released, true);
assert.equal(out.previousState, 'unknown');
assert.equal(out.record.state, 'released');
assert.equal(out.record.version, 3);
// Released: the next call with the id executes.
bankUp = true;
assert.equal(statusOf(await submitPayment({ amount: 40, operation_id: 'pay-0001-abcd' }, as('user-4711'))), 'executed');
assert.equal(payments, 1);
// A resolved record is not released: its outcome is known and replayed.
await assert.rejects(ledger.release(key, { reason: 'again' }), (e) => e instanceof RangeError && e.field === 'key' && e.code === 'resolved');
await assert.rejects(ledger.release({ ...key, operationId: 'pay-0002-none' }, { reason: 'x' }), (e) => e.code === 'not_found');

// A flood: one token sends 60 fresh ids to a tool whose handler throws (its ticket API is down).
const openTicket = withIdempotency(ledger, async () => {
  throw new Error('ECONNRESET from the ticket API');
}, { action: 'open_ticket', tenant });
for (let i = 0; i < 60; i++) {
  assert.equal(statusOf(await openTicket({ title: `spam ${i}`, operation_id: `flood-${String(i).padStart(4, '0')}` }, as('user-mallory'))), 'unknown');
}
assert.equal(await ledger.purge(), 0, 'purge keeps unresolved records');

// ANCHOR: volume
const counts = await ledger.countUnresolved();       // → [{ tenant, action, pending, unknown }, …]
const oldest = await ledger.unresolved({ tenant: 'user-mallory', action: 'open_ticket', limit: 50 });  // → [{ key, record }], oldest first
const { released, refused } = await ledger.releaseAll({ tenant: 'user-mallory', action: 'open_ticket', limit: 10_000 },
  { reason: 'flood from one token; the ticket API has none of these ids (OPS-7)' });    // → { released: [keys], refused: [{ key, code }] }
// ANCHOR_END: volume
assert.deepEqual(counts, [{ tenant: 'user-mallory', action: 'open_ticket', pending: 0, unknown: 60 }]);
assert.equal(oldest.length, 50);
assert.deepEqual(oldest[0].key, { tenant: 'user-mallory', action: 'open_ticket', operationId: 'flood-0000' });
assert.ok(oldest.every((u) => u.record.state === 'unknown'));
assert.equal(released.length, 60);
assert.deepEqual(refused, []);
assert.deepEqual(await ledger.countUnresolved(), []);
// A released id is free: it runs again with whatever input arrives next.
let ran = 0;
const healed = withIdempotency(ledger, async () => {
  ran += 1;
  return { content: [{ type: 'text', text: 'opened T-1' }] };
}, { action: 'open_ticket', tenant });
assert.equal(statusOf(await healed({ title: 'spam 0', operation_id: 'flood-0000' }, as('user-mallory'))), 'executed');
assert.equal(ran, 1);

rmSync(dir, { recursive: true, force: true });
console.log('operations: release, countUnresolved, unresolved, releaseAll — all as documented');
