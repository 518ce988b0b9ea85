// End to end: the same `tools/call` to a real server (the MCP TypeScript SDK's McpServer over Streamable HTTP
// on loopback, in its own process) bare (`client.callTool`), through cockatiel's retry policy, and through
// `withRetry(client).call`, interleaved in rounds so all see the same machine. Wall time and the client
// process's CPU time per call. Nothing here asserts a time.
//
// Every client's transport gets a fetch that drops the signal the SDK passes. The v1 transport hands one
// long-lived AbortSignal to every fetch, and Node's fetch (undici) unhooks its abort listener only when the
// request is collected, so listeners pile up by the thousand between major GCs (nodejs/undici#5285) and past
// 1,500 Node prints a warning per request: a GC lottery that would swamp the difference being measured. The
// bench never aborts, so dropping the signal changes nothing else — for every arm alike.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ExponentialBackoff, handleAll, retry } from 'cockatiel';
import { withRetry } from '../../pkg/client.node.js';
import { fmt, median } from './measure.mjs';

async function startServer() {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./e2e-server.mjs', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited ${code}`)));
  });
  return { url, stop: () => child.stdin.end() };
}

const noSignalFetch = (url, init) => fetch(url, { ...init, signal: undefined });

async function connect(url) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: noSignalFetch }));
  return client;
}

/** Per arm, µs per call (wall) and client CPU µs per call: medians over `rounds` of `n` sequential calls. */
export async function e2eMeasure({ n = 400, rounds = 9 } = {}) {
  const server = await startServer();
  const clients = [];
  try {
    const args = { text: 'hello' };
    const bare = await connect(server.url);
    const viaCockatiel = await connect(server.url);
    const ours = await connect(server.url);
    clients.push(bare, viaCockatiel, ours);
    const policy = retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() });
    const wrapped = withRetry(ours, { trusted: true });
    const arms = {
      bare: () => bare.callTool({ name: 'echo', arguments: args }),
      cockatiel: () => policy.execute(() => viaCockatiel.callTool({ name: 'echo', arguments: args })),
      ours: async () => {
        const o = await wrapped.call({ name: 'echo', arguments: args });
        if (o.status !== 'succeeded') throw new Error(`bench call ended ${o.status} (${o.reason})`);
      },
    };
    const names = Object.keys(arms);
    for (const name of names) for (let i = 0; i < 300; i++) await arms[name](); // warm-up (JIT, the tools/list cache)
    const wall = Object.fromEntries(names.map((k) => [k, []]));
    const cpu = Object.fromEntries(names.map((k) => [k, []]));
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(r + j) % names.length]; // each arm in each position
        const t = process.hrtime.bigint();
        const c = process.cpuUsage();
        for (let i = 0; i < n; i++) await arms[name]();
        const used = process.cpuUsage(c);
        wall[name].push(Number(process.hrtime.bigint() - t) / n / 1000);
        cpu[name].push((used.user + used.system) / n);
      }
    }
    return Object.fromEntries(names.map((k) => [k, { wall: median(wall[k]), cpu: median(cpu[k]) }]));
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    server.stop();
  }
}

export async function e2eSection(say) {
  const rounds = 9;
  const n = 400;
  const r = await e2eMeasure({ n, rounds });
  const row = (label, k) =>
    say(`| ${label} | ${fmt(r[k].wall, 1)} | ${fmt(r[k].wall / r.bare.wall, 3)} | ${fmt(r[k].cpu, 1)} | ${fmt(r[k].cpu - r.bare.cpu, 1)} |`);
  say();
  say(`## 8. End to end: one \`tools/call\` to a real server on loopback (median of ${rounds} interleaved rounds of ${n} calls)`);
  say();
  say('| path | µs/call (wall) | × bare | client CPU µs/call | client CPU over bare |');
  say('|---|---:|---:|---:|---:|');
  row('bare: `client.callTool` (MCP TypeScript SDK v1 client, Streamable HTTP)', 'bare');
  row('cockatiel: `retry(handleAll, { maxAttempts: 3 }).execute(() => client.callTool(…))`', 'cockatiel');
  row('ours: `withRetry(client).call` (a read-only tool, succeeded)', 'ours');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = await e2eMeasure({ n: Number(process.env.N ?? 400), rounds: Number(process.env.ROUNDS ?? 9) });
  console.log(JSON.stringify(r));
}

/**
 * The wrapper alone: the same three paths over a client stub that answers `tools/call` at once, in process —
 * what each adds to a call, without the network's noise. µs per call, median of 7 rounds.
 */
export async function wrapperSection(say, measureAsync) {
  const result = { content: [{ type: 'text', text: 'hello' }] };
  const tools = { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, annotations: { readOnlyHint: true } }] };
  // Shaped like the v1 SDK client as withRetry reads it (request, listTools, the transport's session).
  const stub = {
    _requestHandlers: new Map(),
    transport: { sessionId: 'bench', protocolVersion: '2025-11-25', send: async () => {} },
    request: async () => result,
    callTool: async () => result,
    listTools: async () => tools,
    getServerVersion: () => ({ name: 'stub', version: '1.0.0' }),
  };
  const args = { text: 'hello' };
  const policy = retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() });
  const wrapped = withRetry(stub, { trusted: true });
  const n = 20_000;
  const bare = (await measureAsync(() => stub.callTool({ name: 'echo', arguments: args }), n, 7)) / 1000;
  const cockatiel = (await measureAsync(() => policy.execute(() => stub.callTool({ name: 'echo', arguments: args })), n, 7)) / 1000;
  const ours = (await measureAsync(() => wrapped.call({ name: 'echo', arguments: args }), n, 7)) / 1000;
  say();
  say('## 9. The wrapper alone: one call over a client stub that answers at once (µs per call, median of 7 rounds)');
  say();
  say('| path | µs/call | × cockatiel |');
  say('|---|---:|---:|');
  say(`| the stub's \`callTool\` (no wrapper) | ${fmt(bare, 2)} | ${fmt(bare / cockatiel)} |`);
  say(`| cockatiel: \`retry(handleAll, { maxAttempts: 3 }).execute(…)\` | ${fmt(cockatiel, 2)} | 1.00 |`);
  say(`| ours: \`withRetry(client).call\` (tool safety, engine admit + record, outcome) | ${fmt(ours, 2)} | ${fmt(ours / cockatiel)} |`);
}
