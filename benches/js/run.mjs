// The benchmark: markdown tables on stdout (and in target/bench.md). Ratios are against peers measured in
// the same run; nothing here asserts a time.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ExponentialBackoff } from 'cockatiel';
import { RetryEngine } from '../../pkg/client.node.js';
import { fingerprintSection } from './fingerprint.mjs';
import { ledgerSection } from './ledger.mjs';
import { fmt, median, measure, measureAsync } from './measure.mjs';
import { blipSection, sharedSection, stormSection } from './storms.mjs';
import { hotPlot, instantiatePlot, sizePlot } from './plots.mjs';
import { hedgeSection } from './hedge.mjs';
import { e2eSection, wrapperSection } from './e2e.mjs';
import { sizeSection } from './size.mjs';
import { soakSection } from './soak.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
// `--only=hot,instantiate,fingerprint,size,storms,ledger,e2e,wrapper,hedge,soak`: some sections (default: all);
// `storms` is 5, 5b and 5c, and `shared` (5b) or `blip` (5c) runs one of them alone.
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
const want = (section) => !only || only.includes(section);
// Each section with a plot writes docs/src/plots/<name>.svg (benches/js/plots.mjs) from the numbers of its table,
// whenever it runs: a partial run writes only its own.
const plotsDir = `${root}docs/src/plots/`;
const written = [];
const plot = (name, svg) => {
  mkdirSync(plotsDir, { recursive: true });
  writeFileSync(`${plotsDir}${name}.svg`, svg);
  written.push(`docs/src/plots/${name}.svg`);
};
const out = [];
const say = (s = '') => {
  out.push(s);
  console.log(s);
};
const cpu = cpus()[0]?.model ?? 'unknown CPU';
say(`# mcp-retry-policy benchmarks`);
say();
const stamp = `${new Date().toISOString().slice(0, 10)} · ${cpu} · ${cpus().length} cores · ${Math.round(totalmem() / 2 ** 30)} GiB · Node ${process.version}`;
say(stamp);

// 1. The decision hot path.
if (want('hot')) {
  const engine = new RetryEngine({ breaker: false, budget: false }, { seed: 1 });
  const outcome = { kind: 'http', status: 503 };
  const probe = engine.begin(0);
  const empty = measure(() => probe.attempts, 1_000_000);
  const classify = measure(() => engine.classify(outcome), 1_000_000);
  const long = new RetryEngine({ breaker: false, budget: false, maxAttempts: 100, totalTimeoutMs: 86_400_000 }, { seed: 2 });
  let lc = long.begin(0);
  const attempt = measure((i) => {
    if (i % 90 === 0) lc = long.begin(0);
    long.admit(lc, 1);
    return long.record(lc, outcome, 'read_only', 2);
  }, 500_000);
  const step = measure((i) => {
    const c = engine.begin(i);
    engine.admit(c, i);
    engine.record(c, outcome, 'read_only', i);
    c.free();
  }, 200_000);
  let backoff = new ExponentialBackoff();
  const cockatiel = measure((i) => {
    // cockatiel's work per failure in its retry loop: the error filter, then the backoff's next delay.
    if (i % 3 === 0) backoff = new ExponentialBackoff();
    backoff = backoff.next({ attempt: i % 3, result: { error: outcome } });
    return backoff.duration;
  }, 1_000_000);
  say();
  say('## 1. Decision hot path (ns per operation, median of 7 runs)');
  say();
  say('| operation | ns/op | × cockatiel step | × empty wasm call |');
  say('|---|---:|---:|---:|');
  say(`| empty wasm export call (\`call.attempts\` getter) | ${fmt(empty, 0)} | ${fmt(empty / cockatiel)} | 1.00 |`);
  say(`| ours: \`engine.classify(outcome)\` | ${fmt(classify, 0)} | ${fmt(classify / cockatiel)} | ${fmt(classify / empty)} |`);
  say(`| ours: one attempt, \`admit\` + \`record\` (classify, breaker, budget, decide) | ${fmt(attempt, 0)} | ${fmt(attempt / cockatiel)} | ${fmt(attempt / empty)} |`);
  say(`| ours: a whole call, \`begin\` + \`admit\` + \`record\` + \`free\` | ${fmt(step, 0)} | ${fmt(step / cockatiel)} | ${fmt(step / empty)} |`);
  say(`| cockatiel: error filter + \`ExponentialBackoff.next()\` | ${fmt(cockatiel, 0)} | 1.00 | ${fmt(cockatiel / empty)} |`);
  plot('hot-path', hotPlot([
    { label: 'empty wasm export call (`call.attempts` getter)', short: 'empty wasm call (call.attempts)', ns: empty },
    { label: 'ours: `engine.classify(outcome)`', short: 'ours: engine.classify(outcome)', ns: classify },
    { label: 'ours: one attempt, `admit` + `record`', short: 'ours: one attempt (admit + record)', ns: attempt },
    { label: 'ours: a whole call, `begin` + `admit` + `record` + `free`', short: 'ours: a whole call (begin … free)', ns: step },
    { label: 'cockatiel: error filter + `ExponentialBackoff.next()`', short: 'cockatiel: filter + backoff.next()', ns: cockatiel },
  ], stamp));
}

// 2. Instantiation.
if (want('instantiate')) {
  const runs = (face) => {
    const script = `
      import { readFileSync } from 'node:fs';
      import { initSync } from ${JSON.stringify(`${root}pkg/mcp_retry_policy_${face}.js`)};
      const bytes = readFileSync(${JSON.stringify(`${root}pkg/mcp_retry_policy_${face}_bg.wasm`)});
      const t = performance.now();
      initSync({ module: new WebAssembly.Module(bytes) });
      console.log(performance.now() - t);`;
    return median(Array.from({ length: 7 }, () => Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }))));
  };
  say();
  say('## 2. Instantiation in Node (compile + init, fresh process, median of 7)');
  say();
  // The peer in the same run: the smallest module there is (its 8-byte header), compiled and instantiated the
  // same way in a fresh process. What it costs is V8's own first-module cost, which any wasm pays.
  const emptyScript = `
      const t = performance.now();
      new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])));
      console.log(performance.now() - t);`;
  const empty = median(Array.from({ length: 7 }, () => Number(execFileSync(process.execPath, ['--input-type=module', '-e', emptyScript], { encoding: 'utf8' }))));
  say('| module | ms | less an empty module |');
  say('|---|---:|---:|');
  const modules = [{ label: 'client wasm', ms: runs('client') }, { label: 'server wasm', ms: runs('server') }];
  for (const m of modules) say(`| ${m.label} | ${fmt(m.ms)} | ${fmt(m.ms - empty)} |`);
  say(`| an empty module (8 bytes: V8's first-module cost) | ${fmt(empty)} | 0.00 |`);
  plot('instantiate', instantiatePlot(modules, stamp));
}

// 3. Fingerprints: every way measured, with the peer, in benches/js/fingerprint.mjs (also runnable alone).
if (want('fingerprint')) await fingerprintSection({ say, fmt, measure, measureAsync });

// 4. Size.
if (want('size')) {
  mkdirSync(`${root}target/size`, { recursive: true });
  const bundle = async (contents, name) => {
    const outfile = `${root}target/size/${name}.min.js`;
    // The peers (the MCP SDK, its zod, pg) are the app's own dependencies, already in its bundle: not counted.
    await build({
      stdin: { contents, resolveDir: root, loader: 'js' }, bundle: true, minify: true, format: 'esm', platform: 'browser', outfile, logLevel: 'error',
      external: ['zod', 'pg', '@modelcontextprotocol/sdk'],
    });
    const code = readFileSync(outfile);
    return { raw: code.length, gz: gzipSync(code, { level: 9 }).length };
  };
  const wasm = (face) => {
    const b = readFileSync(`${root}pkg/mcp_retry_policy_${face}_bg.wasm`);
    return { raw: b.length, gz: gzipSync(b, { level: 9 }).length };
  };
  const add = (...xs) => xs.reduce((a, x) => ({ raw: a.raw + x.raw, gz: a.gz + x.gz }), { raw: 0, gz: 0 });
  const client = add(await bundle(`export { withRetry, RetryEngine } from './pkg/client.browser.js';`, 'ours-client'), wasm('client'));
  // A plain browser app (target ≤ 15 KB gzip) and one using every option (target ≤ 30 KB): each part handed in.
  const plain = add(await bundle(`export { withRetry, observeFetch } from './pkg/client.browser.js';`, 'ours-plain'), wasm('client'));
  const everything = add(await bundle(
    `export { withRetry, observeFetch, SharedBreaker, DurableObjectBreakerState, SubrequestBudget, IndexedDbJournal } from './pkg/client.browser.js';
     export { ALL_PARTS } from './pkg/parts.js';`, 'ours-every-option'), wasm('client'));
  const whole = add(await bundle(`export * from './pkg/browser.js';`, 'ours-all'), wasm('client'), wasm('server'));
  const cockatiel = await bundle(`export * from 'cockatiel';`, 'cockatiel');
  const cockatielRetry = await bundle(`export { retry, handleAll, ExponentialBackoff } from 'cockatiel';`, 'cockatiel-retry');
  const pRetry = await bundle(`export { default } from 'p-retry';`, 'p-retry');
  say();
  say('## 4. Size as shipped to a browser (bundled with esbuild, minified; gzip -9; peers — the MCP SDK, zod, pg — not counted)');
  say();
  say('| package | raw | gzip | × cockatiel (gzip) |');
  say('|---|---:|---:|---:|');
  const sizes = [];
  const row = (name, s, short) => {
    sizes.push({ label: name, short, ...s });
    say(`| ${name} | ${fmt(s.raw / 1024, 1)} KB | ${fmt(s.gz / 1024, 1)} KB | ${fmt(s.gz / cockatiel.gz)} |`);
  };
  row('ours: a plain app — `withRetry`, `observeFetch` (JS + client wasm; target 15 KB)', plain, 'ours: plain app (withRetry, observeFetch)');
  row('ours: every option — all parts, the shared breaker, the subrequest budget, IndexedDB (target 30 KB)', everything, 'ours: every option');
  row('ours: `withRetry` and `RetryEngine` (JS + client wasm)', client, 'ours: withRetry and RetryEngine');
  row('ours: the whole package (both faces, both wasm modules)', whole, 'ours: the whole package (both faces)');
  row('cockatiel (whole library)', cockatiel, 'cockatiel (whole library)');
  row('cockatiel (`retry`, `handleAll`, `ExponentialBackoff`, tree-shaken)', cockatielRetry, 'cockatiel, tree-shaken (retry, backoff)');
  row('p-retry', pRetry, 'p-retry');
  plot('size', sizePlot(sizes));
  // 4b, 4c: where the client's bytes go (benches/js/size.mjs).
  await sizeSection({ say, fmt });
}

// 5. Storms: benches/js/storms.mjs (also runnable alone).
if (want('storms')) stormSection({ say, RetryEngine, plot });
else {
  if (want('shared')) sharedSection({ say, RetryEngine, plot });
  if (want('blip')) blipSection({ say, RetryEngine, plot });
}

// 6. The operation ledger per store: benches/js/ledger.mjs (also runnable alone; starts its own Postgres).
if (want('ledger')) await ledgerSection({ say });

// 8. End to end against a real server, and 9. the wrapper alone: benches/js/e2e.mjs.
if (want('e2e')) await e2eSection(say);
if (want('wrapper')) await wrapperSection(say, measureAsync);
if (want('hedge')) hedgeSection({ say, RetryEngine, plot });
// 11. A long life (100,000 keyed calls, 200,000 reads, heap after GC): benches/js/soak.mjs, in a child with --expose-gc.
if (want('soak')) soakSection(say, fmt);

// The whole run is the book's tables (docs/src/benchmarks.md); a partial one is written beside them.
mkdirSync(`${root}target`, { recursive: true });
writeFileSync(`${root}target/${only ? 'bench-partial' : 'bench'}.md`, `${out.join('\n')}\n`);
console.log(written.length ? `\nplots written: ${written.join(', ')}` : '\nplots written: none');
