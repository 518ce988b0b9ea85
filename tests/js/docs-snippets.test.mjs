// Every code block of the README and the book (docs/src) is run by the test command, so a snippet cannot rot.
// A block is one of:
//   - a region of a file the tests run, marked `<!-- snippet: PATH#ANCHOR -->` right above it and equal to that
//     region (scripts/snippets.py checks and rewrites them). docs/snippets/* are run here; a file under
//     examples/ must be run by a test of tests/js or by scripts/test.sh; a Rust file under src/ or tests/ by cargo;
//   - a ```rust block of a page the crate includes as doctests (cargo test --doc runs it);
//   - ```text: output shown, not code;
//   - marked `<!-- not run: REASON -->`: listed below, each with its reason (the README's own two commands,
//     which CI runs; a deploy to a Cloudflare account).
// docs/snippets/*: a first line `// run: KIND` (or `# run:` for shell) says how:
//   server TOOL ARGS — started with PORT=0; once it prints "listening on URL" the package's checker tries TOOL
//     with ARGS as two tenants (no check may fail), and the `client` and `sh` snippets run against it;
//   client — run with MCP_URL (the server snippet's URL), must exit 0;
//   sh — run by bash with MCP_URL, must exit 0;
//   standalone — run, must exit 0;
//   cargo-deps — a Cargo.toml [dependencies] table: each crate's version and features must be ones this crate's
//     Cargo.toml has (its own version and features; the versions and features its examples build with).
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkServer } from '../../pkg/check/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const snippets = join(root, 'docs/snippets');
const tmp = mkdtempSync(join(tmpdir(), 'docs-snippets-'));
const children = [];

/** Every fenced block of a markdown file: { doc, line, lang, mark, body }. */
function blocksOf(rel) {
  const lines = readFileSync(join(root, rel), 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('```')) continue;
    const lang = lines[i].slice(3).trim().split(/[\s,]/)[0];
    let j = i + 1;
    while (j < lines.length && !lines[j].startsWith('```')) j++;
    let m = i - 1;
    while (m >= 0 && !lines[m].trim()) m--;
    const mark = m >= 0 ? /^<!-- (snippet|not run): (.+?) -->$/.exec(lines[m]) : null;
    out.push({ doc: rel, line: i + 1, lang, mark: mark && { kind: mark[1], what: mark[2] }, body: lines.slice(i + 1, j).join('\n') });
    i = j;
  }
  return out;
}

const pages = readdirSync(join(root, 'docs/src')).filter((f) => f.endsWith('.md')).map((f) => `docs/src/${f}`);
// Pages that only include another file (architecture.md → ARCHITECTURE.md): that file's blocks are the page's.
const included = pages.flatMap((p) => [...readFileSync(join(root, p), 'utf8').matchAll(/\{\{#include \.\.\/\.\.\/([^}:]+)\}\}/g)].map((m) => m[1]));
const docs = ['README.md', ...pages, ...included];
const blocks = docs.flatMap(blocksOf);
const lib = readFileSync(join(root, 'src/lib.rs'), 'utf8');
const runners = [...readdirSync(join(root, 'tests/js')).map((f) => readFileSync(join(root, 'tests/js', f), 'utf8')), readFileSync(join(root, 'scripts/test.sh'), 'utf8')].join('\n');

/** How a block is run, or why it is not; throws naming a block no test runs. */
function howRun(b) {
  const where = `${b.doc}:${b.line}`;
  if (b.mark?.kind === 'not run') return `not run: ${b.mark.what}`;
  if (b.mark?.kind === 'snippet') {
    const file = b.mark.what.split('#')[0];
    assert.ok(existsSync(join(root, file)), `${where}: its file ${file} does not exist`);
    if (file.startsWith('docs/snippets/')) return 'run here';
    if (file.startsWith('examples/')) {
      const dir = file.split('/').slice(0, 2).join('/');
      assert.ok(runners.includes(dir.slice('examples/'.length)), `${where}: no test of tests/js nor scripts/test.sh runs ${dir}`);
      return `run by the test of ${dir}`;
    }
    if (/^(src|tests)\/.*\.rs$/.test(file)) return 'compiled and run by cargo test';
    assert.fail(`${where}: ${file} is not a file the tests run`);
  }
  if (b.lang === 'text') return 'output';
  if (b.lang === 'rust' && b.doc.startsWith('docs/src/') && lib.includes(`include_str!("../${b.doc}")`)) return 'a doctest';
  assert.fail(`${where}: a \`\`\`${b.lang || '(no language)'} block that no test runs — mark it <!-- snippet: FILE#ANCHOR --> with the file a test runs, or make the page a doctest`);
}

test('every code block of the README and the book is run by a test, or says why not', () => {
  const counts = {};
  const unrun = [];
  for (const b of blocks) {
    const how = howRun(b);
    counts[how.startsWith('run by') ? 'run by an example test' : how.startsWith('not run') ? 'not run' : how] =
      (counts[how.startsWith('run by') ? 'run by an example test' : how.startsWith('not run') ? 'not run' : how] ?? 0) + 1;
    if (how.startsWith('not run')) unrun.push(`${b.doc}:${b.line} ${how}`);
  }
  console.log(`code blocks: ${blocks.length} in ${docs.length} files`, counts);
  for (const u of unrun) console.log(`  ${u}`);
  assert.ok(blocks.length > 10);
  // What may go unrun is short and reviewed here.
  assert.ok(unrun.length <= 6, `more blocks unrun than reviewed: ${unrun.join('; ')}`);
});

test('every marked block equals its region of the file (scripts/snippets.py)', () => {
  execFileSync('python3', [join(root, 'scripts/snippets.py')], { stdio: 'pipe' });
});

/** The snippet files by kind: [{ file, kind, args }]. */
const files = readdirSync(snippets).filter((f) => /\.(mjs|sh|toml)$/.test(f)).map((f) => {
  const first = readFileSync(join(snippets, f), 'utf8').split('\n')[0];
  const m = /^(?:\/\/|#) run: ([\w-]+)(?: (\S+) (.+))?$/.exec(first);
  assert.ok(m, `docs/snippets/${f}: the first line must be "// run: KIND" (or "# run: KIND")`);
  return { file: f, kind: m[1], tool: m[2], args: m[3] && JSON.parse(m[3]) };
});

/** Runs a snippet to its end; resolves to its output; rejects with it on a non-zero exit. */
function run(file, env) {
  return new Promise((resolve, reject) => {
    const cmd = file.endsWith('.sh') ? 'bash' : process.execPath;
    const child = spawn(cmd, [join(snippets, file)], { cwd: snippets, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => { out += c; });
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`docs/snippets/${file} exited ${code}:\n${out}`))));
  });
}

/** Starts a server snippet; resolves to its URL once it says so (an event, not a wait). */
function serve(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(snippets, file)], {
      cwd: snippets, env: { ...process.env, PORT: '0', LEDGER_DB: join(tmp, `${file}.db`) }, stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`docs/snippets/${file} exited (${code}) before listening: ${out}`)));
  });
}

before(() => {
  // The package under its name beside the snippets, as an app has it installed (with its `mcp-retry-policy` bin).
  mkdirSync(join(snippets, 'node_modules/.bin'), { recursive: true });
  const link = join(snippets, 'node_modules/mcp-retry-policy');
  if (!existsSync(link)) symlinkSync('../../../pkg', link, 'dir');
  const bin = join(snippets, 'node_modules/.bin/mcp-retry-policy');
  if (!existsSync(bin)) symlinkSync('../mcp-retry-policy/check/bin.js', bin);
});

after(() => {
  for (const c of children) c.kill();
  rmSync(tmp, { recursive: true, force: true });
});

// The quick-start server (server.mjs) first: the client and shell snippets run against it.
const servers = files.filter((f) => f.kind === 'server').sort((a, b) => (b.file === 'server.mjs') - (a.file === 'server.mjs'));
test('the snippets: each server passes the checker, and the client and shell snippets run against the first', async (t) => {
  assert.equal(servers[0]?.file, 'server.mjs', 'the quick-start server snippet, server.mjs');
  let main;
  for (const s of servers) {
    await t.test(`docs/snippets/${s.file}: check passes`, async () => {
      const url = await serve(s.file);
      if (s.file === 'server.mjs') main = url;
      const report = await checkServer(url, {
        tool: s.tool, args: s.args,
        headers: { authorization: 'Bearer alice' }, otherTenantHeaders: { authorization: 'Bearer bob' },
      });
      const failed = report.checks.filter((c) => c.status === 'fail');
      assert.deepEqual(failed.map((c) => `${c.title}: ${c.reason}`), [], `checks failed for ${s.file}`);
      assert.ok(report.counts.pass >= 8, `${s.file}: at least 8 checks pass (${JSON.stringify(report.counts)})`);
    });
  }
  for (const c of files.filter((f) => f.kind === 'client' || f.kind === 'sh')) {
    await t.test(`docs/snippets/${c.file} runs (${c.kind})`, async () => {
      const out = await run(c.file, { MCP_URL: main });
      if (c.kind === 'sh') assert.doesNotMatch(out, /\bFAIL\b/);
    });
  }
  for (const c of files.filter((f) => f.kind === 'standalone')) {
    await t.test(`docs/snippets/${c.file} runs`, () => run(c.file, {}));
  }
});

test('the Cargo.toml lines the docs show are the versions and features this crate builds with', () => {
  const cargo = readFileSync(join(root, 'Cargo.toml'), 'utf8');
  const ours = /^version = "(\d+\.\d+)\./m.exec(cargo)[1];
  const features = new Set([...cargo.slice(cargo.indexOf('[features]')).split(/\n\[/)[0].matchAll(/^([\w-]+) = /gm)].map((m) => m[1]));
  for (const f of files.filter((x) => x.kind === 'cargo-deps')) {
    const text = readFileSync(join(snippets, f.file), 'utf8');
    const deps = [...text.matchAll(/^([\w-]+) = (?:"([^"]+)"|\{ version = "([^"]+)"(?:, features = \[([^\]]*)\])? \})/gm)];
    assert.ok(deps.length >= 3, `${f.file}: its dependencies`);
    for (const [, name, plain, version = plain, list = ''] of deps) {
      const wanted = [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
      if (name === 'mcp-retry-policy') {
        assert.equal(version, ours, `${f.file}: mcp-retry-policy ${version}, the crate is ${ours}`);
        for (const w of wanted) assert.ok(features.has(w), `${f.file}: mcp-retry-policy has no feature ${w}`);
        continue;
      }
      const lines = [...cargo.matchAll(new RegExp(`^${name} = (?:"([^"]+)"|\\{ version = "([^"]+)"[^\\n]*)$`, 'gm'))];
      assert.ok(lines.length, `${f.file}: this crate does not build with ${name}`);
      assert.ok(lines.some((l) => (l[1] ?? l[2]).startsWith(version)), `${f.file}: ${name} ${version} is not a version this crate builds with (${lines.map((l) => l[1] ?? l[2])})`);
      const have = new Set(lines.flatMap((l) => [...l[0].matchAll(/"([^"]+)"/g)].map((m) => m[1])));
      for (const w of wanted) assert.ok(have.has(w) || ['macros', 'rt-multi-thread'].includes(w), `${f.file}: ${name} is not built with feature ${w} here`);
    }
  }
});
