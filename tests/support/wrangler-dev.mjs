// `wrangler dev --local` (wrangler 4.86, real workerd) on one of examples/, with the package linked in as an app
// has it in node_modules. Resolves to { url, log(), stop() } once wrangler says "Ready on"; fails with wrangler's
// last output otherwise. Local state goes to a temporary folder, removed by stop().
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export async function startWranglerDev(exampleName, { vars = {}, portBase = 8700 } = {}) {
  mkdirSync(join(root, 'examples/node_modules'), { recursive: true });
  rmSync(join(root, 'examples/node_modules/mcp-retry-policy'), { force: true, recursive: true });
  symlinkSync('../../pkg', join(root, 'examples/node_modules/mcp-retry-policy'), 'dir');
  const state = mkdtempSync(join(tmpdir(), `wrangler-${exampleName}-`));
  const port = portBase + Math.floor(Math.random() * 200);
  const varArgs = Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}:${v}`]);
  const wrangler = spawn(join(root, 'node_modules/.bin/wrangler'), ['dev', '--local', '--ip', '127.0.0.1', '--port', String(port),
    '--persist-to', state, ...varArgs, '--show-interactive-dev-session=false'], {
    cwd: join(root, 'examples', exampleName),
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  wrangler.stdout.on('data', (d) => { log += d; });
  wrangler.stderr.on('data', (d) => { log += d; });
  async function stop() {
    if (wrangler.exitCode === null) {
      const gone = new Promise((r) => wrangler.once('exit', r));
      wrangler.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 5_000))]);
      if (wrangler.exitCode === null) wrangler.kill('SIGKILL');
    }
    rmSync(state, { recursive: true, force: true });
  }
  for (let i = 0; i < 900 && !/Ready on/.test(log); i++) {
    if (wrangler.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!/Ready on/.test(log)) await stop();
  assert.match(log, /Ready on/, log.slice(-3000));
  return { url: `http://127.0.0.1:${port}`, log: () => log, stop };
}
