// The playground, built by Vite from the package as users install it, in real headless Chromium.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync, symlinkSync, rmSync, existsSync, lstatSync, copyFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { launchChromium } from '../support/chromium.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const out = `${root}target/www/`;
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
let web;
let browser;
let page;

before(async () => {
  // Install the built package under its name, as an app would have it in node_modules.
  const link = `${root}www/node_modules/mcp-retry-policy`;
  mkdirSync(`${root}www/node_modules`, { recursive: true });
  if (existsSync(link) || lstatSync(link, { throwIfNoEntry: false })) rmSync(link, { force: true, recursive: true });
  symlinkSync('../../pkg', link, 'dir');
  await build({ configFile: `${root}www/vite.config.js`, logLevel: 'error' });
  web = http.createServer(async (req, res) => {
    let path = new URL(req.url, 'http://x').pathname;
    if (path === '/') path = '/index.html';
    const ext = path.slice(path.lastIndexOf('.'));
    try {
      if (path.includes('..')) throw new Error('no');
      const body = await readFile(out + path.slice(1));
      res.writeHead(200, { 'content-type': types[ext] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1000, height: 1500 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(`http://127.0.0.1:${web.address().port}/`);
  await page.waitForFunction(() => window.playground?.ready, null, { timeout: 15_000 });
  assert.deepEqual(errors, []);
});

after(async () => {
  await browser?.close();
  await new Promise((r) => (web ? web.close(r) : r()));
});

test('the Vite bundle carries the client wasm only, as an asset', async () => {
  const { readdirSync } = await import('node:fs');
  const assets = readdirSync(`${out}assets`);
  assert.equal(assets.filter((f) => f.endsWith('.wasm')).length, 1);
  assert.ok(assets.some((f) => /^mcp_retry_policy_client_bg-.*\.wasm$/.test(f)), assets.join(', '));
});

test('one call: the default script on an unsafe tool stops at the first lost answer, unknown', async () => {
  const rows = await page.$$eval('#attempts tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.equal(rows.length, 1);
  assert.equal(rows[0][3], 'unknown');
  assert.match(rows[0][5], /stop: unknown \(unsafe_after_unknown\)/);
  assert.match(await page.textContent('#call-status'), /Final status: unknown/);
});

test('one call: the same script on a keyed tool retries through a lost answer and a 503, then succeeds', async () => {
  await page.selectOption('select[name=safety]', 'keyed');
  await page.click('#run-call');
  const rows = await page.$$eval('#attempts tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.equal(rows.length, 3);
  assert.deepEqual(rows.map((r) => r[3]), ['unknown', 'not_processed', 'processed']);
  assert.match(rows[1][5], /retry in (1[5-9]\d\d|[2-9]\d\d\d) ms/, 'Retry-After 1500 is the floor');
  assert.match(await page.textContent('#call-status'), /Final status: succeeded/);
  assert.equal(await page.$$eval('#timeline rect', (r) => r.length) >= 3, true);
});

test('one call: a bad policy value is shown as the engine\'s typed error', async () => {
  await page.fill('input[name=maxAttempts]', '0');
  await page.click('#run-call');
  assert.match(await page.textContent('#call-error'), /RangeError: maxAttempts must be at least 1, got 0 \[code too_small, field maxAttempts\]/);
  await page.fill('input[name=maxAttempts]', '3');
  await page.click('#run-call');
  assert.equal(await page.isHidden('#call-error'), true);
});

test('the storm simulator: six strategies side by side; ours sheds a 60 s outage below every peer and is back within 2 s', async () => {
  await page.click('#run-storm');
  await page.waitForFunction(() => document.querySelectorAll('#storm-table tbody tr').length === 6, null, { timeout: 60_000 });
  const rows = await page.$$eval('#storm-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent.trim())));
  const byName = Object.fromEntries(rows.map((r) => [r[0].replace(/^■\s*/, ''), r]));
  assert.ok(byName['ours, defaults'], rows.map((r) => r[0]).join(' | '));
  // 0.52× since a call's own retries count once toward the breaker (the first four calls of each client make their
  // three attempts); the peers send 2.7–5×.
  assert.ok(parseFloat(byName['ours, defaults'][2]) <= 0.6, `ours: ${byName['ours, defaults'][2]}`);
  for (const peer of ['p-retry defaults', 'cockatiel (ExponentialBackoff defaults, 3 attempts)', 'AWS SDK standard mode']) {
    assert.ok(parseFloat(byName[peer][2]) > 2 * parseFloat(byName['ours, defaults'][2]), `${peer}: ${byName[peer][2]}`);
  }
  assert.match(byName['ours, defaults'][4], /^[0-2] s$/, 'the breaker lets calls through within 2 s of the recovery');
  assert.ok(parseFloat(byName['p-retry defaults'][2]) > 2, 'p-retry multiplies the load');
  assert.equal(byName['p-retry defaults'][1], 'modelled from its defaults');
  assert.equal(await page.$$eval('#load path', (p) => p.length), 6);
  await page.screenshot({ path: `${root}target/playground.png`, fullPage: true });
  // The README shows this page (www/playground.png). The figures of our engine's rows (deterministic: seeded
  // arrivals and jitter) are kept beside the picture; when the code gives others, the picture is retaken into
  // www/ and this test fails until the new one is committed, so the README cannot show figures the code no
  // longer gives. (The modelled and cockatiel rows draw Math.random: not compared.)
  const shown = rows.filter((r) => /^(ours|no jitter)/.test(r[0].replace(/^■\s*/, ''))).map((r) => r.map((c) => c.replace(/^■\s*/, '')).join(' | '));
  const sidecar = `${root}www/playground.json`;
  const kept = existsSync(sidecar) ? JSON.parse(await readFile(sidecar, 'utf8')).rows : undefined;
  if (JSON.stringify(kept) !== JSON.stringify(shown)) {
    copyFileSync(`${root}target/playground.png`, `${root}www/playground.png`);
    writeFileSync(sidecar, `${JSON.stringify({ note: 'the figures www/playground.png shows (tests/js/playground.test.mjs)', rows: shown }, null, 2)}\n`);
    assert.fail(`the README's screenshot showed other figures (${JSON.stringify(kept)}): retaken into www/playground.png and www/playground.json — commit them`);
  }
  // The knob: the old 10 s open time sheds more and recovers later; a bad one is refused by name.
  await page.fill('input[name=openMs]', '10000');
  await page.click('#run-storm');
  await page.waitForFunction(() => document.querySelector('#storm-table tbody tr td')?.textContent.includes('breaker open 10 s'), null, { timeout: 60_000 });
  const slow = await page.$$eval('#storm-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent.trim())));
  assert.ok(parseFloat(slow[0][2]) < parseFloat(byName['ours, defaults'][2]), `10 s: ${slow[0][2]}`);
  assert.ok(parseInt(slow[0][4], 10) > 2, `10 s recovers in ${slow[0][4]}`);
  await page.fill('input[name=openMs]', '0');
  await page.click('#run-storm');
  assert.match(await page.textContent('#storm-error'), /RangeError: breaker.openMs must be at least 1, got 0 \[code too_small, field breaker.openMs\]/);
  await page.fill('input[name=openMs]', '2000');
  await page.click('#run-storm');
  assert.equal(await page.isHidden('#storm-error'), true);
});
