// The package in real headless Chromium (playwright-core, Debian's chromium): a page imports the `browser`
// entry and drives the real MCP SDK client through our fault proxy to a real MCP server, same-origin.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { launchChromium } from '../support/chromium.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { randomJsonValues } from '../support/random-json.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
let server;
let proxy;
let web;
let browser;
let page;
let origin;

before(async () => {
  server = await startMcpServer();
  proxy = await startFaultProxy(server.url);
  await build({
    entryPoints: [`${root}tests/browser/sdk-entry.mjs`],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    outfile: `${root}tests/browser/sdk-bundle.js`,
    logLevel: 'error',
  });
  // zod as one ES module, for the page's import map (the package imports it by name).
  await build({
    stdin: { contents: "export * from 'zod';", resolveDir: root, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    outfile: `${root}tests/browser/zod-bundle.js`,
    logLevel: 'error',
  });
  const target = new URL(proxy.url);
  web = http.createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/mcp') {
      // Same origin as the page: forward to the fault proxy.
      const up = http.request({ hostname: target.hostname, port: target.port, path: '/mcp', method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
        r.on('close', () => !r.complete && res.destroy()); // pass a broken answer on as broken
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
      return;
    }
    const ext = path.slice(path.lastIndexOf('.'));
    if (!types[ext] || !/^\/(pkg|tests)\//.test(path) || path.includes('..')) return res.writeHead(404).end();
    try {
      const body = await readFile(root + path.slice(1));
      res.writeHead(200, { 'content-type': types[ext] }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${web.address().port}`;
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(`${origin}/tests/browser/page.html`);
  await page.waitForFunction(() => document.getElementById('log').textContent === 'ready', null, { timeout: 10_000 });
});

after(async () => {
  await browser?.close();
  await new Promise((r) => (web ? web.close(r) : r()));
  await proxy?.close();
  await server?.close();
});

test('the engine runs in Chromium through the browser entry', async () => {
  assert.deepEqual(await page.evaluate(() => window.api.engine()), { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' });
});

test('IndexedDbJournal meets the journal contract in Chromium', async () => {
  const checks = await page.evaluate(() => window.api.contract());
  assert.ok(checks.length >= 10);
  for (const c of checks) assert.ok(c.ok, `${c.name}: ${c.detail}`);
});

test('a cut response in the browser: unsafe → unknown (bare TypeError = maybe sent); keyed → retried with one id', async () => {
  proxy.faults.push('cut');
  const unsafe = await page.evaluate(() => window.api.call('create_ticket', { title: 'browser' }, { baseDelayMs: 10, maxDelayMs: 20 }));
  assert.equal(unsafe.status, 'unknown');
  assert.deepEqual(unsafe.attempts, [{ kind: 'network', sent: 'maybe' }]);
  assert.equal(server.effects.tickets.length, 1);

  proxy.faults.push('cut');
  const keyed = await page.evaluate(() => window.api.call('create_ticket_keyed', { title: 'browser keyed' }, { baseDelayMs: 10, maxDelayMs: 20 }));
  assert.equal(keyed.status, 'succeeded');
  assert.equal(keyed.attempts.length, 2);
  assert.equal(server.effects.tickets.length, 2);
  assert.deepEqual([...server.effects.keyed.keys()], [keyed.operationId]);
});

test('an unknown keyed write survives a page reload in IndexedDB', async () => {
  proxy.faults.push('cut');
  const lost = await page.evaluate(() => window.api.call('create_ticket_keyed', { title: 'lost' }, { maxAttempts: 1 }));
  assert.equal(lost.status, 'unknown');
  await page.reload();
  await page.waitForFunction(() => document.getElementById('log').textContent === 'ready');
  const pending = await page.evaluate(() => window.api.pendingAfterReload());
  assert.ok(pending.some((e) => e.operationId === lost.operationId && e.state === 'unknown'), JSON.stringify(pending));
});

test('Chromium may itself re-send a POST whose reused connection closed before any answer; a keyed write stays one ticket', async () => {
  // Warm the connection so the next request reuses it, then close it after the server committed.
  await page.evaluate(() => window.api.call('search_tickets', { query: 'warm' }, {}));
  const before = server.effects.tickets.length;
  proxy.faults.push('drop');
  const out = await page.evaluate(() => window.api.call('create_ticket_keyed', { title: 'dropped' }, { baseDelayMs: 10, maxDelayMs: 20 }));
  assert.equal(out.status, 'succeeded');
  assert.equal(server.effects.tickets.length, before + 1, 'however often it was sent, the server made one ticket');
  assert.ok(proxy.calls().filter((c) => c.tool === 'create_ticket_keyed').length >= 2, 'it was sent more than once');
});

test('fingerprints in Chromium (JS writer + wasm SHA-256) equal those in Node (the same writer + node:crypto)', async () => {
  const { fingerprint } = await import('../../pkg/node.js');
  const values = randomJsonValues(7, 300, ['', 'a', 'é', '😀', '\u20ac', '\r\n\t', '"\\', '\u0001\u001f', '\ufb33', 'key', '10', '9', '\u0080']);
  values.push({ items: Array.from({ length: 2000 }, (_, i) => ({ id: i, title: `ticket ${i} ünïcödé`, ratio: i + 0.25 })) });
  const inBrowser = await page.evaluate(async (vs) => {
    const { fingerprint: fp } = await import('/pkg/browser.js');
    return vs.map((v) => fp(v));
  }, values);
  assert.deepEqual(inBrowser, values.map((v) => fingerprint(v)));
});

test('a front end that imports only mcp-retry-policy/client downloads only the client wasm', async () => {
  const fresh = await browser.newPage();
  const wasm = [];
  fresh.on('request', (r) => r.url().endsWith('.wasm') && wasm.push(new URL(r.url()).pathname));
  await fresh.goto(`${origin}/tests/browser/client-only.html`);
  await fresh.waitForFunction(() => document.getElementById('log').textContent !== 'loading…', null, { timeout: 10_000 });
  assert.equal(await fresh.evaluate(() => document.getElementById('log').textContent), 'unknown');
  assert.deepEqual(wasm, ['/pkg/mcp_retry_policy_client_bg.wasm']);
  await fresh.close();
});
