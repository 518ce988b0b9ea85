// A stdio MCP server whose process dies (kill -9) or hangs (SIGSTOP: alive, silent) while calls are in flight:
// withRetry starts one fresh process from its `transport` factory for all of them, re-sends the read-only and
// keyed calls there (the keyed one with its operation id: the ledger, a SQLite file, replays its first outcome),
// ends the unsafe one `unknown`, and later calls work. A slow tool on a live process is never restarted. Real
// servers, started by the test as child processes: the TypeScript SDK's `McpServer` over `StdioServerTransport`
// (tests/support/stdio-server.mjs) and the Python SDK's `MCPServer` over stdio (tests/support/stdio_server.py).
// Every step waits for an event (a tool's "blocked" line on the server's stderr, a call's outcome), never a timer.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { withRetry } from '../../pkg/node.js';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const SERVERS = {
  ts: { command: process.execPath, args: [here('../support/stdio-server.mjs')], keyed: true },
  python: { command: here('../zoo/.venv/bin/python'), args: [here('../support/stdio_server.py')], keyed: false },
};

const started = []; // every process any test started: none outlives the file
const dirs = [];
after(() => {
  for (const p of started) {
    // The transport's pid is null once its child closed: only a child of ours still running is signalled.
    const pid = p.transport.pid;
    if (pid === null) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** One server under test: its SQLite file, the processes started for it, and each one's stderr events. */
const SDKS = { v1: { Client, StdioClientTransport }, v2: { Client: ClientV2, StdioClientTransport: StdioClientTransportV2 } };

function rig(kind, sdk = 'v1') {
  const { command, args } = SERVERS[kind];
  const { StdioClientTransport } = SDKS[sdk];
  const dir = mkdtempSync(join(tmpdir(), 'stdio-restart-'));
  dirs.push(dir);
  const db = join(dir, 'server.db');
  function start(block) {
    const transport = new StdioClientTransport({ command, args, env: { DB: db, BLOCK: block ? '1' : '0' }, stderr: 'pipe' });
    const proc = { transport, events: [], bus: new EventEmitter() };
    createInterface({ input: transport.stderr }).on('line', (line) => {
      let ev;
      try {
        ev = JSON.parse(line);
      } catch {
        return; // a log line of the SDK's
      }
      proc.events.push(ev);
      proc.bus.emit('event', ev);
    });
    started.push(proc);
    return proc;
  }
  /** Resolves once `proc` has written `n` events with `ev`. */
  function until(proc, ev, n = 1) {
    return new Promise((resolve) => {
      const check = () => {
        if (proc.events.filter((e) => e.ev === ev).length < n) return;
        proc.bus.off('event', check);
        resolve();
      };
      proc.bus.on('event', check);
      check();
    });
  }
  /** How many times each tool did its work, across every process that served the file. */
  function effects() {
    const conn = new Database(db, { readonly: true });
    try {
      return Object.fromEntries(conn.prepare('SELECT tool, COUNT(*) AS n FROM effects GROUP BY tool').all().map((r) => [r.tool, r.n]));
    } finally {
      conn.close();
    }
  }
  return { start, until, effects };
}

/** A client connected to a first process whose tools block; fresh ones (which do not block) from the factory. */
async function setUp(kind, policy, sdk = 'v1', { list = true } = {}) {
  const r = rig(kind, sdk);
  const first = r.start(true);
  const client = new SDKS[sdk].Client({ name: 'stdio-restart-test', version: '1.0.0' });
  await client.connect(first.transport);
  const pid = first.transport.pid;
  const fresh = [];
  const mcp = withRetry(client, {
    transport: () => {
      const p = r.start(false);
      fresh.push(p);
      return p.transport;
    },
    trusted: true,
    policy: { baseDelayMs: 10, maxDelayMs: 50, ...policy },
  });
  if (list) await mcp.refreshTools();
  return { r, first, pid, fresh, client, mcp };
}

const pidOf = (out) => Number(/pid (\d+)/.exec(out.result?.content?.[0]?.text ?? '')?.[1]);

/** Sends a read (twice), the keyed write where the server has one, and the unsafe write, all at once. */
function sendAll(kind, mcp) {
  return {
    reads: [mcp.call({ name: 'lookup', arguments: { q: 'a' } }), mcp.call({ name: 'lookup', arguments: { q: 'b' } })],
    keyed: SERVERS[kind].keyed ? mcp.call({ name: 'open_ticket', arguments: { title: 'printer on fire' } }) : undefined,
    unsafe: mcp.call({ name: 'create_note', arguments: { body: 'n1' } }),
    count: SERVERS[kind].keyed ? 4 : 3,
  };
}

/** What must hold once the lost process's calls ended: one fresh process served every re-send. */
async function checkRecovered(kind, s, sent, cause) {
  const { r, fresh, mcp, pid } = s;
  const reads = await Promise.all(sent.reads);
  const unsafe = await sent.unsafe;
  assert.equal(fresh.length, 1, 'exactly one fresh process for every call in flight');
  const freshPid = fresh[0].transport.pid;
  for (const out of reads) {
    assert.equal(out.status, 'succeeded', `${out.reason}: ${out.message}`);
    assert.equal(pidOf(out), freshPid, 'the read was re-sent to the fresh process');
    assert.ok(out.attempts.some((a) => a.classification.cause === cause && a.decision.recover === 'reinitialize'), cause);
  }
  assert.equal(unsafe.status, 'unknown', unsafe.message);
  assert.equal(unsafe.reason, 'unsafe_after_unknown');
  const counts = r.effects();
  assert.equal(counts.create_note, 1, 'the unsafe write was not re-sent');
  if (sent.keyed) {
    const keyed = await sent.keyed;
    assert.equal(keyed.status, 'succeeded', `${keyed.reason}: ${keyed.message}`);
    assert.equal(counts.open_ticket, 1, 'one execution: the fresh process replayed the ledger record');
    assert.equal(pidOf(keyed), pid, 'the answer is the first execution\'s, replayed under the same operation id');
  }
  assert.equal(s.first.transport.pid, null, 'the lost process is gone (its transport closed)');
  // Later calls work, on the same fresh process.
  const later = await mcp.call({ name: 'lookup', arguments: { q: 'later' } });
  assert.equal(later.status, 'succeeded', `${later.reason}: ${later.message}`);
  assert.equal(pidOf(later), freshPid);
  const note = await mcp.call({ name: 'create_note', arguments: { body: 'n2' } });
  assert.equal(note.status, 'succeeded', `${note.reason}: ${note.message}`);
  assert.equal(fresh.length, 1);
  await s.client.close();
}

for (const kind of Object.keys(SERVERS)) {
  test(`${kind}: kill -9 mid-call — one fresh process; reads and the keyed write re-sent and succeeded, unsafe unknown, later calls work`, async () => {
    const s = await setUp(kind, { attemptTimeoutMs: 120_000 });
    const sent = sendAll(kind, s.mcp);
    await s.r.until(s.first, 'blocked', sent.count);
    process.kill(s.pid, 'SIGKILL');
    await checkRecovered(kind, s, sent, 'stdio_process_exited');
  });

  test(`${kind}: SIGSTOP mid-call (alive, silent) — restarted once after the attempt timeout and an unanswered ping; the same ends`, async () => {
    // A short attempt timeout; many attempts and no budget, so that timeouts before the stop (a loaded machine,
    // the process still answering pings) are only retries on the same process, never a restart.
    const s = await setUp(kind, { attemptTimeoutMs: 400, maxAttempts: 20, totalTimeoutMs: 600_000, budget: false, breaker: false });
    const sent = sendAll(kind, s.mcp);
    await s.r.until(s.first, 'blocked', sent.count);
    process.kill(s.pid, 'SIGSTOP');
    await checkRecovered(kind, s, sent, 'stdio_process_unresponsive');
  });
}

test('the v2 SDK client (@modelcontextprotocol/client): kill -9 and SIGSTOP mid-call recover the same way', async () => {
  for (const [signal, cause, policy] of [
    ['SIGKILL', 'stdio_process_exited', { attemptTimeoutMs: 120_000 }],
    ['SIGSTOP', 'stdio_process_unresponsive', { attemptTimeoutMs: 400, maxAttempts: 20, totalTimeoutMs: 600_000, budget: false, breaker: false }],
  ]) {
    const s = await setUp('ts', policy, 'v2');
    const sent = sendAll('ts', s.mcp);
    await s.r.until(s.first, 'blocked', sent.count);
    process.kill(s.pid, signal);
    await checkRecovered('ts', s, sent, cause);
  }
});

test('a slow tool on a live process is not restarted: the attempt timeout, a ping answered, no fresh process', async () => {
  const s = await setUp('ts', { attemptTimeoutMs: 2_000, maxAttempts: 1 });
  const out = await s.mcp.call({ name: 'lookup', arguments: { q: 'slow' } });
  assert.equal(out.status, 'unknown');
  assert.equal(out.reason, 'max_attempts');
  assert.equal(out.attempts.at(-1).classification.cause, 'timeout');
  assert.equal(s.fresh.length, 0, 'no fresh process for a slow tool');
  assert.equal(s.first.transport.pid, s.pid, 'the process still runs');
  await s.client.close();
});

test('a process that exited while idle: the next call, even an unsafe one, goes to one fresh process (nothing was written to the dead one)', async () => {
  const s = await setUp('ts', { attemptTimeoutMs: 120_000 });
  const closed = new Promise((resolve) => (s.client.onclose = resolve));
  process.kill(s.pid, 'SIGKILL');
  await closed; // the SDK saw the process go and dropped its transport
  const [note, read] = await Promise.all([
    s.mcp.call({ name: 'create_note', arguments: { body: 'after' } }),
    s.mcp.call({ name: 'lookup', arguments: { q: 'after' } }),
  ]);
  assert.equal(note.status, 'succeeded', `${note.reason}: ${note.message}`);
  assert.equal(note.attempts[0].classification.cause, 'stdio_process_exited_not_sent');
  assert.equal(note.attempts[0].classification.delivery, 'not_processed');
  assert.equal(read.status, 'succeeded', `${read.reason}: ${read.message}`);
  assert.equal(s.fresh.length, 1, 'one fresh process for both calls');
  assert.equal(s.r.effects().create_note, 1);
  await s.client.close();
});

test('a process that exited before the tool list was read: the list goes to one fresh process, and the keyed write is keyed', async () => {
  const s = await setUp('ts', { attemptTimeoutMs: 120_000 }, 'v1', { list: false });
  const closed = new Promise((resolve) => (s.client.onclose = resolve));
  process.kill(s.pid, 'SIGKILL');
  await closed;
  const out = await s.mcp.call({ name: 'open_ticket', arguments: { title: 'after the crash' } });
  assert.equal(out.safety, 'keyed', 'the tool list was read from the fresh process');
  assert.equal(out.status, 'succeeded', `${out.reason}: ${out.message}`);
  assert.ok(out.operationId);
  assert.equal(s.fresh.length, 1);
  assert.equal(s.r.effects().open_ticket, 1);
  await s.client.close();
});
