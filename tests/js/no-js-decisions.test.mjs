// The JS layer makes no decision of its own: every final status and every reason a call ends with comes from a
// decoded engine answer (client/engine.js decodes them from the wasm's packed numbers, by the generated code
// tables). This reads every JS file of pkg-template/ (generated/ aside) and fails on a status or a reason
// written into an object or a variable — a literal name ('unknown', 'status_not_found', …) or a generated
// constant (STATUS_UNKNOWN, REASON_TASK_CANCELLED, …) — anywhere but a comparison: `status: 'unknown'`,
// `reason = REASON_X`, a table `[STATUS_X, REASON_Y]`. Comparing an engine answer with a name
// (`decision.status === STATUS_PENDING`) is acting on it, and allowed.
import * as LEDGER_NAMES from '../../pkg-template/generated/names.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REASONS, STATUSES } from '../../pkg-template/generated/names.js';

const root = new URL('../../pkg-template/', import.meta.url).pathname;
const NAMES = new Set([...STATUSES, ...REASONS]);

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' || e.name === 'node_modules' ? [] : files(p);
    return e.name.endsWith('.js') ? [p] : [];
  });
}

/** The source without comments (a `//` inside a string cuts the rest of its line: that only hides code). */
function code(src) {
  return src.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

// The generated constants of the two lists (STATUS_TOOL_NAME, REASON_WORDS, … are other things).
const upper = (prefix, names) => names.map((n) => `${prefix}_${n.toUpperCase()}`);
const CONSTANT = new RegExp(`\\b(?:${[...upper('STATUS', STATUSES), ...upper('REASON', REASONS)].join('|')})\\b`, 'g');
const LITERAL = /(['"`])([a-z_]+)\1/g;
// Right before or after a value: a comparison (acting on an engine answer), or an import/export list.
const COMPARED_BEFORE = /(?:[!=]==?|\bcase)\s*$/;
const COMPARED_AFTER = /^\s*[!=]==?/;

/** Every place in `src` that writes a status or a reason instead of comparing one: `[{ line, text }]`. */
export function decisionsIn(src) {
  const text = code(src);
  const found = [];
  const lineOf = (i) => text.slice(0, i).split('\n').length;
  const imports = [];
  // Import and export lists name constants; a `new Set([…])` of names is a membership test (a comparison).
  for (const m of text.matchAll(/\b(?:import|export)\s*(?:type\s*)?\{[^}]*\}|\bnew Set\(\[[^\]]*\]\)/g)) imports.push([m.index, m.index + m[0].length]);
  const inImport = (i) => imports.some(([a, b]) => i >= a && i < b);
  const compared = (i, len) => COMPARED_BEFORE.test(text.slice(Math.max(0, i - 12), i)) || COMPARED_AFTER.test(text.slice(i + len, i + len + 5));
  for (const m of text.matchAll(CONSTANT)) {
    if (inImport(m.index) || compared(m.index, m[0].length)) continue;
    found.push({ line: lineOf(m.index), text: m[0] });
  }
  // A literal name is a decision where it is the value of a `status`/`reason` key or variable (directly, or
  // as a branch of a conditional).
  for (const m of text.matchAll(LITERAL)) {
    if (!NAMES.has(m[2]) || inImport(m.index) || compared(m.index, m[0].length)) continue;
    const before = text.slice(Math.max(0, m.index - 160), m.index);
    const target = before.match(/\b(status|reason)\s*(?::|=(?!=))[^,;{}()]*$/);
    if (target) found.push({ line: lineOf(m.index), text: `${target[1]} ← ${m[0]}` });
    // The head of a tuple in a table: `[OPERATION_X]: ['unknown', …]`.
    else if (/\[\s*$/.test(before) && /^\s*,/.test(text.slice(m.index + m[0].length))) found.push({ line: lineOf(m.index), text: `[${m[0]}, …]` });
  }
  return found;
}

test('the detector sees each way of writing a status or a reason, and passes comparisons', () => {
  const red = [
    "return { status: 'unknown', reason: 'status_not_found' };",
    'const d = { action: ACTION_STOP, status: STATUS_UNKNOWN, reason: REASON_TASK_CANCELLED };',
    "const T = { completed: [STATUS_SUCCEEDED, REASON_TASK_RESULT_UNAVAILABLE] };",
    "outcome.status = 'failed';",
    "let reason = cond ? 'deadline' : x;",
    "const by = { x: ['tool_error', REASON_RESOLVED_BY_STATUS] };",
    "const by = { [OPERATION_NOT_FOUND]: ['unknown', why] };",
  ];
  for (const src of red) assert.ok(decisionsIn(src).length > 0, src);
  const green = [
    "import { STATUS_UNKNOWN, REASON_TASK_PENDING } from '../generated/names.js';",
    'if (decision.status === STATUS_PENDING && decision.reason === REASON_TASK_PENDING) follow();',
    "if (outcome.status !== 'succeeded' && 'tool_error' !== outcome.status) say();",
    "emit({ type: 'task', status: task.status });",
    'const d = engine.statusAnswer(answer.status, { status: outcome.status, reason: outcome.reason });',
    "// status: 'unknown' in a comment",
    "const e = { status: 'result_not_stored', reason: 'store_unavailable' };", // not a status nor a reason name
    'const SPEAKS = new Set([REASON_PERMANENT, REASON_MAX_ATTEMPTS]);',
    "const UNRESOLVED = new Set(['pending', 'unknown']);",
    "for (const m of ['begin', 'settle', 'pending']) check(m);",
    'const T = new Map(names.map((n, i) => [n, REASON_WORDS[i]]));',
  ];
  for (const src of green) assert.deepEqual(decisionsIn(src), [], src);
});

test('no JS file of the package writes a status or a reason of its own: they come from the engine', () => {
  const all = files(root);
  assert.ok(all.length > 40 && all.some((f) => f.endsWith('client/with-retry.js')), 'the package was read');
  const offences = all.flatMap((f) => decisionsIn(readFileSync(f, 'utf8')).map((d) => `${relative(root, f)}:${d.line}: ${d.text}`));
  assert.deepEqual(offences, [], 'a JS file decides a status or a reason: ask the engine (src/retry/ends.rs, decide/) instead');
});

test('the attempt loop is the core\'s call driver: the loop, its input rounds and task following ask engine.next, the status look engine.statusNext, never admit, record or poll themselves', () => {
  const loop = code(readFileSync(join(root, 'client/call-loop.js'), 'utf8'));
  const rounds = code(readFileSync(join(root, 'client/input-rounds.js'), 'utf8'));
  const tasks = code(readFileSync(join(root, 'client/tasks.js'), 'utf8'));
  const status = code(readFileSync(join(root, 'client/status-resolution.js'), 'utf8'));
  assert.match(status, /\bengine\.statusNext\(/, 'status-resolution.js steps the status driver');
  assert.match(loop, /\bengine\.next\(/, 'call-loop.js steps the driver');
  assert.match(loop, /\bengine\.finish\(/, 'call-loop.js steps the call\'s end');
  assert.doesNotMatch(loop, /\bSTATUS_(?:TOOL_ANSWERED|UNKNOWN|PENDING)\b/, 'call-loop.js judges an end itself (open, given up): engine.finish says');
  for (const [file, src] of [['call-loop.js', loop], ['input-rounds.js', rounds], ['tasks.js', tasks], ['status-resolution.js', status]]) {
    const own = [...src.matchAll(/\b(?:engine|ctx\.engine)\.(admit|record|decide|inputUnanswered|poll|taskEnd|taskResultEnd)\(/g)].map((m) => m[1]);
    assert.deepEqual(own, [], `${file} sequences the engine's steps itself (${own})`);
  }
});

test('the lease heartbeat is the core\'s hold driver: lease.js steps rules.hold, never renews, reads a give-up point or compares clocks itself', () => {
  const lease = code(readFileSync(join(root, 'server/lease.js'), 'utf8'));
  assert.match(lease, /\brules\.hold\(/, 'lease.js steps the hold driver');
  assert.match(lease, /\brules\.holdStart\(/, 'lease.js begins the hold through the driver');
  const own = [...lease.matchAll(/\b(?:rules)\.(renew|giveUpAt|keepAliveMs|finish|claim)\b/g)].map((m) => m[1]);
  assert.deepEqual(own, [], `lease.js makes the hold's decisions itself (${own})`);
  // No clock arithmetic of its own but the delay until the driver's wake-up: a give-up point, a lease's end, a
  // period are the driver's.
  const arithmetic = [...lease.matchAll(/(?:leaseUntilMs|deadline|every|giveUp)\s*[-+<>]=?/g)].map((m) => m[0]);
  assert.deepEqual(arithmetic, [], `lease.js computes a point in time itself (${arithmetic})`);
  assert.doesNotMatch(lease, /'(?:record_changed|not_renewed)'/, 'a loss\'s reason comes from the driver\'s standing');
});

test('the ledger\'s replies come from the core: every ledgerReply names a LEDGER_REPLIES entry, no server file spells one', async () => {
  const { LEDGER_REPLIES } = await import('../../pkg-template/generated/names.js');
  const server = files(join(root, 'server'));
  let calls = 0;
  for (const f of server) {
    const src = code(readFileSync(f, 'utf8'));
    // (withIdempotency answers the reply its write driver named: `s.answer.reply`, tested below.)
    for (const m of src.matchAll(/\bledgerReply\(\s*(?!kind\b|reply\b)([^,)]+)/g)) {
      const kinds = [...m[1].matchAll(/'([a-z_]+)'/g)].map((k) => k[1]);
      assert.ok(kinds.length > 0, `${relative(root, f)}: ledgerReply with a kind that is not a literal name: ${m[1]}`);
      for (const k of kinds) assert.ok(Object.hasOwn(LEDGER_REPLIES, k), `${relative(root, f)}: no reply ${k}`);
      calls += 1;
    }
    // A sentence of the ledger's own, written in JS instead of taken from the core.
    for (const [, , words] of Object.values(LEDGER_REPLIES)) {
      const piece = words.split(/\{[a-z]+\}/).sort((a, b) => b.length - a.length)[0].trim().slice(0, 40);
      assert.ok(!src.includes(piece), `${relative(root, f)} spells the ledger's words "${piece}"`);
    }
    assert.doesNotMatch(src, /nothing was done/, `${relative(root, f)} writes a refusal of its own`);
  }
  assert.ok(calls >= 3, `the server's replies were read (${calls})`);
});

test('withIdempotency is the core\'s write driver: it steps writeStep and answers what the driver says, never a reply, record state or answer kind of its own', () => {
  const src = code(readFileSync(join(root, 'server/with-idempotency.js'), 'utf8'));
  assert.match(src, /writeStep\(/);
  // Its one reply is the driver's (`reply` from the step's answer), and so is the counted kind.
  assert.deepEqual([...src.matchAll(/\bledgerReply\(\s*([^,)]+)/g)].map((m) => m[1].trim()), ['reply']);
  assert.match(src, /const \{ answer, reply, why, kind \} = s\.answer/);
  // No reply name, record state, answer kind or `_meta` reading spelled here (but in a comparison with what
  // the ledger's own calls answered: `case 'rolled_back':`).
  const { LEDGER_REPLY_NAMES, LEDGER_ANSWER_KINDS, RECORD_STATES } = LEDGER_NAMES;
  const spelled = src.replace(/case '[a-z_]+':/g, '');
  for (const name of [...LEDGER_REPLY_NAMES, ...LEDGER_ANSWER_KINDS, ...RECORD_STATES]) {
    assert.doesNotMatch(spelled, new RegExp(`'${name}'`), `with-idempotency.js spells '${name}'`);
  }
  assert.doesNotMatch(src, /_meta|LEDGER_META_KEY|RECORD_UNKNOWN/);
});

test('a reply is filled in one pass, as the core fills it (the same cases as src/ledger/reply.rs)', async () => {
  const { ledgerReply } = await import('../../pkg-template/server/replies.js');
  const text = (r) => r.content[0].text;
  assert.equal(text(ledgerReply('invalid_input', 'op-{arg}', { arg: 'operation_id', problem: '{id} bad' })), '{id} bad (nothing was done; fix the input and call again)');
  assert.equal(text(ledgerReply('conflict', 'op-{arg}', { arg: 'operation_id' })),
    'operation_id op-{arg} was already used for a different request; nothing was done. Use a new operation_id for a new request.');
  const unknown = ledgerReply('unknown', 'op-1', { arg: 'operation_id', why: 'it' });
  assert.match(text(unknown), /^The outcome of this operation \(operation_id op-1\) is unknown \(it\): /);
  assert.deepEqual(unknown._meta['dev.mcp-retry-policy/ledger'], { status: 'unknown', operationId: 'op-1' });
  assert.deepEqual(ledgerReply('store_down', 'op-1', { arg: 'x' })._meta['dev.mcp-retry-policy/ledger'], { status: 'unknown', operationId: 'op-1', reason: 'store_unavailable' });
  assert.equal(ledgerReply('status_invalid_action', undefined)._meta['dev.mcp-retry-policy/ledger'].operationId, undefined);
});
