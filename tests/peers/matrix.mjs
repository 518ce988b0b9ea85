// The peer matrix: withRetry (pkg/) around the real TS SDK client, against MCP servers this project did not
// write (lib/servers.mjs), in every scenario of lib/scenarios.mjs. Every process it starts listens on
// 127.0.0.1 and is stopped by pid when it ends.
//
//   node tests/peers/matrix.mjs [--slice] [--servers a,b] [--scenarios a,b] [--out target/peers]
//
// Checked on every call of every cell:
//   1. no duplicate effect: effects ≤ 1 per intended unsafe or keyed call
//   2. no status claiming more than the facts: succeeded ⇒ its effect happened (and the result is that
//      effect's); failed ⇒ no effect; tool_error ⇒ the tool answered isError
//   3. the expected cell: the status the rules say (scenarios.mjs; where more than one is honest, any of them),
//      and the re-initializations expected
// Prints the matrix (markdown) and "# pass N" / "# fail N"; exits 1 on any violation or unexpected cell.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { usePidFile, stopAll } from '../zoo/lib/procs.mjs';
import { SERVERS, startPeer } from './lib/servers.mjs';
import { SCENARIOS, SLICE, WAITING } from './lib/scenarios.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : dflt);
const slice = argv.includes('--slice');
const serverNames = opt('servers', Object.keys(SERVERS).join(',')).split(',');
const scenarioNames = opt('scenarios', (slice ? SLICE : Object.keys(SCENARIOS)).join(',')).split(',');
const outDir = path.resolve(root, opt('out', 'target/peers'));
const LANES = Number(opt('lanes', 2));
const CELL_LIMIT_MS = 60_000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-peers-'));
usePidFile(process.env.PEERS_PIDFILE ?? path.join(dir, 'pids'));
const t0 = Date.now();
const STRICT = new Set(['unsafe', 'keyed']);

/** `expect` is one cell or a list of honest ones; each a status (any reason) or `status (reason)`. */
function expected(row) {
  return [].concat(row.expect).some((e) => {
    const m = /^(\w+)(?: \((\w+)\))?$/.exec(e);
    return m && row.status === m[1] && (m[2] === undefined || row.reason === m[2]);
  });
}

function check(row) {
  const v = [];
  if (row.na) return v;
  if (row.error) return [`threw: ${row.error}`];
  const n = row.effects;
  const strict = STRICT.has(row.safety);
  if (strict && n > 1) v.push(`duplicate effect: ${n}`);
  const shown = /effect:([0-9a-f]+)/.exec(JSON.stringify(row.result ?? ''))?.[1];
  if (row.status === 'succeeded') {
    if (n === 0) v.push('succeeded with no effect');
    if (shown && !row.effectIds.includes(shown)) v.push(`succeeded with a result (${shown}) that is none of the effects`);
  } else if (row.status === 'failed') {
    if (n !== 0) v.push(`failed, yet ${n} effect(s) happened`);
  } else if (row.status === 'tool_error') {
    if (row.result?.isError !== true) v.push('tool_error without an isError result');
  } else if (row.status !== 'unknown' && row.status !== 'pending') v.push(`status ${row.status}`);
  if (row.expect && !expected(row)) v.push(`expected ${[].concat(row.expect).join(' or ')}, got ${row.status} (${row.reason}) after ${row.attempts?.join(' → ') || 'no attempt'}`);
  if (row.extraViolation) v.push(row.extraViolation);
  return v;
}

async function runCell(peer, scenario) {
  const started = Date.now();
  let out;
  let error;
  const timer = {};
  try {
    out = await Promise.race([
      SCENARIOS[scenario](peer),
      new Promise((_, rej) => (timer.id = setTimeout(() => rej(new Error(`cell took over ${CELL_LIMIT_MS} ms, waiting for: ${[...(WAITING.get(peer.name) ?? []), ...[...peer.busy].map((b) => `peer ${b}`)].join(', ') || '?'}`)), CELL_LIMIT_MS))),
    ]);
  } catch (e) {
    error = String(e?.stack ?? e).split('\n').slice(0, e?.message?.startsWith('cell took') ? 1 : 3).join(' / ');
  } finally {
    clearTimeout(timer.id);
  }
  const rows = out?.rows ?? [];
  for (const r of rows) {
    r.effectIds = r.na ? [] : peer.effects(r.intent).map((e) => e.id);
    r.violations = check(r);
  }
  const violations = rows.flatMap((r) => r.violations.map((v) => `${r.label}: ${v}`));
  if (out && out.expectReinits !== undefined && out.reinits !== out.expectReinits) violations.push(`re-initialized ${out.reinits} times, expected ${out.expectReinits}`);
  if (error) violations.push(`ERROR ${error}`);
  const applicable = rows.some((r) => !r.na) || error;
  return { server: peer.name, scenario, rows, reinits: out?.reinits, violations, na: !applicable, ms: Date.now() - started };
}

const results = [];
const queue = [...serverNames];
async function lane() {
  for (let name = queue.shift(); name; name = queue.shift()) {
    let peer;
    try {
      peer = await startPeer(name, { dir });
    } catch (e) {
      for (const s of scenarioNames) results.push({ server: name, scenario: s, rows: [], violations: [`server did not start: ${e.message}`], ms: 0 });
      continue;
    }
    for (const s of scenarioNames) {
      const r = await runCell(peer, s);
      results.push(r);
      console.log(`# ${name} · ${s}: ${r.na ? 'n/a' : r.violations.length ? `✗ ${r.violations.join('; ')}` : '✓'} (${r.ms} ms)`);
    }
    await peer.stop();
  }
}
try {
  await Promise.all(Array.from({ length: Math.min(LANES, serverNames.length) }, lane));
} finally {
  stopAll();
}

// ---- the table: rows are scenarios, columns servers; a cell lists its calls' statuses
const LETTER = { succeeded: 'S', unknown: 'U', failed: 'F', tool_error: 'E', pending: 'P' };
function cellText(r) {
  if (!r) return '–';
  if (r.na) return 'n/a';
  const groups = new Map();
  for (const row of r.rows.filter((x) => !x.na)) {
    const k = `${LETTER[row.status] ?? row.status ?? 'err'}${row.status && !['succeeded', 'tool_error'].includes(row.status) ? `(${row.reason})` : ''}`;
    groups.set(k, (groups.get(k) ?? 0) + 1);
  }
  const statuses = [...groups].map(([k, n]) => (n > 1 ? `${n}×${k}` : k)).join(' ');
  const effects = r.rows.filter((x) => !x.na).map((x) => x.effects);
  const eff = effects.length > 2 ? `Σeff ${effects.reduce((a, b) => a + b, 0)}/${effects.length}` : `eff ${effects.join(',')}`;
  return `${r.violations.length ? '✗' : '✓'} ${statuses} · ${eff}${r.reinits ? ` · reinit ${r.reinits}` : ''}`;
}
const used = serverNames.filter((s) => results.some((r) => r.server === s));
const lines = [`| scenario | ${used.map((s) => SERVERS[s].label).join(' | ')} |`, `|---|${used.map(() => '---').join('|')}|`];
for (const s of scenarioNames) lines.push(`| ${s} | ${used.map((sv) => cellText(results.find((r) => r.server === sv && r.scenario === s))).join(' | ')} |`);
const bad = results.filter((r) => r.violations.length);
const secs = ((Date.now() - t0) / 1000).toFixed(1);
const header = `Peer matrix${slice ? ' (slice)' : ''}: ${results.length} cells in ${secs} s; ${bad.length} failing.\n\n`;
const legend = '\nS succeeded · U unknown · F failed · E tool_error (reason in brackets when not a plain answer); eff = effects per call as the ' +
  'server recorded them (Σ for many calls); reinit = re-initializations; ✓/✗ against the expected cell and the invariants.\n';
const table = header + lines.join('\n') + '\n' + legend;
fs.mkdirSync(outDir, { recursive: true });
// table.md is a full run only (what `scripts/peers.sh --docs` writes into docs/src/testing.md); a subset is partial.md.
const kind = slice ? 'slice' : argv.includes('--servers') || argv.includes('--scenarios') ? 'partial' : 'table';
fs.writeFileSync(path.join(outDir, `${kind}.md`), table);
fs.writeFileSync(path.join(outDir, `${kind === 'table' ? 'results' : kind}.json`), JSON.stringify(results, null, 1));
console.log(`\n${table}`);
for (const r of bad) {
  console.log(`not ok - ${r.server} · ${r.scenario}`);
  for (const v of r.violations) console.log(`  # ${v}`);
  for (const row of r.rows.filter((x) => x.violations?.length)) console.log(`  # ${row.label}: attempts ${row.attempts.join(' | ')}`);
  console.log(`  # again: bash scripts/peers.sh --servers ${r.server} --scenarios ${r.scenario}`);
}
console.log(`# tests ${results.length}\n# pass ${results.length - bad.length}\n# fail ${bad.length}\n# duration_ms ${Date.now() - t0}`);
fs.rmSync(dir, { recursive: true, force: true });
process.exit(bad.length ? 1 : 0);
