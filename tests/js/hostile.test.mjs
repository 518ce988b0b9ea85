// "A wasm module that cannot die" (issue #6, part 3). A JS exception that unwinds through wasm frames leaks
// the frames' shadow stack and what they held; a few thousand of them and every later call into the module
// traps, for everyone in the page or isolate. Here every exported entry point of both faces — the public
// API, the raw wasm exports of the client (numbers only) and the raw wasm-bindgen class of the server
// (LedgerRules, reachable through the prototype chain) — takes HOSTILE_CALLS (default 100 000) hostile calls:
// each must return or throw a TypeError or RangeError with a string `code`; then a good call must work, and
// the wasm memory must not have grown.
import test from 'node:test';
import assert from 'node:assert/strict';
import { types } from 'node:util';
import { readFileSync } from 'node:fs';
import { RetryEngine, RetryCall, revisionFor, newOperationId, LedgerRules, fingerprint, isValidOperationId, MAX_FINGERPRINT_BYTES } from '../../pkg/node.js';
import * as rawClient from '../../pkg/mcp_retry_policy_client.js';
import * as rawServer from '../../pkg/mcp_retry_policy_server.js';
import { useNodeCrypto } from '../../pkg/server/fingerprint.js';
import { writeStart, writeStep } from '../../pkg/server/write.js';

const N = Number(process.env.HOSTILE_CALLS ?? 100_000);
const clientWasm = rawClient.initSync(); // already initialized by pkg/node.js: returns the exports
const serverWasm = rawServer.initSync();
const EP = RetryEngine.prototype;
const CP = RetryCall.prototype;
const LP = LedgerRules.prototype;
const t0 = 1_700_000_000_000;

const revoked = (target = {}) => {
  const r = Proxy.revocable(target, {});
  r.revoke();
  return r.proxy;
};

/** Deterministic xorshift32. */
function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>>= 0) / 4294967296;
  };
}

function hostileValues() {
  const cyclic = {};
  cyclic.self = cyclic;
  const freedEngine = new RetryEngine();
  freedEngine.free();
  const live = new RetryEngine(undefined, { seed: 1 });
  const freedCall = live.begin(t0);
  freedCall.free();
  const freedRules = new LedgerRules();
  freedRules.free();
  const call = live.begin(t0);
  return [
    undefined, null, '', 'timeout', true, false, 0, -0, -1, 0.5, NaN, Infinity, -Infinity, 1e308, 2 ** 53 + 2, 2 ** 32 + 1,
    '0x10', '3', 'NaN', [], [1, 2], {}, new Date(0), new Number(5), new Number(NaN), new String('timeout'), new Boolean(true),
    Symbol('s'), 10n, () => 1, Object.create(null), cyclic, 'x'.repeat(5000),
    revoked(), revoked(function f() {}), revoked([]),
    new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw 42; }, has() { throw 1; }, getPrototypeOf() { throw 2; } }),
    new Proxy({}, { get() { throw new Proxy(new Error('m'), { get() { throw 3; } }); } }),
    { get kind() { throw new Error('boom'); } },
    { kind: 'http', get status() { throw Object.defineProperty(new Error(), 'message', { get() { throw 4; } }); } },
    { valueOf() { throw new Error('valueOf'); }, toString() { throw new Error('toString'); } },
    { length: 100000, slice() { throw new TypeError('slice'); }, charCodeAt() { return -1; } },
    freedEngine, freedCall, freedRules, live, call,
    Object.create(CP), Object.create(EP), Object.create(LP), new Proxy(live, {}), new Proxy(call, {}),
    Object.assign(Object.create(CP), call), { __proto__: CP, __wbg_ptr: 8 }, { __proto__: LP, __wbg_ptr: 16 },
  ];
}

const FIELDS = ['kind', 'code', 'status', 'retryAfterMs', 'hadSession', 'sent', 'isError', 'resultType', 'eventIdSeen', 'retryMs', 'extra'];
const KINDS = ['result', 'jsonrpc_error', 'http', 'network', 'timeout', 'stream_broken', 'aborted', 'ledger'];

/** A TypeError or RangeError (of this realm, not a Proxy posing as one) with a string `code`. */
function isTyped(e) {
  if (typeof e !== 'object' || e === null || types.isProxy(e) || !types.isNativeError(e)) return false;
  if (!(e instanceof TypeError || e instanceof RangeError)) return false;
  const d = Object.getOwnPropertyDescriptor(e, 'code'); // a data property: reading it runs no code
  return d !== undefined && 'value' in d && typeof d.value === 'string';
}

function describe(e) {
  try {
    return `${e?.constructor?.name} ${e?.code} ${e?.message}`;
  } catch {
    try {
      return `a hostile value thrown as is (${typeof e})`;
    } catch {
      return 'a hostile value thrown as is';
    }
  }
}

/** Runs `n` calls of `f(pick)`; every throw must be a typed TypeError/RangeError. Returns counts by code. */
function hammer(name, n, f, seed) {
  const rnd = prng(seed);
  const values = hostileValues();
  const pick = () => values[Math.floor(rnd() * values.length)];
  pick.rnd = rnd;
  const codes = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0; // thrown errors are the point here; their stacks only cost time
  try {
    for (let i = 0; i < n; i++) {
      let code = 'ok';
      try {
        const made = f(pick, i);
        // What a hostile call made anyway (an engine from `new RetryEngine(undefined, {})`, a call from
        // `begin(0)`) is freed, as a program would: the FinalizationRegistry cannot run inside this loop.
        if (made instanceof RetryEngine || made instanceof RetryCall || made instanceof LedgerRules) made.free();
      } catch (e) {
        if (!isTyped(e)) {
          Error.stackTraceLimit = limit;
          assert.fail(`${name}, call ${i}: not a typed error: ${describe(e)}`);
        }
        code = e.code;
      }
      codes[code] = (codes[code] ?? 0) + 1;
    }
  } finally {
    Error.stackTraceLimit = limit;
  }
  return codes;
}

function outcomeOf(pick) {
  const rnd = pick.rnd;
  const r = rnd();
  if (r < 0.2) return pick();
  const o = { kind: KINDS[Math.floor(rnd() * KINDS.length)] };
  if (o.kind === 'http') o.status = 503;
  const f = FIELDS[Math.floor(rnd() * FIELDS.length)];
  o[f] = pick();
  return o;
}

/** What happened, for the call driver (`next`): a name, an object of any kind, or anything `pick` makes. */
function happenedOf(pick) {
  const rnd = pick.rnd;
  const r = rnd();
  const kinds = ['start', 'waited', 'cancelled', 'sent', 'input_gathered', 'input_unanswered', 'task_created', 'task_looked',
    'task_look_failed', 'task_result', 'task_result_failed', 'task_cancel_answered'];
  if (r < 0.2) return pick();
  if (r < 0.45) return kinds[Math.floor(rnd() * kinds.length)];
  const h = { kind: rnd() < 0.9 ? kinds[Math.floor(rnd() * kinds.length)] : pick() };
  if (h.kind === 'sent' || h.kind === 'task_result' || rnd() < 0.1) h.outcome = outcomeOf(pick);
  if (h.kind === 'task_created' || h.kind === 'task_looked' || rnd() < 0.1) {
    h.task = rnd() < 0.2 ? pick() : { status: rnd() < 0.7 ? ['working', 'completed', 'cancelled'][Math.floor(rnd() * 3)] : pick(), ...(rnd() < 0.5 ? { pollInterval: rnd() < 0.5 ? 500 : pick() } : {}) };
  }
  if (h.kind === 'input_unanswered' || rnd() < 0.1) h[rnd() < 0.5 ? 'timedOut' : 'handlerMissing'] = rnd() < 0.5 ? rnd() < 0.5 : pick();
  return h;
}

function statusHappenedOf(pick) {
  const rnd = pick.rnd;
  const kinds = ['start', 'answered', 'waited', 'cancelled'];
  const r = rnd();
  if (r < 0.2) return pick();
  if (r < 0.5) return kinds[Math.floor(rnd() * kinds.length)];
  const h = { kind: rnd() < 0.9 ? kinds[Math.floor(rnd() * kinds.length)] : pick() };
  if (h.kind === 'answered' || rnd() < 0.1) {
    if (rnd() < 0.7) h.answer = rnd() < 0.7 ? ['in_progress', 'succeeded', 'not_found'][Math.floor(rnd() * 3)] : pick();
    if (rnd() < 0.5) h.retryAfterMs = rnd() < 0.5 ? 300 : pick();
  }
  return h;
}

// Linear memory, plus the externref tables (each slot also holds a JS value alive).
const memory = () => clientWasm.memory.buffer.byteLength + serverWasm.memory.buffer.byteLength
  + 8 * ((clientWasm.__wbindgen_externrefs?.length ?? 0) + serverWasm.__wbindgen_externrefs.length);
const stackAtRest = [clientWasm.__stack_pointer.value, serverWasm.__stack_pointer.value];

function clientStillWorks() {
  const e = new RetryEngine({ maxAttempts: 3 }, { seed: 7 });
  const c = e.begin(t0);
  assert.equal(e.admit(c, t0).admitted, true);
  assert.equal(e.record(c, { kind: 'http', status: 503 }, 'read_only', t0 + 1).decision.action, 'retry');
  assert.equal(RetryEngine.prototype.record.call(e, c, { kind: 'timeout' }, 'unsafe', t0 + 2).decision.status, 'unknown');
  assert.equal(revisionFor('2025-11-25'), '2025-11-25');
  assert.match(newOperationId(), /^[0-9a-f-]{36}$/);
  const d = e.begin(t0);
  assert.equal(e.next(d, 'start', 'read_only', t0).next, 'send');
  assert.equal(e.next(d, { kind: 'sent', outcome: { kind: 'result', isError: false } }, 'read_only', t0 + 1).decision.status, 'succeeded');
  e.free();
}

function serverStillWorks() {
  const rules = new LedgerRules({ ttlMs: 1000, leaseMs: 100 });
  const claim = rules.claim(undefined, 'fp', 5);
  assert.equal(rules.admit(claim, 'fp', 6).action, 'in_progress');
  assert.equal(fingerprint({ b: [1, 'x'], a: null }), fingerprint({ a: null, b: [1, 'x'] }));
  assert.equal(isValidOperationId('op-12345678'), true);
  rules.free();
}

test('client face: every entry point survives hostile calls, then works, with bounded memory', () => {
  const engine = new RetryEngine({ maxAttempts: 100, budget: false, breaker: false }, { seed: 3 });
  const call = engine.begin(t0);
  const freeing = { get kind() { try { engine.free(); } catch (e) { freeing.seen = e.code; throw e; } return 'timeout'; } };
  const freeingCall = { get kind() { call.free(); return 'timeout'; } };
  const getters = (P, names) => names.map((n) => Object.getOwnPropertyDescriptor(P, n).get);
  const engineGetters = getters(EP, ['policy', 'revision', 'budgetTokens', 'breakerState']);
  const callGetters = getters(CP, ['attempts', 'deadlineMs', 'maybeDelivered', 'polls']);
  const hedgeGetters = getters(EP, ['hedging', 'hedgeCounts']);
  // The raw wasm exports take numbers only: hostile numbers, and handles that are not live (a handle is
  // index + 1 in the low 20 bits, a generation above; the live ones of this test are left alone).
  const numbers = [0, -0, 1, -1, 0.5, NaN, Infinity, -Infinity, 1e308, 2 ** 53 + 2, 2 ** 32 + 1, 2 ** 32 - 1, 8, 16, 1 << 20, (1 << 20) + 2, (7 << 20) + 1, 3];
  const num = (p) => (p.rnd() < 0.8 ? numbers[Math.floor(p.rnd() * numbers.length)] : Math.floor(p.rnd() * 2 ** 33) - 2 ** 31);
  const raw = (name, arity) => (p) => {
    const args = Array.from({ length: arity }, () => num(p));
    const r = rawClient[name](...args);
    assert.equal(typeof r, 'number', name);
  };
  const rawMaking = (name, arity, free) => (p) => {
    const r = rawClient[name](...Array.from({ length: arity }, () => num(p)), ...(name === 'callBegin' ? [] : []));
    if (r > 0) rawClient[free](r); // what a hostile call made anyway is freed, as a program would
  };
  const entries = {
    'new RetryEngine(policy, options)': (p) => new RetryEngine(p(), p()),
    'new RetryEngine({ field: hostile })': (p) => new RetryEngine({ [['maxAttempts', 'baseDelayMs', 'jitter', 'budget', 'breaker', 'totalTimeoutMs'][Math.floor(p.rnd() * 6)]]: p() }),
    'new RetryEngine(budget/breaker sections)': (p) => new RetryEngine({ budget: { capacity: p() }, breaker: p.rnd() < 0.5 ? p() : { openMs: p() } }),
    'new RetryEngine(policy, { seed, revision })': (p) => new RetryEngine(undefined, { [p.rnd() < 0.5 ? 'seed' : 'revision']: p() }),
    'new RetryEngine(policy, { behindRetryingProxy })': (p) => new RetryEngine(undefined, { behindRetryingProxy: p() }),
    'classify': (p) => engine.classify(outcomeOf(p)),
    'classify (hostile this)': (p) => EP.classify.call(p(), { kind: 'timeout' }),
    'safety': (p) => engine.safety(p.rnd() < 0.5 ? p() : { annotations: p(), inputSchema: { properties: p() } }, p.rnd() < 0.5 ? p() : { trusted: true, override: p(), operationIdArgument: p() }),
    'setProtocolVersion': (p) => engine.setProtocolVersion(p()),
    'begin': (p) => engine.begin(p(), p.rnd() < 0.5 ? undefined : p.rnd() < 0.5 ? { answersInput: p() } : p()),
    'begin (hostile this)': (p) => EP.begin.call(p(), t0),
    'admit': (p) => engine.admit(p.rnd() < 0.5 ? call : p(), p.rnd() < 0.5 ? t0 : p(), p.rnd() < 0.5 ? undefined : p.rnd() < 0.5 ? p() : { subrequests: p() }),
    'record': (p) => engine.record(p.rnd() < 0.7 ? call : p(), outcomeOf(p), p.rnd() < 0.5 ? 'read_only' : p(), p.rnd() < 0.7 ? t0 : p()),
    'record (hostile this)': (p) => EP.record.call(p.rnd() < 0.7 ? engine : p(), p.rnd() < 0.7 ? call : p(), outcomeOf(p), p(), p.rnd() < 0.5 ? t0 : p()),
    'record (a getter frees the engine, or the call)': (p) => engine.record(call, p.rnd() < 0.5 ? freeing : freeingCall, 'read_only', t0),
    'next': (p) => engine.next(p.rnd() < 0.7 ? call : p(), happenedOf(p), p.rnd() < 0.5 ? 'read_only' : p(), p.rnd() < 0.7 ? t0 : p(), p.rnd() < 0.5 ? undefined : p.rnd() < 0.5 ? p() : { subrequests: p() }),
    'next (hostile this)': (p) => EP.next.call(p.rnd() < 0.7 ? engine : p(), p.rnd() < 0.7 ? call : p(), happenedOf(p), p(), p.rnd() < 0.5 ? t0 : p()),
    'next (a getter frees the engine, or the call)': (p) => engine.next(call, { kind: 'sent', outcome: p.rnd() < 0.5 ? freeing : freeingCall }, 'read_only', t0),
    'statusNext': (p) => engine.statusNext(p.rnd() < 0.7 ? call : p(), statusHappenedOf(p), p.rnd() < 0.7 ? t0 : p(), p.rnd() < 0.2 ? p() : {
      deadlineMs: p.rnd() < 0.7 ? t0 + 10_000 : p(),
      ...(p.rnd() < 0.5 ? { before: p.rnd() < 0.7 ? { status: 'unknown', reason: p.rnd() < 0.5 ? 'max_attempts' : p() } : p() } : {}),
      ...(p.rnd() < 0.3 ? { subrequests: p() } : {}),
    }),
    'statusNext (hostile this)': (p) => EP.statusNext.call(p.rnd() < 0.7 ? engine : p(), p.rnd() < 0.7 ? call : p(), 'start', p(), { deadlineMs: p() }),
    'decide': (p) => engine.decide(p.rnd() < 0.7 ? call : p(), outcomeOf(p), p(), p()),
    'poll': (p) => engine.poll(p.rnd() < 0.7 ? call : p(), p.rnd() < 0.3 ? p() : p.rnd() < 0.5 ? { hintMs: p() } : { hintMs: p(), subrequests: p() }, p.rnd() < 0.7 ? t0 : p()),
    'poll (hostile this)': (p) => EP.poll.call(p.rnd() < 0.5 ? engine : p(), p.rnd() < 0.7 ? call : p(), { hintMs: p() }, p()),
    'inputUnanswered': (p) => engine.inputUnanswered(p.rnd() < 0.7 ? call : p(), p.rnd() < 0.3 ? p() : { handlerMissing: p() }),
    'inputUnanswered (hostile this)': (p) => EP.inputUnanswered.call(p.rnd() < 0.5 ? engine : p(), p.rnd() < 0.7 ? call : p(), { handlerMissing: p() }),
    'listFailed': (p) => engine.listFailed(p.rnd() < 0.2 ? freeing : outcomeOf(p), p.rnd() < 0.7 ? t0 : p()),
    'listFailed (hostile this)': (p) => EP.listFailed.call(p(), { kind: 'timeout' }, t0),
    'statusAnswer': (p) => engine.statusAnswer(p.rnd() < 0.5 ? p() : 'succeeded', p.rnd() < 0.5 ? p() : { status: p(), reason: p() }),
    'statusAnswer (hostile this)': (p) => EP.statusAnswer.call(p(), 'unknown'),
    'taskEnd': (p) => engine.taskEnd(p()),
    'taskResultEnd': (p) => engine.taskResultEnd(p.rnd() < 0.3 ? 'ledger_in_progress' : p(), p.rnd() < 0.3 ? 'ledger_in_progress' : p()),
    'taskEnd (hostile this)': (p) => EP.taskEnd.call(p(), 'working'),
    'finish': (p) => engine.finish(p.rnd() < 0.4 ? 'start' : p(), p.rnd() < 0.3 ? p() : { status: p.rnd() < 0.5 ? 'unknown' : p(), reason: p.rnd() < 0.5 ? 'max_attempts' : p() },
      p.rnd() < 0.3 ? p() : { keyed: p.rnd() < 0.5 || p(), mayResolve: p(), cancelled: p.rnd() < 0.5 ? false : p() }),
    'finish (hostile this)': (p) => EP.finish.call(p(), 'start', { status: 'unknown', reason: 'max_attempts' }, {}),
    'RetryEngine getters (hostile this)': (p) => engineGetters[Math.floor(p.rnd() * 4)].call(p.rnd() < 0.1 ? engine : p()),
    'RetryEngine free / dispose (hostile this)': (p) => {
      const v = p();
      if (v === engine || v === call) return; // not the ones this test keeps using
      (p.rnd() < 0.5 ? EP.free : EP[Symbol.dispose]).call(v);
    },
    'RetryCall getters (hostile this)': (p) => callGetters[Math.floor(p.rnd() * 4)].call(p.rnd() < 0.1 ? call : p()),
    'RetryCall free / dispose / constructor': (p) => {
      const r = p.rnd();
      const v = p();
      if (v === call) return;
      if (r < 0.4) CP.free.call(v);
      else if (r < 0.7) CP[Symbol.dispose].call(v);
      else new RetryCall(v, p());
    },
    'sharedSnapshot / probeDue / adoptShared': (p) => {
      const r = p.rnd();
      if (r < 0.2) return engine.sharedSnapshot(p());
      if (r < 0.4) return engine.probeDue(p());
      if (r < 0.7) return engine.adoptShared(p(), p.rnd() < 0.5 ? undefined : p());
      return engine.adoptShared({ state: p.rnd() < 0.5 ? 'open' : p(), sinceMs: p(), budgetTokens: p.rnd() < 0.5 ? undefined : p() }, p.rnd() < 0.5 ? undefined : p());
    },
    'sharedSnapshot / probeDue / adoptShared (hostile this)': (p) => [EP.sharedSnapshot, EP.probeDue, EP.adoptShared][Math.floor(p.rnd() * 3)].call(p(), p()),
    'revisionFor': (p) => revisionFor(p()),
    'newOperationId': (p) => newOperationId(p()),
    'codeTables': (p) => RetryEngine.codeTables(p()),
    'raw engineNew': rawMaking('engineNew', 20, 'engineFree'),
    'raw callBegin': rawMaking('callBegin', 3, 'callFree'),
    'raw engineFree / callFree': (p) => { const h = num(p); if (h !== 1 && h !== 3) (p.rnd() < 0.5 ? rawClient.engineFree : rawClient.callFree)(h); },
    'raw engineSeed': raw('engineSeed', 2),
    'raw engineSetRevision': raw('engineSetRevision', 2),
    'raw engineSetBehindRetryingProxy': raw('engineSetBehindRetryingProxy', 2),
    'raw engineRevision': raw('engineRevision', 1),
    'raw revisionOfDate': raw('revisionOfDate', 1),
    'raw enginePolicy': raw('enginePolicy', 1),
    'raw engineBudget': raw('engineBudget', 1),
    'raw engineBreaker': raw('engineBreaker', 1),
    'raw callField': raw('callField', 2),
    'raw engineSnapshot': raw('engineSnapshot', 1),
    'raw engineProbeDue': raw('engineProbeDue', 2),
    'raw engineAdopt': raw('engineAdopt', 10),
    'raw admit': raw('admit', 5),
    'raw record': raw('record', 9),
    'raw next': raw('next', 12),
    'raw statusNext': raw('statusNext', 12),
    'raw classify': raw('classify', 6),
    'raw poll': raw('poll', 7),
    'raw inputUnanswered': raw('inputUnanswered', 3),
    'raw listFailed': raw('listFailed', 7),
    'raw statusAnswer': raw('statusAnswer', 3),
    'raw taskEnd': raw('taskEnd', 1),
    'raw taskResultEnd': raw('taskResultEnd', 2),
    'raw callFinish': raw('callFinish', 6),
    'raw safetyOf': raw('safetyOf', 2),
    'raw errorDetail': raw('errorDetail', 1),
    'new RetryEngine({ hedgeAfterMs, maxHedges: hostile })': (p) => new RetryEngine({ [p.rnd() < 0.5 ? 'hedgeAfterMs' : 'maxHedges']: p() }),
    'hedge': (p) => engine.hedge(p.rnd() < 0.7 ? call : p(), p.rnd() < 0.5 ? 'read_only' : p(), p.rnd() < 0.7 ? t0 : p()),
    'hedge (hostile this)': (p) => EP.hedge.call(p(), call, 'read_only', t0),
    'hedgeEnded': (p) => engine.hedgeEnded(p.rnd() < 0.7 ? call : p(), p()),
    'hedgeEnded (hostile this)': (p) => EP.hedgeEnded.call(p(), call, false),
    'hedging / hedgeCounts (hostile this)': (p) => hedgeGetters[Math.floor(p.rnd() * 2)].call(p.rnd() < 0.1 ? engine : p()),
    'raw engineHedging': raw('engineHedging', 4),
    'raw hedge': raw('hedge', 6),
    'raw hedgeCopyStands': raw('hedgeCopyStands', 11),
    'raw hedgeEnded': raw('hedgeEnded', 3),
    'raw engineHedges': raw('engineHedges', 1),
    'raw outSlots': raw('outSlots', 1),
  };
  const before = memory();
  const report = {};
  let seed = 1;
  for (const [name, f] of Object.entries(entries)) {
    const m = memory();
    report[name] = hammer(name, N, f, seed++);
    report[name].grown = memory() - m;
    clientStillWorks();
  }
  assert.equal(freeing.seen, 'in_use', 'a getter freeing the engine in use was refused');
  assert.equal(typeof engine.admit(call, t0).admitted, 'boolean', 'the engine and the call a getter tried to free are alive');
  const grown = memory() - before;
  assert.ok(grown <= 1 << 20, `wasm memory grew by ${grown} bytes over ${N} calls per entry point`);
  // Every method and every raw export is covered above, so one added later is noticed here.
  assert.deepEqual(Object.getOwnPropertyNames(EP).sort(), ['admit', 'adoptShared', 'begin', 'breakerState', 'budgetTokens', 'classify', 'constructor',
    'decide', 'finish', 'free', 'hedge', 'hedgeCounts', 'hedgeEnded', 'hedging', 'inputUnanswered', 'listFailed', 'next', 'policy', 'poll', 'probeDue', 'record',
    'revision', 'safety', 'setProtocolVersion', 'sharedSnapshot', 'statusAnswer', 'statusNext', 'taskEnd', 'taskResultEnd']);
  assert.deepEqual(Object.getOwnPropertyNames(CP).sort(), ['attempts', 'constructor', 'deadlineMs', 'free', 'maybeDelivered', 'polls']);
  const exported = Object.keys(rawClient).filter((k) => !['default', 'initSync'].includes(k)).sort();
  const hammered = Object.keys(entries).filter((k) => k.startsWith('raw ')).flatMap((k) => k.slice(4).split(' / ')).sort();
  assert.deepEqual(exported, hammered);
  console.log(`# hostile calls per client entry point: ${N}; memory growth ${grown} B`);
  for (const [name, codes] of Object.entries(report)) console.log(`#   ${name}: ${JSON.stringify(codes)}`);
});

test('the client wasm imports nothing a call can reach: no JS can run inside a call into it', () => {
  const module = new WebAssembly.Module(readFileSync(new URL('../../pkg/mcp_retry_policy_client_bg.wasm', import.meta.url)));
  const imports = WebAssembly.Module.imports(module).filter((i) => i.kind === 'function');
  // The one import is wasm-bindgen's start-up step (it fills the reference table once, at instantiation).
  assert.deepEqual(imports.map((i) => i.name), ['__wbindgen_init_externref_table'], 'a function import would let JS run (and throw) inside a call');
});

test('server face: every entry point survives hostile calls, then works, with bounded memory', () => {
  const rules = new LedgerRules({ ttlMs: 10_000, leaseMs: 1000 });
  const good = rules.claim(undefined, 'fp', 5);
  const recordOf = (p) => {
    if (p.rnd() < 0.3) return p();
    const r = { ...good };
    r[['state', 'fingerprint', 'leaseUntilMs', 'createdMs', 'expiresMs', 'version'][Math.floor(p.rnd() * 6)]] = p();
    return r;
  };
  const doomed = new LedgerRules();
  const freeing = { ...good, get state() { try { doomed.free(); } catch { /* freed already */ } return 'pending'; } };
  const getters = ['ttlMs', 'leaseMs'].map((n) => Object.getOwnPropertyDescriptor(LP, n).get);
  const numbers = [0, -0, 1, -1, 0.5, 4, 5, 16, 17, 31, 32, NaN, Infinity, -Infinity, 1e308, 2 ** 53, 2 ** 53 + 2, 86_400_000, 3];
  const num = (p) => (p.rnd() < 0.8 ? numbers[Math.floor(p.rnd() * numbers.length)] : Math.floor(p.rnd() * 2 ** 33) - 2 ** 31);
  const raw = (name, arity) => (p) => {
    const r = rawServer[name](...Array.from({ length: arity }, () => num(p)));
    assert.equal(typeof r, 'number', name);
  };
  const entries = {
    'new LedgerRules(options)': (p) => new LedgerRules(p.rnd() < 0.5 ? p() : { [p.rnd() < 0.5 ? 'ttlMs' : 'leaseMs']: p() }),
    'admit': (p) => rules.admit(recordOf(p), p.rnd() < 0.5 ? 'fp' : p(), p.rnd() < 0.5 ? 6 : p()),
    'claim': (p) => rules.claim(recordOf(p), p.rnd() < 0.5 ? 'fp' : p(), p.rnd() < 0.5 ? 6 : p()),
    'finish': (p) => rules.finish(recordOf(p), p.rnd() < 0.5 ? 'succeeded' : p(), p.rnd() < 0.5 ? 6 : p()),
    'release': (p) => rules.release(recordOf(p), p.rnd() < 0.5 ? 6 : p()),
    'lookup': (p) => rules.lookup(recordOf(p), p.rnd() < 0.5 ? 6 : p()),
    'giveUpAt': (p) => rules.giveUpAt(recordOf(p)),
    'lookStart': (p) => rules.lookStart(p.rnd() < 0.5 ? ['claim', 'atomic', 'status'][Math.floor(p.rnd() * 3)] : p()),
    'look': (p) => rules.look(
      p.rnd() < 0.5 ? rules.lookStart('claim') : p(), p.rnd() < 0.5 ? ['read', 'held', 'reconciled', 'wrote'][Math.floor(p.rnd() * 4)] : p(),
      p.rnd() < 0.3 ? 1 : p.rnd() < 0.5 ? 'not_done' : p(), recordOf(p), p.rnd() < 0.5 ? 'fp' : p(), p.rnd() < 0.5 ? 6 : p()),
    'holdStart': (p) => rules.holdStart(recordOf(p), p.rnd() < 0.5 ? 6 : p(), p.rnd() < 0.5 ? 6 : p()),
    'hold': (p) => {
      // A state holdStart made, one with a number changed (a caller that wrote into it), or anything at all.
      const state = p.rnd() < 0.2 ? p() : rules.holdStart(good, 5, 5).state;
      if (ArrayBuffer.isView(state) && p.rnd() < 0.5) state[Math.floor(p.rnd() * state.length)] = num(p);
      const events = ['timer', 'renewed', 'look', 'stop', 'commit', 'committed', 'read_back'];
      const answer = p.rnd() < 0.4 ? ['won', 'changed', 'failed'][Math.floor(p.rnd() * 3)] : p.rnd() < 0.5 ? true : p();
      for (let i = 0; i < 3; i++) {
        rules.hold(state, p.rnd() < 0.7 ? events[Math.floor(p.rnd() * events.length)] : p(), answer, p.rnd() < 0.5 ? 6 + i * 400 : p(), p.rnd() < 0.5 ? 6 + i * 400 : num(p));
      }
    },
    'admit/claim/finish/release/lookup/giveUpAt (hostile this)': (p) => [LP.admit, LP.claim, LP.finish, LP.release, LP.lookup, LP.giveUpAt][Math.floor(p.rnd() * 6)].call(p(), good, 'fp', 6),
    'claim (a getter frees the rules)': () => doomed.claim(freeing, 'fp', 6),
    'getters (hostile this)': (p) => getters[Math.floor(p.rnd() * 2)].call(p.rnd() < 0.1 ? rules : p()),
    'free / dispose (hostile this)': (p) => {
      const v = p();
      if (v === rules) return;
      (p.rnd() < 0.5 ? LP.free : LP[Symbol.dispose]).call(v);
    },
    'fingerprint': (p) => fingerprint(p.rnd() < 0.5 ? p() : { a: p(), b: [p()] }),
    'fingerprintJson': (p) => rawServer.fingerprintJson(p.rnd() < 0.3 ? '{"a":' + String(p.rnd()) : p()),
    'fingerprintCanonical': (p) => rawServer.fingerprintCanonical(p.rnd() < 0.3 ? '{"a":' + String(p.rnd()) + '}' : p()),
    'isValidOperationId': (p) => isValidOperationId(p()),
    'raw ledgerConfig': raw('ledgerConfig', 2),
    'raw ledgerDefault': raw('ledgerDefault', 1),
    'raw ledgerAdmit': raw('ledgerAdmit', 8),
    'raw ledgerLookup': raw('ledgerLookup', 7),
    'raw ledgerClaim': raw('ledgerClaim', 9),
    'raw ledgerFinish': raw('ledgerFinish', 9),
    'raw ledgerRelease': raw('ledgerRelease', 8),
    'raw ledgerRenew': raw('ledgerRenew', 8),
    'raw ledgerKeepAlive': raw('ledgerKeepAlive', 2),
    'raw ledgerGiveUpAt': raw('ledgerGiveUpAt', 3),
    'raw ledgerLook': raw('ledgerLook', 12),
    'raw ledgerSlots': raw('ledgerSlots', 1),
    'raw ledgerHoldStart': raw('ledgerHoldStart', 9),
    'raw ledgerHold': raw('ledgerHold', 4),
    'raw ledgerHoldSlots': raw('ledgerHoldSlots', 1),
    'raw ledgerWriteStart': raw('ledgerWriteStart', 4),
    'raw ledgerWrite': raw('ledgerWrite', 3),
    'writeStep': (p) => {
      // A write writeStart made, stepped by events of the right names or anything at all.
      const events = ['operation_id', 'tenant', 'authorized', 'principal', 'validated', 'fingerprinted', 'begun', 'ran', 'recorded', 'status'];
      let w = p.rnd() < 0.8 ? writeStart(p.rnd() < 0.5, p.rnd() < 0.5, p.rnd() < 0.5, p.rnd() < 0.5) : p();
      for (let i = 0; i < 4; i++) {
        const arg = p.rnd() < 0.5 ? p.rnd() < 0.5 : p.rnd() < 0.5 ? ['ok', 'execute', 'succeeded', 'threw'][Math.floor(p.rnd() * 4)] : p();
        w = writeStep(w, p.rnd() < 0.8 ? events[Math.floor(p.rnd() * events.length)] : p(), arg).write;
      }
    },
    'raw errorDetail': raw('errorDetail', 1),
    'raw maxFingerprintBytes': raw('maxFingerprintBytes', 1),
  };
  const before = memory();
  const report = {};
  let seed = 100;
  for (const [name, f] of Object.entries(entries)) {
    const m = memory();
    report[name] = hammer(name, N, f, seed++);
    report[name].grown = memory() - m;
    serverStillWorks();
  }
  assert.equal(rules.admit(good, 'fp', 6).action, 'in_progress', 'the rules in use throughout still work');
  assert.throws(() => doomed.ttlMs, (e) => e instanceof TypeError && e.code === 'freed', 'a getter freed those: later use is typed');
  const grown = memory() - before;
  assert.ok(grown <= 1 << 20, `wasm memory grew by ${grown} bytes over ${N} calls per entry point`);
  assert.deepEqual(Object.getOwnPropertyNames(LP).sort(), ['admit', 'claim', 'constructor', 'finish', 'free', 'giveUpAt', 'hold', 'holdStart', 'keepAliveMs', 'leaseMs', 'look', 'lookStart', 'lookup', 'release', 'renew', 'ttlMs']);
  // Every raw export is covered above (the fingerprint ones by name), so one added later is noticed here.
  const exported = Object.keys(rawServer).filter((k) => !['default', 'initSync'].includes(k)).sort();
  const hammered = Object.keys(entries).flatMap((k) => (k.startsWith('raw ') ? [k.slice(4)] : ['fingerprintJson', 'fingerprintCanonical', 'isValidOperationId'].includes(k) ? [k] : [])).sort();
  assert.deepEqual(exported, hammered);
  console.log(`# hostile calls per server entry point: ${N}; memory growth ${grown} B`);
  for (const [name, codes] of Object.entries(report)) console.log(`#   ${name}: ${JSON.stringify(codes)}`);
});

const typed = (type, code, field) => (e) => {
  assert.ok(e instanceof type, `${e?.constructor?.name}: ${e?.message}`);
  assert.equal(e.code, code, e.message);
  if (field !== undefined) assert.equal(e.field, field, e.message);
  return true;
};

test('freed, cloned, forged and foreign objects are typed errors naming the field', () => {
  const engine = new RetryEngine(undefined, { seed: 1 });
  const call = engine.begin(t0);
  const other = new RetryEngine();
  other.free();
  assert.throws(() => other.begin(t0), typed(TypeError, 'freed', 'this'));
  assert.throws(() => other.policy, typed(TypeError, 'freed', 'this'));
  assert.throws(() => other.free(), typed(TypeError, 'freed', 'this'));
  assert.throws(() => engine.admit(engine, t0), typed(TypeError, 'foreign_object', 'call'));
  assert.throws(() => engine.record({}, { kind: 'timeout' }, 'unsafe', t0), typed(TypeError, 'foreign_object', 'call'));
  assert.throws(() => engine.admit(Object.assign(Object.create(CP), call), t0), typed(TypeError, 'foreign_object', 'call'));
  assert.throws(() => engine.admit({ __proto__: CP, __wbg_ptr: 8 }, t0), typed(TypeError, 'foreign_object', 'call'));
  assert.throws(() => engine.admit(new Proxy(call, {}), t0), typed(TypeError, 'foreign_object', 'call'));
  assert.throws(() => new RetryCall(), typed(TypeError, 'foreign_object'));
  assert.throws(() => Object.create(CP).attempts, typed(TypeError, 'foreign_object', 'this'));
  assert.throws(() => RetryEngine.prototype.classify.call(new Proxy(engine, {}), { kind: 'timeout' }), typed(TypeError, 'foreign_object', 'this'));
  const rules = new LedgerRules();
  assert.throws(() => LP.admit.call(engine, undefined, 'fp', 0), typed(TypeError, 'foreign_object', 'this'));
  assert.throws(() => LP.admit.call(new Proxy(rules, {}), undefined, 'fp', 0), typed(TypeError, 'foreign_object', 'this'));
  assert.throws(() => LP.admit.call(Object.create(LP), undefined, 'fp', 0), typed(TypeError, 'foreign_object', 'this'));
  rules.free();
  assert.throws(() => rules.ttlMs, typed(TypeError, 'freed', 'this'));
  assert.throws(() => rules.admit(undefined, 'fp', 0), typed(TypeError, 'freed', 'this'));
  // Still fine: the call, and using/dispose.
  assert.equal(engine.admit(call, t0).admitted, true);
  call[Symbol.dispose]();
  assert.throws(() => call.attempts, typed(TypeError, 'freed', 'this'));
  // A getter that frees the object being read meets `in_use`; the call fails as unreadable; both live on.
  const c2 = engine.begin(t0);
  let seen;
  const outcome = { get kind() { try { c2.free(); } catch (e) { seen = e; } return 'timeout'; } };
  engine.record(c2, outcome, 'read_only', t0);
  assert.ok(typed(TypeError, 'in_use', 'this')(seen));
  assert.equal(typeof c2.attempts, 'number');
  assert.equal(engine.admit(c2, t0).admitted, true);
});

test('numbers are numbers: what the glue would coerce is refused, on the hot path too', () => {
  const engine = new RetryEngine(undefined, { seed: 1 });
  const call = engine.begin(t0);
  const rules = new LedgerRules();
  for (const v of [null, '', true, [], '0x10', new Date(0), new Number(5), {}, undefined, 10n]) {
    const name = typeof v === 'bigint' ? '10n' : JSON.stringify(v) ?? String(v);
    assert.throws(() => engine.begin(v), typed(TypeError, 'invalid_type', 'nowMs'), name);
    assert.throws(() => engine.admit(call, v), typed(TypeError, 'invalid_type', 'nowMs'), name);
    assert.throws(() => engine.record(call, { kind: 'timeout' }, 'unsafe', v), typed(TypeError, 'invalid_type', 'nowMs'), name);
    assert.throws(() => rules.admit(undefined, 'fp', v), typed(TypeError, 'invalid_type', 'nowMs'), name);
    assert.throws(() => rules.claim(undefined, 'fp', v), typed(TypeError, 'invalid_type', 'nowMs'), name);
    if (v === undefined) continue; // an absent optional field is fine
    // Fields of objects: the encoder refuses what is not a number.
    const outcomes = [
      [{ kind: 'http', status: v }, 'outcome.status'],
      [{ kind: 'http', status: 503, retryAfterMs: v }, 'outcome.retryAfterMs'],
      [{ kind: 'jsonrpc_error', code: v }, 'outcome.code'],
      [{ kind: 'stream_broken', retryMs: v }, 'outcome.retryMs'],
    ];
    for (const [o, field] of outcomes) {
      assert.throws(() => engine.classify(o), typed(TypeError, 'invalid_type', field), `${name} ${field}`);
    }
    assert.throws(() => new RetryEngine({ baseDelayMs: v }), typed(TypeError, 'invalid_type', 'baseDelayMs'), name);
    assert.throws(() => new RetryEngine(undefined, { seed: v }), typed(TypeError, 'invalid_type', 'options.seed'), name);
    assert.throws(() => new LedgerRules({ ttlMs: v }), typed(TypeError, 'invalid_type', 'ttlMs'), name);
    const record = { ...rules.claim(undefined, 'fp', 1), createdMs: v };
    assert.throws(() => rules.admit(record, 'fp', 2), typed(TypeError, 'invalid_type', 'record.createdMs'), name);
  }
  // The raw exports refuse a code out of range by name (what JS would decode as a typed error).
  assert.ok(rawClient.classify(1, 2 ** 32 + 4, 0, 0, 0, 0) < 0);
});

test('fingerprint: boxed NaN is refused by name; boxed primitives are their primitive; limits are typed', async () => {
  assert.equal(MAX_FINGERPRINT_BYTES, 16 * 1024 * 1024);
  assert.equal(rawServer.maxFingerprintBytes(), MAX_FINGERPRINT_BYTES);
  const { runInNewContext } = await import('node:vm');
  const foreign = runInNewContext('new Number(NaN)'); // another realm's Number object
  for (const bad of [new Number(NaN), new Number(Infinity), { a: [1, new Number(-Infinity)] }, { get a() { return new Number(NaN); } }, NaN, foreign, [foreign]]) {
    assert.throws(() => fingerprint(bad), typed(RangeError, 'not_finite', 'value'));
  }
  assert.notEqual(fingerprint({ a: null }), (() => { try { return fingerprint({ a: new Number(NaN) }); } catch { return 'refused'; } })());
  assert.equal(fingerprint({ a: new Number(3), b: new String('x'), c: new Boolean(false) }), fingerprint({ a: 3, b: 'x', c: false }));
  const sneaky = new Number(1);
  let reads = 0;
  sneaky.valueOf = () => (reads++ === 0 ? 1 : NaN); // would pass a check, then serialize as null
  assert.equal(fingerprint({ a: sneaky }), fingerprint({ a: 1 }));
  assert.equal(reads, 1);
  assert.throws(() => fingerprint(10n), typed(TypeError, 'invalid_type', 'value'));
  assert.throws(() => fingerprint(undefined), typed(TypeError, 'invalid_type', 'value'));
  const cyclic = {};
  cyclic.c = cyclic;
  assert.throws(() => fingerprint(cyclic), typed(TypeError, 'invalid_type', 'value'));
});

test('fingerprint: inputs too large or too deep for the wasm are typed errors, and memory stays bounded', () => {
  const before = serverWasm.memory.buffer.byteLength;
  const big = 'a'.repeat(MAX_FINGERPRINT_BYTES); // its JSON text is 2 bytes longer than the limit
  assert.throws(() => fingerprint(big), typed(RangeError, 'too_large', 'value'));
  assert.throws(() => rawServer.fingerprintJson(`"${big}"`), typed(RangeError, 'too_large', 'value'));
  assert.equal(fingerprint(big.slice(2)).length, 64, 'at the limit exactly');
  // Within the limit in UTF-16 code units, over it in UTF-8 bytes: the wasm counts bytes.
  assert.throws(() => rawServer.fingerprintJson(`"${'é'.repeat(MAX_FINGERPRINT_BYTES / 2)}"`), typed(RangeError, 'too_large', 'value'));
  // The hash of a canonical text: measured in UTF-16 code units before the copy, in bytes after it.
  assert.equal(rawServer.fingerprintCanonical(big).length, 64, 'at the limit exactly');
  assert.throws(() => rawServer.fingerprintCanonical(`${big}a`), typed(RangeError, 'too_large', 'value'));
  assert.equal(rawServer.fingerprintCanonical('é'.repeat(MAX_FINGERPRINT_BYTES / 2)).length, 64, 'at the limit in bytes');
  assert.throws(() => rawServer.fingerprintCanonical(`a${'é'.repeat(MAX_FINGERPRINT_BYTES / 2)}`), typed(RangeError, 'too_large', 'value'));
  // fingerprint's own byte check, on both hash paths (node:crypto, set up by pkg/node.js, and the wasm).
  const node = useNodeCrypto(undefined);
  assert.ok(node);
  for (const crypto of [node, undefined]) {
    useNodeCrypto(crypto);
    assert.throws(() => fingerprint(`${'é'.repeat(MAX_FINGERPRINT_BYTES / 2)}`), typed(RangeError, 'too_large', 'value'));
    assert.equal(fingerprint(`${'é'.repeat(MAX_FINGERPRINT_BYTES / 2 - 1)}`).length, 64, 'at the limit in bytes');
    assert.throws(() => fingerprint(big), typed(RangeError, 'too_large', 'value'));
  }
  useNodeCrypto(node);
  // Wide: a million keys of 16 bytes each is too large; the same shape at half the limit works.
  const wide = (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${String(i).padStart(8, '0')}`, i]));
  assert.throws(() => fingerprint(wide(1_100_000)), typed(RangeError, 'too_large', 'value'));
  assert.equal(fingerprint(wide(400_000)).length, 64);
  // Deep: past the parser's 256 levels, and past the JS engine's own recursion limit.
  const deep = (n) => {
    let v = 0;
    for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
    return v;
  };
  assert.equal(fingerprint(deep(255)).length, 64);
  assert.throws(() => fingerprint(deep(300)), typed(RangeError, 'too_deep', 'value'));
  assert.throws(() => fingerprint(deep(1_000_000)), typed(RangeError, 'too_deep', 'value'));
  // Numbers as wide as can be: half a million digits' worth of arrays.
  assert.equal(fingerprint(Array.from({ length: 4_000_000 }, () => 0)).length, 64);
  serverStillWorks();
  const after = serverWasm.memory.buffer.byteLength;
  console.log(`# server wasm memory: ${before} B before the large inputs, ${after} B after`);
  // The text is written in JS and only hashed here: ≈ 35 MiB (0.1.0 parsed it again, streaming: 43 MiB; a tree: 110 MiB).
  assert.ok(after <= 96 * 1024 * 1024, `memory ${after}`);
});

test('an exception that escapes a wasm call anyway leaks no shadow stack (the guards put the pointer back)', () => {
  // The server binding lets no exception through wasm frames, so one is forced here by tampering with the
  // realm: the glue copies a non-ASCII string into wasm with TextEncoder.prototype.encodeInto, inside an
  // import the wasm calls. (A stack overflow inside a wasm call is the way this happens for real; see
  // ARCHITECTURE.md.) Each escape used to leak the frames' shadow stack: a few thousand made every later call
  // trap. (The client wasm imports nothing: no JS runs inside it, see the test above.)
  const rules = new LedgerRules({ ttlMs: 1000, leaseMs: 100 });
  const encodeInto = TextEncoder.prototype.encodeInto;
  let escaped = 0;
  let leaked;
  TextEncoder.prototype.encodeInto = function () {
    throw new TypeError('tampered');
  };
  try {
    for (let i = 0; i < N; i++) {
      try {
        isValidOperationId('ñ'.repeat(8)); // guarded: the pointer is put back at once
      } catch (e) {
        if (e.message === 'tampered') escaped++;
      }
    }
    assert.equal(serverWasm.__stack_pointer.value, stackAtRest[1], 'the shadow stack is at rest');
    // An escape from an entry the guards do not wrap (a raw export, by file path) is repaired at the next
    // guarded call, when no wasm frame is live.
    for (let i = 0; i < 200; i++) {
      try {
        rawServer.fingerprintJson('"ñ"');
      } catch (e) {
        if (e.message === 'tampered') escaped++;
      }
    }
    leaked = stackAtRest[1] - serverWasm.__stack_pointer.value;
  } finally {
    TextEncoder.prototype.encodeInto = encodeInto;
  }
  assert.equal(escaped, N + 200);
  console.log(`# ${N + 200} escapes forced; the unguarded raw export had leaked ${leaked} B of shadow stack before the repair`);
  serverStillWorks();
  assert.equal(serverWasm.__stack_pointer.value, stackAtRest[1], 'the shadow stack is at rest');
  clientStillWorks();
  assert.equal(clientWasm.__stack_pointer.value, stackAtRest[0], 'the client shadow stack is at rest');
  rules.free();
});
