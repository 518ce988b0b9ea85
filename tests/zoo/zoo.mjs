// The fault zoo: withRetry(real SDK Client) → [nothing | nginx | HAProxy | Envoy-like proxy] → real MCP
// servers (TS SDK 1.32, TS SDK 1.20, Python mcp 2.x), with faults at every point a tools/call can break,
// for every tool safety. Every part is real and started here; the truth (how many times each tool's effect
// happened) is what the servers wrote to the effects file.
//
//   node tests/zoo/zoo.mjs [--slice] [--random N] [--seed S] [--case ID]... [--servers a,b] [--proxies a,b]
//
// Two invariants on every case:
//   1. no duplicate effect: effects ≤ 1 for unsafe and keyed tools (read_only/idempotent repeats counted)
//   2. no status claims more than the facts: succeeded only with its effect (exactly one for unsafe/keyed)
//      and that effect's result; failed only with zero effects; tool_error only if the tool returned isError.
// Prints the matrix (markdown) to stdout and target/zoo/table.md, one line per violation with the case id
// to run it again, and node:test-style "# pass N" / "# fail N". Exits 1 on any violation or broken case.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch } from '../../pkg/node.js';
import { usePidFile, deadPortNumber, until, sleep, stopAll } from './lib/procs.mjs';
import { Effects } from './lib/effects.mjs';
import { SERVERS, startServer } from './lib/servers.mjs';
import { PROXIES, startProxies } from './lib/proxies.mjs';
import { FAULTS, SAFETIES, TOOLS, caseId, parseCaseId, exhaustive, random } from './lib/cases.mjs';
import { renderTable } from './lib/table.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

// ---- options
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const all = (name) => argv.flatMap((a, i) => (a === `--${name}` ? [argv[i + 1]] : []));
const slice = argv.includes('--slice');
const givenCases = all('case');
const seed = Number(opt('seed', Math.floor(Math.random() * 2 ** 31)));
const nRandom = Number(opt('random', slice ? 100 : 1000));
const serverNames = (opt('servers') ?? Object.keys(SERVERS).join(',')).split(',');
const proxyNames = (opt('proxies') ?? Object.keys(PROXIES).join(',')).split(',');
const outDir = path.resolve(root, opt('out', 'target/zoo'));
const SLOW_MS = 1000; // a slow tool: longer than the proxies' read timeout below, shorter than an attempt's timeout
const PROXY_TIMEOUT_MS = 800;
const policy = { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 100, attemptTimeoutMs: 1_500, totalTimeoutMs: 15_000 };
const CASE_LIMIT_MS = 45_000;

// ---- cases
let cases;
if (givenCases.length) {
  cases = givenCases.map(parseCaseId);
} else {
  const specs = SERVERS;
  // The slice: every server × proxy × safety × fault point with the fault on attempt 1, plus 100 random
  // schedules (≈ 2 min). The full run: faults on attempt 1 and on attempts 1–2, plus 1,000 random (≈ 6 min).
  const ex = exhaustive({ servers: serverNames, proxies: proxyNames, specs });
  cases = slice ? ex.filter((c) => c.schedule.length <= 1) : ex;
  cases = cases.concat(random({ n: nRandom, seed, servers: serverNames, proxies: proxyNames, specs }));
}
const usedServers = [...new Set(cases.map((c) => c.server))];
const usedProxies = [...new Set(cases.map((c) => c.proxy))];

// ---- the stack
fs.mkdirSync(outDir, { recursive: true });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-zoo-'));
usePidFile(process.env.ZOO_PIDFILE ?? path.join(dir, 'pids'));
const effects = new Effects(path.join(dir, 'effects.jsonl'));
const t0 = Date.now();
console.log(`# zoo: ${cases.length} cases (${cases.filter((c) => c.kind === 'exhaustive').length} exhaustive, ` +
  `${cases.filter((c) => c.kind === 'random').length} random, seed ${seed}); servers ${usedServers.join(', ')}; proxies ${usedProxies.join(', ')}`);
console.log(`# zoo: reproduce the random part with: bash scripts/zoo.sh${slice ? ' --slice' : ''} --seed ${seed}`);

const servers = {};
let proxies = {};
const deadPort = await deadPortNumber(); // nothing listens here: "connection refused", "upstream down"
const results = [];
try {
  for (const name of usedServers) servers[name] = await startServer(name, { dir, effects, slowMs: SLOW_MS });
  proxies = await startProxies(usedProxies, { dir, servers: Object.values(servers), deadPort, readTimeoutMs: PROXY_TIMEOUT_MS });
  console.log(`# zoo: stack up in ${Date.now() - t0} ms (temp dir ${dir})`);

  // One lane per server, run side by side: a lane's cases never touch another lane's server.
  const lanes = usedServers.map((name) => cases.filter((c) => c.server === name));
  let done = 0;
  await Promise.all(
    lanes.map(async (lane) => {
      for (const c of lane) {
        results.push(await runCase(c));
        if (++done % 100 === 0) console.log(`# zoo: ${done}/${cases.length} cases, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      }
    }),
  );
} finally {
  for (const p of Object.values(proxies)) await p.stop();
  for (const s of Object.values(servers)) s.stop();
  stopAll();
}

// ---- one case
async function runCase(c) {
  const id = caseId(c);
  const intent = `z${results.length}-${Math.random().toString(36).slice(2, 8)}`;
  const server = servers[c.server];
  const front = proxies[c.proxy].fronts[c.server];
  const url = `http://127.0.0.1:${front}/mcp`;
  const deadUrl = `http://127.0.0.1:${deadPort}/mcp`;
  const sent = []; // the fault each tools/call POST met
  const zooFetch = async (input, init = {}) => {
    await server.whenUp();
    const body = typeof init.body === 'string' ? init.body : undefined;
    if (init.method === 'POST' && body?.includes('"tools/call"')) {
      let isCall = false;
      try {
        isCall = [].concat(JSON.parse(body)).some((m) => m?.method === 'tools/call');
      } catch {
        // not ours
      }
      if (isCall) {
        const fault = c.schedule[sent.length] ?? 'pass';
        sent.push(fault);
        if (fault === 'refused') return fetch(deadUrl, init);
        if (fault !== 'pass') {
          const headers = new Headers(init.headers);
          headers.set('x-zoo-fault', fault);
          return fetch(input, { ...init, headers });
        }
      }
    }
    return fetch(input, init);
  };
  const tool = TOOLS[c.safety];
  const started = Date.now();
  let client;
  let out;
  let error;
  const timer = { id: undefined };
  try {
    await Promise.race([
      (async () => {
        client = new Client({ name: 'zoo', version: '1.0.0' });
        client.onerror = () => {};
        await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: observeFetch(zooFetch) }));
        const mcp = withRetry(client, { trusted: true, policy, seed: c.seed, autoResolve: process.env.ZOO_AUTO_RESOLVE !== '0' });
        out = await mcp.call({ name: tool.name, arguments: tool.args(intent) });
      })(),
      new Promise((_, rej) => (timer.id = setTimeout(() => rej(new Error(`case took over ${CASE_LIMIT_MS} ms`)), CASE_LIMIT_MS))),
    ]);
  } catch (e) {
    error = String(e?.stack ?? e);
  } finally {
    clearTimeout(timer.id);
  }
  await client?.close().catch(() => {});
  // Let every execution of this intent finish (a slow tool commits after the proxy gave up), and the
  // server come back if it was killed, before the truth is read.
  try {
    await until(() => effects.running(intent).length === 0, 10_000, `${id}: the tool to finish`);
    await server.whenUp();
  } catch (e) {
    error ??= String(e);
  }
  const truth = effects.truth(intent);
  const violations = error ? [] : check(c, out, truth);
  return {
    id, kind: c.kind, server: c.server, proxy: c.proxy, safety: c.safety, schedule: c.schedule, sent,
    status: out?.status, reason: out?.reason, safetySeen: out?.safety,
    attempts: out?.attempts?.map((a) => `${a.outcome.kind}${a.outcome.status ? `:${a.outcome.status}` : ''}${a.outcome.sent ? `:${a.outcome.sent}` : ''}` +
      `→${a.classification?.delivery ?? '?'}/${a.decision?.action ?? '?'}`),
    effects: truth.effects.length, toolErrors: truth.toolErrors, violations, error, ms: Date.now() - started,
  };
}

/** The two invariants (and that the tool's safety is the one the case meant). */
function check(c, out, truth) {
  const v = [];
  const n = truth.effects.length;
  const strict = c.safety === 'unsafe' || c.safety === 'keyed';
  if (out.safety !== c.safety) v.push(`safety seen as ${out.safety}, meant ${c.safety}`);
  if (strict && n > 1) v.push(`duplicate effect: ${n} effects of one ${c.safety} call`);
  const text = out.result?.content?.map((x) => x.text).join(' ') ?? '';
  const shown = /effect:([0-9a-f]{8})/.exec(text)?.[1];
  switch (out.status) {
    case 'succeeded':
      if (n === 0) v.push('succeeded with no effect');
      else if (strict && n !== 1) v.push(`succeeded with ${n} effects`);
      if (!shown || !truth.effects.includes(shown)) v.push(`succeeded with a result (${shown ?? 'none'}) that is not one of the effects`);
      break;
    case 'failed':
      if (n !== 0) v.push(`failed, yet ${n} effect(s) happened`);
      break;
    case 'tool_error':
      if (truth.toolErrors === 0 || out.result?.isError !== true) v.push('tool_error, but the tool never returned isError');
      break;
    case 'unknown':
    case 'pending':
      break;
    default:
      v.push(`status ${out.status}`);
  }
  return v;
}

// ---- report
const secs = ((Date.now() - t0) / 1000).toFixed(1);
const failed = results.filter((r) => r.violations.length || r.error);
const table = renderTable(results, { servers: usedServers, proxies: usedProxies, safeties: SAFETIES, faults: Object.keys(FAULTS), specs: SERVERS, proxyLabels: PROXIES });
const header = `Fault zoo: ${results.length} cases (${results.filter((r) => r.kind === 'exhaustive').length} exhaustive, ` +
  `${results.filter((r) => r.kind === 'random').length} random, seed ${seed}) in ${secs} s; ${failed.length} failing.\n\n`;
fs.writeFileSync(path.join(outDir, 'table.md'), header + table);
fs.writeFileSync(path.join(outDir, 'results.jsonl'), results.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log(`\n${header}${table}`);
for (const r of failed) {
  console.log(`not ok - ${r.id}`);
  console.log(`  # schedule ${r.schedule.join(',') || 'pass'}; sent ${r.sent.join(',') || '-'}; status ${r.status}/${r.reason}; effects ${r.effects}`);
  if (r.attempts) console.log(`  # attempts ${r.attempts.join(' | ')}`);
  for (const v of r.violations) console.log(`  # VIOLATION ${v}`);
  if (r.error) console.log(`  # ERROR ${r.error.split('\n').slice(0, 3).join(' / ')}`);
  console.log(`  # again: bash scripts/zoo.sh --case '${r.id}'`);
}
fs.writeFileSync(path.join(outDir, 'failures.txt'), failed.map((r) => `${r.id}\t${r.violations.join('; ')}${r.error ? ` ERROR ${r.error.split('\n')[0]}` : ''}`).join('\n') + '\n');
// #8: how many keyed calls the status tool turned from unknown/pending into a known outcome.
const keyed = results.filter((r) => r.safety === 'keyed' && !r.error);
const resolved = keyed.filter((r) => r.reason === 'resolved_by_status');
const open = keyed.filter((r) => r.status === 'unknown' || r.status === 'pending');
console.log(`# zoo: keyed calls resolved through the status tool: ${resolved.length} of ${resolved.length + open.length} that ended unknown or pending ` +
  `(${resolved.map((r) => r.status).sort().join(', ') || 'none'}); still unknown/pending: ${open.length} (${open.map((r) => r.reason).sort().join(', ') || 'none'})`);
console.log(`\n# zoo: table in ${path.relative(root, path.join(outDir, 'table.md'))}, every case in ${path.relative(root, path.join(outDir, 'results.jsonl'))}`);
console.log(`# tests ${results.length}`);
console.log(`# pass ${results.length - failed.length}`);
console.log(`# fail ${failed.length}`);
console.log(`# duration_ms ${Date.now() - t0}`);
fs.rmSync(dir, { recursive: true, force: true });
await sleep(0);
process.exit(failed.length ? 1 : 0);
