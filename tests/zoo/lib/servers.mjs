// The three real MCP servers, each its own process on 127.0.0.1:
//   ts-1.32  — TypeScript SDK 1.32.2 McpServer, stateful, SSE answers with an event store (resumable), 2025-11-25
//   ts-1.20  — TypeScript SDK 1.20.2 (npm alias sdk-old, zod 3), stateful, JSON answers, 2025-06-18
//   python   — Python SDK mcp 2.x MCPServer, stateless, JSON answers, under uvicorn
// A fault may kill a server mid-tool (SIGKILL). A TypeScript server is started again by the zoo as soon as
// it exits; the Python one by its own pre-forked parent. Either way the zoo sends nothing to a server that
// died until the new process answers /health (the restart is part of the schedule: "it came back").
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { start, freePort, until, killTree } from './procs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const zoo = path.resolve(here, '..');

export const SERVERS = {
  'ts-1.32': { sdk: 'new', wire: 'sse', revision: '2025-11-25', ledger: true, label: 'TS SDK 1.32 (SSE, resumable)' },
  'ts-1.20': { sdk: 'old', wire: 'json', revision: '2025-06-18', ledger: true, label: 'TS SDK 1.20 (JSON)' },
  python: { revision: '2025-11-25', ledger: false, label: 'Python mcp 2.x (stateless JSON)' },
};

async function health(port) {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
    return r.ok ? (await r.text()).split(' ')[2] : undefined;
  } catch {
    return undefined;
  }
}

export async function startServer(name, { dir, effects, slowMs }) {
  const port = await freePort();
  const spec = SERVERS[name];
  const log = path.join(dir, `${name}.log`);
  let stopping = false;
  let child;
  const spawnIt = () => {
    if (name === 'python') {
      child = start(path.join(zoo, '.venv/bin/python'), [path.join(zoo, 'servers/py_server.py'), '--port', port, '--effects', effects.file, '--slow', slowMs], { log });
    } else {
      child = start(process.execPath, [
        path.join(zoo, 'servers/ts-server.mjs'), '--sdk', spec.sdk, '--name', name, '--port', port, '--effects', effects.file,
        '--ledger', path.join(dir, `${name}-ledger.db`), '--wire', spec.wire, '--slow', slowMs,
      ].map(String), { log });
      child.on('exit', () => {
        if (!stopping) spawnIt(); // a crashed worker comes back at once, like under a process manager
      });
    }
  };
  spawnIt();
  await until(async () => (await health(port)) !== undefined, 20_000, `${name} to start (see ${log})`);
  let handled = 0;
  return {
    name,
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    spec,
    /** Resolves once the server is up again after any kill the effects file reports. */
    async whenUp() {
      const kills = effects.killsOf(name);
      if (kills.length <= handled) return;
      const dead = new Set(kills.map((k) => String(k.pid)));
      await until(async () => {
        const pid = await health(port);
        return pid !== undefined && !dead.has(pid);
      }, 20_000, `${name} to come back after a kill (see ${log})`);
      handled = kills.length;
    },
    stop() {
      stopping = true;
      if (child && child.exitCode === null && child.signalCode === null) killTree(child.pid);
    },
  };
}
