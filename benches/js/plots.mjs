// The benchmark's plots: a small SVG writer (a line chart, a horizontal grouped bar chart; no dependencies) and
// the plots of each section, drawn from the very numbers its table prints, in the same run. run.mjs hands each
// section a `plot(name, svg)` that writes docs/src/plots/<name>.svg; tests/js/plots.test.mjs regenerates the
// deterministic ones (storms, 5b, 5c, hedging: seeded) and compares them byte for byte with the committed files.
// Nothing here reads a clock or a locale: the same numbers give the same bytes.

const WIDTH = 700;
const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
/** Okabe–Ito: told apart with the common colour-vision deficiencies; dashes (lines) and hatching (bars) tell
 * them apart in grey too. */
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
const DASHES = ['', '8 3', '2 2.5', '10 3 2 3', '4 3', '1.5 3', '12 3 3 3 3 3'];
const INK = '#222';
const MUTED = '#555';
const GRID = '#e4e4e4';
/** A white halo under a label drawn over data. */
const HALO = 'stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"';

/** XML text and attribute values. */
export const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** A coordinate: one decimal, no trailing zeros. */
const c = (n) => String(Math.round(n * 10) / 10);
/** `1234.5` → `1,234.5` with `d` decimals; no locale. */
export function num(v, d = 0) {
  const s = Math.abs(v).toFixed(d);
  const [i, f] = s.split('.');
  return `${v < 0 && Number(s) !== 0 ? '−' : ''}${i.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${f ? `.${f}` : ''}`;
}
/** A text's width in px, estimated (sans-serif averages a little over half an em a character). */
const textWidth = (s, size, bold = false) => String(s).length * size * (bold ? 0.6 : 0.55);

/** Splits `text` into lines of at most `max` px at `size`, at spaces. */
function wrap(text, max, size) {
  const words = String(text).split(' ');
  const lines = [];
  let line = '';
  for (const w of words) {
    const next = line ? `${line} ${w}` : w;
    if (line && textWidth(next, size) > max) {
      lines.push(line);
      line = w;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/** Ticks at 1, 2, 2.5 or 5 × 10^k covering [min, max] (`exact`: the axis ends at `max`): { ticks, max, decimals }. */
function linearTicks(min, max, count = 6, exact = false) {
  const raw = (max - min || 1) / count;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  const step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
  const top = exact ? max : Math.ceil(max / step - 1e-9) * step;
  const ticks = [];
  for (let k = Math.ceil(min / step - 1e-9); k * step <= top + step / 1e6; k++) ticks.push(Number((k * step).toFixed(10)));
  const decimals = Math.min(3, (String(Number(step.toFixed(10))).split('.')[1] ?? '').length);
  return { ticks, min, max: Number(top.toFixed(10)), decimals };
}

/** Ticks at 1, 2, 5 × 10^k for a log axis over [min, max]. */
const logCeil = (v) => {
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => Number((m * p).toPrecision(3))).find((t) => t >= v * 0.999);
};
function logTicks(min, max) {
  const ticks = [];
  for (let k = Math.floor(Math.log10(min)); k <= Math.ceil(Math.log10(max)); k++) {
    for (const m of [1, 2, 5]) {
      const v = Number((m * 10 ** k).toPrecision(3));
      if (v >= min * 0.999 && v <= max * 1.001) ticks.push(v);
    }
  }
  return ticks;
}

/** The `<svg>` root: size, the accessible name and description, a white ground (readable on a dark page). */
function frame(id, height, title, desc, body) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${c(height)}" viewBox="0 0 ${WIDTH} ${c(height)}" role="img" aria-labelledby="${id}-title ${id}-desc" font-family="${esc(FONT)}">`,
    `<title id="${id}-title">${esc(title)}</title>`,
    `<desc id="${id}-desc">${esc(desc.replace(/`/g, ''))}</desc>`,
    `<rect width="${WIDTH}" height="${c(height)}" fill="#ffffff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

/** The title (bold) and the subtitle lines; returns [svg lines, the y where the plot may start]. */
function heading(title, subtitle) {
  const out = [];
  let y = 26;
  for (const line of wrap(title, WIDTH - 32, 16)) {
    out.push(`<text x="16" y="${y}" font-size="16" font-weight="bold" fill="${INK}">${esc(line)}</text>`);
    y += 20;
  }
  if (subtitle) {
    for (const line of wrap(subtitle, WIDTH - 32, 12)) {
      out.push(`<text x="16" y="${y - 2}" font-size="12" fill="${MUTED}">${esc(line)}</text>`);
      y += 16;
    }
  }
  return [out, y + 10];
}

/** Legend items `{ label, swatch(x, y) → svg }` laid out in rows from (x0, y0) within `width`. Returns [svg, height]. */
function legend(items, x0, y0, width) {
  const out = ['<g class="legend">'];
  let x = x0;
  let y = y0;
  for (const item of items) {
    const w = 34 + textWidth(item.label, 12) + 16;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += 19;
    }
    out.push(item.swatch(x, y));
    out.push(`<text x="${c(x + 34)}" y="${c(y + 4)}" font-size="12" fill="${INK}">${esc(item.label)}</text>`);
    x += w;
  }
  out.push('</g>');
  return [out, y - y0 + 19];
}

/** A bar fill for series `i`: the colour, hatched from the second series on (grey prints tell them apart). */
function patterns(id, count, colours) {
  const marks = [null, 'M-1,1 l2,-2 M0,6 l6,-6 M5,7 l2,-2', 'M3,0 v6', 'M0,3 h6', 'M-1,5 l2,2 M0,0 l6,6 M5,-1 l2,2'];
  const defs = [];
  for (let i = 0; i < count; i++) {
    const mark = marks[i % marks.length];
    if (!mark) continue;
    defs.push(`<pattern id="${id}-fill${i}" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="${colours[i]}"/><path d="${mark}" stroke="#ffffff" stroke-width="1.6" stroke-opacity="0.75"/></pattern>`);
  }
  return { defs: defs.length ? [`<defs>${defs.join('')}</defs>`] : [], fill: (i) => (marks[i % marks.length] ? `url(#${id}-fill${i})` : colours[i]) };
}

/**
 * A line chart. `x`/`y`: `{ label, min, max }` (`max` rounded up to a tick); `series`: `{ label, points: [[x, y]],
 * style }` (`style`: palette and dash index, default the series' index); `refs`: horizontal lines `{ value,
 * label }`; `bands`: shaded x ranges `{ from, to, label }`.
 */
export function lineChart({ id, title, subtitle, desc, x, y, series, refs = [], bands = [] }) {
  const [head, top] = heading(title, subtitle);
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).concat(refs.map((r) => r.value));
  const yt = linearTicks(y.min ?? 0, y.max ?? Math.max(...ys) * 1.04, 7);
  const xt = linearTicks(x.min, x.max, 6, true);
  const left = 24 + Math.max(...yt.ticks.map((t) => textWidth(num(t, yt.decimals), 11))) + 12;
  const right = WIDTH - 20;
  const plotH = 260;
  const bottom = top + plotH;
  const sx = (v) => left + ((v - xt.min) / (xt.max - xt.min)) * (right - left);
  const sy = (v) => bottom - ((v - yt.min) / (yt.max - yt.min)) * plotH;
  const body = [...head];
  // Bands under everything.
  for (const b of bands) {
    body.push(`<rect class="band" x="${c(sx(b.from))}" y="${c(top)}" width="${c(sx(b.to) - sx(b.from))}" height="${plotH}" fill="#efefef"/>`);
  }
  // Grid, ticks, tick labels.
  body.push('<g class="axis y-axis">');
  for (const t of yt.ticks) {
    body.push(`<line x1="${c(left)}" x2="${c(right)}" y1="${c(sy(t))}" y2="${c(sy(t))}" stroke="${GRID}"/>`);
    body.push(`<line x1="${c(left - 5)}" x2="${c(left)}" y1="${c(sy(t))}" y2="${c(sy(t))}" stroke="${INK}"/>`);
    body.push(`<text x="${c(left - 8)}" y="${c(sy(t) + 4)}" font-size="11" fill="${INK}" text-anchor="end">${num(t, yt.decimals)}</text>`);
  }
  body.push(`<line x1="${c(left)}" x2="${c(left)}" y1="${c(top)}" y2="${c(bottom)}" stroke="${INK}"/>`);
  body.push(`<text class="axis-label" transform="translate(16 ${c(top + plotH / 2)}) rotate(-90)" font-size="12" fill="${INK}" text-anchor="middle">${esc(y.label)}</text>`);
  body.push('</g>', '<g class="axis x-axis">');
  for (const t of xt.ticks) {
    body.push(`<line x1="${c(sx(t))}" x2="${c(sx(t))}" y1="${c(bottom)}" y2="${c(bottom + 5)}" stroke="${INK}"/>`);
    body.push(`<text x="${c(sx(t))}" y="${c(bottom + 18)}" font-size="11" fill="${INK}" text-anchor="middle">${num(t, xt.decimals)}</text>`);
  }
  body.push(`<line x1="${c(left)}" x2="${c(right)}" y1="${c(bottom)}" y2="${c(bottom)}" stroke="${INK}"/>`);
  body.push(`<text class="axis-label" x="${c((left + right) / 2)}" y="${c(bottom + 36)}" font-size="12" fill="${INK}" text-anchor="middle">${esc(x.label)}</text>`);
  body.push('</g>');
  // Reference lines, then the series (the first drawn last: ours on top).
  for (const r of refs) {
    body.push(`<line class="ref" x1="${c(left)}" x2="${c(right)}" y1="${c(sy(r.value))}" y2="${c(sy(r.value))}" stroke="#777" stroke-width="1.2" stroke-dasharray="3 3"/>`);
  }
  const style = (s, i) => s.style ?? i;
  const lines = series.map((s, i) => {
    const k = style(s, i);
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${c(sx(p[0]))},${c(sy(p[1]))}`).join('');
    const dash = DASHES[k % DASHES.length];
    return `<path class="series" d="${d}" fill="none" stroke="${PALETTE[k % PALETTE.length]}" stroke-width="${s.width ?? 1.8}" stroke-linejoin="round"${dash ? ` stroke-dasharray="${dash}"` : ''}><title>${esc(s.label)}</title></path>`;
  });
  body.push('<g class="data">', ...lines.reverse(), '</g>');
  // Labels over the data, on a halo.
  for (const b of bands) {
    body.push(`<text x="${c((sx(b.from) + sx(b.to)) / 2)}" y="${c(top + 14)}" font-size="11" fill="${MUTED}" text-anchor="middle" ${HALO}>${esc(b.label)}</text>`);
  }
  for (const r of refs) {
    body.push(`<text x="${c(right - 4)}" y="${c(sy(r.value) - 5)}" font-size="11" fill="${INK}" text-anchor="end" ${HALO}>${esc(r.label)}</text>`);
  }
  const items = series.map((s, i) => {
    const k = style(s, i);
    const dash = DASHES[k % DASHES.length];
    return { label: s.label, swatch: (lx, ly) => `<line x1="${c(lx)}" x2="${c(lx + 28)}" y1="${c(ly)}" y2="${c(ly)}" stroke="${PALETTE[k % PALETTE.length]}" stroke-width="2.4"${dash ? ` stroke-dasharray="${dash}"` : ''}/>` };
  });
  for (const r of refs.filter((x) => x.legend !== null)) items.push({ label: r.legend ?? r.label, swatch: (lx, ly) => `<line x1="${c(lx)}" x2="${c(lx + 28)}" y1="${c(ly)}" y2="${c(ly)}" stroke="#777" stroke-width="1.4" stroke-dasharray="3 3"/>` });
  for (const b of bands) items.push({ label: b.legend ?? b.label, swatch: (lx, ly) => `<rect x="${c(lx)}" y="${c(ly - 6)}" width="28" height="12" fill="#efefef" stroke="#cccccc"/>` });
  const [leg, legH] = legend(items, left, bottom + 58, right - left);
  body.push(...leg);
  return frame(id, bottom + 58 + legH + 6, title, desc, body);
}

/**
 * A horizontal bar chart, grouped: `categories` (row labels, top to bottom), `series` `{ label, values }` (one value
 * per category, `null` for none: a category draws only its values, so a series per kind colours rows by kind).
 * `value`: `{ label, format(v), log, min, max }`; `refs`: vertical lines `{ value, label }`.
 */
export function barChart({ id, title, subtitle, desc, categories, series, value, refs = [], categoryLabel }) {
  const [head, top0] = heading(title, subtitle);
  const top = top0 + (categoryLabel ? 4 : 0) + 14 * Math.max(0, refs.length - 1);
  const labelMax = 275;
  // A category: its label (wrapped), or [label, note] (the note a second, smaller line).
  const labels = categories.map((l) => (Array.isArray(l) ? [...wrap(l[0], labelMax, 12), { note: l[1] }] : wrap(l, labelMax, 12)));
  const lineText = (l) => (typeof l === 'string' ? l : l.note);
  const left = 16 + Math.min(labelMax, Math.max(...labels.flat().map((l) => textWidth(lineText(l), typeof l === 'string' ? 12 : 11)))) + 12;
  const catName = (cat) => (Array.isArray(cat) ? cat.join(', ') : cat);
  const right = WIDTH - 78;
  const vals = series.flatMap((s) => s.values).filter((v) => v !== null && v !== undefined).concat(refs.map((r) => r.value));
  let ticks;
  let lo;
  let hi;
  let decimals = 0;
  if (value.log) {
    lo = value.min ?? 10 ** Math.floor(Math.log10(Math.min(...vals)));
    hi = value.max ?? logCeil(Math.max(...vals) * 1.05);
    ticks = logTicks(lo, hi);
  } else {
    // The axis long enough for each bar's value label to fit after it.
    const from = value.min ?? 0;
    let need = Math.max(...vals) * 1.02;
    for (const [k, s] of series.entries()) {
      for (const v of s.values) {
        if (v === null || v === undefined) continue;
        const room = WIDTH - 10 - textWidth(value.format(v, k), 11) - left;
        if (room > 0) need = Math.max(need, from + ((v - from) * (right - left)) / room);
      }
    }
    const t = linearTicks(from, value.max ?? need, 6);
    [ticks, lo, hi, decimals] = [t.ticks, t.min, t.max, t.decimals];
  }
  const sv = value.log
    ? (v) => left + ((Math.log(Math.max(v, lo)) - Math.log(lo)) / (Math.log(hi) - Math.log(lo))) * (right - left)
    : (v) => left + ((v - lo) / (hi - lo)) * (right - left);
  const barH = 14;
  const gap = 2;
  const pad = 12;
  const colours = series.map((s, i) => PALETTE[(s.style ?? i) % PALETTE.length]);
  const fills = patterns(id, series.length, colours);
  const body = [...head, ...fills.defs];
  if (categoryLabel) body.push(`<text class="axis-label" x="${c(left - 12)}" y="${c(top - 6)}" font-size="12" font-weight="bold" fill="${INK}" text-anchor="end">${esc(categoryLabel)}</text>`);
  // Rows first, to know the plot's height.
  const rows = [];
  let y = top + pad / 2;
  for (const [i, cat] of categories.entries()) {
    const present = series.map((s, k) => [k, s.values[i]]).filter(([, v]) => v !== null && v !== undefined);
    const h = Math.max(present.length * barH + (present.length - 1) * gap, labels[i].length * 14);
    rows.push({ i, cat, present, y, h });
    y += h + pad;
  }
  const bottom = y - pad / 2;
  body.push('<g class="axis x-axis">');
  for (const t of ticks) {
    body.push(`<line x1="${c(sv(t))}" x2="${c(sv(t))}" y1="${c(top)}" y2="${c(bottom)}" stroke="${GRID}"/>`);
    body.push(`<line x1="${c(sv(t))}" x2="${c(sv(t))}" y1="${c(bottom)}" y2="${c(bottom + 5)}" stroke="${INK}"/>`);
    body.push(`<text x="${c(sv(t))}" y="${c(bottom + 18)}" font-size="11" fill="${INK}" text-anchor="middle">${num(t, decimals)}</text>`);
  }
  body.push(`<line x1="${c(left)}" x2="${c(right)}" y1="${c(bottom)}" y2="${c(bottom)}" stroke="${INK}"/>`);
  body.push(`<text class="axis-label" x="${c((left + right) / 2)}" y="${c(bottom + 36)}" font-size="12" fill="${INK}" text-anchor="middle">${esc(value.label)}</text>`);
  body.push('</g>', '<g class="axis y-axis">');
  body.push(`<line x1="${c(left)}" x2="${c(left)}" y1="${c(top)}" y2="${c(bottom)}" stroke="${INK}"/>`);
  for (const r of rows) {
    const mid = r.y + r.h / 2;
    const n = labels[r.i].length;
    for (const [j, line] of labels[r.i].entries()) {
      const note = typeof line !== 'string';
      body.push(`<text x="${c(left - 8)}" y="${c(mid + 4 + (j - (n - 1) / 2) * 14)}" font-size="${note ? 11 : 12}" fill="${note ? MUTED : INK}" text-anchor="end">${esc(lineText(line))}</text>`);
    }
  }
  body.push('</g>', '<g class="data">');
  for (const r of rows) {
    const used = r.present.length * barH + (r.present.length - 1) * gap;
    let by = r.y + (r.h - used) / 2;
    for (const [k, v] of r.present) {
      const x1 = sv(value.log ? lo : Math.max(lo, 0));
      const w = Math.max(0, sv(v) - x1);
      const text = value.format(v, k);
      body.push(`<rect x="${c(x1)}" y="${c(by)}" width="${c(w)}" height="${barH}" fill="${fills.fill(k)}" stroke="${colours[k]}" stroke-width="1"><title>${esc(`${catName(r.cat)} — ${series[k].label}: ${text}`)}</title></rect>`);
      // After the bar; inside its end, on a halo, where it would run off the picture.
      const inside = x1 + w + 4 + textWidth(text, 11) > WIDTH - 6;
      body.push(inside
        ? `<text x="${c(x1 + w - 4)}" y="${c(by + barH - 3)}" font-size="11" fill="${INK}" text-anchor="end" ${HALO}>${esc(text)}</text>`
        : `<text x="${c(x1 + w + 4)}" y="${c(by + barH - 3)}" font-size="11" fill="${INK}">${esc(text)}</text>`);
      by += barH + gap;
    }
  }
  body.push('</g>');
  for (const [j, ref] of refs.entries()) {
    const ly = top - 6 - 14 * (refs.length - 1 - j);
    body.push(`<line class="ref" x1="${c(sv(ref.value))}" x2="${c(sv(ref.value))}" y1="${c(ly - 9)}" y2="${c(bottom)}" stroke="#444" stroke-width="1.2" stroke-dasharray="4 3"/>`);
    body.push(`<text x="${c(sv(ref.value) + 4)}" y="${c(ly)}" font-size="11" fill="${MUTED}">${esc(ref.label)}</text>`);
  }
  const items = series.map((s, k) => ({ label: s.label, swatch: (lx, ly) => `<rect x="${c(lx)}" y="${c(ly - 6)}" width="28" height="12" fill="${fills.fill(k)}" stroke="${colours[k]}"/>` }));
  for (const ref of refs.filter((r) => r.legend !== null)) items.push({ label: ref.legend ?? ref.label, swatch: (lx, ly) => `<line x1="${c(lx)}" x2="${c(lx + 28)}" y1="${c(ly)}" y2="${c(ly)}" stroke="#444" stroke-width="1.4" stroke-dasharray="4 3"/>` });
  const [leg, legH] = legend(items, 16, bottom + 58, WIDTH - 32);
  body.push(...leg);
  return frame(id, bottom + 58 + legH + 6, title, desc, body);
}

// ——— The sections' plots ———

/** A storm's file name: its scenario. */
export function stormSlug(opts) {
  if ((opts.failureRate ?? 1) >= 1) return 'outage';
  return opts.outageS > 60 ? 'long-brownout' : 'brownout';
}

const bandOf = (opts) => {
  const full = (opts.failureRate ?? 1) >= 1;
  const label = full ? `outage: every request fails (${opts.outageS} s)` : `brownout: ${Math.round(opts.failureRate * 100)} % of requests fail (${opts.outageS} s)`;
  return { from: 30, to: 30 + opts.outageS, label, legend: full ? 'the outage' : 'the brownout' };
};

/** Identical series drawn once, named together ("ours, defaults = ours, no budget"). */
function merged(results, pick) {
  const out = [];
  for (const [i, r] of results.entries()) {
    const key = JSON.stringify(r.perSecond.map(pick));
    const same = out.find((o) => o.key === key);
    if (same) same.label += ` = ${r.label}`;
    else out.push({ key, label: r.label, style: i, points: r.perSecond.map((x, s) => [s, pick(x)]) });
  }
  return out;
}

/** §5: the load offered to the server each second, every strategy, one storm. */
export function stormPlot({ title, opts, results, clients = 100 }) {
  const capacity = Math.floor(clients * 1.2);
  const series = merged(results, (x) => x.sent);
  const windowOf = (r) => r.perSecond.slice(30, 30 + opts.outageS);
  const desc = results
    .map((r) => {
      const w = windowOf(r);
      const mean = w.reduce((n, x) => n + x.sent, 0) / w.length;
      return `${r.label}: peak ${Math.max(...r.perSecond.map((x) => x.sent))} requests/s, mean ${num(mean, 0)} requests/s during it`;
    })
    .join('; ');
  return lineChart({
    id: `storm-${stormSlug(opts)}`,
    title: `Retry storm — ${title}`,
    subtitle: `The load offered to the server: attempts sent each second by 100 clients × 1 call/s (normal load 100 requests/s; capacity 1.2× normal), the same run as the table. Identical series are drawn once.`,
    desc: `Requests sent to the server per second, 0 to ${results[0].perSecond.length} s; the ${bandOf(opts).legend} from 30 to ${30 + opts.outageS} s; capacity ${capacity} requests/s. ${desc}.`,
    x: { label: 'time since start (s)', min: 0, max: results[0].perSecond.length },
    y: { label: 'attempts sent to the server (requests/s)', min: 0 },
    series,
    refs: [{ value: capacity, label: `server capacity ${capacity} requests/s`, legend: 'server capacity' }],
    bands: [bandOf(opts)],
  });
}

/** §5b: a breaker per isolate or one shared: attempts sent and calls answered each second, one storm. */
export function sharedPlot({ title, opts, results, clients = 100 }) {
  const capacity = Math.floor(clients * 1.2);
  const name = (r) => r.label.replace('ours, defaults: ', '');
  const series = [];
  for (const [i, r] of results.entries()) {
    series.push({ label: `${name(r)}: attempts sent`, style: i === 0 ? 0 : 2, points: r.perSecond.map((x, s) => [s, x.sent]) });
  }
  for (const [i, r] of results.entries()) {
    series.push({ label: `${name(r)}: calls answered`, style: i === 0 ? 5 : 4, width: 1.6, points: r.perSecond.map((x, s) => [s, x.ok]) });
  }
  const desc = results
    .map((r) => {
      const w = r.perSecond.slice(30, 30 + opts.outageS);
      const sum = (k) => w.reduce((n, x) => n + x[k], 0);
      return `${name(r)}: ${sum('sent')} attempts into it, ${Math.round((100 * sum('ok')) / sum('started'))} % of its calls answered, peak ${Math.max(...r.perSecond.map((x) => x.sent))} requests/s`;
    })
    .join('; ');
  return lineChart({
    id: `shared-${stormSlug(opts)}`,
    title: `A breaker per isolate, or one shared — ${title}`,
    subtitle: 'Attempts sent and calls answered each second by 100 isolates × 1 call/s; our engine\'s defaults both ways (a wasm engine per client, the Durable Object modelled); the same run as the §5b table.',
    desc: `Attempts sent to the server and calls answered per second; the ${bandOf(opts).legend} from 30 to ${30 + opts.outageS} s; capacity ${capacity} requests/s. ${desc}.`,
    x: { label: 'time since start (s)', min: 0, max: results[0].perSecond.length },
    y: { label: 'per second (requests/s, calls/s)', min: 0 },
    series,
    refs: [{ value: capacity, label: `server capacity ${capacity} requests/s`, legend: 'server capacity' }],
    bands: [bandOf(opts)],
  });
}

/** Rows coloured by kind (`kinds`: [ours, peers]): a series per kind, each row in one of them. */
const kindOf = (label) => (label.startsWith('ours') ? 0 : 1);
const byKind = (rows, value, kinds) =>
  kinds.map((label, k) => ({ label, style: k, values: rows.map((r) => (kindOf(r.label) === k ? value(r) : null)) })).filter((s) => s.values.some((v) => v !== null));

/** §5c: the calls that succeeded through the blip, both tables (5 and 30 calls in flight). */
export function blipPlot(tables) {
  const labels = tables[0].rows.map((r) => r.label.replace('ExponentialBackoff defaults, ', 'its backoff, '));
  const series = tables.map((t, k) => ({ label: `${t.calls} calls in flight`, style: k === 0 ? 0 : 1, values: t.rows.map((r) => (100 * r.succeeded) / r.calls) }));
  return barChart({
    id: 'blip',
    title: 'A 1.2 s blip with calls in flight: the calls that succeeded',
    subtitle: 'Every attempt sent in the blip reset; 100 ms an attempt; one client. The same run as the §5c tables.',
    desc: tables.map((t) => `${t.calls} calls in flight: ${t.rows.map((r) => `${r.label} ${r.succeeded} of ${r.calls} (${num(r.amplification, 2)}× attempts, drained in ${(r.drainMs / 1000).toFixed(1)} s)`).join('; ')}`).join('. '),
    categories: labels,
    categoryLabel: 'strategy',
    series,
    value: { label: 'calls that succeeded (% of the calls in flight)', min: 0, max: 100, format: (v, k) => `${Math.round((v * tables[k].calls) / 100)} of ${tables[k].calls}` },
  });
}

/** §10: p50, p99 and p99.9 per strategy, one slow replica in `replicas` (log scale). */
export function hedgePlot({ replicas, rows }) {
  const short = (label) =>
    label
      .replace(/^ours: hedgeAfterMs 50, /, 'ours, 50 ms: ')
      .replace(' (default budget)', '')
      .replace('budget successRefill', 'successRefill')
      .replace(' (the concurrency cap only)', ' (cap only)')
      .replace('Polly hedging defaults (Delay 2 s, MaxHedgedAttempts 1; modelled)', 'Polly defaults: Delay 2 s (modelled)')
      .replace('Polly with Delay 50 ms (no budget; modelled)', 'Polly: Delay 50 ms, no budget (modelled)');
  const ms = (v) => `${v.toFixed(0)} ms`;
  return barChart({
    id: `hedge-${replicas}`,
    title: `Hedged reads, one slow replica in ${replicas}: call latency percentiles`,
    subtitle: 'Replicas of 20 ms and 1 s median (log-normal σ 0.5), 200 calls/s, 20,000 calls, simulated; "50 ms": hedgeAfterMs 50, the default budget unless named. The same run as the §10 table.',
    desc: rows.map((r) => `${r.label}: p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, p99.9 ${ms(r.p999)}, ${r.amplification.toFixed(2)}× load`).join('; '),
    categories: rows.map((r) => [short(r.label), `${r.amplification.toFixed(2)}× load, ${r.hedges.toFixed(2)} hedges per call`]),
    categoryLabel: 'strategy',
    series: [
      { label: 'p50', style: 0, values: rows.map((r) => r.p50) },
      { label: 'p99', style: 1, values: rows.map((r) => r.p99) },
      { label: 'p99.9', style: 2, values: rows.map((r) => r.p999) },
    ],
    value: { label: 'call latency (ms, log scale)', log: true, min: 10, format: ms },
  });
}

/** §4: gzip size as shipped, ours against the peers, with the two targets. */
export function sizePlot(rows) {
  const kb = (v) => `${v.toFixed(1)} KB`;
  return barChart({
    id: 'size',
    title: 'Size as shipped to a browser (gzip -9)',
    subtitle: 'Bundled with esbuild, minified; the app\'s own dependencies (the MCP SDK, zod, pg) not counted. The same run as the §4 table.',
    desc: rows.map((r) => `${r.label}: ${kb(r.gz / 1024)} gzip, ${kb(r.raw / 1024)} raw`).join('; '),
    categories: rows.map((r) => r.short),
    categoryLabel: 'package',
    series: byKind(rows, (r) => r.gz / 1024, ['ours', 'peers']),
    value: { label: 'gzip size (KB)', min: 0, format: kb },
    refs: [
      { value: 15, label: 'target for a plain app: 15 KB', legend: 'the targets (a plain app 15 KB, every option 30 KB)' },
      { value: 30, label: 'target with every option: 30 KB', legend: null },
    ],
  });
}

/** §1: the decision hot path, ns per operation, ours against cockatiel and the empty wasm call. */
export function hotPlot(rows, stamp) {
  const kinds = ['ours', 'peer: cockatiel', 'baseline: an empty wasm export call'];
  const kind = (r) => (r.label.startsWith('ours') ? 0 : r.label.startsWith('cockatiel') ? 1 : 2);
  const peer = rows.find((r) => kind(r) === 1).ns;
  return barChart({
    id: 'hot-path',
    title: 'Decision hot path: ns per operation (median of 7 runs)',
    subtitle: `Ours and cockatiel in the same run (${stamp}); absolute times move up to 2× between runs on this machine — read the ratios.`,
    desc: rows.map((r) => `${r.label}: ${num(r.ns, 0)} ns`).join('; '),
    categories: rows.map((r) => r.short),
    categoryLabel: 'operation',
    series: kinds.map((label, k) => ({ label, style: [0, 1, 6][k], values: rows.map((r) => (kind(r) === k ? r.ns : null)) })),
    value: { label: 'time per operation (ns)', min: 0, format: (v) => `${num(v, 0)} ns · ${num(v / peer, 2)}× cockatiel` },
  });
}

/** §2: instantiation, ms per module (compile + init in a fresh process). */
export function instantiatePlot(rows, stamp) {
  return barChart({
    id: 'instantiate',
    title: 'Instantiation in Node: compile + init, fresh process (median of 7)',
    subtitle: `${stamp}. No peer row: the peers ship no wasm to compile.`,
    desc: rows.map((r) => `${r.label}: ${r.ms.toFixed(2)} ms`).join('; '),
    categories: rows.map((r) => r.label),
    categoryLabel: 'module',
    series: [{ label: 'ours (wasm module)', style: 0, values: rows.map((r) => r.ms) }],
    value: { label: 'compile + init (ms)', min: 0, format: (v) => `${v.toFixed(2)} ms` },
  });
}
