// A claim's owner that cannot know it lost the claim: a process paused past its lease (SIGSTOP on a real
// child process), a clock behind by more than a third of the lease, a renewal that never answers. On real
// stores: a SQLite file shared by two processes (or two connections), the memory store for the hung renewal.
// Postgres runs the skewed-clock case in postgres.test.mjs.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import * as pkg from '../../pkg/node.js';
import { runSkewCase } from '../support/ledger-fence-case.mjs';

const { MemoryLedgerStore, OperationLedger, SqliteLedgerStore, claimOf, withIdempotency } = pkg;
const here = dirname(fileURLToPath(import.meta.url));
const PKG = join(here, '..', '..', 'pkg');
const CHILD = join(here, '..', 'support', 'ledger-pause-child.mjs');
const META = 'dev.mcp-retry-policy/ledger';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (r) => r?.content?.[0]?.text;

function sqliteFile() {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-fence-'));
  const file = join(dir, 'ledger.db');
  const dbs = [];
  const open = () => {
    const db = new Database(file);
    db.pragma('busy_timeout = 5000');
    db.exec('CREATE TABLE IF NOT EXISTS effects (op TEXT NOT NULL, by TEXT NOT NULL)');
    dbs.push(db);
    return db;
  };
  return { file, open, close: () => { for (const db of dbs) db.close(); rmSync(dir, { recursive: true, force: true }); } };
}

/** The next message from `child` that `pick` accepts. */
function next(child, pick) {
  return new Promise((resolve, reject) => {
    const on = (m) => {
      if (!pick(m)) return;
      child.off('message', on);
      child.off('exit', gone);
      resolve(m);
    };
    const gone = (code) => reject(new Error(`server A exited (${code})`));
    child.on('message', on);
    child.once('exit', gone);
  });
}

/** Resolves once process `pid` is stopped (its state in /proc: `T`). */
async function stopped(pid) {
  for (;;) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'T') return;
    await sleep(5);
  }
}

/**
 * The paused-process case: server A (a child process) claims the operation and its handler is paused
 * (SIGSTOP) before committing; a retry reaches server B (this process, same SQLite file), which answers in
 * progress until A's lease ends on its clock, then — its reconcile hook finding nothing downstream — runs it.
 * Only after B has answered is A resumed (SIGCONT). Resolves to the effects written and both answers.
 */
async function pausedCase(mode) {
  const sq = sqliteFile();
  const db = sq.open();
  const child = fork(CHILD, [PKG, sq.file, '1500', mode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const events = [];
  child.on('message', (m) => m.event && events.push(m.event));
  try {
    await next(child, (m) => m.ready);
    const who = (op) => db.prepare('SELECT by FROM effects WHERE op = ?').get(op)?.by;
    const b = new OperationLedger({
      store: new SqliteLedgerStore(db),
      leaseMs: 1500,
      reconcile: async ({ operationId }) => (who(operationId) ? { status: 'succeeded', result: { content: [{ type: 'text', text: who(operationId) }] } } : { status: 'not_done' }),
    });
    const toolB = withIdempotency(b, async ({ operation_id: op }, extra) => {
      db.prepare('INSERT INTO effects (op, by) VALUES (?, ?)').run(op, 'B'); // B is the live owner here
      return { content: [{ type: 'text', text: 'B' }] };
    }, { action: 'transfer', tenant: () => 'org-1' });
    const op = `op-${crypto.randomUUID()}`;
    const answered = next(child, (m) => m.answer);
    child.send({ call: op });
    await stopped(child.pid); // A claimed it and its handler is paused
    let answerB;
    let rounds = 0;
    for (; rounds < 100; rounds++) {
      answerB = await toolB({ operation_id: op }, {});
      const meta = answerB?._meta?.[META];
      if (meta?.status !== 'in_progress') break;
      await sleep(Math.max(1, meta.retryAfterMs));
    }
    process.kill(child.pid, 'SIGCONT'); // resumed only after B has taken over and answered
    const { answer: answerA } = await answered;
    const effects = db.prepare('SELECT by FROM effects WHERE op = ? ORDER BY rowid').all(op).map((r) => r.by);
    return { effects, a: { text: text(answerA), status: answerA?._meta?.[META]?.status }, b: { text: text(answerB), status: answerB?._meta?.[META]?.status }, rounds, events };
  } finally {
    child.kill('SIGKILL');
    await once(child, 'exit').catch(() => {});
    sq.close();
  }
}

test('a paused process (SIGSTOP past its lease) whose handler checks its signal right before committing: it does not commit after B took over', { timeout: 30_000 }, async () => {
  const out = await pausedCase('signal');
  const detail = JSON.stringify(out);
  assert.equal(out.b.text, 'B', `B ran it: ${detail}`);
  assert.deepEqual(out.effects, ['B'], `one commit: ${detail}`);
  // A's handler stopped at its signal: it cannot say what it did before, so its caller hears unknown — never a second commit.
  assert.equal(out.a.status, 'unknown', detail);
  assert.ok(out.events.some((e) => e.type === 'lease_lost' && e.reason === 'not_renewed'), `told on the local clock: ${detail}`);
});

test('a paused process whose handler commits through claim.transaction: the fence refuses its commit, and its caller gets B\'s result', { timeout: 30_000 }, async () => {
  const out = await pausedCase('transaction');
  const detail = JSON.stringify(out);
  assert.deepEqual(out.effects, ['B'], `one commit: ${detail}`);
  assert.deepEqual([out.a.text, out.b.text], ['B', 'B'], `both callers get the one result: ${detail}`);
});

test('a clock 1,100 ms behind on a 1.5 s lease (past the bound of a third) on a SQLite file: the fenced transaction refuses the stale run', { timeout: 30_000 }, async () => {
  const sq = sqliteFile();
  const reader = sq.open();
  try {
    const out = await runSkewCase(pkg, {
      make: async ({ a, b }) => [a, b].map((o) => new OperationLedger({ store: new SqliteLedgerStore(sq.open()), ...o })),
      write: (tx, op, by) => tx.prepare('INSERT INTO effects (op, by) VALUES (?, ?)').run(op, by),
      direct: (op, by) => reader.prepare('INSERT INTO effects (op, by) VALUES (?, ?)').run(op, by),
      read: (op) => reader.prepare('SELECT by FROM effects WHERE op = ?').get(op)?.by,
      count: (op) => reader.prepare('SELECT by FROM effects WHERE op = ? ORDER BY rowid').all(op).map((r) => r.by),
    });
    const detail = JSON.stringify(out);
    assert.deepEqual(out.effects, ['B'], `one commit: ${detail}`);
    assert.deepEqual([out.a.text, out.b.text], ['B', 'B'], `both callers get the one result: ${detail}`);
  } finally {
    sq.close();
  }
});

test('the signal reads the monotonic clock: a handler whose event loop was blocked past the give-up point reads it aborted before any timer ran', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore(), leaseMs: 300 });
  let seen;
  const h = withIdempotency(ledger, async (_args, extra) => {
    const before = claimOf(extra).signal.aborted;
    const until = performance.now() + 250; // past the give-up point (200 ms), no timer can run meanwhile
    while (performance.now() < until) { /* blocked, as a paused process is */ }
    seen = [before, claimOf(extra).signal.aborted, claimOf(extra).signal.reason?.reason];
    return { content: [] };
  }, { action: 'w', tenant: () => 't' });
  await h({ operation_id: `op-${crypto.randomUUID()}` }, {});
  assert.deepEqual(seen, [false, true, 'not_renewed']);
});

test('a renewal that never answers (a hung store) does not hold the finished handler\'s answer: it comes at the give-up point, recorded', { timeout: 20_000 }, async () => {
  const inner = new MemoryLedgerStore();
  let renewalSent;
  const renewing = new Promise((r) => { renewalSent = r; });
  const store = {
    get: (k) => inner.get(k),
    insert: (k, r) => inner.insert(k, r),
    replace: (k, v, r, res) => {
      if (r.state !== 'pending') return inner.replace(k, v, r, res);
      renewalSent();
      return new Promise(() => {}); // never answers
    },
  };
  const events = [];
  const ledger = new OperationLedger({ store, leaseMs: 300, onEvent: (e) => events.push(e) });
  const h = withIdempotency(ledger, async () => {
    await renewing; // ends while the renewal is in flight
    return { content: [{ type: 'text', text: 'done' }] };
  }, { action: 'w', tenant: () => 't' });
  const id = `op-${crypto.randomUUID()}`;
  const alive = setInterval(() => {}, 1_000); // a server's listening socket keeps the process up (the ledger's timers do not)
  const answer = await h({ operation_id: id }, {}).finally(() => clearInterval(alive));
  assert.equal(text(answer), 'done');
  assert.equal((await ledger.status({ tenant: 't', action: 'w', operationId: id })).status, 'succeeded', 'recorded');
  assert.ok(events.some((e) => e.type === 'lease_lost' && e.reason === 'not_renewed'), JSON.stringify(events.map((e) => e.type)));
});

test('claim.transaction while the claim is held: the writes commit once, renewals go on from the version it wrote, the outcome is recorded; a throwing work rolls back', { timeout: 20_000 }, async () => {
  const sq = sqliteFile();
  const alive = setInterval(() => {}, 1_000); // a server's listening socket (the ledger's timers keep nothing up)
  try {
    const db = sq.open();
    const sqlite = new SqliteLedgerStore(db);
    let renewed = 0;
    let wake;
    const store = {
      get: (k) => sqlite.get(k),
      insert: (k, r) => sqlite.insert(k, r),
      replace: async (k, v, r, res) => {
        const ok = await sqlite.replace(k, v, r, res);
        if (r.state === 'pending' && ok) (renewed++, wake?.());
        return ok;
      },
      transaction: (...a) => sqlite.transaction(...a),
    };
    const events = [];
    const ledger = new OperationLedger({ store, leaseMs: 300, onEvent: (e) => events.push(e) });
    const rows = (op) => db.prepare('SELECT by FROM effects WHERE op = ?').all(op).map((r) => r.by);
    const h = withIdempotency(ledger, async ({ operation_id: op, fail }, extra) => {
      const claim = claimOf(extra);
      if (fail) {
        await assert.rejects(claim.transaction((tx) => {
          tx.prepare('INSERT INTO effects (op, by) VALUES (?, ?)').run(op, 'x');
          throw new Error('downstream refused');
        }), /downstream refused/);
        assert.deepEqual(rows(op), [], 'rolled back');
      }
      const n = await claim.transaction((tx) => tx.prepare('INSERT INTO effects (op, by) VALUES (?, ?)').run(op, 'A').changes);
      const after = renewed;
      await new Promise((r) => { wake = () => renewed >= after + 2 && r(); }); // two renewals after the commit
      assert.equal(claim.signal.aborted, false);
      return { content: [{ type: 'text', text: `wrote ${n}` }] };
    }, { action: 'w', tenant: () => 't' });
    for (const fail of [false, true]) {
      const op = `op-${crypto.randomUUID()}`;
      const out = await h({ operation_id: op, fail }, {});
      assert.equal(text(out), 'wrote 1');
      assert.deepEqual(rows(op), ['A']);
      assert.equal((await ledger.status({ tenant: 't', action: 'w', operationId: op })).status, 'succeeded');
    }
    assert.deepEqual(events.map((e) => e.type), [], 'no lease lost, no late finish');
    // A store without transactions: a typed error, not a crash.
    const mem = withIdempotency(new OperationLedger({ store: new MemoryLedgerStore() }), async (_a, extra) => {
      await assert.rejects(claimOf(extra).transaction(() => {}), (e) => e instanceof TypeError && e.code === 'not_transactional' && e.field === 'store');
      return { content: [] };
    }, { action: 'w', tenant: () => 't' });
    await mem({ operation_id: `op-${crypto.randomUUID()}` }, {});
  } finally {
    clearInterval(alive);
    sq.close();
  }
});

test('a clock that stops giving numbers mid-run: the transaction is refused, the hold ends and told, the answer comes', { timeout: 20_000 }, async () => {
  const sq = sqliteFile();
  try {
    const db = sq.open();
    const store = new SqliteLedgerStore(db);
    const events = [];
    let broken = false;
    const ledger = new OperationLedger({ store, leaseMs: 3_000, now: () => (broken ? Number.NaN : Date.now()), onEvent: (e) => events.push(e) });
    const seen = [];
    const h = withIdempotency(ledger, async ({ operation_id: op }, extra) => {
      const claim = claimOf(extra);
      broken = true; // from here, the ledger's clock answers NaN
      await assert.rejects(claim.transaction((tx) => tx.prepare('INSERT INTO effects (op, by) VALUES (?, ?)').run(op, 'A')), (e) => (seen.push(e), true));
      // A second transaction does not wait on a driver that will never answer.
      await assert.rejects(claim.transaction(() => {}), (e) => (seen.push(e), true));
      assert.equal(claim.signal.aborted, true, 'the hold is no longer kept');
      broken = false;
      return { content: [{ type: 'text', text: 'done' }] };
    }, { action: 'w', tenant: () => 't' });
    const out = await h({ operation_id: `op-${crypto.randomUUID()}` }, {});
    assert.ok(out, 'the call answered');
    assert.equal(db.prepare('SELECT COUNT(*) AS n FROM effects').get().n, 0, 'nothing committed');
    assert.ok(seen.length === 2 && seen.every((e) => e instanceof Error), seen.map(String).join('; '));
    assert.ok(events.some((e) => e.type === 'store_error' && e.during === 'renew'), events.map((e) => e.type).join(' '));
    assert.ok(events.some((e) => e.type === 'lease_lost' && e.reason === 'not_renewed'));
  } finally {
    sq.close();
  }
});
