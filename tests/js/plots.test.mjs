// The benchmark's plots (docs/src/plots/*.svg, drawn by benches/js/plots.mjs from the numbers of each table, in the
// same run) cannot go stale where the code alone decides them: the storms (§5, 5b, 5c) and the hedged reads (§10)
// are seeded simulations, so regenerating them must give the committed files byte for byte. Regenerate with
// `node benches/js/run.mjs --only=storms,hedge` (it writes docs/src/plots/ and says which files). The timed
// plots (hot path, instantiation, size) move with the machine and the build: only their shape is checked.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stormSection } from '../../benches/js/storms.mjs';
import { hedgeSection } from '../../benches/js/hedge.mjs';
import { RetryEngine } from '../../pkg/client.node.js';

const plots = fileURLToPath(new URL('../../docs/src/plots/', import.meta.url));
const DETERMINISTIC = [
  'storm-outage', 'storm-brownout', 'storm-long-brownout',
  'shared-outage', 'shared-brownout', 'shared-long-brownout',
  'blip',
  'hedge-5', 'hedge-10', 'hedge-20',
];
const TIMED = ['hot-path', 'instantiate', 'size'];

/** The deterministic sections run as run.mjs runs them, their plots written into `dir`; the names written. */
function regenerate(dir) {
  const names = [];
  const plot = (name, svg) => {
    names.push(name);
    writeFileSync(join(dir, `${name}.svg`), svg);
  };
  const say = () => {};
  stormSection({ say, RetryEngine, plot });
  hedgeSection({ say, RetryEngine, plot });
  return names;
}

test('the seeded plots (storms, 5b, 5c, hedged reads) are what the benchmark draws today, byte for byte', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plots-'));
  try {
    const names = regenerate(dir);
    assert.deepEqual(names, DETERMINISTIC, 'the sections draw these plots, in this order');
    for (const name of names) {
      const fresh = readFileSync(join(dir, `${name}.svg`), 'utf8');
      let committed;
      try {
        committed = readFileSync(join(plots, `${name}.svg`), 'utf8');
      } catch {
        assert.fail(`docs/src/plots/${name}.svg is missing — run node benches/js/run.mjs --only=storms,hedge`);
      }
      assert.ok(committed === fresh, `docs/src/plots/${name}.svg differs from what the code draws — run node benches/js/run.mjs --only=storms,hedge`);
    }
    // Twice in one process: nothing leaks between runs (cockatiel's Math.random is seeded per simulation).
    const again = mkdtempSync(join(tmpdir(), 'plots-'));
    try {
      regenerate(again);
      for (const name of names) assert.equal(readFileSync(join(again, `${name}.svg`), 'utf8'), readFileSync(join(dir, `${name}.svg`), 'utf8'), `${name}: a second run differs`);
    } finally {
      rmSync(again, { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A small well-formedness check (what an XML parser would refuse): tags nest and close, attributes are quoted and
 * not repeated, text and attribute values use only the five entities or numeric ones. Returns the elements as
 * `{ name, attrs, text }` in document order. */
function parse(xml) {
  const elements = [];
  const stack = [];
  const entity = /&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;
  const checkText = (s, where) => assert.ok(!/[<>]/.test(s.replace(entity, '')) && !/&/.test(s.replace(entity, '')), `bad character data ${where}: ${s.slice(0, 60)}`);
  let at = 0;
  const body = xml.replace(/^\s*(<\?xml[^?]*\?>)?/, (m) => ' '.repeat(m.length));
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g;
  for (let m = tag.exec(body); m; m = tag.exec(body)) {
    const between = body.slice(at, m.index);
    assert.ok(!between.includes('<'), `unparsable markup near: ${between.slice(between.indexOf('<'), between.indexOf('<') + 60)}`);
    checkText(between, 'between tags');
    if (stack.length) stack.at(-1).text += between;
    else assert.equal(between.trim(), '', 'text outside the root element');
    at = m.index + m[0].length;
    const [, close, name, rawAttrs, selfClose] = m;
    if (close) {
      assert.ok(!rawAttrs.trim() && !selfClose, `malformed end tag </${name}>`);
      const open = stack.pop();
      assert.ok(open, `</${name}> closes nothing`);
      assert.equal(open.name, name, `</${name}> closes <${open.name}>`);
      continue;
    }
    const attrs = {};
    for (const a of rawAttrs.matchAll(/([\w:.-]+)\s*=\s*("([^"]*)"|'([^']*)')/g)) {
      assert.ok(!(a[1] in attrs), `<${name}> repeats ${a[1]}`);
      const v = a[3] ?? a[4];
      checkText(v, `in ${name}@${a[1]}`);
      attrs[a[1]] = v;
    }
    const el = { name, attrs, text: '' };
    assert.ok(stack.length || !elements.length, 'a second root element');
    elements.push(el);
    if (!selfClose) stack.push(el);
  }
  assert.equal(body.slice(at).trim(), '', 'text after the root element');
  assert.equal(stack.length, 0, `unclosed: ${stack.map((e) => e.name).join(', ')}`);
  return elements;
}

test('every plot in docs/src/plots is well-formed SVG with a title, a description, axis labels and a legend', () => {
  const files = readdirSync(plots).filter((f) => f.endsWith('.svg')).sort();
  assert.deepEqual(files, [...DETERMINISTIC, ...TIMED].map((n) => `${n}.svg`).sort(), 'the plots the benchmark draws, no others');
  for (const file of files) {
    const xml = readFileSync(join(plots, file), 'utf8');
    const els = parse(xml);
    const root = els[0];
    assert.equal(root.name, 'svg', `${file}: the root is <svg>`);
    assert.equal(root.attrs.xmlns, 'http://www.w3.org/2000/svg', `${file}: the SVG namespace`);
    assert.equal(root.attrs.width, '700', `${file}: drawn 700 px wide`);
    assert.match(root.attrs.viewBox ?? '', /^0 0 700 \d+(\.\d)?$/, `${file}: a viewBox, so it scales`);
    assert.equal(root.attrs.role, 'img', `${file}: role="img"`);
    const ids = new Set(els.map((e) => e.attrs.id).filter(Boolean));
    const labelled = (root.attrs['aria-labelledby'] ?? '').split(' ').filter(Boolean);
    assert.equal(labelled.length, 2, `${file}: aria-labelledby names the title and the description`);
    for (const id of labelled) assert.ok(ids.has(id), `${file}: aria-labelledby's #${id} exists`);
    const title = els.find((e) => e.name === 'title');
    assert.ok(title && title.text.trim().length > 10 && title.attrs.id === labelled[0], `${file}: a <title>, the accessible name`);
    const desc = els.find((e) => e.name === 'desc');
    assert.ok(desc && /\d/.test(desc.text) && desc.attrs.id === labelled[1], `${file}: a <desc> with the numbers`);
    const axisLabels = els.filter((e) => e.attrs.class === 'axis-label').map((e) => e.text.trim());
    assert.ok(axisLabels.length >= 2, `${file}: both axes labelled (${axisLabels.join(' | ')})`);
    assert.ok(axisLabels.some((l) => /\([^)]*(?:\b(?:s|ms|ns|KB)\b|%|requests\/s)[^)]*\)/.test(l)), `${file}: an axis label gives its unit: ${axisLabels.join(' | ')}`);
    const ticks = els.filter((e) => e.name === 'text' && /^[−\d,.]+$/.test(e.text.trim()));
    assert.ok(ticks.length >= 4, `${file}: numbered ticks`);
    const legendAt = els.findIndex((e) => e.attrs.class === 'legend');
    assert.ok(legendAt > 0, `${file}: a legend`);
    const legendTexts = els.slice(legendAt).filter((e) => e.name === 'text' && e.text.trim());
    assert.ok(legendTexts.length >= 1, `${file}: the legend names its series`);
    const data = els.filter((e) => (e.name === 'path' && e.attrs.class === 'series') || (e.name === 'rect' && e.attrs.y && els.indexOf(e) < legendAt && e.attrs.height !== root.attrs.height));
    assert.ok(data.length >= 2, `${file}: lines or bars drawn`);
    assert.doesNotMatch(xml, /NaN|undefined|Infinity|null/, `${file}: no missing number`);
  }
});
