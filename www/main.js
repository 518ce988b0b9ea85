// The playground: the package as users install it (resolved by name through its exports map), cockatiel's
// own code for the comparison, the storm simulator, and the story's modelled peers (story.js). Every retry
// decision shown for our side comes from the package's engine (RetryEngine: admit, record); this file only
// drives it on a simulated clock and draws what it answered.
import { RetryEngine, newOperationId } from 'mcp-retry-policy/client';
import { ExponentialBackoff } from 'cockatiel';
import { simulate, standardStrategies } from './sim.js';
import { ATTEMPT_MS, NAIVE, TOOLS, argumentsFor, naiveRun, sendOver, ticketServer } from './story.js';

const $ = (sel) => document.querySelector(sel);
const NS = 'http://www.w3.org/2000/svg';
const el = (tag, attrs = {}, text) => {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

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

/**
 * Drives one call through the engine on a simulated clock: `attempt(n, nowMs)` sends attempt n and answers what
 * the client saw (`{ outcome, ...anything to keep }`), or `undefined` when there is nothing more to send. Every
 * step — send or wait, retry or stop, how long, with what status — is the engine's answer (admit, record).
 */
function drive(engine, safety, attempt) {
  const call = engine.begin(0);
  const rows = [];
  const holds = [];
  let now = 0;
  let final;
  try {
    for (;;) {
      const adm = engine.admit(call, now);
      if (!adm.admitted && adm.decision.action === 'retry') {
        holds.push({ from: now, to: now + adm.decision.delayMs }); // held by the breaker or the budget
        now += adm.decision.delayMs;
        continue;
      }
      if (!adm.admitted) {
        final = adm.decision;
        break;
      }
      const seen = attempt(rows.length + 1, now);
      if (seen === undefined) break;
      const step = engine.record(call, seen.outcome, safety, now + ATTEMPT_MS);
      rows.push({ at: now, ...seen, ...step });
      if (step.decision.action === 'stop') {
        final = step.decision;
        break;
      }
      now += ATTEMPT_MS + step.decision.delayMs;
    }
  } finally {
    call.free();
  }
  return { rows, holds, final };
}

/** A form's number field as typed: an empty (or unreadable) field is NaN, for the engine to refuse by name. */
function numberOf(form, name) {
  const raw = String(new FormData(form).get(name) ?? '').trim();
  return raw === '' ? NaN : Number(raw);
}

export function runCall(form) {
  const f = new FormData(form);
  const n = (k) => numberOf(form, k);
  const policy = { maxAttempts: n('maxAttempts'), baseDelayMs: n('baseDelayMs'), maxDelayMs: n('maxDelayMs'), totalTimeoutMs: n('totalTimeoutMs'), jitter: f.get('jitter') };
  const lines = String(f.get('outcomes')).split('\n').map((l, i) => [i + 1, l]).filter(([, l]) => l.trim());
  const outcomes = lines.map(([no, l]) => {
    try {
      return parseOutcome(l);
    } catch (e) {
      throw Object.assign(e, { line: no });
    }
  });
  if (!outcomes.length) throw Object.assign(new TypeError('outcomes must have at least one line'), { code: 'empty', field: 'outcomes' });
  const engine = new RetryEngine(policy, { seed: n('seed'), revision: f.get('revision') });
  let line;
  try {
    return drive(engine, f.get('safety'), (i) => {
      if (i > outcomes.length) return undefined;
      line = lines[i - 1][0];
      return { outcome: outcomes[i - 1], line };
    });
  } catch (e) {
    // The engine refuses an outcome it cannot read (an `http` without a status, a negative Retry-After) by name.
    if (String(e.field).startsWith('outcome')) throw Object.assign(e, { line });
    throw e;
  } finally {
    engine.free();
  }
}

/** The seed of the story's engine: its jitter, repeatable. */
const STORY_SEED = 1;

/**
 * The story's right side: the package's engine reads the tool the server lists (its safety), the page adds the
 * operation id to a keyed call as withRetry does (one id, created once, on every attempt), and the engine decides
 * each step. The server and the network are story.js's models.
 */
export function runStory(choice) {
  const tool = TOOLS[choice];
  const engine = new RetryEngine(undefined, { seed: STORY_SEED });
  try {
    const safety = engine.safety(tool, { trusted: true });
    const args = argumentsFor(tool);
    if (safety === 'keyed') args.operation_id = newOperationId();
    const server = ticketServer();
    const run = drive(engine, safety, (attempt, now) => sendOver(server, tool.name, args, now, attempt));
    return { tool, safety, args, server, ...run };
  } finally {
    engine.free();
  }
}

// ——— drawing ———

const deliveryColour = { not_processed: '#74c0fc', unknown: '#da77f2', processed: '#69db7c' };

/** A step of 1, 2 or 5 × 10^k giving about `target` ticks over [0, end]. */
function tickStep(end, target = 5) {
  const raw = Math.max(end, 1) / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
}
const ms = (v) => (v >= 10_000 ? `${+(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);

/** Text labels in rows: each goes in the first row where it does not overlap the one before it. */
function labelRows(ys, right) {
  const ends = ys.map(() => -Infinity);
  return (x, text, size) => {
    const w = text.length * size * 0.58;
    const x0 = Math.max(2, Math.min(x, right - w));
    let r = ends.findIndex((e) => x0 >= e + 6);
    if (r < 0) r = ends.indexOf(Math.min(...ends));
    ends[r] = x0 + w;
    return { x: x0, y: ys[r] };
  };
}

/**
 * A timeline: the client's attempts (labelled bars, coloured by what the answer proved), the waits between them,
 * the server's effects when given, and a time axis with labelled ms ticks.
 */
function drawTimeline(svg, { attempts, waits, marks, end }) {
  const W = Number(svg.viewBox.baseVal.width) || 900;
  const L = 52;
  const R = 14;
  const x = (t) => L + (t / end) * (W - L - R);
  const serverLane = marks !== undefined;
  const barY = 30;
  const barH = 20;
  const markY = 100;
  const axisY = serverLane ? 134 : 92;
  const H = axisY + 32;
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.replaceChildren();
  const lane = (y, name) => svg.append(el('text', { x: L - 8, y, 'font-size': 11, 'text-anchor': 'end', fill: '#5b6475' }, name));
  lane(barY + 14, 'client');
  svg.append(el('line', { x1: L, x2: W - R, y1: barY + barH / 2, y2: barY + barH / 2, stroke: '#e9ecef' }));
  const top = labelRows([12, 24], W - 2);
  const below = labelRows([64, 76], W - 2);
  for (const w of waits) {
    const a = x(w.from);
    const b = x(w.to);
    const g = el('g', { class: 'wait' });
    g.append(el('rect', { x: a, y: barY + barH / 2 - 3, width: Math.max(1, b - a), height: 6, fill: '#ced4da' }));
    const at = below((a + b) / 2 - w.label.length * 2.9, w.label, 10);
    g.append(el('text', { x: at.x, y: at.y, 'font-size': 10, fill: '#495057', class: 'wait-label' }, w.label));
    svg.append(g);
  }
  for (const a of attempts) {
    const x0 = x(a.at);
    const g = el('g', { class: 'attempt', 'data-delivery': a.delivery });
    g.append(el('rect', { x: x0, y: barY, width: Math.max(6, x(a.at + ATTEMPT_MS) - x0), height: barH, rx: 3, fill: deliveryColour[a.delivery], stroke: '#1d2330', 'stroke-opacity': 0.25 }));
    const at = top(x0, a.label, 11);
    g.append(el('text', { x: at.x, y: at.y, 'font-size': 11, class: 'attempt-label' }, a.label));
    svg.append(g);
  }
  if (serverLane) {
    lane(markY + 4, 'server');
    svg.append(el('line', { x1: L, x2: W - R, y1: markY, y2: markY, stroke: '#e9ecef' }));
    const rows = labelRows([markY + 19, markY + 30], W - 2);
    for (const m of marks) {
      const cx = x(m.at);
      const g = el('g', { class: `mark ${m.kind}${m.duplicate ? ' duplicate' : ''}` });
      if (m.kind === 'created' || m.kind === 'overwrote') {
        const fill = m.kind === 'overwrote' ? '#fff' : m.duplicate ? '#e03131' : '#2b8a3e';
        g.append(el('rect', { x: cx - 6, y: markY - 6, width: 12, height: 12, rx: 2, fill, stroke: m.duplicate ? '#e03131' : '#2b8a3e', 'stroke-width': 2 }));
      } else {
        g.append(el('circle', { cx, cy: markY, r: 6, fill: '#fff', stroke: m.kind === 'replayed' ? '#2b8a3e' : '#868e96', 'stroke-width': 2 }));
      }
      const at = rows(cx - 6, m.label, 10);
      g.append(el('text', { x: at.x, y: at.y, 'font-size': 10, fill: m.duplicate ? '#c92a2a' : '#343a40', class: 'mark-label' }, m.label));
      svg.append(g);
    }
  }
  const axis = el('g', { class: 'axis', 'aria-hidden': 'true' });
  axis.append(el('line', { x1: L, x2: W - R, y1: axisY, y2: axisY, stroke: '#868e96' }));
  const step = tickStep(end);
  for (let v = 0; v <= end + 1e-9; v += step) {
    const t = el('g', { class: 'tick' });
    t.append(el('line', { x1: x(v), x2: x(v), y1: axisY, y2: axisY + 5, stroke: '#868e96' }));
    t.append(el('text', { x: x(v), y: axisY + 17, 'font-size': 10, 'text-anchor': 'middle', fill: '#495057' }, ms(v)));
    axis.append(t);
  }
  axis.append(el('text', { x: L - 8, y: axisY + 4, 'font-size': 11, 'text-anchor': 'end', fill: '#5b6475' }, 'time'));
  svg.append(axis);
}

// ——— the story ———

const TELL = {
  keyed: 'Same failure, same retry. The plain retry made a second ticket and reported success; withRetry sent the same operation_id, the server\'s ledger replayed the first outcome: one ticket.',
  unsafe: 'Without an operation id nothing can tell a re-send from a new ticket: the plain retry made two; the engine stops at unknown — the truth — rather than risk a second ticket.',
  idempotent: 'put_ticket names its ticket, so a re-send writes the same ticket again: both end with one. The engine knew it could retry from the tool\'s idempotentHint.',
  read_only: 'A read changes nothing: both retry, both fine. The engine knew from the tool\'s readOnlyHint.',
};
const STATUS_MEANS = {
  succeeded: 'the retry got the first outcome back',
  unknown: 'it may or may not have happened, so it is not sent again: neither success nor failure',
  failed: 'it did not happen',
  tool_error: 'the tool ran and reported an error',
  pending: 'still running on the server',
};
const argsText = (args) => `{${Object.entries(args).map(([k, v]) => `${k}: ${k === 'operation_id' ? `“${v.slice(0, 8)}…”` : JSON.stringify(v)}`).join(', ')}}`;
const marksOf = (server) => {
  let created = 0;
  return server.log.map((e) => {
    const duplicate = e.kind === 'created' && ++created > 1;
    const label = { created: `${e.ticket} created${duplicate ? ': a 2nd ticket' : ''}`, replayed: `${e.ticket} replayed`, overwrote: `${e.ticket} rewritten`, read: 'searched' }[e.kind];
    return { at: e.at, kind: e.kind, duplicate, label };
  });
};
const ticketsOf = (server) => (server.log.some((e) => e.ticket) ? server.tickets.size : 0);

function setCount(node, n, { bad, uncertain = false }) {
  node.textContent = plural(n, 'ticket');
  node.dataset.count = String(n);
  node.className = `count ${bad ? 'bad' : uncertain ? 'uncertain' : n === 0 ? 'neutral' : 'good'}`;
}

export function showStory() {
  const choice = $('#story-safety').value;
  const tool = TOOLS[choice];
  $('#story-scenario').innerHTML = `<code>${esc(tool.name)} ${esc(argsText(argumentsFor(tool)))}</code>: the server ${tool.name === 'search_tickets' ? 'runs it' : 'commits'}
    at 30 ms, then the connection resets before its answer arrives. Both clients see the same failure.`;

  // Left: the plain retry, modelled.
  const naive = naiveRun(tool);
  const ours = runStory(choice);
  const end = Math.max(...[naive, ours].map((r) => (r.rows.at(-1)?.at ?? 0) + ATTEMPT_MS)) * 1.08;
  const naiveTickets = ticketsOf(naive.server);
  const naiveDup = naive.server.log.filter((e) => e.kind === 'created').length > 1;
  setCount($('#naive-tickets'), naiveTickets, { bad: naiveDup });
  $('#naive-told').textContent = naive.told.ok ? `— the caller is told: ok (“${naive.told.text}”)` : `— the caller is told: ${naive.told.text}`;
  drawTimeline($('#naive-timeline'), {
    end,
    attempts: naive.rows.map((r, i) => ({ at: r.at, delivery: r.lost ? 'unknown' : 'processed', label: `#${i + 1} ${r.lost ? 'answer lost' : 'ok'}` })),
    waits: naive.rows.filter((r) => r.waitMs).map((r) => ({ from: r.at + ATTEMPT_MS, to: r.at + ATTEMPT_MS + r.waitMs, label: `wait ${r.waitMs} ms` })),
    marks: marksOf(naive.server),
  });
  $('#naive-timeline').setAttribute('aria-label', `plain retry: ${plural(naive.rows.length, 'attempt')}, ${plural(naiveTickets, 'ticket')} on the server`);
  $('#naive-steps').innerHTML = naive.rows.map((r, i) => {
    const did = naive.server.log[i].text;
    const sent = i === 0 ? `sent ${esc(tool.name)} ${esc(argsText(naive.args))}` : 'sent the same request again';
    const then = r.lost ? (r.waitMs ? `retry in ${NAIVE.delayMs} ms` : 'gave up') : 'told the caller: ok';
    return `<li>${sent}; server: ${esc(did)}; ${r.lost ? 'the answer was lost' : 'the answer arrived'} → <b>${then}</b></li>`;
  }).join('');

  // Right: the package's engine decides every step.
  const oursTickets = ticketsOf(ours.server);
  const st = ours.final;
  setCount($('#ours-tickets'), oursTickets, { bad: ours.server.log.filter((e) => e.kind === 'created').length > 1, uncertain: st?.status === 'unknown' });
  $('#ours-status').textContent = st ? st.status : 'no end';
  $('#ours-status').className = `status ${st?.status ?? ''}`;
  $('#ours-reason').textContent = st ? `${st.reason === st.status ? '' : `(${st.reason}) `}— ${st.status === 'succeeded' && !ours.server.log.some((e) => e.kind === 'replayed') ? 'the retry\'s answer arrived' : STATUS_MEANS[st.status] ?? ''}${st.status === 'unknown' && oursTickets ? ' (the ticket is there; the caller cannot tell)' : ''}` : '';
  $('#ours-how').innerHTML = `The engine reads the tool as <b>${esc(ours.safety)}</b>${ours.args.operation_id
    ? `; as in withRetry, one <code>operation_id</code> (${esc(ours.args.operation_id.slice(0, 8))}…) goes on every attempt`
    : ''}. Each step below is the engine's decision.`;
  const waits = ours.rows.filter((r) => r.decision.action === 'retry' && r.decision.delayMs > 0)
    .map((r) => ({ from: r.at + ATTEMPT_MS, to: r.at + ATTEMPT_MS + r.decision.delayMs, label: `wait ${r.decision.delayMs} ms` }))
    .concat(ours.holds.map((h) => ({ ...h, label: `held ${h.to - h.from} ms` })));
  drawTimeline($('#ours-timeline'), {
    end,
    attempts: ours.rows.map((r, i) => ({
      at: r.at, delivery: r.classification.delivery,
      label: `#${i + 1} ${r.lost ? 'answer lost' : 'ok'}${r.decision.action === 'stop' ? ` → ${r.decision.status}` : ''}`,
    })),
    waits,
    marks: marksOf(ours.server),
  });
  $('#ours-timeline').setAttribute('aria-label', `withRetry: ${plural(ours.rows.length, 'attempt')}, ${plural(oursTickets, 'ticket')} on the server, ${st?.status}`);
  $('#ours-steps').innerHTML = ours.rows.map((r, i) => {
    const d = r.decision;
    const did = ours.server.log[i].text;
    const sent = i === 0 ? `sent ${esc(tool.name)} ${esc(argsText(ours.args))}` : `sent it again${ours.args.operation_id ? ', same operation_id' : ''}`;
    const decided = d.action === 'retry' ? `retry in ${d.delayMs} ms (${d.reason})` : `stop: ${d.status} (${d.reason})`;
    return `<li data-action="${d.action}" data-delay="${d.delayMs ?? ''}" data-status="${d.status ?? ''}" data-reason="${esc(d.reason)}">${sent}; server: ${esc(did)};
      ${r.lost ? 'the answer was lost' : 'the answer arrived'} → engine: ${esc(r.classification.delivery)} · <b>${esc(decided)}</b></li>`;
  }).join('');
  $('#story-moral').textContent = TELL[choice];
  return { naive, ours };
}

// ——— your own call ———

/** An engine's (or the page's) refusal of an input → the form control it names. */
function controlFor(form, field) {
  const name = String(field ?? '');
  const mapped = name.startsWith('outcome') ? 'outcomes' : name.replace(/^options\./, '').replace(/^breaker\./, '');
  return form.elements.namedItem(mapped);
}

function clearFieldErrors(form) {
  for (const c of form.querySelectorAll('[aria-invalid]')) {
    c.removeAttribute('aria-invalid');
    c.removeAttribute('aria-describedby');
  }
  for (const m of form.querySelectorAll('.field-error')) m.remove();
}

/** Shows `e` by the field it names (and in full in `summary`). */
function showInputError(form, summary, e) {
  const line = e.line !== undefined ? `line ${e.line}: ` : '';
  const control = controlFor(form, e.field);
  const marked = !!control?.insertAdjacentElement;
  summary.hidden = false;
  summary.textContent = `${e.name}: ${line}${e.message}${e.code ? ` [code ${e.code}, field ${e.field}]` : ''}. Nothing ran${marked ? ': fix the field marked above' : ''}.`;
  if (!marked) return;
  const id = `${form.id}-${control.name}-error`;
  const note = document.createElement('span');
  note.className = 'field-error';
  note.id = id;
  note.textContent = `${line}${e.message}${control.value.trim() === '' && control.tagName === 'INPUT' ? ' (the field is empty or not a number)' : ''}`;
  control.insertAdjacentElement('afterend', note);
  control.setAttribute('aria-invalid', 'true');
  control.setAttribute('aria-describedby', id);
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
function short(o) {
  switch (o.kind) {
    case 'http': return String(o.status);
    case 'jsonrpc_error': return `rpc ${o.code}`;
    case 'network': return `network ${o.sent}`;
    case 'result': return o.isError ? 'isError' : 'result';
    case 'ledger': return `ledger ${o.status}`;
    case 'aborted': return 'aborted';
    case 'stream_broken': return 'stream broke';
    default: return o.kind;
  }
}

function clearCall() {
  $('#attempts tbody').replaceChildren();
  $('#call-status').textContent = '';
  $('#timeline').replaceChildren();
}
/** Shows or hides a section's output (hidden: out of the page and of the accessibility tree). */
function showOutput(node, shown) {
  node.hidden = !shown;
}

export function showCall() {
  const form = $('#call-form');
  const error = $('#call-error');
  error.hidden = true;
  error.textContent = '';
  clearFieldErrors(form);
  clearCall(); // nothing of an earlier run stays on screen, whatever this one gives
  let result;
  try {
    result = runCall(form);
  } catch (e) {
    showInputError(form, error, e);
    showOutput($('#call-output'), false);
    return undefined;
  }
  showOutput($('#call-output'), true);
  const tbody = $('#attempts tbody');
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
  const last = result.rows.at(-1);
  const end = last ? (last.at + ATTEMPT_MS + (last.decision.action === 'retry' ? last.decision.delayMs : 0)) * 1.04 : 1;
  drawTimeline($('#timeline'), {
    end,
    attempts: result.rows.map((r, i) => ({
      at: r.at, delivery: r.classification.delivery,
      label: `#${i + 1} ${short(r.outcome)}${r.decision.action === 'stop' ? ` → ${r.decision.status}` : ''}`,
    })),
    waits: result.rows.filter((r) => r.decision.action === 'retry' && r.decision.delayMs > 0)
      .map((r) => ({ from: r.at + ATTEMPT_MS, to: r.at + ATTEMPT_MS + r.decision.delayMs, label: `wait ${r.decision.delayMs} ms` }))
      .concat(result.holds.map((h) => ({ ...h, label: `held ${h.to - h.from} ms` }))),
  });
  $('#timeline').setAttribute('aria-label', `timeline: ${plural(result.rows.length, 'attempt')}${result.final ? `, ${result.final.status}` : ''}`);
  return result;
}

// ——— the storm ———

export const strategies = (options) => standardStrategies(RetryEngine, ExponentialBackoff, options);

/** Each series' look: colour (Okabe–Ito, told apart with colour blindness), width, dashes. */
const SERIES = [
  { colour: '#009e73', width: 3, dash: '' },
  { colour: '#56b4e9', width: 2, dash: '' },
  { colour: '#d55e00', width: 2, dash: '' },
  { colour: '#e69f00', width: 2, dash: '' },
  { colour: '#0072b2', width: 2, dash: '7 4' },
  { colour: '#cc79a7', width: 3, dash: '0.5 5', cap: 'round' },
];
const SAME_DASH = '5 5';
const SAME_OFFSET = 3; // px: a series equal to an earlier one is drawn this much above it, dashed

/** The storm form's own fields (the simulator's, not the engine's), checked against the input's bounds. */
function simField(form, name) {
  const input = form.elements.namedItem(name);
  const v = numberOf(form, name);
  const refuse = (message, code) => Object.assign(new RangeError(message), { code, field: name });
  if (!Number.isFinite(v)) throw refuse(`${name} must be a finite number, got ${input.value.trim() === '' ? 'nothing' : input.value}`, 'not_finite');
  if (input.min !== '' && v < Number(input.min)) throw refuse(`${name} must be at least ${input.min}, got ${v}`, 'too_small');
  if (input.max !== '' && v > Number(input.max)) throw refuse(`${name} must be at most ${input.max}, got ${v}`, 'too_large');
  if (input.step === '1' && !Number.isInteger(v)) throw refuse(`${name} must be a whole number, got ${v}`, 'not_integer');
  return v;
}

function clearStorm() {
  $('#storm-table tbody').replaceChildren();
  $('#load').replaceChildren();
  $('#load-legend').replaceChildren();
}

export function showStorm() {
  const form = $('#storm-form');
  const error = $('#storm-error');
  error.hidden = true;
  error.textContent = '';
  clearFieldErrors(form);
  clearStorm();
  let results;
  let opts;
  try {
    opts = { clients: simField(form, 'clients'), outageS: simField(form, 'outageS'), failureRate: simField(form, 'failureRate'), capacityFactor: simField(form, 'capacityFactor') };
    opts.durationS = 30 + opts.outageS + 60;
    const openMs = numberOf(form, 'openMs');
    // The engine refuses a bad open time by name (RangeError, code and field), like every option.
    results = strategies(openMs === 2000 ? undefined : { openMs }).map((st) => simulate(st, opts));
  } catch (e) {
    showInputError(form, error, e);
    showOutput($('#storm-output'), false);
    return [];
  }
  showOutput($('#storm-output'), true);
  const looks = looksOf(results);
  const tbody = $('#storm-table tbody');
  for (const [i, r] of results.entries()) {
    tbody.insertAdjacentHTML('beforeend', `<tr><td><span style="color:${looks[i].colour}">■</span> ${esc(r.label)}</td><td>${esc(r.kind)}</td>
      <td>${r.amplification.toFixed(2)}×</td><td>${r.peakLoad.toFixed(2)}×</td><td>${r.recoveryS === null ? 'not within 60 s' : `${r.recoveryS} s`}</td></tr>`);
  }
  drawLegend(results, looks);
  drawLoad(results, looks, opts);
  return results;
}

/** Each series' look; one equal to an earlier one at every second is drawn dashed and offset, and says so. */
function looksOf(results) {
  return results.map((r, i) => {
    const same = results.findIndex((o, j) => j < i && o.perSecond.every((p, s) => p.sent === r.perSecond[s].sent));
    const base = SERIES[i % SERIES.length];
    return same < 0 ? { ...base, offset: 0 } : { ...base, dash: SAME_DASH, offset: SAME_OFFSET, sameAs: results[same].label };
  });
}

function drawLegend(results, looks) {
  const ul = $('#load-legend');
  for (const [i, r] of results.entries()) {
    const k = looks[i];
    const li = document.createElement('li');
    li.dataset.series = String(i);
    const sw = el('svg', { class: 'swatch', width: 34, height: 12, 'aria-hidden': 'true' });
    sw.append(el('line', { x1: 3, x2: 31, y1: 6, y2: 6, stroke: k.colour, 'stroke-width': k.width, 'stroke-dasharray': k.dash || undefined, 'stroke-linecap': k.cap }));
    li.append(sw, document.createTextNode(` ${r.label}`));
    if (k.sameAs) {
      const note = document.createElement('span');
      note.className = 'same';
      note.textContent = ` — equal to “${k.sameAs}” every second: drawn dashed, ${k.offset} px above`;
      li.append(note);
    }
    ul.append(li);
  }
}

function drawLoad(results, looks, opts) {
  const svg = $('#load');
  const W = 828, H = 240, L = 48, T = 16;
  const baseline = opts.clients;
  const maxY = Math.max(2, ...results.map((r) => r.peakLoad));
  const xs = (s) => L + (s / opts.durationS) * W;
  const ys = (v) => T + H - (v / maxY) * H;
  svg.append(el('rect', { x: xs(30), y: T, width: xs(30 + opts.outageS) - xs(30), height: H, fill: '#fff5f5' }));
  svg.append(el('text', { x: xs(30) + 4, y: T + 12, 'font-size': 11, fill: '#c92a2a' }, opts.failureRate < 1 ? `brownout (${Math.round(opts.failureRate * 100)} % fail)` : 'outage'));
  for (let v = 0; v <= maxY; v += maxY > 6 ? 2 : 1) {
    svg.append(el('line', { x1: L, x2: L + W, y1: ys(v), y2: ys(v), stroke: '#eef1f6' }));
    svg.append(el('text', { x: L - 6, y: ys(v) + 4, 'font-size': 10, 'text-anchor': 'end' }, `${v}×`));
  }
  for (let s = 0; s <= opts.durationS; s += 30) svg.append(el('text', { x: xs(s), y: T + H + 15, 'font-size': 10, 'text-anchor': 'middle' }, `${s} s`));
  svg.append(el('text', { x: 4, y: T - 4, 'font-size': 10, fill: '#5b6475' }, 'load (× normal)'));
  svg.append(el('text', { x: L + W, y: T + H + 30, 'font-size': 10, 'text-anchor': 'end', fill: '#5b6475' }, 'time (simulated)'));
  for (const [i, r] of results.entries()) {
    const k = looks[i];
    const d = r.perSecond.map((p, s) => `${s ? 'L' : 'M'}${xs(s + 0.5).toFixed(1)},${ys(p.sent / baseline).toFixed(1)}`).join('');
    const path = el('path', {
      d, fill: 'none', class: 'series', 'data-series': i, stroke: k.colour, 'stroke-width': k.width,
      'stroke-dasharray': k.dash || undefined, 'stroke-linecap': k.cap, transform: k.offset ? `translate(0 ${-k.offset})` : undefined,
    });
    path.append(el('title', {}, r.label));
    svg.append(path);
  }
}

$('#story-safety').addEventListener('change', () => showStory());
$('#story-form').addEventListener('submit', (e) => e.preventDefault());
$('#call-form').addEventListener('submit', (e) => {
  e.preventDefault();
  showCall();
});
$('#storm-form').addEventListener('submit', (e) => {
  e.preventDefault();
  showStorm();
});
window.playground = { runCall, runStory, showStory, showCall, showStorm, parseOutcome, ready: false };
showStory();
showCall();
// The storm takes a moment: after the first paint, then the page is ready.
requestAnimationFrame(() => setTimeout(() => {
  showStorm();
  window.playground.ready = true;
}, 0));
