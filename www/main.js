// The playground: the package as users install it (resolved by name through its exports map), cockatiel's
// own code for the comparison, and the simulator.
import { RetryEngine } from 'mcp-retry-policy/client';
import { ExponentialBackoff } from 'cockatiel';
import { simulate, standardStrategies } from './sim.js';

const $ = (sel) => document.querySelector(sel);
const NS = 'http://www.w3.org/2000/svg';
const el = (tag, attrs = {}, text) => {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** One line of the failure script → an attempt outcome. */
export function parseOutcome(line) {
  const w = line.trim().toLowerCase().split(/\s+/);
  const num = (key) => {
    const i = w.indexOf(key);
    return i >= 0 ? Number(w[i + 1]) : undefined;
  };
  switch (w[0]) {
    case 'result':
      return { kind: 'result', isError: w.includes('error'), ...(w.includes('input_required') ? { resultType: 'input_required' } : w.includes('task') ? { resultType: 'task' } : {}) };
    case 'timeout':
      return { kind: 'timeout' };
    case 'http': {
      const o = { kind: 'http', status: Number(w[1]), hadSession: w.includes('session') };
      const ra = num('retry-after');
      return ra === undefined ? o : { ...o, retryAfterMs: ra };
    }
    case 'rpc':
      return { kind: 'jsonrpc_error', code: Number(w[1]) };
    case 'network':
      return { kind: 'network', sent: w[1] === 'no' ? 'no' : 'maybe' };
    case 'stream': {
      const r = num('retry');
      return { kind: 'stream_broken', eventIdSeen: w.includes('event-id'), ...(r === undefined ? {} : { retryMs: r }) };
    }
    case 'abort':
      return { kind: 'aborted', sent: w[1] === 'no' ? 'no' : 'maybe' };
    case 'ledger': {
      const ra = num('retry-after');
      return { kind: 'ledger', status: w[1], ...(ra === undefined ? {} : { retryAfterMs: ra }) };
    }
    default:
      throw Object.assign(new TypeError(`unknown outcome "${line.trim()}"`), { code: 'invalid_value', field: 'outcomes' });
  }
}

const ATTEMPT_MS = 50; // how long each simulated attempt takes

export function runCall(form) {
  const f = new FormData(form);
  const n = (k) => Number(f.get(k));
  const policy = { maxAttempts: n('maxAttempts'), baseDelayMs: n('baseDelayMs'), maxDelayMs: n('maxDelayMs'), totalTimeoutMs: n('totalTimeoutMs'), jitter: f.get('jitter') };
  const engine = new RetryEngine(policy, { seed: n('seed'), revision: f.get('revision') });
  const outcomes = String(f.get('outcomes')).split('\n').filter((l) => l.trim()).map(parseOutcome);
  const call = engine.begin(0);
  const rows = [];
  let now = 0;
  let final;
  for (let next = 0; next < outcomes.length; ) {
    const adm = engine.admit(call, now);
    if (!adm.admitted && adm.decision.action === 'retry') {
      now += adm.decision.delayMs; // held by the breaker or the budget: wait, then ask again
      continue;
    }
    if (!adm.admitted) {
      final = adm.decision;
      break;
    }
    const outcome = outcomes[next++];
    const step = engine.record(call, outcome, f.get('safety'), now + ATTEMPT_MS);
    rows.push({ at: now, outcome, ...step });
    if (step.decision.action === 'stop') {
      final = step.decision;
      break;
    }
    now += ATTEMPT_MS + step.decision.delayMs;
  }
  return { rows, final };
}

function describe(o) {
  switch (o.kind) {
    case 'http': return `HTTP ${o.status}${o.retryAfterMs !== undefined ? ` (Retry-After ${o.retryAfterMs} ms)` : ''}`;
    case 'jsonrpc_error': return `JSON-RPC ${o.code}`;
    case 'network': return `network failure, sent: ${o.sent}`;
    case 'result': return o.isError ? 'result, isError' : `result${o.resultType ? ` (${o.resultType})` : ''}`;
    case 'ledger': return `ledger: ${o.status}`;
    case 'aborted': return `aborted, sent: ${o.sent}`;
    case 'stream_broken': return `stream broke${o.eventIdSeen ? ' after an event id' : ''}`;
    default: return o.kind;
  }
}

function showCall() {
  $('#call-error').hidden = true;
  const tbody = $('#attempts tbody');
  tbody.innerHTML = '';
  let result;
  try {
    result = runCall($('#call-form'));
  } catch (e) {
    $('#call-error').hidden = false;
    $('#call-error').textContent = `${e.name}: ${e.message}${e.code ? ` [code ${e.code}, field ${e.field}]` : ''}`;
    $('#call-status').textContent = '';
    return;
  }
  for (const [i, r] of result.rows.entries()) {
    const d = r.decision;
    const decision = d.action === 'retry' ? `retry in ${d.delayMs} ms${d.recover ? ` after ${d.recover}` : ''} (${d.reason})` : `stop: ${d.status} (${d.reason})`;
    tbody.insertAdjacentHTML('beforeend', `<tr><td>${i + 1}</td><td>${r.at}</td><td>${esc(describe(r.outcome))}</td><td>${r.classification.delivery}</td>
      <td>${r.classification.verdict} · ${r.classification.cause}</td><td>${esc(decision)}</td></tr>`);
  }
  const s = $('#call-status');
  s.innerHTML = result.final
    ? `Final status: <span class="status ${result.final.status}">${result.final.status}</span> (${result.final.reason})`
    : 'The engine wanted another attempt, but the script ran out of outcomes.';
  drawTimeline(result.rows);
}

const colours = { not_processed: '#74c0fc', unknown: '#da77f2', processed: '#69db7c' };

function drawTimeline(rows) {
  const svg = $('#timeline');
  svg.replaceChildren();
  if (!rows.length) return;
  const last = rows[rows.length - 1];
  const end = last.at + ATTEMPT_MS + (last.decision.action === 'retry' ? last.decision.delayMs : 0);
  const W = 880;
  const x = (t) => 10 + (t / Math.max(end, 1)) * W;
  svg.append(el('line', { x1: 10, y1: 60, x2: 10 + W, y2: 60, stroke: '#adb5bd' }));
  for (const [i, r] of rows.entries()) {
    const w = Math.max(6, x(r.at + ATTEMPT_MS) - x(r.at));
    svg.append(el('rect', { x: x(r.at), y: 30, width: w, height: 30, fill: colours[r.classification.delivery], rx: 3 }));
    svg.append(el('text', { x: x(r.at), y: 24, 'font-size': 11 }, `#${i + 1}`));
    if (r.decision.action === 'retry' && r.decision.delayMs > 0) {
      const a = x(r.at + ATTEMPT_MS);
      const b = x(r.at + ATTEMPT_MS + r.decision.delayMs);
      svg.append(el('rect', { x: a, y: 42, width: Math.max(1, b - a), height: 6, fill: '#e9ecef' }));
      svg.append(el('text', { x: (a + b) / 2, y: 80, 'font-size': 10, 'text-anchor': 'middle', fill: '#5b6475' }, `wait ${r.decision.delayMs} ms`));
    }
  }
}

export const strategies = (options) => standardStrategies(RetryEngine, ExponentialBackoff, options);

const lineColours = ['#2b8a3e', '#74b816', '#e03131', '#f08c00', '#1971c2', '#868e96'];

function showStorm() {
  const f = new FormData($('#storm-form'));
  const opts = { clients: Number(f.get('clients')), outageS: Number(f.get('outageS')), failureRate: Number(f.get('failureRate')), capacityFactor: Number(f.get('capacityFactor')) };
  opts.durationS = 30 + opts.outageS + 60;
  const openMs = Number(f.get('openMs'));
  $('#storm-error').hidden = true;
  let results;
  try {
    results = strategies(openMs === 2000 ? undefined : { openMs }).map((st) => simulate(st, opts));
  } catch (e) {
    // The engine refuses a bad open time by name (RangeError, code and field), like every option.
    $('#storm-error').hidden = false;
    $('#storm-error').textContent = `${e.name}: ${e.message}${e.code ? ` [code ${e.code}, field ${e.field}]` : ''}`;
    return [];
  }
  const tbody = $('#storm-table tbody');
  tbody.innerHTML = '';
  for (const [i, r] of results.entries()) {
    tbody.insertAdjacentHTML('beforeend', `<tr><td><span style="color:${lineColours[i]}">■</span> ${esc(r.label)}</td><td>${esc(r.kind)}</td>
      <td>${r.amplification.toFixed(2)}×</td><td>${r.peakLoad.toFixed(2)}×</td><td>${r.recoveryS === null ? 'not within 60 s' : `${r.recoveryS} s`}</td></tr>`);
  }
  drawLoad(results, opts);
  return results;
}

function drawLoad(results, opts) {
  const svg = $('#load');
  svg.replaceChildren();
  const W = 840, H = 240, L = 44, T = 14;
  const baseline = opts.clients;
  const maxY = Math.max(2, ...results.map((r) => r.peakLoad));
  const xs = (s) => L + (s / opts.durationS) * W;
  const ys = (v) => T + H - (v / maxY) * H;
  svg.append(el('rect', { x: xs(30), y: T, width: xs(30 + opts.outageS) - xs(30), height: H, fill: '#fff5f5' }));
  svg.append(el('text', { x: xs(30) + 4, y: T + 12, 'font-size': 11, fill: '#c92a2a' }, 'outage'));
  for (let v = 0; v <= maxY; v += maxY > 6 ? 2 : 1) {
    svg.append(el('line', { x1: L, x2: L + W, y1: ys(v), y2: ys(v), stroke: '#eef1f6' }));
    svg.append(el('text', { x: L - 6, y: ys(v) + 4, 'font-size': 10, 'text-anchor': 'end' }, `${v}×`));
  }
  for (let s = 0; s <= opts.durationS; s += 30) svg.append(el('text', { x: xs(s), y: T + H + 14, 'font-size': 10, 'text-anchor': 'middle' }, `${s}s`));
  svg.append(el('text', { x: 8, y: T + 8, 'font-size': 10 }, 'load'));
  for (const [i, r] of results.entries()) {
    const d = r.perSecond.map((p, s) => `${s ? 'L' : 'M'}${xs(s + 0.5).toFixed(1)},${ys(p.sent / baseline).toFixed(1)}`).join('');
    svg.append(el('path', { d, fill: 'none', stroke: lineColours[i], 'stroke-width': i === 0 ? 2.5 : 1.5 }));
  }
}

$('#call-form').addEventListener('submit', (e) => {
  e.preventDefault();
  showCall();
});
$('#storm-form').addEventListener('submit', (e) => {
  e.preventDefault();
  showStorm();
});
showCall();
window.playground = { runCall, showStorm, parseOutcome, ready: true };
