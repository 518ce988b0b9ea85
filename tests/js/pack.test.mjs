// What users install: `npm pack` of the built package, installed from the tarball into fresh consumer
// projects, each run the way its tool runs it — Node ESM, Node CommonJS (`require`), TypeScript with
// `moduleResolution` node16 and bundler, Vite and webpack 5 builds loaded in headless Chromium — plus publint
// and Are the Types Wrong on the tarball. Writes target/pack/report.json (the README's install table).
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../support/chromium.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = (name) => join(root, 'node_modules/.bin', name);
const work = mkdtempSync(join(tmpdir(), 'consumers-'));
const report = {};
let tarball;
let browser;

const run = (cmd, args, cwd, extra = {}) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000, ...extra });

/** A fresh project in `work/name` with `files`, the tarball installed (and `deps`). */
function project(name, files, deps = []) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries({ 'package.json': JSON.stringify({ name: `consumer-${name}`, private: true, version: '1.0.0' }), ...files })) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  run('npm', ['install', tarball, ...deps, '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', '--loglevel=error'], dir);
  return dir;
}

function size(dir) {
  let n = 0;
  for (const f of readdirSync(dir, { withFileTypes: true })) n += f.isDirectory() ? size(join(dir, f.name)) : statSync(join(dir, f.name)).size;
  return n;
}

// What every runtime consumer checks: a decision, a fingerprint, and that the faces load.
const NODE_CHECK = `
const e = new RetryEngine(undefined, { seed: 1 });
const c = e.begin(0);
e.admit(c, 0);
const { decision } = e.record(c, { kind: 'timeout' }, 'unsafe', 1);
const store = new MemoryLedgerStore();
console.log(JSON.stringify({ decision, fingerprint: fingerprint({ b: 1, a: [true] }), store: typeof store.get, withIdempotency: typeof withIdempotency, ledger: typeof OperationLedger }));
`;
const EXPECTED = { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' };

before(() => {
  mkdirSync(join(root, 'target/pack'), { recursive: true });
  for (const f of readdirSync(join(root, 'target/pack'))) if (f.endsWith('.tgz')) rmSync(join(root, 'target/pack', f));
  const name = run('npm', ['pack', '--pack-destination', join(root, 'target/pack'), '--loglevel=error'], join(root, 'pkg')).trim().split('\n').at(-1);
  tarball = join(root, 'target/pack', name);
  report.tarball = { file: name, bytes: statSync(tarball).size };
});

after(async () => {
  await browser?.close();
  writeFileSync(join(root, 'target/pack/report.json'), `${JSON.stringify(report, null, 2)}\n`);
  rmSync(work, { recursive: true, force: true });
});

test('the tarball holds the package and nothing else: no tests, no sources, no maps; licenses and README in', () => {
  const files = run('tar', ['-tzf', tarball], root).trim().split('\n').map((f) => f.replace(/^package\//, ''));
  for (const f of files) assert.doesNotMatch(f, /(^|\/)(tests?|src|benches|scripts|node_modules)\/|\.map$|\.rs$|\.ts$(?<!\.d\.ts)/, f);
  for (const f of ['LICENSE-MIT', 'LICENSE-APACHE', 'README.md', 'package.json', 'generated/names.js', 'mcp_retry_policy_client_bg.wasm', 'mcp_retry_policy_server_bg.wasm']) {
    assert.ok(files.includes(f), `${f} is in the tarball`);
  }
  const pj = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json'], root));
  assert.equal(pj.license, 'MIT OR Apache-2.0');
  assert.ok(!JSON.stringify(pj).includes('example.invalid'), 'no placeholder URLs');
  report.files = files.length;
});

test('publint: clean', () => {
  const out = run(bin('publint'), ['run', tarball, '--strict'], root);
  assert.match(out, /All good!/, out);
  report.publint = 'pass';
});

test('Are the Types Wrong: clean for an ESM-only package (node10, node16 from ESM, bundler)', () => {
  // ESM only: CommonJS callers load it through Node's require(esm) (tested below), which attw's node16-from-CJS
  // resolution mode does not model; the esm-only profile leaves that mode out and checks the rest.
  // attw exits non-zero on a problem its profile does not ignore.
  const { analysis } = JSON.parse(run(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'json'], root));
  const kinds = [...new Set(analysis.problems.map((p) => p.kind))];
  assert.deepEqual(kinds.filter((k) => k !== 'CJSResolvesToESM'), [], JSON.stringify(analysis.problems));
  for (const p of analysis.problems) assert.equal(p.resolutionKind, 'node16-cjs', JSON.stringify(p));
  report.attw = 'pass (esm-only profile: the node16-from-CJS row reads "ESM, dynamic import only")';
});

test('Node ESM: import the package, its client and its server entries', () => {
  const dir = project('node-esm', {
    'index.mjs': `import { RetryEngine, MemoryLedgerStore, fingerprint, OperationLedger } from 'mcp-retry-policy';
import { RetryEngine as ClientEngine } from 'mcp-retry-policy/client';
import { withIdempotency } from 'mcp-retry-policy/server';
import { retryingMcp, installRetry, JOURNAL_PREFIX } from 'mcp-retry-policy/agents';
if (typeof ClientEngine !== 'function') throw new Error('client entry');
if (typeof retryingMcp !== 'function' || typeof installRetry !== 'function' || JOURNAL_PREFIX !== 'mcp-retry-policy:') throw new Error('agents entry');
${NODE_CHECK}`,
  });
  const out = JSON.parse(run(process.execPath, ['index.mjs'], dir));
  assert.deepEqual(out.decision, EXPECTED);
  assert.equal(out.fingerprint.length, 64);
  report.install = { bytes: size(join(dir, 'node_modules/mcp-retry-policy')), peers: readdirSync(join(dir, 'node_modules')).filter((d) => d !== 'mcp-retry-policy' && !d.startsWith('.')) };
  // The bin, linked by npm: its usage, or — without the optional MCP SDK, which the checker needs — what to install.
  const cli = spawnSync(join(dir, 'node_modules/.bin/mcp-retry-policy'), ['--help'], { cwd: dir, encoding: 'utf8' });
  if (existsSync(join(dir, 'node_modules/@modelcontextprotocol/sdk'))) {
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(cli.stdout, /^Usage: mcp-retry-policy check <url> --tool NAME/);
  } else {
    assert.equal(cli.status, 3, cli.stderr);
    assert.match(cli.stderr, /needs @modelcontextprotocol\/sdk/);
  }
  report['Node ESM'] = 'pass';
});

test('Node CommonJS: require() the package (Node\'s require(esm): Node ≥ 20.19 / 22.12)', () => {
  const dir = project('node-cjs', {
    'index.cjs': `const { RetryEngine, MemoryLedgerStore, fingerprint, OperationLedger } = require('mcp-retry-policy');
const { withIdempotency } = require('mcp-retry-policy/server');
${NODE_CHECK}`,
  });
  const out = JSON.parse(run(process.execPath, ['--no-warnings', 'index.cjs'], dir));
  assert.deepEqual(out.decision, EXPECTED);
  report['Node CJS'] = `pass (Node ${process.versions.node})`;
});

const TS_CONSUMER = `import { RetryEngine, withRetry, type CallOutcome, type AttemptOutcome } from 'mcp-retry-policy';
import { RetryEngine as ClientEngine } from 'mcp-retry-policy/client';
import { OperationLedger, MemoryLedgerStore, withIdempotency, type LedgerRecord } from 'mcp-retry-policy/server';
import { retryingMcp, type AgentLike } from 'mcp-retry-policy/agents';
declare const agent: AgentLike;
void retryingMcp(agent, 'tickets', { trusted: true });
const engine: RetryEngine = new ClientEngine({ maxAttempts: 3 });
const outcome: AttemptOutcome = { kind: 'http', status: 503, retryAfterMs: 1000 };
const status: CallOutcome['status'] = 'unknown';
const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
const wrapped = withIdempotency(ledger, async () => ({ content: [] }), { action: 'a', tenant: () => 't' });
declare const record: LedgerRecord;
void [engine, outcome, status, wrapped, record, withRetry];
// @ts-expect-error — a closed union: not a status
const wrong: CallOutcome['status'] = 'maybe';
void wrong;
`;

for (const [name, resolution, moduleKind, pkgType] of [['TS node16', 'node16', 'node16', 'module'], ['TS bundler', 'bundler', 'esnext', undefined]]) {
  test(`TypeScript, moduleResolution ${resolution}: the public types resolve and check`, () => {
    const dir = project(name.replace(' ', '-').toLowerCase(), {
      ...(pkgType ? { 'package.json': JSON.stringify({ name: 'consumer', private: true, type: pkgType }) } : {}),
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: moduleKind, moduleResolution: resolution, target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: [], lib: ['es2022', 'dom'] }, files: ['index.ts'] }),
      'index.ts': TS_CONSUMER,
    });
    run(bin('tsc'), ['-p', 'tsconfig.json'], dir);
    report[name] = 'pass';
  });
}

/** Serves `dir` on 127.0.0.1 and loads its index.html in Chromium; resolves to what the page put in `window.result`. */
async function inChromium(dir) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
  const web = http.createServer(async (req, res) => {
    let path = new URL(req.url, 'http://x').pathname;
    if (path === '/') path = '/index.html';
    try {
      if (path.includes('..')) throw new Error('no');
      const body = await readFile(join(dir, path));
      res.writeHead(200, { 'content-type': types[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  try {
    browser ??= await launchChromium();
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${web.address().port}/`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 15_000 });
    const result = await page.evaluate(() => window.result);
    await page.close();
    assert.deepEqual(errors, []);
    return result;
  } finally {
    await new Promise((r) => web.close(r));
  }
}

const BROWSER_APP = `import { RetryEngine, newOperationId } from 'mcp-retry-policy/client';
const e = new RetryEngine();
const c = e.begin(0);
e.admit(c, 0);
window.result = { decision: e.record(c, { kind: 'timeout' }, 'unsafe', 1).decision, id: newOperationId().length };
`;

const assetsOf = (dir) => readdirSync(dir, { recursive: true }).map(String);

test('Vite: a client app builds (the client wasm as an asset, no server wasm) and runs in Chromium', async () => {
  const dir = project('vite', {
    'index.html': '<!doctype html><script type="module" src="/main.js"></script>',
    'main.js': BROWSER_APP,
  });
  const { build } = await import('vite');
  await build({ root: dir, logLevel: 'error', build: { outDir: join(dir, 'dist'), target: 'es2022' } });
  const files = assetsOf(join(dir, 'dist'));
  assert.equal(files.filter((f) => f.endsWith('.wasm')).length, 1, files.join(', '));
  assert.ok(files.some((f) => /mcp_retry_policy_client_bg.*\.wasm$/.test(f)), files.join(', '));
  const result = await inChromium(join(dir, 'dist'));
  assert.deepEqual(result, { decision: EXPECTED, id: 36 });
  report.Vite = 'pass';
});

test('webpack 5: a client app builds (the wasm as an asset module) and runs in Chromium', async () => {
  const dir = project('webpack', { 'src/index.js': BROWSER_APP });
  const { default: webpack } = await import('webpack');
  const stats = await new Promise((resolve, reject) => webpack({
    mode: 'production',
    context: dir,
    entry: './src/index.js',
    output: { path: join(dir, 'dist'), filename: 'main.js', publicPath: '/' },
    target: 'web',
  }, (err, s) => (err ? reject(err) : resolve(s))));
  assert.ok(!stats.hasErrors(), stats.toString({ all: false, errors: true }));
  writeFileSync(join(dir, 'dist/index.html'), '<!doctype html><script src="/main.js"></script>');
  const files = assetsOf(join(dir, 'dist'));
  assert.equal(files.filter((f) => f.endsWith('.wasm')).length, 1, files.join(', '));
  const result = await inChromium(join(dir, 'dist'));
  assert.deepEqual(result, { decision: EXPECTED, id: 36 });
  report.webpack = 'pass';
});

test('Next.js 16: a client component (browser entry) and an edge route handler (edge-light entry) build, start and run', async () => {
  const dir = project('next', {
    'package.json': JSON.stringify({ name: 'consumer-next', private: true, version: '1.0.0' }),
    'app/layout.js': 'export default function RootLayout({ children }) { return (<html lang="en"><body>{children}</body></html>); }\n',
    'app/page.js': "import Decision from './decision.js';\nexport default function Page() { return (<main><Decision /></main>); }\n",
    'app/decision.js': `'use client';
import { useEffect, useState } from 'react';
export default function Decision() {
  const [text, setText] = useState('');
  useEffect(() => {
    import('mcp-retry-policy/client').then(({ RetryEngine, newOperationId }) => {
      const e = new RetryEngine();
      const c = e.begin(0);
      e.admit(c, 0);
      window.result = { decision: e.record(c, { kind: 'timeout' }, 'unsafe', 1).decision, id: newOperationId().length };
      setText(JSON.stringify(window.result));
    }, (err) => { window.result = { error: String(err) }; });
  }, []);
  return <pre>{text}</pre>;
}
`,
    'app/api/decide/route.js': `import { RetryEngine } from 'mcp-retry-policy/client';
import { fingerprint } from 'mcp-retry-policy/server';
export const runtime = 'edge';
export async function GET() {
  const e = new RetryEngine();
  const c = e.begin(0);
  e.admit(c, 0);
  return Response.json({ decision: e.record(c, { kind: 'timeout' }, 'unsafe', 1).decision, fingerprint: fingerprint({ a: 1 }) });
}
`,
  }, ['next@16.4.6', 'react@19.2.3', 'react-dom@19.2.3']);
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
  run(join(dir, 'node_modules/.bin/next'), ['build'], dir, { env });
  const { spawn } = await import('node:child_process');
  const port = 3900 + Math.floor(Math.random() * 90);
  const server = spawn(join(dir, 'node_modules/.bin/next'), ['start', '-p', String(port), '-H', '127.0.0.1'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout.on('data', (d) => { log += d; });
  server.stderr.on('data', (d) => { log += d; });
  try {
    for (let i = 0; i < 100 && !/Ready/.test(log); i++) await new Promise((r) => setTimeout(r, 100));
    const res = await fetch(`http://127.0.0.1:${port}/api/decide`);
    const body = await res.text();
    assert.equal(res.status, 200, `${body}\n${log}`);
    const json = JSON.parse(body);
    assert.deepEqual(json.decision, EXPECTED);
    assert.equal(json.fingerprint.length, 64);
    browser ??= await launchChromium();
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 15_000 });
    assert.deepEqual(await page.evaluate(() => window.result), { decision: EXPECTED, id: 36 });
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    server.kill('SIGTERM');
  }
  report['Next.js'] = 'pass (16.4.6: a client component, an edge route handler)';
});

test('the crate for Rust users: cargo package lists the core, the binding, the rmcp face and its examples, its native tests and docs, nothing of the npm layer', () => {
  const files = run('cargo', ['package', '--list', '--allow-dirty', '--quiet'], root).trim().split('\n');
  for (const f of files) {
    assert.match(f, /^(src\/.*\.rs|examples\/(rmcp-(client|server)\/main|names)\.rs|tests\/[a-z_]+\.rs|tests\/(boundary\/cases|rmcp_ledger\/lease)\.rs|benches\/core\.rs|docs\/src\/rust\.md|Cargo\.(toml|toml\.orig|lock)|\.cargo_vcs_info\.json|(README|CHANGELOG|ARCHITECTURE)\.md|LICENSE-(MIT|APACHE))$/, f);
  }
  assert.ok(files.includes('src/lib.rs') && files.includes('LICENSE-APACHE') && files.includes('tests/engine.rs'));
  // The npm layer's name generator is a developer tool: shipped, it would install as a `names` binary.
  assert.ok(!files.some((f) => f.startsWith('src/bin/')), 'no developer tool in the crate');
  report.crate = { files: files.length };
});

test('the install: no dependencies of its own; zod (the MCP SDK\'s) is its one required peer', () => {
  const pj = JSON.parse(readFileSync(join(root, 'pkg/package.json'), 'utf8'));
  assert.equal(pj.dependencies, undefined);
  assert.deepEqual(Object.keys(pj.peerDependencies).sort(), ['@modelcontextprotocol/sdk', '@opentelemetry/api', 'ai', 'pg', 'zod']);
  assert.deepEqual(Object.keys(pj.peerDependenciesMeta).sort(), ['@modelcontextprotocol/sdk', '@opentelemetry/api', 'ai', 'pg']);
});
