// The playground, built by Vite from the package as users install it, in real headless Chromium.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync, symlinkSync, rmSync, existsSync, lstatSync, copyFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { launchChromium } from '../support/chromium.mjs';
import { RetryEngine } from '../../pkg/client.node.js';
import { ATTEMPT_MS, TOOLS, sendOver, ticketServer, argumentsFor } from '../../www/story.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const out = `${root}target/www/`;
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
let web;
let browser;
let page;
// Everything the page reports as wrong, from its first request on: uncaught errors, console errors, failed requests.
const problems = [];

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
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  await page.goto(`http://127.0.0.1:${web.address().port}/`);
  // `ready` is set once everything is drawn (the storm last, after the first paint).
  await page.waitForFunction(() => window.playground?.ready, null, { timeout: 30_000 });
  assert.deepEqual(problems, []);
});

after(async () => {
  await browser?.close();
  await new Promise((r) => (web ? web.close(r) : r()));
});

const cells = (sel) => page.$$eval(sel, (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent.trim())));
const texts = (sel) => page.$$eval(sel, (ns) => ns.map((n) => n.textContent.trim()));

/** The time axis of a timeline: its tick labels, each `N ms` (or `N s`), at increasing x. */
async function axisOf(svg) {
  const ticks = await page.$$eval(`${svg} .axis .tick`, (gs) => gs.map((g) => ({ x: Number(g.querySelector('line').getAttribute('x1')), label: g.querySelector('text').textContent })));
  assert.ok(ticks.length >= 3, `${svg}: ${ticks.length} ticks`);
  for (const t of ticks) assert.match(t.label, /^\d+(\.\d)? m?s$/, `${svg}: tick "${t.label}"`);
  for (let i = 1; i < ticks.length; i++) assert.ok(ticks[i].x > ticks[i - 1].x, `${svg}: ticks in order`);
  assert.equal(ticks[0].label, '0 ms');
  return ticks.map((t) => t.label);
}

/** What the story's right side must show: the package's engine, asked in Node with the page's seed and outcomes. */
function engineSteps(choice) {
  const tool = TOOLS[choice];
  const engine = new RetryEngine(undefined, { seed: 1 });
  const safety = engine.safety(tool, { trusted: true });
  const args = argumentsFor(tool);
  if (safety === 'keyed') args.operation_id = 'same-id-on-every-attempt';
  const server = ticketServer();
  const call = engine.begin(0);
  const steps = [];
  for (let now = 0, n = 1; ; n++) {
    assert.equal(engine.admit(call, now).admitted, true);
    const d = engine.record(call, sendOver(server, tool.name, args, now, n).outcome, safety, now + ATTEMPT_MS).decision;
    steps.push({ action: d.action, delay: String(d.delayMs ?? ''), status: d.status ?? '', reason: d.reason });
    if (d.action === 'stop') break;
    now += ATTEMPT_MS + d.delayMs;
  }
  engine.free();
  return { safety, steps };
}
const pageSteps = () => page.$$eval('#ours-steps li', (lis) => lis.map((li) => ({ ...li.dataset })));

test('the Vite bundle carries the client wasm only, as an asset', async () => {
  const { readdirSync } = await import('node:fs');
  const assets = readdirSync(`${out}assets`);
  assert.equal(assets.filter((f) => f.endsWith('.wasm')).length, 1);
  assert.ok(assets.some((f) => /^mcp_retry_policy_client_bg-.*\.wasm$/.test(f)), assets.join(', '));
});

test('the first screen: one lost answer, side by side — a plain retry makes 2 tickets, withRetry 1, succeeded', async () => {
  assert.equal(await page.inputValue('#story-safety'), 'keyed', 'the page opens on a keyed write');
  assert.match(await page.textContent('#story-scenario'), /create_ticket .*commits.*connection resets/s);
  // Left: the blind re-send ran twice on the server.
  assert.equal(await page.getAttribute('#naive-tickets', 'data-count'), '2');
  assert.equal(await page.textContent('#naive-tickets'), '2 tickets');
  assert.match(await page.textContent('#naive-told'), /told: ok/, 'and the caller was told all is well');
  assert.deepEqual(await texts('#naive-timeline .attempt-label'), ['#1 answer lost', '#2 ok']);
  assert.deepEqual(await texts('#naive-timeline .mark-label'), ['T-1 created', 'T-2 created: a 2nd ticket']);
  // Right: the same failure through the engine: the same operation id, the ledger replays, one ticket.
  assert.equal(await page.getAttribute('#ours-tickets', 'data-count'), '1');
  assert.equal(await page.textContent('#ours-tickets'), '1 ticket');
  assert.equal(await page.textContent('#ours-status'), 'succeeded');
  assert.deepEqual(await texts('#ours-timeline .attempt-label'), ['#1 answer lost', '#2 ok → succeeded']);
  assert.deepEqual(await texts('#ours-timeline .mark-label'), ['T-1 created', 'T-1 replayed']);
  assert.match(await page.textContent('#ours-how'), /reads the tool as keyed; .*operation_id/);
  // Every step the right side shows is the engine's own answer (asked again here, in Node, for the same outcomes).
  const want = engineSteps('keyed');
  assert.equal(want.safety, 'keyed');
  assert.deepEqual(await pageSteps(), want.steps);
  assert.equal(want.steps[0].action, 'retry');
  assert.match(await page.textContent('#ours-timeline .wait-label'), new RegExp(`^wait ${want.steps[0].delay} ms$`));
  // Both timelines have a time axis with labelled ms ticks, on one scale.
  const axis = await axisOf('#naive-timeline');
  assert.deepEqual(await axisOf('#ours-timeline'), axis);
  assert.match(await page.textContent('#story-moral'), /second ticket.*one ticket/);
});

test('the screenshot: the page as it opens, and the figures it shows kept beside it', async () => {
  await page.screenshot({ path: `${root}target/playground.png`, fullPage: true });
  // The README shows this page (www/playground.png). The figures it shows that the code gives deterministically —
  // the story's, and our engine's storm rows (seeded arrivals and jitter) — are kept beside the picture; when
  // the code gives others, the picture is retaken into www/ and this test fails until the new one is committed, so
  // the README cannot show figures the code no longer gives. (The modelled and cockatiel rows draw Math.random:
  // not compared.)
  const rows = await cells('#storm-table tbody tr');
  assert.equal(rows.length, 6);
  const storm = rows.filter((r) => /^(ours|no jitter)/.test(r[0].replace(/^■\s*/, ''))).map((r) => r.map((c) => c.replace(/^■\s*/, '')).join(' | '));
  const story = [
    ['plain retry', await page.textContent('#naive-tickets'), await page.textContent('#naive-told')].join(' | '),
    ['withRetry', await page.textContent('#ours-tickets'), await page.textContent('#ours-status')].join(' | '),
  ];
  const shown = { story, rows: storm };
  const sidecar = `${root}www/playground.json`;
  const kept = existsSync(sidecar) ? JSON.parse(await readFile(sidecar, 'utf8')) : {};
  if (JSON.stringify({ story: kept.story, rows: kept.rows }) !== JSON.stringify(shown)) {
    copyFileSync(`${root}target/playground.png`, `${root}www/playground.png`);
    writeFileSync(sidecar, `${JSON.stringify({ note: 'the figures www/playground.png shows (tests/js/playground.test.mjs)', ...shown }, null, 2)}\n`);
    assert.fail(`the README's screenshot showed other figures (${JSON.stringify(kept)}): retaken into www/playground.png and www/playground.json — commit them`);
  }
});

test('the story: switching the safety; unsafe ends unknown — shown as neither success nor failure', async () => {
  await page.selectOption('#story-safety', 'unsafe');
  await page.waitForFunction(() => document.querySelector('#ours-status').textContent === 'unknown');
  assert.equal(await page.getAttribute('#naive-tickets', 'data-count'), '2', 'the blind re-send still makes two');
  assert.deepEqual(await pageSteps(), engineSteps('unsafe').steps);
  assert.deepEqual(await pageSteps(), [{ action: 'stop', delay: '', status: 'unknown', reason: 'unsafe_after_unknown' }]);
  assert.deepEqual(await texts('#ours-timeline .attempt-label'), ['#1 answer lost → unknown']);
  assert.match(await page.getAttribute('#ours-status', 'class'), /\bunknown\b/);
  const verdict = await page.textContent('#ours .verdict');
  assert.doesNotMatch(verdict, /\b(succeeded|failed)\b/, verdict);
  assert.match(verdict, /neither success nor failure/);
  assert.match(await page.getAttribute('#ours-tickets', 'class'), /\buncertain\b/, 'the ticket count is not shown as a good end');
  assert.equal(await page.getAttribute('#ours-tickets', 'data-count'), '1');

  await page.selectOption('#story-safety', 'idempotent');
  await page.waitForFunction(() => document.querySelector('#ours-status').textContent === 'succeeded');
  assert.deepEqual(await pageSteps(), engineSteps('idempotent').steps);
  assert.equal(await page.getAttribute('#naive-tickets', 'data-count'), '1', 'put_ticket twice: one ticket');
  assert.equal(await page.getAttribute('#ours-tickets', 'data-count'), '1');

  await page.selectOption('#story-safety', 'read_only');
  await page.waitForFunction(() => document.querySelector('#story-scenario').textContent.includes('search_tickets'));
  assert.deepEqual(await pageSteps(), engineSteps('read_only').steps);
  assert.equal(await page.textContent('#ours-status'), 'succeeded');
  assert.equal(await page.getAttribute('#naive-tickets', 'data-count'), '0');
  assert.equal(await page.getAttribute('#ours-tickets', 'data-count'), '0');

  await page.selectOption('#story-safety', 'keyed');
  await page.waitForFunction(() => document.querySelector('#ours-tickets').dataset.count === '1' && document.querySelector('#ours-status').textContent === 'succeeded');
  assert.equal(await page.getAttribute('#naive-tickets', 'data-count'), '2');
});

test('your own call: the default script on a keyed tool retries through a lost answer and a 503, then succeeds — on a time axis', async () => {
  assert.equal(await page.inputValue('#call-form select[name=safety]'), 'keyed');
  const rows = await cells('#attempts tbody tr');
  assert.equal(rows.length, 3);
  assert.deepEqual(rows.map((r) => r[3]), ['unknown', 'not_processed', 'processed']);
  assert.match(rows[1][5], /retry in (1[5-9]\d\d|[2-9]\d\d\d) ms/, 'Retry-After 1500 is the floor');
  assert.match(await page.textContent('#call-status'), /Final status: succeeded/);
  // Labelled attempts, labelled waits, a labelled time axis: not one full-width bar.
  assert.deepEqual(await texts('#timeline .attempt-label'), ['#1 timeout', '#2 503', '#3 result → succeeded']);
  assert.deepEqual(await page.$$eval('#timeline .attempt', (gs) => gs.map((g) => g.dataset.delivery)), ['unknown', 'not_processed', 'processed']);
  const waits = await texts('#timeline .wait-label');
  assert.equal(waits.length, 2);
  assert.equal(waits[1], `wait ${rows[1][5].match(/retry in (\d+) ms/)[1]} ms`);
  const ticks = await axisOf('#timeline');
  assert.ok(ticks.includes('1000 ms'), ticks.join(', '));
  const widths = await page.$$eval('#timeline .attempt rect', (rs) => rs.map((r) => Number(r.getAttribute('width'))));
  for (const w of widths) assert.ok(w < 100, `an attempt is a short bar on the axis (${w})`);
});

test('your own call: the same script on an unsafe tool stops at the first lost answer, unknown', async () => {
  await page.selectOption('#call-form select[name=safety]', 'unsafe');
  await page.click('#run-call');
  const rows = await cells('#attempts tbody tr');
  assert.equal(rows.length, 1);
  assert.equal(rows[0][3], 'unknown');
  assert.match(rows[0][5], /stop: unknown \(unsafe_after_unknown\)/);
  assert.match(await page.textContent('#call-status'), /Final status: unknown/);
  assert.deepEqual(await texts('#timeline .attempt-label'), ['#1 timeout → unknown']);
  await axisOf('#timeline');
  await page.selectOption('#call-form select[name=safety]', 'keyed');
  await page.click('#run-call');
  assert.equal((await cells('#attempts tbody tr')).length, 3);
});

test('your own call: a bad policy value is shown as the engine\'s typed error, by its field', async () => {
  await page.fill('input[name=maxAttempts]', '0');
  await page.click('#run-call');
  assert.match(await page.textContent('#call-error'), /RangeError: maxAttempts must be at least 1, got 0 \[code too_small, field maxAttempts\]/);
  assert.equal(await page.getAttribute('input[name=maxAttempts]', 'aria-invalid'), 'true');
  assert.match(await page.textContent('#call-form-maxAttempts-error'), /maxAttempts must be at least 1, got 0/);
  await page.fill('input[name=maxAttempts]', '3');
  await page.click('#run-call');
  assert.equal(await page.isHidden('#call-error'), true);
  assert.equal(await page.$$eval('#call-form .field-error', (n) => n.length), 0);
  assert.equal(await page.getAttribute('input[name=maxAttempts]', 'aria-invalid'), null);
});

/** After a run that failed on input: the message by the field, and nothing of an earlier run left on screen. */
async function assertRefused(field, message) {
  assert.equal(await page.isVisible('#call-error'), true);
  assert.match(await page.textContent('#call-error'), message);
  const control = `#call-form [name=${field}]`;
  assert.equal(await page.getAttribute(control, 'aria-invalid'), 'true');
  const note = await page.getAttribute(control, 'aria-describedby');
  assert.match(await page.textContent(`#${note}`), message);
  // The note sits by its field (right after it, in its label).
  assert.equal(await page.$eval(control, (c) => c.nextElementSibling?.className), 'field-error');
  assert.equal(await page.$$eval('#timeline > *', (n) => n.length), 0, 'the earlier timeline is gone');
  assert.equal(await page.$$eval('#attempts tbody tr', (n) => n.length), 0, 'the earlier attempts are gone');
  assert.equal(await page.textContent('#call-status'), '');
  assert.equal(await page.isHidden('#call-output'), true);
}

test('your own call: an input error (empty, negative, absurd, a bad script line) clears the earlier result', async () => {
  const cases = [
    ['maxAttempts', '', /maxAttempts must be a finite number, got NaN/],
    ['maxAttempts', '-1', /maxAttempts must not be negative, got -1/],
    ['maxAttempts', '1000000000', /maxAttempts must be at most 100, got 1000000000/],
    ['baseDelayMs', '1e12', /baseDelayMs must be at most 86400000/],
    ['seed', '1.5', /seed must be a whole number, got 1.5/],
    ['outcomes', 'timeout\nhttp\nresult', /line 2: outcome.status must be a finite number, got NaN/],
    ['outcomes', 'timeout\nfrobnicate', /line 2: unknown outcome "frobnicate"/],
  ];
  const defaults = { maxAttempts: '3', baseDelayMs: '200', seed: '7', outcomes: 'timeout\nhttp 503 retry-after 1500\nresult' };
  for (const [field, value, message] of cases) {
    await page.click('#run-call'); // a good run first: its timeline is on screen
    assert.equal(await page.$$eval('#timeline .attempt', (n) => n.length), 3);
    await page.fill(`#call-form [name=${field}]`, value);
    await page.click('#run-call');
    await assertRefused(field, message);
    await page.fill(`#call-form [name=${field}]`, defaults[field]);
  }
  await page.click('#run-call');
  assert.equal(await page.isHidden('#call-error'), true);
  assert.equal(await page.isVisible('#call-output'), true);
  assert.equal(await page.$$eval('#timeline .attempt', (n) => n.length), 3);
});

test('the storm chart: a legend with one entry per line, and no two lines drawn alike', async () => {
  // The storm is drawn as the page opens, with the defaults.
  const series = await page.$$eval('#load path.series', (ps) => ps.map((p) => ({
    d: p.getAttribute('d'), stroke: p.getAttribute('stroke'), dash: p.getAttribute('stroke-dasharray') ?? '', transform: p.getAttribute('transform') ?? '', label: p.textContent,
  })));
  assert.equal(series.length, 6);
  const legend = await page.$$eval('#load-legend li', (lis) => lis.map((li) => {
    const line = li.querySelector('svg line');
    return { text: li.textContent.trim(), stroke: line.getAttribute('stroke'), dash: line.getAttribute('stroke-dasharray') ?? '' };
  }));
  assert.equal(legend.length, series.length, 'one legend entry per line');
  const labels = (await cells('#storm-table tbody tr')).map((r) => r[0].replace(/^■\s*/, ''));
  for (const [i, s] of series.entries()) {
    assert.ok(legend[i].text.startsWith(s.label), `${legend[i].text} names ${s.label}`);
    assert.equal(s.label, labels[i]);
    assert.equal(legend[i].stroke, s.stroke, `${s.label}: the legend's swatch is the line's colour`);
    assert.equal(legend[i].dash, s.dash, `${s.label}: and its dashes`);
  }
  assert.equal(new Set(series.map((s) => s.stroke)).size, series.length, 'a colour per line');
  // At the defaults our engine with and without its budget send the same load every second (the breaker sheds
  // before the budget binds): the second is drawn dashed and offset, and the legend says so.
  const same = [];
  for (let i = 0; i < series.length; i++) {
    for (let j = 0; j < i; j++) {
      if (series[i].d !== series[j].d) continue;
      same.push([series[j].label, series[i].label]);
      assert.notEqual(series[i].dash, series[j].dash, `${series[i].label} is drawn unlike ${series[j].label}`);
      assert.notEqual(series[i].transform, series[j].transform, `${series[i].label} is offset from ${series[j].label}`);
      assert.match(legend[i].text, new RegExp(`equal to “${series[j].label}” every second: drawn dashed, \\d px above`));
    }
  }
  assert.deepEqual(same, [['ours, defaults', 'ours, no budget']]);
  assert.equal(legend.filter((l) => /equal to/.test(l.text)).length, same.length, 'only equal lines are said to be');
});

test('the storm simulator: six strategies side by side; ours sheds a 60 s outage below every peer and is back within 2 s', async () => {
  await page.click('#run-storm');
  await page.waitForFunction(() => document.querySelectorAll('#storm-table tbody tr').length === 6, null, { timeout: 60_000 });
  const rows = await cells('#storm-table tbody tr');
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
  assert.equal(await page.$$eval('#load path.series', (p) => p.length), 6);
  assert.equal(await page.$$eval('#load-legend li', (p) => p.length), 6);
  // The knob: the old 10 s open time sheds more and recovers later; a bad one is refused by name.
  await page.fill('input[name=openMs]', '10000');
  await page.click('#run-storm');
  await page.waitForFunction(() => document.querySelector('#storm-table tbody tr td')?.textContent.includes('breaker open 10 s'), null, { timeout: 60_000 });
  const slow = await cells('#storm-table tbody tr');
  assert.ok(parseFloat(slow[0][2]) < parseFloat(byName['ours, defaults'][2]), `10 s: ${slow[0][2]}`);
  assert.ok(parseInt(slow[0][4], 10) > 2, `10 s recovers in ${slow[0][4]}`);
  await page.fill('input[name=openMs]', '0');
  await page.click('#run-storm');
  assert.match(await page.textContent('#storm-error'), /RangeError: breaker.openMs must be at least 1, got 0 \[code too_small, field breaker.openMs\]/);
  assert.equal(await page.getAttribute('input[name=openMs]', 'aria-invalid'), 'true');
  await page.fill('input[name=openMs]', '2000');
  await page.click('#run-storm');
  assert.equal(await page.isHidden('#storm-error'), true);
});

test('the storm: an input error shows by its field and clears the chart, the legend and the table', async () => {
  const cases = [
    ['clients', '', /clients must be a finite number, got nothing/],
    ['clients', '-5', /clients must be at least 1, got -5/],
    ['clients', '1000000000', /clients must be at most 2000, got 1000000000/],
    ['failureRate', '1.5', /failureRate must be at most 1, got 1.5/],
    ['outageS', '2.5', /outageS must be a whole number, got 2.5/],
    ['openMs', '', /breaker.openMs must be a finite number, got NaN/],
  ];
  const defaults = { clients: '100', failureRate: '1', outageS: '60', openMs: '2000' };
  for (const [field, value, message] of cases) {
    assert.equal(await page.$$eval('#storm-table tbody tr', (n) => n.length), 6, 'a good run is on screen');
    await page.fill(`#storm-form [name=${field}]`, value);
    await page.click('#run-storm');
    assert.match(await page.textContent('#storm-error'), message);
    const control = `#storm-form [name=${field}]`;
    assert.equal(await page.getAttribute(control, 'aria-invalid'), 'true');
    assert.match(await page.textContent(`#${await page.getAttribute(control, 'aria-describedby')}`), message);
    assert.equal(await page.$$eval('#storm-table tbody tr', (n) => n.length), 0, 'the table is cleared');
    assert.equal(await page.$$eval('#load > *', (n) => n.length), 0, 'the chart is cleared');
    assert.equal(await page.$$eval('#load-legend li', (n) => n.length), 0, 'the legend is cleared');
    assert.equal(await page.isHidden('#storm-output'), true);
    await page.fill(control, defaults[field]);
    await page.click('#run-storm');
    await page.waitForFunction(() => document.querySelectorAll('#storm-table tbody tr').length === 6, null, { timeout: 60_000 });
    assert.equal(await page.isHidden('#storm-error'), true);
  }
});

test('the page logged no error the whole session (and the watch would have seen one)', async () => {
  assert.deepEqual(problems, [], problems.join('\n'));
  // The watch itself: a console error in the page is collected.
  await Promise.all([page.waitForEvent('console'), page.evaluate(() => console.error('probe from the test'))]);
  assert.deepEqual(problems, ['console.error: probe from the test']);
  problems.length = 0;
});
