// The real peers for the Rust face's tests (tests/rmcp_client.rs): the TypeScript SDK test server, the rmcp
// peer server (tests/peers/rmcp-server, a separate process) and our fault proxy in front of either, all on
// 127.0.0.1. Driven over stdin/stdout, one JSON command a line, one JSON answer a line:
//   {op:'ts'} → {id, url} · {op:'rmcp'} → {id, url} · {op:'rust-server', bin} → {id, url} (examples/rmcp-server) · {op:'postgres'} → {id, connection} · {op:'proxy', target} → {id, url}
//   {op:'faults', proxy, faults:[…]} · {op:'calls', proxy} → {n} · {op:'methods', proxy} → {methods} (every message's, in order) · {op:'effects', server} → {…}
//   {op:'stop', proxy} (its port refuses connections) · {op:'expire', server} (TS: forget every session) · {op:'restart', server} (rmcp: kill -9, start again on
//   the same port and effects file: every session lost) · {op:'close'} (everything down, then exit).
// Ends by itself when stdin closes (the Rust test ended or died).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startMcpServer } from './mcp-server.mjs';
import { startFaultProxy } from './fault-proxy.mjs';
import { startPostgres } from './postgres.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RMCP_BIN = path.join(root, 'tests/peers/rmcp-server/target/release/peers-rmcp-server');
const things = new Map();
let next = 0;
const dir = mkdtempSync(path.join(tmpdir(), 'mrp-rust-'));

async function freePort() {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function startRmcp(port, effects, bin = RMCP_BIN, args = ['--effects', effects]) {
  const child = spawn(bin, ['--port', String(port), ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the rmcp peer server did not start in 10 s')), 10_000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.stdout.on('data', (d) => { if (String(d).includes('listening')) { clearTimeout(timer); resolve(); } });
  });
  return child;
}

function rmcpCounts(effects) {
  let text = '';
  try { text = readFileSync(effects, 'utf8'); } catch { /* no effect yet */ }
  const counts = {};
  const ops = new Set();
  for (const line of text.split('\n').filter(Boolean)) {
    const e = JSON.parse(line);
    counts[e.tool] = (counts[e.tool] ?? 0) + 1;
    if (e.op) ops.add(e.op);
  }
  return { counts, operationIds: ops.size };
}

async function handle(c) {
  switch (c.op) {
    case 'ts': {
      const s = await startMcpServer();
      const id = `s${next++}`;
      things.set(id, { kind: 'ts', s, close: s.close });
      return { id, url: s.url };
    }
    case 'rmcp': {
      const port = await freePort();
      const effects = path.join(dir, `effects-${next}.jsonl`);
      const t = { kind: 'rmcp', port, effects, child: await startRmcp(port, effects) };
      t.close = async () => t.child.kill('SIGKILL');
      const id = `s${next++}`;
      things.set(id, t);
      return { id, url: `http://127.0.0.1:${port}/mcp` };
    }
    case 'rust-server': {
      // The crate's own examples/rmcp-server (with_idempotency over SQLite), built by cargo test --examples.
      const port = await freePort();
      const args = ['--ledger', path.join(dir, `ledger-${next}.db`), '--seconds', '120'];
      const t = { kind: 'rust', port, child: await startRmcp(port, undefined, c.bin, args) };
      t.close = async () => t.child.kill('SIGKILL');
      const id = `s${next++}`;
      things.set(id, t);
      return { id, url: `http://127.0.0.1:${port}/mcp` };
    }
    case 'postgres': {
      // A throwaway PostgreSQL 15 on 127.0.0.1 (tests/support/postgres.mjs), stopped and deleted at close.
      const pgs = await startPostgres();
      const id = `s${next++}`;
      things.set(id, { kind: 'postgres', close: async () => pgs.stop() });
      return { id, connection: pgs.connection };
    }
    case 'proxy': {
      const p = await startFaultProxy(c.target);
      const id = `p${next++}`;
      things.set(id, { kind: 'proxy', p, close: p.close });
      return { id, url: p.url };
    }
    case 'faults':
      things.get(c.proxy).p.faults.push(...c.faults);
      return {};
    case 'stop': {
      // The proxy stops listening: a connection to its port is refused.
      await things.get(c.proxy).close();
      return {};
    }
    case 'calls':
      return { n: things.get(c.proxy).p.calls().length };
    case 'methods':
      return { methods: things.get(c.proxy).p.log.map((l) => l.method) };
    case 'effects': {
      const t = things.get(c.server);
      if (t.kind === 'rmcp') return rmcpCounts(t.effects);
      const e = t.s.effects;
      return { tickets: e.tickets.length, searches: e.searches, deletes: e.deletes, keyed: e.keyed.size };
    }
    case 'expire':
      things.get(c.server).s.expireSessions();
      return {};
    case 'restart': {
      const t = things.get(c.server);
      t.child.kill('SIGKILL');
      await new Promise((r) => (t.child.exitCode !== null || t.child.signalCode !== null ? r() : t.child.once('exit', r)));
      t.child = await startRmcp(t.port, t.effects);
      return {};
    }
    case 'close':
      for (const t of things.values()) await t.close().catch(() => {});
      things.clear();
      return {};
    default:
      throw new Error(`unknown op ${c.op}`);
  }
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  let out;
  try {
    out = { ok: true, ...(await handle(JSON.parse(line))) };
  } catch (e) {
    out = { ok: false, error: String(e?.message ?? e) };
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
  if (JSON.parse(line).op === 'close') process.exit(0);
});
rl.on('close', async () => {
  for (const t of things.values()) await t.close().catch(() => {});
  process.exit(0);
});
