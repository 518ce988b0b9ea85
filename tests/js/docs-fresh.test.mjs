// The book's tables that the code alone decides cannot go stale: the retry-storm rows our engine produces
// (deterministic — seeded arrivals and jitter; the rows that draw Math.random, cockatiel's and the modelled
// peers', are not compared) must be what the simulation gives today. Regenerate with
// `node benches/js/run.mjs --only=storms && python3 scripts/docs-bench.py target/bench-partial.md`. And the Size
// table's wasm rows must be this build's raw sizes (`python3 scripts/docs-size.py` copies them from the build).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sharedSection, stormSection } from '../../benches/js/storms.mjs';
import { RetryEngine } from '../../pkg/client.node.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ours = (line) => /^\| (ours|no jitter)/.test(line);

/** The storm tables of a markdown text: title → our engine's rows. */
function storms(text) {
  const out = [];
  for (const m of text.matchAll(/^#+ (5\. Retry storm[^\n]*)\n\n((?:\|.*\n)+)/gm)) out.push([m[1], m[2].split('\n').filter(ours)]);
  return out;
}

test("the benchmarks page's retry-storm rows of our engine are what the simulation gives today", () => {
  const lines = [];
  stormSection({ say: (s = '') => lines.push(s), RetryEngine });
  const fresh = storms(`${lines.join('\n')}\n`);
  const readme = storms(readFileSync(`${root}docs/src/benchmarks.md`, 'utf8'));
  assert.equal(fresh.length, 3, 'three storm scenarios');
  assert.deepEqual(readme.map(([t]) => t), fresh.map(([t]) => t), 'the same scenarios, in order');
  for (const [i, [title, rows]] of fresh.entries()) {
    assert.ok(rows.length >= 3, `${title}: our rows`);
    assert.deepEqual(readme[i][1], rows, `${title}: docs/src/benchmarks.md rows differ from the code's — regenerate them`);
  }
});

test("the benchmarks page's §5b rows (a breaker per isolate, or one shared: all our engine's) are what the simulation gives today", () => {
  const lines = [];
  sharedSection({ say: (s = '') => lines.push(s), RetryEngine });
  const table = (text) => /^#+ 5b\. [^\n]*\n\n((?:\|.*\n)+)/m.exec(text)?.[1];
  const fresh = table(`${lines.join('\n')}\n`);
  assert.ok(fresh && fresh.split('\n').length >= 8, 'six rows');
  assert.equal(table(readFileSync(`${root}docs/src/benchmarks.md`, 'utf8')), fresh, 'docs/src/benchmarks.md §5b differs from the code — regenerate it');
});

test("the book's Size table gives the wasm modules' raw sizes of this build", async () => {
  const { statSync } = await import('node:fs');
  const page = readFileSync(`${root}docs/src/runtimes.md`, 'utf8');
  const section = page.slice(page.indexOf('\n## Size\n'));
  const raw = (label) => {
    const row = section.split('\n').find((l) => l.startsWith(`| ${label} |`));
    assert.ok(row, `docs/src/runtimes.md's Size table has a "${label}" row`);
    return Number(row.split('|')[2].replace(/[^0-9]/g, ''));
  };
  for (const [label, face] of [['client wasm', 'client'], ['server wasm (ledger)', 'server']]) {
    const built = statSync(`${root}pkg/mcp_retry_policy_${face}_bg.wasm`).size;
    assert.equal(raw(label), built, `docs/src/runtimes.md's Size: ${label} is ${raw(label)} B, this build's is ${built} B — run python3 scripts/docs-size.py`);
  }
});
