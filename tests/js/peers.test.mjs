// The peer matrix's slice under node:test (tests/peers/matrix.mjs --slice): on every server this project did
// not write — a lost session with 1 and with 20 calls in flight after a restart, and a code that arrives after
// the tool's side effect. Fails on a violated invariant (a duplicate effect, a status claiming more than the
// facts) or a cell other than the one the rules expect. The full matrix: bash scripts/peers.sh.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('peer matrix slice: every server, lost sessions (1 and 20 calls) and a code after the side effect', { timeout: 240_000 }, () => {
  const r = spawnSync(process.execPath, [path.join(root, 'tests/peers/matrix.mjs'), '--slice'], { cwd: root, encoding: 'utf8', timeout: 230_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const failing = out.split('\n').filter((l) => l.startsWith('not ok') || l.startsWith('  # ')).join('\n');
  assert.equal(r.status, 0, `the slice failed:\n${failing || out.slice(-4000)}`);
  assert.match(out, /# fail 0/);
});
