// The soak: one `withRetry` wrapper for a long life, against a real server in process (the MCP TypeScript SDK's
// McpServer and Client over the SDK's InMemoryTransport). 100,000 keyed calls, each with its own intent, through
// the default journal, then 200,000 reads: the heap after a full collection before and after each phase, the
// journal's entries, and every process warning. Needs `--expose-gc` (run.mjs starts it in a child with it).
// Nothing here asserts: the numbers go in the table (tests/js/long-life.test.mjs checks a bounded slice).
//
//   node --expose-gc benches/js/soak.mjs [--keyed=100000] [--reads=200000] [--max-settled=N]   (JSON on stdout)
//   SOAK_PKG=/path/to/pkg/client.node.js: another build of the package (to measure a change against it).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

const self = fileURLToPath(import.meta.url);
const MB = 2 ** 20;

async function settledHeap() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external };
}

/** The soak itself (in a process started with --expose-gc): `{ keyed, reads }`, each with heap before/after. */
export async function soak({ keyed = 100_000, reads = 200_000, pkg, maxSettled } = {}) {
  if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
  const { withRetry, MemoryJournal } = await import(pkg ? pathToFileURL(pkg).href : '../../pkg/client.node.js');
  const warnings = [];
  process.on('warning', (w) => warnings.push(`${w.name}: ${w.message}`.slice(0, 200)));
  const server = new McpServer({ name: 'soak', version: '1.0.0' });
  let booked = 0;
  server.registerTool('book', {
    description: 'Books one seat; repeats with the same operation_id book nothing more.',
    inputSchema: { seat: z.number(), operation_id: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  }, async ({ seat }) => {
    booked++;
    return { content: [{ type: 'text', text: `booked ${seat}` }] };
  });
  server.registerTool('lookup', {
    description: 'Reads a seat.',
    inputSchema: { seat: z.number() },
    annotations: { readOnlyHint: true },
  }, async ({ seat }) => ({ content: [{ type: 'text', text: `seat ${seat} free` }] }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'soak', version: '1.0.0' });
  await client.connect(clientSide);
  const wrapped = withRetry(client, { trusted: true, ...(maxSettled !== undefined ? { journal: new MemoryJournal({ maxSettled }) } : {}) });
  const run = async (n, one) => {
    for (let i = 0; i < n; i++) {
      const o = await one(i);
      if (o.status !== 'succeeded') throw new Error(`soak call ${i} ended ${o.status} (${o.reason})`);
    }
  };
  const book = (i) => wrapped.call({ name: 'book', arguments: { seat: i } }, { intent: `soak-${i}` });
  const lookup = (i) => wrapped.call({ name: 'lookup', arguments: { seat: i } });
  const phase = async (n, one, from) => {
    await run(2_000, (i) => one(from + i)); // warm-up: JIT, the tools/list cache, the journal's first entries
    const before = await settledHeap();
    const t = performance.now();
    await run(n, (i) => one(from + 2_000 + i));
    const ms = performance.now() - t;
    const after = await settledHeap();
    return {
      calls: n,
      heapBeforeMB: before.heap / MB,
      heapAfterMB: after.heap / MB,
      growthMB: (after.heap - before.heap) / MB,
      externalGrowthMB: (after.external - before.external) / MB,
      usPerCall: (ms * 1000) / n,
    };
  };
  const k = await phase(keyed, book, 0);
  k.journalEntries = wrapped.journal.stats?.().entries ?? null; // a build without stats(): not counted
  const r = await phase(reads, lookup, 0);
  await client.close();
  await server.close();
  return { keyed: k, reads: r, booked, warnings };
}

/** Runs the soak in a child with --expose-gc; the README's table. */
export function soakSection(say, fmt) {
  const out = execFileSync(process.execPath, ['--expose-gc', self], { encoding: 'utf8', maxBuffer: 1 << 20 });
  const r = JSON.parse(out.trim().split('\n').pop());
  say();
  say('## 11. A long life: one wrapper, a real server in process (SDK McpServer over InMemoryTransport); heap after a full GC');
  say();
  say('| phase | calls | heap before | heap after | growth | µs/call | journal entries after |');
  say('|---|---:|---:|---:|---:|---:|---:|');
  const row = (label, p, entries) =>
    say(`| ${label} | ${p.calls.toLocaleString('en')} | ${fmt(p.heapBeforeMB, 1)} MB | ${fmt(p.heapAfterMB, 1)} MB | ${fmt(p.growthMB, 1)} MB | ${fmt(p.usPerCall, 0)} | ${entries} |`);
  row('keyed calls, each its own intent (default `MemoryJournal`)', r.keyed, r.keyed.journalEntries?.toLocaleString('en') ?? '–');
  row('reads (`readOnlyHint`)', r.reads, '–');
  say();
  say(`Process warnings during the soak: ${r.warnings.length}.`);
  return r;
}

if (process.argv[1] === self) {
  const arg = (name, d) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? d);
  const max = process.argv.find((a) => a.startsWith('--max-settled='));
  const r = await soak({ keyed: arg('keyed', 100_000), reads: arg('reads', 200_000), pkg: process.env.SOAK_PKG, ...(max ? { maxSettled: arg('max-settled') } : {}) });
  console.log(JSON.stringify(r));
}
