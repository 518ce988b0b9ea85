// The peers: MCP servers this project did not write, each its own process on 127.0.0.1, each with a way to be
// killed and started again on the same port (a restart, or "down, then back"), and a truth: the effects its
// tools did, per intent (the effects file they append to; for server-everything, whose tools we cannot change,
// the deliveries its transport accepted, as counted by a pass-through proxy in front: lib/front.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { start, freePort, until, killTree, sleep } from '../../zoo/lib/procs.mjs';
import { startFront } from './front.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = path.resolve(here, '..');
const root = path.resolve(peers, '../..');
const py = path.join(peers, '.venv/bin/python');

// Tool names per server: our own six tools where the server lets us define tools; server-everything's own
// tools otherwise (echo, trigger-long-running-operation, trigger-url-elicitation), called unsafe through the
// app-side `tools` override.
const OWN = {
  unsafe: 'create_ticket', keyed: 'create_ticket_keyed', slow: 'slow', raises: 'fail_plain', afterEffect: 'fail_after_effect', badOutput: 'bad_output',
};
const EVERYTHING = { unsafe: 'echo', keyed: 'echo', slow: 'trigger-long-running-operation', afterEffect: 'trigger-url-elicitation' };

export const SERVERS = {
  everything: { label: 'server-everything 2026.8.31', client: 'v1', tools: EVERYTHING, overrides: { echo: 'unsafe', 'trigger-url-elicitation': 'unsafe', 'trigger-long-running-operation': 'unsafe' }, sessions: true,
    // its trigger-url-elicitation is registered only for a client that declares URL elicitation (tools/index.js)
    clientOptions: { capabilities: { elicitation: { url: {} } } } },
  fastmcp: { label: 'FastMCP 4.2.3', client: 'v1', tools: OWN, sessions: true },
  mcpserver: { label: 'Python SDK 2.3 MCPServer', client: 'v1', tools: OWN, sessions: true },
  lowlevel: { label: 'Python SDK 2.3 low-level Server', client: 'v1', tools: OWN, sessions: true },
  rmcp: { label: 'rmcp 3.11', client: 'v1', tools: OWN, sessions: true },
  'ts-1.32': { label: 'TS SDK 1.32.2', client: 'v1', tools: OWN, sessions: true },
  'ts-1.20': { label: 'TS SDK 1.20.2', client: 'v1', tools: OWN, sessions: true },
  'ts-v2': { label: 'TS SDK v2 2.4.0', client: 'v2', tools: OWN, sessions: false, clientOptions: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
};

/** Tool arguments for one intent, per server. */
export function argsFor(server, role, intent, extra = {}) {
  if (server === 'everything') {
    if (role === 'slow') return { intent, duration: (extra.steps * extra.ms) / 1000, steps: extra.steps };
    if (role === 'afterEffect') return { intent, url: 'http://127.0.0.1/confirm', errorPath: true, elicitationId: intent };
    return { intent, message: intent };
  }
  return role === 'unsafe' || role === 'keyed' ? { intent, title: `ticket ${intent}`, ...extra } : { intent, ...extra };
}

async function health(port) {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
    return r.ok ? (await r.text()).trim().split(' ').pop() : undefined;
  } catch {
    return undefined;
  }
}

async function listening(port) {
  try {
    await fetch(`http://127.0.0.1:${port}/mcp`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts one peer. Returns { name, spec, url, effects(intent), kill(), up(), restart(), stop() }.
 * `kill` is SIGKILL of the serving process; `up` starts it again on the same port and waits until it answers.
 */
export async function startPeer(name, { dir }) {
  const spec = SERVERS[name];
  const port = await freePort();
  const effectsFile = path.join(dir, `${name}.effects.jsonl`);
  fs.writeFileSync(effectsFile, '');
  const log = path.join(dir, `${name}.log`);
  let child;
  let parent; // Python: the pre-forked parent that stays
  let pid;
  const ready = async () => {
    if (name === 'everything') return until(() => listening(port), 20_000, `${name} on ${port} (see ${log})`);
    await until(async () => (pid = await health(port)) !== undefined, 30_000, `${name} on ${port} (see ${log})`);
  };
  const spawnIt = () => {
    if (['fastmcp', 'mcpserver', 'lowlevel'].includes(name)) {
      if (!parent) parent = start(py, [path.join(peers, 'servers/py_peer.py'), '--kind', name, '--port', String(port), '--effects', effectsFile], { log });
      else parent.stdin.write('start\n');
      return;
    }
    if (name === 'rmcp') {
      child = start(path.join(peers, 'rmcp-server/target/release/peers-rmcp-server'), ['--port', String(port), '--effects', effectsFile], { log });
    } else if (name === 'everything') {
      const entry = path.join(peers, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
      child = start(process.execPath, [entry, 'streamableHttp'], { log, env: { PORT: String(port) } });
    } else {
      const sdk = { 'ts-1.32': 'v1', 'ts-1.20': 'v1-old', 'ts-v2': 'v2' }[name];
      child = start(process.execPath, [path.join(peers, 'servers/ts_peer.mjs'), '--sdk', sdk, '--port', String(port), '--effects', effectsFile], { log });
    }
  };
  spawnIt();
  await ready();
  // server-everything's tools do nothing we can count: its truth is what its transport accepted (front.mjs).
  const front = name === 'everything' ? await startFront(`http://127.0.0.1:${port}/mcp`, effectsFile) : undefined;
  const peer = {
    name,
    spec,
    port,
    url: front ? front.url : `http://127.0.0.1:${port}/mcp`,
    effectsFile,
    effects(intent) {
      return fs.readFileSync(effectsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.intent === intent);
    },
    kill() {
      if (parent) {
        if (pid) killTree(Number(pid));
      } else if (child) killTree(child.pid);
    },
    /** What the peer is busy with (down, up), for a cell that overruns its limit. */
    busy: new Set(),
    async down() {
      peer.busy.add('down');
      peer.kill();
      await until(async () => !(await listening(port)), 10_000, `${name} to go down`);
      peer.busy.delete('down');
    },
    async up() {
      peer.busy.add('up');
      spawnIt();
      await ready();
      peer.busy.delete('up');
    },
    async restart() {
      await peer.down();
      await peer.up();
    },
    async stop() {
      await front?.close();
      peer.kill();
      if (parent) killTree(parent.pid);
      await sleep(0);
    },
  };
  return peer;
}

export { root };
