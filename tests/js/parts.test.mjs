// Pay for what you use. A plain browser app (withRetry + observeFetch from 'mcp-retry-policy/client', resolved
// through the package's exports map with the browser condition, as a user's bundler does) is bundled with
// esbuild: none of the optional parts' modules may be in its metafile, and each part handed in brings its own
// module and no other. The plain withRetry (the browser entry's) refuses by name every option that needs a part it
// was not given, before anything is sent; handed the part, it works against the real TS SDK server; the Node
// entry's withRetry has every part built in.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry as nodeWithRetry } from '../../pkg/node.js'; // initializes the client wasm, too
import { withRetry as plainWithRetry } from '../../pkg/client/with-retry.js'; // the browser entry's withRetry
import { hedging, tasks, telemetry, inputRounds, stdio, ALL_PARTS } from '../../pkg/parts.js';
import { startMcpServer } from '../support/mcp-server.mjs';

const pkg = fileURLToPath(new URL('../../pkg/', import.meta.url));

/** Each optional part's own modules (a plain app must bundle none of them). */
const OPTIONAL = {
  hedging: ['client/hedge.js'],
  tasks: ['client/tasks.js'],
  inputRounds: ['client/input-rounds.js'],
  telemetry: ['client/telemetry.js'],
  stdio: ['client/stdio.js'],
  subrequestBudget: ['client/subrequests.js'],
  sharedBreaker: ['client/shared-breaker.js', 'client/breaker-state.js'],
  journals: ['client/journal.js'], // IndexedDbJournal, DurableObjectJournal
};
const ALL_OPTIONAL = Object.values(OPTIONAL).flat();

let app; // a folder with node_modules/mcp-retry-policy → pkg/, as an installed package
before(async () => {
  app = await mkdtemp(join(tmpdir(), 'parts-app-'));
  await mkdir(join(app, 'node_modules'));
  await symlink(pkg, join(app, 'node_modules', 'mcp-retry-policy'), 'dir');
});
after(() => rm(app, { recursive: true, force: true }));

/** The package's modules an app of `source` bundles for a browser (paths inside pkg/), and its gzip-free size. */
async function bundled(source) {
  const file = join(app, `app-${Math.random().toString(36).slice(2)}.js`);
  await writeFile(file, source);
  const r = await build({
    entryPoints: [file], bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, metafile: true,
    absWorkingDir: app, logLevel: 'error', external: ['zod', 'pg', '@modelcontextprotocol/sdk'],
  });
  const [out] = Object.values(r.metafile.outputs);
  const inputs = Object.entries(out.inputs)
    .filter(([, v]) => v.bytesInOutput > 0)
    .map(([k]) => k.replace(/^.*?pkg\//, ''));
  inputs.text = r.outputFiles[0].text; // the bundle itself
  return inputs;
}

test('a plain browser app bundles none of the optional parts', async () => {
  const inputs = await bundled(`
    import { withRetry, observeFetch } from 'mcp-retry-policy/client';
    export const make = (client) => withRetry(client, { policy: { maxAttempts: 3 } });
    export { observeFetch };`);
  assert.ok(inputs.includes('client/with-retry.js') && inputs.includes('client/call-loop.js'), inputs.join(' '));
  const optional = inputs.filter((f) => ALL_OPTIONAL.includes(f));
  assert.deepEqual(optional, [], `optional parts in a plain app's bundle: ${optional.join(', ')}`);
  // Nor the shared tables' server or telemetry entries (generated/names.js is one module: each entry must shake out).
  for (const words of ['nothing was done', 'mcp_retry_policy.ledger', 'gen_ai.tool.name', 'record_changed']) {
    assert.ok(!inputs.text.includes(words), `a plain app's bundle carries "${words}"`);
  }
});

test('each part handed in brings its own modules and no other part', async () => {
  for (const part of ['hedging', 'tasks', 'inputRounds', 'telemetry', 'stdio']) {
    const inputs = await bundled(`
      import { withRetry } from 'mcp-retry-policy/client';
      import { ${part} } from 'mcp-retry-policy/parts';
      export const make = (client) => withRetry(client, { parts: [${part}] });`);
    for (const f of OPTIONAL[part]) assert.ok(inputs.includes(f), `${part}: ${f} missing from ${inputs.join(' ')}`);
    const others = inputs.filter((f) => ALL_OPTIONAL.includes(f) && !OPTIONAL[part].includes(f));
    assert.deepEqual(others, [], `${part} brought ${others.join(', ')}`);
  }
});

const fakeClient = () => ({ request: async () => ({ tools: [] }), transport: {} });
const missing = (field, part) => (e) => e instanceof TypeError && e.code === 'part_missing' && e.field === field && e.message.includes(`import { ${part} } from 'mcp-retry-policy/parts'`);

test('the plain withRetry refuses by name an option whose part it was not given', () => {
  assert.throws(() => plainWithRetry(fakeClient(), { policy: { hedgeAfterMs: 100 } }), missing('policy.hedgeAfterMs', 'hedging'));
  assert.throws(() => plainWithRetry(fakeClient(), { opentelemetry: {} }), missing('opentelemetry', 'telemetry'));
  assert.throws(() => plainWithRetry({ ...fakeClient(), transport: { pid: 1, close() {} } }), missing('transport', 'stdio'));
  // Given the part, the same options are taken (telemetry still checks the module it is handed).
  plainWithRetry(fakeClient(), { policy: { hedgeAfterMs: 100 }, parts: [hedging] });
  assert.throws(() => plainWithRetry(fakeClient(), { opentelemetry: {}, parts: [telemetry] }), (e) => e.field === 'opentelemetry' && e.code === 'invalid_type');
  // Not parts: refused by name, whatever they are.
  for (const parts of ['hedging', {}, [null], [{}], [{ part: 'hedging ' }], [hedging, 7]]) {
    assert.throws(() => plainWithRetry(fakeClient(), { parts }), (e) => e instanceof TypeError && e.code === 'invalid_type' && /^parts/.test(e.field), String(parts));
  }
  // The Node entry has every part in: no `parts` needed, and handing one in again changes nothing.
  nodeWithRetry(fakeClient(), { policy: { hedgeAfterMs: 100 } });
  nodeWithRetry(fakeClient(), { policy: { hedgeAfterMs: 100 }, parts: [hedging, ...ALL_PARTS] });
  assert.deepEqual(ALL_PARTS.map((p) => p.part).sort(), ['hedging', 'inputRounds', 'stdio', 'tasks', 'telemetry']);
  assert.ok(Object.isFrozen(hedging) && Object.isFrozen(tasks) && Object.isFrozen(inputRounds) && Object.isFrozen(stdio));
});

// Against the real TS SDK server: the plain wrapper sends nothing for a task it cannot follow, and, handed the
// hedging part, hedges a slow read (two runs, the first cancelled) as the Node entry does.
let server;
const runs = new Map();
before(async () => {
  server = await startMcpServer({
    extraTools: (s) => {
      s.registerTool('slow_first_read', { description: 'slow on its first call', annotations: { readOnlyHint: true } }, async () => {
        const n = (runs.get('slow_first_read') ?? 0) + 1;
        runs.set('slow_first_read', n);
        if (n === 1) await new Promise((r) => setTimeout(r, 1_500));
        return { content: [{ type: 'text', text: `answer ${n}` }] };
      });
    },
  });
});
after(() => server?.close());

async function connect() {
  const client = new Client({ name: 'parts-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return client;
}

test('plain withRetry against the real SDK server: a task call without the tasks part is refused unsent; hedging handed in hedges', async () => {
  const client = await connect();
  try {
    const plain = plainWithRetry(client, { trusted: true });
    await assert.rejects(plain.call({ name: 'slow_first_read', arguments: {} }, { task: true }), missing('task', 'tasks'));
    assert.equal(runs.get('slow_first_read'), undefined, 'nothing was sent');

    const hedged = plainWithRetry(client, { trusted: true, policy: { hedgeAfterMs: 100, maxHedges: 1 }, parts: [hedging] });
    const out = await hedged.call({ name: 'slow_first_read', arguments: {} });
    assert.equal(out.status, 'succeeded');
    assert.equal(runs.get('slow_first_read'), 2, 'the copy ran beside the slow first send');
    assert.match(out.result.content[0].text, /answer 2/);
  } finally {
    await client.close();
  }
});
