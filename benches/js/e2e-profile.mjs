// Where the end-to-end bench's extra client CPU goes (§8): the same `tools/call` to the bench server, sent N
// times by the bare SDK client and N times through `withRetry(client).call`, each arm in its own Node process
// under the CPU profiler; then each arm's CPU per call, and the self time per call of each of this package's
// files and of the rest, side by side. A tool for reading, not a test: nothing here asserts a time.
//
//   node benches/js/e2e-profile.mjs [calls]     (default 4000 per arm, after 500 to warm up)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);

async function arm(name, n) {
  const { spawn } = await import('node:child_process');
  const { createInterface } = await import('node:readline');
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { withRetry } = await import('../../pkg/client.node.js');
  const server = spawn(process.execPath, [fileURLToPath(new URL('./e2e-server.mjs', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise((resolve) => createInterface({ input: server.stdout }).once('line', resolve));
  // As in e2e.mjs: the SDK's shared signal dropped, for both arms alike.
  const fetchNoSignal = (u, init) => fetch(u, { ...init, signal: undefined });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchNoSignal }));
  const args = { text: 'hello' };
  const wrapped = withRetry(client, { trusted: true });
  const call = name === 'bare' ? () => client.callTool({ name: 'echo', arguments: args }) : () => wrapped.call({ name: 'echo', arguments: args });
  for (let i = 0; i < 500; i++) await call();
  const c = process.cpuUsage();
  for (let i = 0; i < n; i++) await call();
  const used = process.cpuUsage(c);
  await client.close();
  server.stdin.end();
  process.stdout.write(JSON.stringify({ cpu: (used.user + used.system) / n }));
}

/** Self time per category (this package's files by name; the rest by kind), in µs per call. */
function selfTimes(profile, calls) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const { url, functionName } = byId.get(id).callFrame;
    const k = url.includes('/pkg/') ? `ours: ${url.split('/pkg/')[1]}` : url ? 'everything else' : functionName === '(idle)' ? '(idle)' : 'everything else';
    self.set(k, (self.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return new Map([...self].map(([k, t]) => [k, t / calls]));
}

if (process.argv[2] === '--arm') {
  await arm(process.argv[3], Number(process.argv[4]));
} else {
  const n = Number(process.argv[2] ?? 4000);
  const runs = {};
  for (const name of ['bare', 'ours']) {
    const dir = mkdtempSync(join(tmpdir(), `e2e-profile-${name}-`));
    const r = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval', '100', here, '--arm', name, String(n)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new Error(`${name} arm exited ${r.status}`);
    const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8'));
    runs[name] = { cpu: JSON.parse(r.stdout).cpu, self: selfTimes(profile, n + 500) };
  }
  console.log(`client CPU µs/call: bare ${runs.bare.cpu.toFixed(1)}, ours ${runs.ours.cpu.toFixed(1)} (over bare ${(runs.ours.cpu - runs.bare.cpu).toFixed(1)})`);
  console.log('\n| self time, µs/call (profiled) | bare | ours |\n|---|---:|---:|');
  const keys = [...new Set([...runs.bare.self.keys(), ...runs.ours.self.keys()])].filter((k) => k !== '(idle)');
  keys.sort((a, b) => (runs.ours.self.get(b) ?? 0) - (runs.ours.self.get(a) ?? 0));
  let ours = 0;
  for (const k of keys) {
    const o = runs.ours.self.get(k) ?? 0;
    if (k.startsWith('ours')) ours += o;
    if (o >= 0.5 || k === 'everything else') console.log(`| ${k} | ${(runs.bare.self.get(k) ?? 0).toFixed(1)} | ${o.toFixed(1)} |`);
  }
  console.log(`| **this package's files, all** | 0.0 | ${ours.toFixed(1)} |`);
}
