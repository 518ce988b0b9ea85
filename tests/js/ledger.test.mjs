// The operation ledger: fingerprints, stores (memory, SQLite), and the failure windows over real HTTP — a
// real McpServer whose write tools are wrapped in withIdempotency, the real SDK client (with withRetry where
// it matters), our fault proxy between them.
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  fingerprint, OperationLedger, MemoryLedgerStore, SqliteLedgerStore, withRetry, withIdempotency, observeFetch, LEDGER_META_KEY, isValidOperationId,
} from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { runLedgerStoreContract } from '../support/ledger-store-contract.mjs';
import { canonicalize } from '../support/jcs.mjs';
import { canonicalJson } from '../../pkg/server/canonical.js';
import { useNodeCrypto } from '../../pkg/server/fingerprint.js';
import { fingerprintCanonical, fingerprintJson } from '../../pkg/mcp_retry_policy_server.js';
import { randomJsonValues } from '../support/random-json.mjs';
import { assertEachRanOnce, killBetweenWriteAndRecord, raceThroughProcesses } from '../support/ledger-race.mjs';

const sha = (s) => createHash('sha256').update(s).digest('hex');

/** Runs `f` on both hash paths of `fingerprint`: node:crypto (what pkg/node.js sets up) and the wasm's. */
function onBothHashPaths(f) {
  f('node:crypto');
  const node = useNodeCrypto(undefined);
  assert.ok(node, 'pkg/node.js hashes with node:crypto');
  try {
    f('wasm');
  } finally {
    useNodeCrypto(node);
  }
}

// ── Fingerprints ─────────────────────────────────────────────────────────────────────────────────────────
test('fingerprint equals SHA-256 of a reference JCS canonicalization, over many random values', () => {
  const values = randomJsonValues(42, 500, ['', 'a', 'é', '😀', '\u20ac', '\r\n\t', '"\\', '\u0001\u001f', '\ufb33', 'key', 'Key', '\u0080', 'z']);
  onBothHashPaths((path) => {
    for (const v of values) assert.equal(fingerprint(v), sha(canonicalize(v)), `${path}: ${JSON.stringify(v)}`);
  });
  for (const v of values) {
    // Both halves on their own: the JS writer's text is the reference's, the wasm hash is SHA-256 of it; and
    // 0.1.0's way (JSON.stringify, then the wasm parses and sorts) gives the same fingerprint, so records
    // stored before the change still match.
    assert.equal(canonicalJson(v, 1e9), canonicalize(v), JSON.stringify(v));
    assert.equal(fingerprintCanonical(canonicalize(v)), sha(canonicalize(v)), JSON.stringify(v));
    assert.equal(fingerprintJson(JSON.stringify(v)), fingerprint(v), JSON.stringify(v));
  }
});

test('fingerprint writes what JSON.stringify writes, in canonical order, for JS-only shapes too', () => {
  const previous = (v) => fingerprintJson(JSON.stringify(v)); // 0.1.0: JSON.stringify, then the wasm sorts
  class Point {
    constructor() {
      this.y = 2;
      this.x = 1;
    }
  }
  const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
  const withGetter = { get b() { return [1, { d: 2, c: 3 }]; }, a: 0 };
  const shapes = [
    { 10: 'ten', 9: 'nine', 1: 'one', b: 0, a: 1, '-1': 2, '01': 3, 4294967295: 4 }, // integer keys enumerate first in JS
    { '\u{1F600}': 1, '\ufb33': 2, '\u20ac': 3, '\r': 4, '1': 5, 'é': 6, '': 7 }, // RFC 8785 §3.2.3 order
    { d: new Date(0), n: new Number(3), s: new String('x'), t: new Boolean(true), f: new Boolean(false) },
    { u: undefined, f() {}, s: Symbol('s'), keep: [undefined, () => 1, Symbol('t')] },
    sparse,
    new Point(),
    Object.assign(Object.create(null), { z: 1, y: { b: 2, a: 1 } }),
    { toJSON: () => ({ z: 1, a: [2, { y: 1, x: 2 }] }) },
    { a: { toJSON(key) { return `key ${key}`; } }, b: [{ toJSON(key) { return `index ${key}`; } }] },
    new Proxy({ b: 1, a: 2 }, {}),
    new Proxy([3, 2, 1], {}),
    withGetter,
    new Map([[1, 2]]),
    new Uint8Array([3, 1, 2]),
    [0, -0, 1e21, 1e-7, 5e-324, -1.7976931348623157e308, 123456789012345680000, 0.1 + 0.2],
    ['\u0000\u001f\u007f\u0080', '"\\/\b\f\n\r\t', '\u2028\u2029', '\ud83d\ude00'],
    { nested: { deeper: [{ c: 1, b: [{ z: null, a: true }] }] } },
    Object.defineProperty({ visible: 1 }, 'hidden', { value: 2, enumerable: false }),
    { [Symbol('k')]: 1, k: 2 },
    'text', 42, true, null, [], {},
  ];
  onBothHashPaths((path) => {
    for (const v of shapes) {
      const plain = JSON.parse(JSON.stringify(v));
      assert.equal(canonicalJson(v, 1e9), canonicalize(plain), String(JSON.stringify(v)));
      assert.equal(fingerprint(v), sha(canonicalize(plain)), `${path}: ${String(JSON.stringify(v))}`);
      assert.equal(fingerprint(v), previous(v), `${path}: ${String(JSON.stringify(v))}`);
    }
  });
  // A toJSON (or a getter) may fingerprint something else while it runs: each write keeps its own state.
  const inner = { z: 1, y: [2, { b: 1, a: 0 }] };
  const outer = { b: { toJSON: () => fingerprint(inner) }, a: [1, 2] };
  assert.equal(fingerprint(outer), fingerprint({ a: [1, 2], b: fingerprint(inner) }));
  // Keys with a lone surrogate are refused like strings; omitted members are not looked at.
  assert.throws(() => fingerprint({ '\udc00': 1 }), (e) => e instanceof RangeError && e.code === 'lone_surrogate');
  assert.throws(() => fingerprint(['ok', 'x\ud800y']), (e) => e instanceof RangeError && e.code === 'lone_surrogate');
  assert.equal(fingerprint({ '\udc00': undefined, a: 1 }), fingerprint({ a: 1 }));
  // Nesting: the same limit as the wasm parser had, level for level.
  const deep = (n) => {
    let v = 0;
    for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
    return v;
  };
  const outcome = (f) => {
    try {
      return f();
    } catch (e) {
      return e.code;
    }
  };
  for (let n = 250; n <= 262; n++) assert.equal(outcome(() => fingerprint(deep(n))), outcome(() => previous(deep(n))), `depth ${n}`);
  assert.equal(outcome(() => fingerprint(deep(257))), 'too_deep');
});

test('key order does not change a fingerprint; values do; bad values are refused by name', () => {
  const a = fingerprint({ title: 'x', priority: 2, tags: ['a'], meta: { y: null, x: 1 } });
  assert.equal(fingerprint({ meta: { x: 1, y: null }, tags: ['a'], priority: 2, title: 'x' }), a);
  assert.notEqual(fingerprint({ title: 'x', priority: 3, tags: ['a'], meta: { y: null, x: 1 } }), a);
  assert.notEqual(fingerprint({ title: 'x', priority: 2, tags: ['a'], meta: { y: null, x: '1' } }), a);
  assert.throws(() => fingerprint({ a: NaN }), (e) => e instanceof RangeError && e.code === 'not_finite');
  assert.throws(() => fingerprint({ a: Infinity }), (e) => e instanceof RangeError && e.code === 'not_finite');
  const cyclic = {};
  cyclic.self = cyclic;
  assert.throws(() => fingerprint(cyclic), (e) => e instanceof TypeError && e.code === 'invalid_type');
  assert.throws(() => fingerprint({ n: 10n }), (e) => e instanceof TypeError && e.code === 'invalid_type');
  assert.throws(() => fingerprint('\ud800'), (e) => e instanceof RangeError && e.code === 'lone_surrogate');
  assert.throws(() => fingerprint(undefined), (e) => e instanceof TypeError);
});

test('operation ids: the accepted form', () => {
  for (const ok of ['0b6f8a4e-2c1d-4f3e-9a7b-1c2d3e4f5a6b', '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'op_12345678']) assert.equal(isValidOperationId(ok), true, ok);
  for (const bad of ['', 'short', 'with space 123', 'slash/1234567', 'x'.repeat(129), 12345678, null, undefined]) assert.equal(isValidOperationId(bad), false, String(bad));
});

// ── Stores ───────────────────────────────────────────────────────────────────────────────────────────────
const lib = { OperationLedger, MemoryLedgerStore };

test('MemoryLedgerStore meets the store contract (and the ledger over it: one replay, TTL, release)', async () => {
  const checks = await runLedgerStoreContract(new MemoryLedgerStore(), lib);
  assert.ok(checks.length >= 80, `${checks.length} checks (the purge and ledger parts ran)`);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
});

test('SqliteLedgerStore meets the store contract, and its records survive a process restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-'));
  try {
    const file = join(dir, 'ledger.db');
    const db = new Database(file);
    const checks = await runLedgerStoreContract(new SqliteLedgerStore(db), lib);
    assert.ok(checks.length >= 80, `${checks.length} checks (the purge and ledger parts ran)`);
    for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
    const ledger = new OperationLedger({ store: new SqliteLedgerStore(db) });
    const key = { tenant: 'acme', action: 'open_ticket', operationId: 'restart-0001' };
    const b = await ledger.begin(key, fingerprint({ title: 't' }));
    await ledger.finish(key, b.claim, 'succeeded', { content: [{ type: 'text', text: 'opened T-9' }] });
    db.close();
    // Another process opens the same file and replays the outcome.
    const script = `
      import Database from 'better-sqlite3';
      import { OperationLedger, SqliteLedgerStore, fingerprint } from ${JSON.stringify(new URL('../../pkg/node.js', import.meta.url).href)};
      const ledger = new OperationLedger({ store: new SqliteLedgerStore(new Database(${JSON.stringify(file)})) });
      const r = await ledger.begin(${JSON.stringify(key)}, fingerprint({ title: 't' }));
      console.log(JSON.stringify(r));`;
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' }));
    assert.deepEqual(out, { action: 'replay', state: 'succeeded', result: { content: [{ type: 'text', text: 'opened T-9' }] } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SqliteLedgerStore runs in WAL: synchronous FULL by default, NORMAL on request; a journal mode or EXTRA you set is kept', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-wal-'));
  const open = [];
  const fresh = (name, setup) => {
    const db = new Database(join(dir, `${name}.db`));
    open.push(db);
    setup?.(db);
    return db;
  };
  const settings = (db) => [db.pragma('journal_mode', { simple: true }), db.pragma('synchronous', { simple: true })];
  try {
    // This better-sqlite3's SQLite lowers synchronous to NORMAL when WAL starts (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1):
    // the store must set FULL after the switch.
    const defaults = fresh('default');
    new SqliteLedgerStore(defaults);
    assert.deepEqual(settings(defaults), ['wal', 2], 'default: WAL, synchronous FULL');
    const explicitFull = fresh('full');
    new SqliteLedgerStore(explicitFull, { durability: 'full' });
    assert.deepEqual(settings(explicitFull), ['wal', 2]);
    const normal = fresh('normal');
    new SqliteLedgerStore(normal, { durability: 'normal' });
    assert.deepEqual(settings(normal), ['wal', 1], 'normal: WAL, synchronous NORMAL');
    // A journal mode the user chose is kept; 'normal' outside WAL is refused (it could corrupt the file).
    const truncate = fresh('truncate', (db) => db.pragma('journal_mode = TRUNCATE'));
    new SqliteLedgerStore(truncate);
    assert.deepEqual(settings(truncate), ['truncate', 2]);
    assert.throws(() => new SqliteLedgerStore(truncate, { durability: 'normal' }),
      (e) => e instanceof RangeError && e.code === 'invalid_value' && e.field === 'durability' && /journal_mode=truncate/.test(e.message));
    // EXTRA is stronger than both levels: kept.
    const extra = fresh('extra', (db) => db.pragma('synchronous = EXTRA'));
    new SqliteLedgerStore(extra, { durability: 'normal' });
    assert.deepEqual(settings(extra), ['wal', 3]);
    // In memory: nothing survives anything; both levels are accepted.
    const memory = new Database(':memory:');
    open.push(memory);
    new SqliteLedgerStore(memory, { durability: 'normal' });
    assert.deepEqual(settings(memory), ['memory', 1]);
    // Bad options: typed, naming the field; nothing set on the connection.
    const untouched = fresh('untouched');
    for (const [options, type, code, field] of [
      [{ durability: 'fast' }, RangeError, 'invalid_value', 'durability'],
      [{ durability: 2 }, TypeError, 'invalid_type', 'durability'],
      [{ durabilty: 'full' }, TypeError, 'unknown_option', 'durabilty'],
      ['full', TypeError, 'invalid_type', 'options'],
      [null, TypeError, 'invalid_type', 'options'],
    ]) {
      assert.throws(() => new SqliteLedgerStore(untouched, options), (e) => e instanceof type && e.code === code && e.field === field, JSON.stringify(options));
    }
    assert.deepEqual(settings(untouched), ['delete', 2]);
  } finally {
    for (const db of open) db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SqliteLedgerStore: the purge reads the partial expiry index; durability normal meets the store contract too', async () => {
  const db = new Database(':memory:');
  new SqliteLedgerStore(db);
  const plan = db.prepare(`EXPLAIN QUERY PLAN DELETE FROM mcp_operation_ledger WHERE state IN ('succeeded', 'failed') AND expires_ms <= 5`).all().map((r) => r.detail).join('\n');
  assert.match(plan, /USING INDEX mcp_operation_ledger_expiry \(expires_ms<\?\)/, plan);
  const dir = mkdtempSync(join(tmpdir(), 'ledger-normal-'));
  try {
    const file = new Database(join(dir, 'normal.db'));
    const checks = await runLedgerStoreContract(new SqliteLedgerStore(file, { durability: 'normal' }), lib);
    for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
    file.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('three Node processes race one operation id on one SQLite file in WAL mode: the handler runs once (counted in the file)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-race-'));
  try {
    const file = join(dir, 'race.db');
    const db = new Database(file);
    db.exec('CREATE TABLE effects (operation_id TEXT NOT NULL, pid INTEGER NOT NULL)');
    const rounds = Array.from({ length: 10 }, (_, i) => ({ id: `op-race-${i}`, holdMs: i % 2 ? 0 : 150 }));
    const results = await raceThroughProcesses({ kind: 'sqlite', file, durability: 'full' }, rounds);
    const count = db.prepare('SELECT count(*) AS n FROM effects WHERE operation_id = ?');
    const seen = await assertEachRanOnce(results, async (id) => count.get(id).n);
    assert.ok(seen.in_progress >= 5, JSON.stringify(seen));
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ── The transaction option: the business write and the record commit together ────────────────────────

test('transaction option (SQLite): kill -9 between the business write and the record leaves neither; the next call leaves both, once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-kill-'));
  try {
    const file = join(dir, 'kill.db');
    const db = new Database(file);
    db.exec('CREATE TABLE effects (operation_id TEXT NOT NULL, pid INTEGER NOT NULL)');
    new SqliteLedgerStore(db); // creates the ledger table
    const effects = db.prepare('SELECT count(*) AS n FROM effects WHERE operation_id = ?');
    const record = db.prepare('SELECT state FROM mcp_operation_ledger WHERE operation_id = ?');

    // Without the option: the effect is committed, the record says pending — the unknown the option removes.
    await killBetweenWriteAndRecord({ kind: 'sqlite', file, durability: 'full' }, 'op-kill-plain');
    assert.equal(effects.get('op-kill-plain').n, 1);
    assert.equal(record.get('op-kill-plain')?.state, 'pending');

    // With it: neither the effect nor any record.
    await killBetweenWriteAndRecord({ kind: 'sqlite', file, durability: 'full', transaction: true }, 'op-kill-atomic');
    assert.equal(effects.get('op-kill-atomic').n, 0, 'the business write was rolled back');
    assert.equal(record.get('op-kill-atomic'), undefined, 'no record: the claim was rolled back with it');
    const ledger = new OperationLedger({ store: new SqliteLedgerStore(db) });
    assert.deepEqual(await ledger.status({ tenant: 'acme', action: 'race', operationId: 'op-kill-atomic' }), { status: 'not_found' });

    // The retry with the same id (three processes racing it) runs it once: both.
    const results = await raceThroughProcesses({ kind: 'sqlite', file, durability: 'full', transaction: true }, [{ id: 'op-kill-atomic', holdMs: 100 }, { id: 'op-atomic-2', holdMs: 0 }]);
    const seen = await assertEachRanOnce(results, async (id) => effects.get(id).n);
    assert.equal(seen.in_progress, 0, 'with the option no claim is visible alone: the others replay');
    assert.equal(record.get('op-kill-atomic').state, 'succeeded');
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('transaction option (SQLite, one process): a throw rolls the write back and answers rejected/rolled_back; the same id runs again; replays; refusals', async () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT NOT NULL)');
  const ledger = new OperationLedger({ store: new SqliteLedgerStore(db) });
  let runs = 0;
  let failNext = true;
  const handler = withIdempotency(ledger, async ({ title }, _extra, tx) => {
    runs++;
    const { lastInsertRowid } = tx.prepare('INSERT INTO tickets (title) VALUES (?)').run(title);
    await new Promise((r) => setTimeout(r, 10));
    if (title === 'refuse') return { isError: true, content: [{ type: 'text', text: 'refused' }] };
    if (failNext) {
      failNext = false;
      throw new Error('the downstream API said 500');
    }
    return { content: [{ type: 'text', text: `T-${lastInsertRowid}` }] };
  }, { action: 'create_ticket', tenant: () => 'acme', transaction: true });
  const count = () => db.prepare('SELECT count(*) AS n FROM tickets').get().n;

  const failed = await handler({ title: 'a', operation_id: 'op-atomic-1' });
  assert.equal(failed.isError, true);
  assert.deepEqual(failed._meta[LEDGER_META_KEY], { status: 'rejected', operationId: 'op-atomic-1', reason: 'rolled_back' });
  assert.match(failed.content[0].text, /transaction undid its database writes, but anything it did outside that transaction .* may stand/);
  assert.doesNotMatch(failed.content[0].text, /downstream API said 500/, 'the error goes to onEvent, not to the model');
  assert.equal(count(), 0);
  assert.deepEqual(await ledger.status({ tenant: 'acme', action: 'create_ticket', operationId: 'op-atomic-1' }), { status: 'not_found' });

  // Five concurrent calls with the same id: one runs, four replay it; one row (rowid 1 again: the first was rolled back).
  const again = await Promise.all(Array.from({ length: 5 }, () => handler({ title: 'a', operation_id: 'op-atomic-1' })));
  assert.equal(runs, 2);
  assert.equal(count(), 1);
  for (const r of again) assert.deepEqual(r, { content: [{ type: 'text', text: 'T-1' }] });
  const st = await ledger.status({ tenant: 'acme', action: 'create_ticket', operationId: 'op-atomic-1' });
  assert.deepEqual(st, { status: 'succeeded', result: { content: [{ type: 'text', text: 'T-1' }] } });
  // Other input under the same id: a conflict, nothing run.
  assert.equal((await handler({ title: 'b', operation_id: 'op-atomic-1' }))._meta[LEDGER_META_KEY].status, 'conflict');
  // An error result commits with its writes and is replayed (throw to roll back).
  const refused = await handler({ title: 'refuse', operation_id: 'op-atomic-2' });
  assert.equal(refused.isError, true);
  assert.equal(count(), 2);
  assert.deepEqual(await handler({ title: 'refuse', operation_id: 'op-atomic-2' }), refused);
  assert.equal(runs, 3);

  // Refused by name: a store without transactions, a non-boolean option.
  const memory = new OperationLedger({ store: new MemoryLedgerStore() });
  assert.throws(() => withIdempotency(memory, () => ({}), { action: 'a', tenant: () => 't', transaction: true }),
    (e) => e instanceof TypeError && e.field === 'transaction' && /cannot run a transaction/.test(e.message));
  assert.throws(() => withIdempotency(ledger, () => ({}), { action: 'a', tenant: () => 't', transaction: 'yes' }),
    (e) => e instanceof TypeError && e.field === 'transaction');
  assert.equal(memory.transactional, false);
  assert.equal(ledger.transactional, true);
  db.close();
});

test('transaction option (SQLite): a handler that ends the transaction itself and then throws is answered unknown, never rolled back', async () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT NOT NULL)');
  const ledger = new OperationLedger({ store: new SqliteLedgerStore(db) });
  const handler = withIdempotency(ledger, async ({ title }, _extra, tx) => {
    tx.prepare('INSERT INTO tickets (title) VALUES (?)').run(title);
    tx.exec('COMMIT'); // the handler's own commit: its write stands
    throw new Error('after its own commit');
  }, { action: 'create_ticket', tenant: () => 'acme', transaction: true });
  const answer = (await handler({ title: 'self-committed', operation_id: 'op-self-commit' }))._meta[LEDGER_META_KEY];
  assert.equal(answer.status, 'unknown', `before: rejected/rolled_back ("nothing took effect"): ${JSON.stringify(answer)}`);
  assert.equal(db.prepare('SELECT count(*) AS n FROM tickets').get().n, 1, 'the write stands');
});

test('OperationLedger: the table, expiry, leases and reconcile, on a clock of our own', async () => {
  let now = 1_000;
  const store = new MemoryLedgerStore();
  const seen = [];
  const ledger = new OperationLedger({
    store,
    ttlMs: 10_000,
    leaseMs: 2_000,
    now: () => now,
    reconcile: async ({ operationId }) => {
      seen.push(operationId);
      return operationId.endsWith('found') ? { status: 'succeeded', result: { found: true } } : operationId.endsWith('absent') ? { status: 'not_done' } : { status: 'unknown' };
    },
  });
  const key = (id) => ({ tenant: 't', action: 'a', operationId: id });
  const fp = fingerprint({ x: 1 });
  const first = await ledger.begin(key('op-000001'), fp);
  assert.equal(first.action, 'execute');
  assert.deepEqual(await ledger.begin(key('op-000001'), fp), { action: 'in_progress', retryAfterMs: 1_000 });
  assert.deepEqual(await ledger.begin(key('op-000001'), fingerprint({ x: 2 })), { action: 'conflict' });
  await ledger.finish(key('op-000001'), first.claim, 'failed', { isError: true, content: [] });
  assert.deepEqual(await ledger.begin(key('op-000001'), fp), { action: 'replay', state: 'failed', result: { isError: true, content: [] } });
  now += 10_000; // expired: starts fresh
  assert.equal((await ledger.begin(key('op-000001'), fingerprint({ other: true }))).action, 'execute');
  // A claim whose lease ran out is reconciled through the hook.
  for (const id of ['op-found', 'op-absent', 'op-unsure']) await ledger.begin(key(id), fp);
  now += 2_500;
  assert.deepEqual(await ledger.begin(key('op-found'), fp), { action: 'replay', state: 'succeeded', result: { found: true } });
  assert.equal((await ledger.begin(key('op-absent'), fp)).action, 'execute');
  assert.deepEqual(await ledger.begin(key('op-unsure'), fp), { action: 'unknown' });
  assert.deepEqual(seen, ['op-found', 'op-absent', 'op-unsure']);
  // Without a hook: unknown.
  const plain = new OperationLedger({ store: new MemoryLedgerStore(), leaseMs: 1, now: () => now });
  await plain.begin(key('op-000002'), fp);
  now += 5;
  assert.deepEqual(await plain.begin(key('op-000002'), fp), { action: 'unknown' });
  assert.throws(() => new OperationLedger({ store: {} }), (e) => e instanceof TypeError && e.field === 'store');
  assert.throws(() => new OperationLedger({ store, ttlMs: -1 }), (e) => e instanceof RangeError && e.field === 'ttlMs');
  assert.throws(() => new OperationLedger({ store, leaseMs: NaN }), (e) => e instanceof RangeError && e.code === 'not_finite');
});

test('OperationLedger.status: read-only answers from the ledger table, the reconcile hook for the unknown', async () => {
  let t = 10_000;
  let hook = { status: 'unknown' };
  const store = new MemoryLedgerStore();
  const ledger = new OperationLedger({ store, leaseMs: 1_000, ttlMs: 5_000, now: () => t, reconcile: async () => hook });
  const key = { tenant: 'acme', action: 'open_ticket', operationId: 'op-status-1' };
  assert.deepEqual(await ledger.status(key), { status: 'not_found' });
  assert.equal(store.size, 0, 'a lookup stores nothing');
  const { claim } = await ledger.begin(key, 'f'.repeat(64));
  assert.deepEqual(await ledger.status(key), { status: 'in_progress', retryAfterMs: 1_000 });
  t += 1_500; // the lease ran out: the hook is asked
  assert.deepEqual(await ledger.status(key), { status: 'unknown' });
  hook = { status: 'not_done' };
  assert.deepEqual(await ledger.status(key), { status: 'not_done' });
  assert.equal((await store.get(key)).record.state, 'pending', 'not_done changes nothing: the next call executes');
  hook = { status: 'succeeded', result: { content: [{ type: 'text', text: 'T-9' }] } };
  assert.deepEqual(await ledger.status(key), { status: 'succeeded', result: { content: [{ type: 'text', text: 'T-9' }] } });
  assert.equal((await store.get(key)).record.state, 'succeeded', 'what the hook found out is recorded');
  t += 60_000; // past the TTL: still true
  assert.equal((await ledger.status(key)).status, 'succeeded');
  const other = { ...key, operationId: 'op-status-2' };
  const c2 = await ledger.begin(other, 'f'.repeat(64));
  await ledger.finish(other, c2.claim, 'failed', { isError: true, content: [] });
  assert.deepEqual(await ledger.status(other), { status: 'failed', result: { isError: true, content: [] } });
  const third = { ...key, operationId: 'op-status-3' };
  const c3 = await ledger.begin(third, 'f'.repeat(64));
  await ledger.finish(third, c3.claim, 'unknown');
  hook = { status: 'unknown' };
  await ledger.release(third, { reason: 'checked by hand' });
  assert.deepEqual(await ledger.status(third), { status: 'not_done' }, 'released: it did not happen');
  assert.deepEqual(await ledger.status({ ...key, tenant: 'globex' }), { status: 'not_found' }, 'another tenant: nothing');
  void claim;
});

test('a TTL shorter than the lease is refused with a typed error; equal is fine', () => {
  const store = new MemoryLedgerStore();
  for (const options of [{ ttlMs: 1_000, leaseMs: 2_000 }, { ttlMs: 30_000 } /* default lease 60 s */, { ttlMs: 1, leaseMs: 2 }]) {
    assert.throws(() => new OperationLedger({ store, ...options }), (e) => e instanceof RangeError && e.code === 'ttl_below_lease' && e.field === 'ttlMs' &&
      /ttlMs \(\d+\) must be at least leaseMs \(\d+\)/.test(e.message), JSON.stringify(options));
  }
  const ok = new OperationLedger({ store, ttlMs: 2_000, leaseMs: 2_000 });
  assert.deepEqual([ok.ttlMs, ok.leaseMs], [2_000, 2_000]);
});

test('the issue\'s case: a handler that runs past the TTL is never executed a second time by a repeat', async () => {
  // ttlMs < leaseMs is refused (above); with ttlMs = leaseMs, a repeat arriving while the first run is still
  // going, after both lease and TTL ran out on the clock, is never executed: this process holds the live claim,
  // so the repeat hears in_progress (issue 18: the hook is not asked while the run may still commit).
  for (const [name, makeStore] of [['memory', () => new MemoryLedgerStore()], ['sqlite', () => new SqliteLedgerStore(new Database(':memory:'))]]) {
    let now = 0;
    const ledger = new OperationLedger({ store: makeStore(), ttlMs: 1_000, leaseMs: 1_000, now: () => now });
    let runs = 0;
    let repeat;
    const args = { operation_id: 'op-running1' };
    const handler = withIdempotency(ledger, async () => {
      runs++;
      now += 5_000; // the handler is still running, past its lease and the TTL
      if (runs === 1) repeat = await handler(args);
      return { content: [{ type: 'text', text: 'once' }] };
    }, { action: 'a', tenant: () => 't' });
    const first = await handler(args);
    assert.equal(first.content[0].text, 'once');
    assert.equal(runs, 1, `${name}: ran once`);
    assert.equal(repeat._meta?.[LEDGER_META_KEY]?.status, 'in_progress', `${name}: the repeat is told it is still running`);
    assert.equal((await handler(args)).content[0].text, 'once', `${name}: once finished, replayed`);
  }
});

test('refusals before any claim answer status rejected with a reason (nothing done, nothing stored), for every store', async () => {
  for (const [name, store] of [['memory', new MemoryLedgerStore()], ['sqlite', new SqliteLedgerStore(new Database(':memory:'))]]) {
    const ledger = new OperationLedger({ store });
    let runs = 0;
    const handler = withIdempotency(ledger, async () => { runs++; return { content: [] }; }, {
      action: 'open_ticket',
      tenant: (extra) => extra?.tenant,
      validate: ({ title }) => {
        if (title === 'boom') throw new Error('validator down');
        return title ? undefined : 'title must not be empty';
      },
    });
    const id = 'op-refusal-1';
    const cases = [
      [{ title: 't', operation_id: 'bad id!' }, { tenant: 'acme' }, { status: 'rejected', reason: 'invalid_operation_id' }, /operation_id must be 8–128 characters.*nothing was done/],
      [{ title: 't' }, { tenant: 'acme' }, { status: 'rejected', reason: 'invalid_operation_id' }, /nothing was done/],
      [{ title: 't', operation_id: id }, {}, { status: 'rejected', reason: 'unauthenticated', operationId: id }, /no authenticated tenant; nothing was done/],
      [{ title: 't', operation_id: id }, { tenant: () => { throw new Error('x'); } }, { status: 'rejected', reason: 'unauthenticated', operationId: id }, /nothing was done/],
      [{ title: '', operation_id: id }, { tenant: 'acme' }, { status: 'rejected', reason: 'invalid_input', operationId: id }, /title must not be empty.*nothing was done/],
      [{ title: 'boom', operation_id: id }, { tenant: 'acme' }, { status: 'rejected', reason: 'validation_failed', operationId: id }, /could not be validated just now; nothing was done/],
    ];
    for (const [args, extra, meta, text] of cases) {
      const r = await handler(args, extra);
      assert.equal(r.isError, true, name);
      assert.deepEqual(r._meta, { [LEDGER_META_KEY]: meta }, `${name}: ${JSON.stringify(args)}`);
      assert.match(r.content[0].text, text);
      assert.equal(await store.get({ tenant: 'acme', action: 'open_ticket', operationId: id }), undefined, `${name}: nothing stored`);
    }
    assert.equal(runs, 0, `${name}: nothing ran`);
  }
});

test('withIdempotency: a result the store cannot keep still records success; the first caller gets it, a replay says so plainly', async () => {
  for (const [name, store] of [['memory', new MemoryLedgerStore()], ['sqlite', new SqliteLedgerStore(new Database(':memory:'))]]) {
    const ledger = new OperationLedger({ store });
    let runs = 0;
    const handler = withIdempotency(ledger, async ({ kind }) => {
      runs++;
      const structuredContent = kind === 'bigint' ? { n: 10n } : kind === 'fn' ? { f() {} } : { ok: true };
      return { content: [{ type: 'text', text: 'booked' }], structuredContent };
    }, { action: 'book', tenant: () => 'acme' });
    for (const kind of ['bigint', 'fn']) {
      const operation_id = `op-unstorable-${kind}`;
      const first = await handler({ kind, operation_id });
      assert.equal(first.content[0].text, 'booked', `${name}: the first caller gets the real result`);
      const replay = await handler({ kind, operation_id });
      assert.equal(replay.isError, false, name);
      assert.match(replay.content[0].text, /^The operation op-unstorable-\w+ succeeded; its result could not be stored \(a (BigInt|function) at "\w+"\)/);
      assert.equal(replay._meta[LEDGER_META_KEY].status, 'result_not_stored');
      assert.equal((await store.get({ tenant: 'acme', action: 'book', operationId: operation_id })).record.state, 'succeeded', `${name}: not left pending`);
    }
    assert.equal(runs, 2, `${name}: each ran once`);
  }
});

test('a store that refuses to write a result (too large, say): the outcome is recorded with a note, not left pending', async () => {
  const inner = new MemoryLedgerStore();
  const picky = {
    get: (k) => inner.get(k),
    insert: (k, r) => inner.insert(k, r),
    replace: async (k, v, r, text) => {
      if (text?.length > 1_000) throw new Error('value too large for this store');
      return inner.replace(k, v, r, text);
    },
  };
  const ledger = new OperationLedger({ store: picky });
  const key = { tenant: 't', action: 'a', operationId: 'op-too-large' };
  const b = await ledger.begin(key, 'fp');
  assert.equal(await ledger.finish(key, b.claim, 'succeeded', { content: [{ type: 'text', text: 'x'.repeat(5_000) }] }), true);
  const r = await ledger.begin(key, 'fp');
  assert.equal(r.state, 'succeeded');
  assert.match(r.result.content[0].text, /succeeded; its result could not be stored \(the store refused it\)/);
});

test('rows written before results were text (an object in a Durable Object or Memory row) replay the same way', async () => {
  const legacy = {
    get: async () => ({ record: { state: 'succeeded', fingerprint: 'fp', leaseUntilMs: 0, createdMs: 0, expiresMs: 9e15, version: 2 }, result: { content: [], structuredContent: { n: NaN, at: new Date(0) } } }),
    insert: async () => false,
    replace: async () => false,
  };
  const r = await new OperationLedger({ store: legacy }).begin({ tenant: 't', action: 'a', operationId: 'op-legacy1' }, 'fp');
  assert.deepEqual(r, { action: 'replay', state: 'succeeded', result: { content: [], structuredContent: { n: null, at: '1970-01-01T00:00:00.000Z' } } });
});

test('release: the documented operator example', async () => {
  let now = 0;
  const store = new MemoryLedgerStore();
  const ledger = new OperationLedger({ store, leaseMs: 60_000, now: () => now });
  let charges = 0;
  const pay = withIdempotency(ledger, async () => {
    charges++;
    if (charges === 1) throw new Error('bank timeout'); // recorded unknown
    return { content: [{ type: 'text', text: 'paid' }] };
  }, { action: 'submit_payment', tenant: () => 'acme' });
  const args = { cents: 500, operation_id: 'pay-0001-abcd' };
  assert.equal((await pay(args))._meta[LEDGER_META_KEY].status, 'unknown');
  now += 3_600_000; // an hour later, after the TTL would have passed had it applied: still unknown
  assert.equal((await pay(args))._meta[LEDGER_META_KEY].status, 'unknown');
  assert.equal(charges, 1);
  // The operator checks the bank: no such payment. Release it; the next call executes.
  const key = { tenant: 'acme', action: 'submit_payment', operationId: 'pay-0001-abcd' };
  const out = await ledger.release(key, { reason: 'bank statement 2026-11-30 has no such payment (OPS-42)' });
  assert.deepEqual([out.released, out.previousState, out.record.state], [true, 'unknown', 'released']);
  assert.equal((await pay(args)).content[0].text, 'paid');
  assert.equal(charges, 2);
  await assert.rejects(ledger.release(key, { reason: 'again' }), (e) => e instanceof RangeError && e.code === 'resolved' && e.field === 'key' && e.state === 'succeeded');
  assert.equal((await pay(args)).content[0].text, 'paid', 'replayed');
  assert.equal(charges, 2);
});

// ── The failure windows, over real HTTP ──────────────────────────────────────────────────────────────────
let server;
let proxy;
let store;
const clients = [];

before(async () => {
  store = new MemoryLedgerStore();
  const ledger = new OperationLedger({
    store,
    leaseMs: 1_500,
    // The app's reconcile hook: ask the bank whether the payment was booked.
    reconcile: async ({ operationId }) => {
      const booked = server.effects.payments.find((p) => p.operation_id === operationId);
      if (!server.reconcileEnabled) return { status: 'unknown' };
      return booked ? { status: 'succeeded', result: { content: [{ type: 'text', text: `paid ${booked.cents}` }], structuredContent: { paid: booked.cents } } } : { status: 'not_done' };
    },
  });
  server = await startMcpServer({ ledger });
  proxy = await startFaultProxy(server.url);
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy.close();
  await server.close();
});
beforeEach(() => {
  proxy.faults.length = 0;
  proxy.log.length = 0;
  server.reconcileEnabled = false;
});

async function connect(tenant = 'acme') {
  const client = new Client({ name: 'ledger-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: observeFetch(), requestInit: { headers: { authorization: `Bearer ${tenant}` } } }));
  clients.push(client);
  return client;
}
const opId = () => `op-${crypto.randomUUID()}`;
const ticketsFor = (title) => server.effects.tickets.filter((t) => t.title === title);
const ledgerStatus = (r) => r._meta?.[LEDGER_META_KEY]?.status;

test('1. the same tenant, id and payload twice: one ticket, the same answer', async () => {
  const client = await connect();
  const id = opId();
  const a = await client.callTool({ name: 'open_ticket', arguments: { title: 'w1', operation_id: id } });
  const b = await client.callTool({ name: 'open_ticket', arguments: { title: 'w1', operation_id: id } });
  assert.deepEqual(b, a);
  assert.equal(ticketsFor('w1').length, 1);
});

test('2. the same id with changed input: conflict, no second write', async () => {
  const client = await connect();
  const id = opId();
  await client.callTool({ name: 'open_ticket', arguments: { title: 'w2', operation_id: id } });
  const c = await client.callTool({ name: 'open_ticket', arguments: { title: 'w2', priority: 1, operation_id: id } });
  assert.equal(c.isError, true);
  assert.equal(ledgerStatus(c), 'conflict');
  assert.match(c.content[0].text, /already used for a different request/);
  assert.equal(ticketsFor('w2').length, 1);
});

test('3. two identical calls at once: the store\'s claim lets one write; the other hears in_progress', async () => {
  const client = await connect();
  const id = opId();
  const args = { title: 'w3', delayMs: 300, operation_id: id };
  const [a, b] = await Promise.all([client.callTool({ name: 'open_ticket', arguments: args }), client.callTool({ name: 'open_ticket', arguments: args })]);
  const statuses = [a, b].map((r) => ledgerStatus(r) ?? 'ran').sort();
  assert.deepEqual(statuses, ['in_progress', 'ran']);
  assert.equal(ticketsFor('w3').length, 1);
  // With withRetry, the in-progress copy checks back with the same id and gets the first ticket.
  const mcp = withRetry(await connect(), { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 50 } });
  const id2 = opId();
  const args2 = { title: 'w3b', delayMs: 300, operation_id: id2 };
  const [x, y] = await Promise.all([mcp.call({ name: 'open_ticket', arguments: args2 }), mcp.call({ name: 'open_ticket', arguments: args2 })]);
  assert.deepEqual([x.status, y.status], ['succeeded', 'succeeded']);
  assert.deepEqual(x.result.structuredContent, y.result.structuredContent);
  assert.equal(ticketsFor('w3b').length, 1);
  assert.ok([x, y].some((o) => o.attempts[0].outcome.kind === 'ledger' && o.attempts[0].outcome.status === 'in_progress'));
});

test('4. the answer is cut after the ticket was written: withRetry retries with the same id and gets the first ticket', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 50 } });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'w4' } });
  assert.equal(out.safety, 'keyed');
  assert.equal(out.status, 'succeeded');
  assert.equal(out.attempts.length, 2);
  assert.equal(ticketsFor('w4').length, 1);
  assert.equal(out.result.structuredContent.id, ticketsFor('w4')[0].id);
});

test('5. the same id under another tenant: its own operation, never the first tenant\'s result', async () => {
  const acme = await connect('acme');
  const globex = await connect('globex');
  const id = opId();
  const a = await acme.callTool({ name: 'open_ticket', arguments: { title: 'w5', operation_id: id } });
  const g = await globex.callTool({ name: 'open_ticket', arguments: { title: 'w5', operation_id: id } });
  assert.notDeepEqual(g.structuredContent, a.structuredContent, 'globex did not get acme\'s ticket');
  const g2 = await globex.callTool({ name: 'open_ticket', arguments: { title: 'w5-other', operation_id: id } });
  assert.equal(ledgerStatus(g2), 'conflict', 'and globex\'s own use of the id is what it conflicts with');
  assert.deepEqual(ticketsFor('w5').map((t) => t.tenant).sort(), ['acme', 'globex']);
  // No tenant, no claim: nothing runs under anyone's authority.
  const anon = new Client({ name: 'anon', version: '1' });
  await anon.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
  clients.push(anon);
  const anonId = opId();
  const r = await anon.callTool({ name: 'open_ticket', arguments: { title: 'w5-anon', operation_id: anonId } });
  // Refused before any claim: "rejected" (the client reads it as failed — nothing was done).
  assert.deepEqual(r._meta[LEDGER_META_KEY], { status: 'rejected', reason: 'unauthenticated', operationId: anonId });
  assert.equal(ticketsFor('w5-anon').length, 0);
  // Through withRetry the refusal is what it is: failed (nothing was done), not a tool error, not retried.
  const out = await withRetry(anon, { tools: { open_ticket: 'keyed' } }).call({ name: 'open_ticket', arguments: { title: 'w5-anon2' } });
  assert.equal(out.status, 'failed');
  assert.equal(out.attempts.length, 1);
  assert.equal(out.attempts[0].classification.cause, 'ledger_rejected');
  assert.match(out.message, /the server refused it: before running it/);
  assert.equal(ticketsFor('w5-anon2').length, 0);
});

test('6. a downstream timeout after submission is unknown; a retry reconciles through the hook, or stays unknown without one', async () => {
  const client = await connect();
  const id = opId();
  server.effects.downstream.timeoutNext = 1;
  const first = await client.callTool({ name: 'submit_payment', arguments: { cents: 500, operation_id: id } });
  assert.equal(ledgerStatus(first), 'unknown');
  assert.match(first.content[0].text, /may or may not have taken effect/);
  const stillUnknown = await client.callTool({ name: 'submit_payment', arguments: { cents: 500, operation_id: id } });
  assert.equal(ledgerStatus(stillUnknown), 'unknown', 'the hook cannot tell yet');
  server.reconcileEnabled = true;
  const reconciled = await client.callTool({ name: 'submit_payment', arguments: { cents: 500, operation_id: id } });
  assert.deepEqual(reconciled.structuredContent, { paid: 500 });
  assert.equal(server.effects.payments.filter((p) => p.operation_id === id).length, 1, 'paid once');
  // Through withRetry: an unknown ledger answer is reported as unknown, never as success or failure.
  const mcp = withRetry(client, { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 20, maxAttempts: 2 } });
  server.reconcileEnabled = false;
  server.effects.downstream.timeoutNext = 1;
  const out = await mcp.call({ name: 'submit_payment', arguments: { cents: 700 } });
  assert.equal(out.status, 'unknown');
  assert.deepEqual(out.attempts.map((a) => a.outcome.kind === 'ledger' ? a.outcome.status : a.outcome.kind), ['unknown', 'unknown']);
});

test('7. a keyed write whose answer is cut on every attempt ends succeeded through the status tool, with one effect', async () => {
  const events = [];
  const mcp = withRetry(await connect(), { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 50 }, onEvent: (e) => events.push(e) });
  proxy.faults.push('cut', 'cut', 'cut'); // every attempt of the write (maxAttempts 3); the status query passes
  const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'w7' } });
  assert.equal(out.status, 'succeeded', out.message);
  assert.equal(out.reason, 'resolved_by_status');
  assert.equal(out.attempts.length, 3, 'three attempts of the write, all cut');
  assert.equal(ticketsFor('w7').length, 1, 'one ticket');
  assert.equal(out.result.structuredContent.id, ticketsFor('w7')[0].id, 'the recorded result');
  assert.deepEqual(events.filter((e) => e.type === 'resolve').map((e) => e.answer), ['succeeded']);
  assert.deepEqual(await mcp.pendingOperations(), [], 'the journal knows it is done');
  // Without the status tool the same cuts end unknown: the resolution is what turned it into a known outcome.
  const blind = withRetry(await connect(), { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 50 }, statusTool: false });
  proxy.faults.push('cut', 'cut', 'cut');
  const unknown = await blind.call({ name: 'open_ticket', arguments: { title: 'w7b' } });
  assert.equal(unknown.status, 'unknown');
  assert.equal(ticketsFor('w7b').length, 1);
});

test('8. a write still running when the client gives up ends pending; resolve() later returns its result; reconcile() finds nothing left', async () => {
  const mcp = withRetry(await connect(), { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 50, attemptTimeoutMs: 300, totalTimeoutMs: 700 } });
  const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'w8', delayMs: 1_200 } });
  assert.equal(out.status, 'pending', out.message);
  assert.ok(out.operationId);
  assert.deepEqual((await mcp.pendingOperations()).map((e) => e.operationId), [out.operationId]);
  await new Promise((r) => setTimeout(r, 1_000)); // the handler finishes
  const later = await mcp.resolve(out.operationId);
  assert.equal(later.status, 'succeeded', later.message);
  assert.equal(later.result.structuredContent.id, ticketsFor('w8')[0].id);
  assert.equal(ticketsFor('w8').length, 1, 'nothing was sent again to find out');
  assert.deepEqual(await mcp.reconcile(), [], 'nothing left to reconcile');
  await assert.rejects(mcp.resolve('op-not-journaled-1'), (e) => e instanceof RangeError && e.code === 'not_pending');
  // Without a status tool to ask, resolve() says so: still unknown, never a guess.
  const blind = withRetry(await connect(), { trusted: true, statusTool: false });
  const notAsked = await blind.resolve(out.operationId, { tool: 'open_ticket' });
  assert.deepEqual([notAsked.status, notAsked.reason], ['unknown', 'status_not_asked']);
  assert.match(notAsked.message, /could not be asked/);
});

test('9. the status tool answers for the caller\'s tenant only: another tenant\'s id reads as never seen', async () => {
  const acme = await connect('acme');
  const globex = await connect('globex');
  const id = opId();
  await acme.callTool({ name: 'open_ticket', arguments: { title: 'w9', operation_id: id } });
  const ask = (c, operationId) => c.callTool({ name: 'operation_status', arguments: { action: 'open_ticket', operation_id: operationId } });
  const mine = await ask(acme, id);
  assert.equal(mine.structuredContent.status, 'succeeded');
  assert.equal(mine.structuredContent.result.structuredContent.id, ticketsFor('w9')[0].id);
  const theirs = await ask(globex, id);
  const never = await ask(globex, opId());
  assert.equal(theirs.structuredContent.status, 'not_found');
  assert.deepEqual({ ...theirs.structuredContent, operation_id: 'x' }, { ...never.structuredContent, operation_id: 'x' }, 'indistinguishable from an id never used');
  assert.equal(theirs.content[0].text.replace(id, 'X'), never.content[0].text.replace(never.structuredContent.operation_id, 'X'));
  const tools = (await acme.listTools()).tools;
  assert.deepEqual(tools.find((t) => t.name === 'operation_status')?.annotations?.readOnlyHint, true);
  // No tenant, or a malformed id: refused, nothing looked up.
  const anonymous = new Client({ name: 'anon', version: '1' });
  await anonymous.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
  clients.push(anonymous);
  assert.equal((await ask(anonymous, id)).isError, true);
  assert.equal((await ask(acme, 'bad id')).isError, true);
});

test('10. idFromIntent: the model never sees or mints the operation id; the same tool call (intent) reuses it, one ticket', async () => {
  // No breaker: six failures in a row would open it, and this test is about the id.
  const mcp = withRetry(await connect(), { trusted: true, idFromIntent: true, policy: { baseDelayMs: 10, maxDelayMs: 50, breaker: false } });
  const tools = await mcp.listToolsForModel();
  const open = tools.find((t) => t.name === 'open_ticket');
  assert.equal(Object.hasOwn(open.inputSchema.properties, 'operation_id'), false, 'hidden from the model');
  assert.equal((open.inputSchema.required ?? []).includes('operation_id'), false);
  assert.match(open.description, /operation_status/);
  assert.ok(tools.find((t) => t.name === 'operation_status').inputSchema.properties.operation_id, 'the status tool keeps its argument');
  // The model's answer was lost; it calls the same tool call again, and invents an id of its own: ignored.
  proxy.faults.push('cut', 'cut', 'cut', 'cut', 'cut', 'cut'); // every attempt of the first call, and of its status query
  const first = await mcp.call({ name: 'open_ticket', arguments: { title: 'w10' } }, { intent: 'toolcall-abc' });
  assert.notEqual(first.status, 'succeeded');
  const again = await mcp.call({ name: 'open_ticket', arguments: { title: 'w10', operation_id: 'model-made-up-0001' } }, { intent: 'toolcall-abc' });
  assert.equal(again.operationId, first.operationId, 'the same intent, the same id');
  assert.equal(again.status, 'succeeded');
  assert.equal(ticketsFor('w10').length, 1, 'one ticket');
  // Without the option the tools are as listed.
  const plain = withRetry(await connect(), { trusted: true });
  assert.ok((await plain.listToolsForModel()).find((t) => t.name === 'open_ticket').inputSchema.properties.operation_id);
});

test('10b. idFromIntent: a new tool call that carries the open call\'s id back goes out under it — one ticket; a resolved one is not taken', async () => {
  const mcp = withRetry(await connect(), { trusted: true, idFromIntent: true, policy: { baseDelayMs: 10, maxDelayMs: 50, breaker: false } });
  proxy.faults.push('cut', 'cut', 'cut', 'cut', 'cut', 'cut'); // every attempt of the first call, and of its status query
  const first = await mcp.call({ name: 'open_ticket', arguments: { title: 'w10b' } }, { intent: 'toolcall-b1' });
  assert.equal(first.status, 'unknown', JSON.stringify(first));
  assert.match(first.message, new RegExp(`call again with the same operation_id ${first.operationId}`));
  assert.equal(ticketsFor('w10b').length, 1, 'the first call ran');
  // The model does what it was told, in a new tool call (a new intent): before, a new id was minted — two tickets.
  const again = await mcp.call({ name: 'open_ticket', arguments: { title: 'w10b', operation_id: first.operationId } }, { intent: 'toolcall-b2' });
  assert.equal(again.operationId, first.operationId);
  assert.equal(again.status, 'succeeded');
  assert.equal(ticketsFor('w10b').length, 1, 'one ticket: the server answered with the first outcome');
  // Resolved now: the same id in yet another tool call is a new operation (the journal no longer holds it open).
  const third = await mcp.call({ name: 'open_ticket', arguments: { title: 'w10b', operation_id: first.operationId } }, { intent: 'toolcall-b3' });
  assert.notEqual(third.operationId, first.operationId);
  assert.equal(ticketsFor('w10b').length, 2);
  // An id the journal holds open for another tool is not taken under idFromIntent; without it, refused by name
  // (sent, the other tool's outcome would settle open_ticket's entry), nothing sent.
  proxy.faults.push('cut', 'cut', 'cut', 'cut', 'cut', 'cut');
  const open = await mcp.call({ name: 'open_ticket', arguments: { title: 'w10e' } }, { intent: 'toolcall-b4' });
  assert.equal(open.status, 'unknown');
  const before = server.effects.assignAttempts;
  const assign = await mcp.call({ name: 'assign_ticket_once', arguments: { user: 'nobody', operation_id: open.operationId } }, { intent: 'toolcall-b5' });
  assert.notEqual(assign.operationId, open.operationId);
  const plain = withRetry(await connect(), { trusted: true, journal: mcp.journal });
  const sent = proxy.log.length;
  await assert.rejects(plain.call({ name: 'assign_ticket_once', arguments: { user: 'nobody', operation_id: open.operationId } }), (e) => e instanceof RangeError && e.code === 'operation_id_reused' && e.field === 'operation_id');
  assert.equal(proxy.log.slice(sent).filter((l) => l.method === 'tools/call').length, 0, 'nothing sent');
  assert.equal(server.effects.assignAttempts, before + 1, 'only the idFromIntent call ran');
  assert.equal((await mcp.journal.get(open.operationId)).state, 'unknown', 'open_ticket\'s entry is still open');
});

test('validation failures run nothing and store nothing; recorded failures are replayed', async () => {
  const client = await connect();
  const before = store.size;
  const bad = await client.callTool({ name: 'open_ticket', arguments: { title: 'v', operation_id: 'bad id!' } });
  assert.deepEqual(bad._meta[LEDGER_META_KEY], { status: 'rejected', reason: 'invalid_operation_id' });
  const emptyId = opId();
  const empty = await client.callTool({ name: 'open_ticket', arguments: { title: '   ', operation_id: emptyId } });
  assert.equal(empty.isError, true);
  assert.match(empty.content[0].text, /title must not be empty/);
  assert.deepEqual(empty._meta[LEDGER_META_KEY], { status: 'rejected', reason: 'invalid_input', operationId: emptyId });
  assert.equal(store.size, before, 'nothing stored');
  const id = opId();
  const attempts = server.effects.assignAttempts;
  const f1 = await client.callTool({ name: 'assign_ticket_once', arguments: { user: 'nobody', operation_id: id } });
  const f2 = await client.callTool({ name: 'assign_ticket_once', arguments: { user: 'nobody', operation_id: id } });
  assert.equal(f1.isError, true);
  assert.deepEqual(f2, f1, 'the recorded failure is replayed');
  assert.equal(server.effects.assignAttempts, attempts + 1);
});

test('a randomized run: 200 fault schedules, withRetry on the client, zero duplicate writes, every ambiguous call unknown or replayed', async () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  const faultsPool = ['pass', 'cut', 'drop', 'reset', { status: 503 }, { status: 429 }, { status: 502 }];
  const mcp = withRetry(await connect('fuzz'), { trusted: true, policy: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 4, breaker: false, budget: false }, seed: 99 });
  const summary = { succeeded: 0, unknown: 0, pending: 0, failed: 0, concurrent: 0 };
  for (let i = 0; i < 200; i++) {
    const title = `fuzz-${i}`;
    const n = 1 + Math.floor(rnd() * 4);
    for (let k = 0; k < n; k++) proxy.faults.push(faultsPool[Math.floor(rnd() * faultsPool.length)]);
    const concurrent = rnd() < 0.2;
    const operation_id = opId();
    const calls = concurrent
      ? [mcp.call({ name: 'open_ticket', arguments: { title, operation_id } }), mcp.call({ name: 'open_ticket', arguments: { title, operation_id } })]
      : [mcp.call({ name: 'open_ticket', arguments: { title } })];
    if (concurrent) summary.concurrent++;
    const outs = await Promise.all(calls);
    proxy.faults.length = 0;
    const written = ticketsFor(title);
    assert.ok(written.length <= 1, `schedule ${i}: ${written.length} tickets`);
    for (const out of outs) {
      summary[out.status]++;
      assert.ok(['succeeded', 'unknown', 'pending', 'failed'].includes(out.status), out.status);
      if (out.status === 'succeeded') assert.equal(out.result.structuredContent.id, written[0]?.id, `schedule ${i}: a success names the one ticket`);
      if (out.status === 'failed') {
        // "failed" must mean definitely not done: no attempt may have been delivered.
        assert.ok(out.attempts.every((a) => a.classification.delivery === 'not_processed'), `schedule ${i}: failed after a possible delivery`);
      }
      if (written.length === 1 && out.status !== 'succeeded') {
        assert.ok(['unknown', 'pending'].includes(out.status), `schedule ${i}: a written ticket reported as ${out.status}`);
      }
    }
  }
  assert.ok(summary.succeeded > 100, JSON.stringify(summary));
  console.log(`randomized run: ${JSON.stringify(summary)}`);
});
