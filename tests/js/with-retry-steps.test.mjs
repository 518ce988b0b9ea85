// withRetry's named steps, each alone (no server): options, the tools cache, resolve the tool, recover, run one
// attempt, the status resolution, the outcome, the model-facing tools. Each step gets a stand-in client (an
// object with the one or two SDK methods the step calls): a step alone has no server to talk to. The loop
// that strings them together is tested end to end, with real SDK clients and servers, in with-retry.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTool, recoverStep, runAttempt, assembleOutcome, RESULT_SCHEMA } from '../../pkg/client/with-retry.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RetryEngine, MemoryJournal } from '../../pkg/node.js';
import { checkOptions, settingsOf } from '../../pkg/client/options.js';
import { toolsCache } from '../../pkg/client/tools-cache.js';
import { toolsForModel } from '../../pkg/client/model-tools.js';
import { resolveOutcome } from '../../pkg/client/status-resolution.js';
import { finishCall } from '../../pkg/client/call-loop.js';
import { toolResultOf } from '../../pkg/client/outcome.js';
import { watchStreamBreaks } from '../../pkg/client/stream-end.js';

const baseCtx = (over = {}) => ({
  client: { transport: {} },
  engine: new RetryEngine(undefined, { seed: 1 }),
  journal: new MemoryJournal(),
  now: () => 1_000,
  toolInfo: async () => undefined,
  learnRevision: () => {},
  trusted: true,
  overrides: {},
  idArg: 'operation_id',
  options: {},
  reconnect: async () => {},
  refreshTools: async () => {},
  server: () => 'test-server',
  ...over,
});

test('resolveTool: a keyed tool gets one operation id, journaled before anything is sent; a caller-given id is kept', async () => {
  const journal = new MemoryJournal();
  const tool = { name: 'open_ticket', inputSchema: { type: 'object', properties: { operation_id: { type: 'string' } } } };
  const ctx = baseCtx({ journal, toolInfo: async () => tool });
  const op = await resolveTool(ctx, { name: 'open_ticket', arguments: { title: 't' } }, 'intent-1');
  assert.equal(op.safety, 'keyed');
  assert.match(op.operationId, /^[0-9a-f-]{36}$/);
  assert.equal(op.args.operation_id, op.operationId);
  assert.deepEqual((await journal.pending()).map((e) => [e.operationId, e.server]), [[op.operationId, 'test-server']], 'journaled before the first send, bound to its server');
  const again = await resolveTool(ctx, { name: 'open_ticket', arguments: { title: 't' } }, 'intent-1');
  assert.equal(again.operationId, op.operationId, 'the same intent, the same id');
  const given = await resolveTool(ctx, { name: 'open_ticket', arguments: { title: 't', operation_id: 'caller-id-0001' } });
  assert.equal(given.operationId, 'caller-id-0001');
  const plain = await resolveTool(baseCtx(), { name: 'create_ticket', arguments: {} });
  assert.equal(plain.safety, 'unsafe', 'no metadata, no override: unsafe');
  assert.equal(plain.operationId, undefined);
});

test('resolveTool: a name proves nothing on an untrusted server — the status tool is read-only only when trusted or told', async () => {
  // Any server may call a write `operation_status`: on an untrusted one its name does not make it read-only (it
  // would be hedged and retried as a read), whatever its annotations say.
  const write = { name: 'operation_status', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: {} } };
  const untrusted = baseCtx({ trusted: false, statusTool: 'operation_status', safetyOf: new WeakMap(), toolInfo: async () => write });
  assert.equal((await resolveTool(untrusted, { name: 'operation_status', arguments: {} })).safety, 'unsafe');
  const told = baseCtx({ trusted: false, statusTool: 'operation_status', overrides: { operation_status: 'read_only' }, toolInfo: async () => write });
  assert.equal((await resolveTool(told, { name: 'operation_status', arguments: {} })).safety, 'read_only', 'the app says so');
  const trusted = baseCtx({ trusted: true, statusTool: 'operation_status', toolInfo: async () => ({ name: 'operation_status' }) });
  assert.equal((await resolveTool(trusted, { name: 'operation_status', arguments: {} })).safety, 'read_only', 'a trusted server');
});

test("runAttempt's result schema accepts what the SDK's exported ResultSchema accepts: a result the tool returned is never refused", async () => {
  const results = [
    { content: [{ type: 'text', text: 'ok' }] },
    { content: [{ type: 'hologram', frames: 3 }], isError: 'no' }, // CallToolResultSchema would refuse it
    { resultType: 'input_required', inputRequests: {} },
    {},
  ];
  for (const r of results) {
    assert.equal(ResultSchema.safeParse(r).success, true, JSON.stringify(r));
    assert.equal(RESULT_SCHEMA.safeParse(r).success, true, JSON.stringify(r));
  }
  for (const bad of [null, 5, 'x', []]) {
    assert.equal(ResultSchema.safeParse(bad).success, false, JSON.stringify(bad));
    assert.equal(RESULT_SCHEMA.safeParse(bad).success, false, JSON.stringify(bad));
  }
  let schema;
  const client = { transport: {}, request: async (_req, s) => ((schema = s), results[1]) };
  const engine = new RetryEngine(undefined, { seed: 1 });
  const run = { params: { name: 't' }, requestOptions: {}, args: {}, state: engine.begin(0) };
  const sent = await runAttempt(baseCtx({ client, engine }), run, { admission: { timeoutMs: 1000 }, started: 0, streamBrokeAt: () => -Infinity });
  assert.equal(schema, RESULT_SCHEMA);
  assert.equal(sent.outcome.kind, 'result');
  assert.deepEqual(sent.result, results[1]);
  run.state.free();
});

test('recoverStep: does what the engine asked, and nothing else', async () => {
  const did = [];
  const ctx = baseCtx({ reconnect: async () => did.push('reconnect'), refreshTools: async () => did.push('refresh'), learnRevision: () => did.push('learn') });
  await recoverStep(ctx, undefined);
  await recoverStep(ctx, 'resume_stream');
  assert.deepEqual(did, []);
  await recoverStep(ctx, 'reinitialize');
  await recoverStep(ctx, 'refresh_tools');
  await recoverStep(ctx, 'renegotiate');
  assert.deepEqual(did, ['reconnect', 'learn', 'refresh', 'reconnect', 'learn']);
});

test('runAttempt: observes, decides nothing — a failed recovery never sent the call; a result is a result', async () => {
  const engine = new RetryEngine(undefined, { seed: 1 });
  const run = { params: { name: 't' }, requestOptions: {}, args: {}, state: engine.begin(0) };
  const attempt = { admission: { timeoutMs: 1000 }, recover: 'reinitialize', started: 0, streamBrokeAt: () => -Infinity };
  let requested = 0;
  const client = { transport: {}, request: async () => (requested++, { content: [] }) };
  const failing = baseCtx({ client, reconnect: async () => { throw new Error('no transport'); } });
  const r1 = await runAttempt(failing, run, attempt);
  assert.deepEqual(r1.outcome, { kind: 'network', sent: 'no' });
  assert.equal(requested, 0, 'the call itself never left');
  const r2 = await runAttempt(baseCtx({ client }), run, { ...attempt, recover: undefined });
  assert.deepEqual(r2.outcome, { kind: 'result', isError: false });
  assert.equal(requested, 1);
});

test('assembleOutcome: the status and reason are the decision\'s; a result only when the tool answered', () => {
  const base = { name: 'create_ticket', safety: 'unsafe', attempts: [], operationIdArgument: 'operation_id' };
  const unknown = assembleOutcome({ ...base, result: { content: [] }, lastError: new Error('reset'), decision: { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' } });
  assert.equal(unknown.status, 'unknown');
  assert.equal(unknown.result, undefined, 'no result claimed for an unknown outcome');
  assert.equal(unknown.error.message, 'reset');
  assert.match(unknown.message, /may or may not have taken effect/);
  const ok = assembleOutcome({ ...base, operationId: 'op-12345678', result: { content: [] }, decision: { action: 'stop', status: 'succeeded', reason: 'succeeded' } });
  assert.deepEqual(ok.result, { content: [] });
  assert.equal(ok.operationId, 'op-12345678');
  assert.equal(ok.error, undefined);
});

test('options: unknown keys and wrong types are refused by name; the settings have their defaults', () => {
  const client = { request() {} };
  assert.throws(() => checkOptions(client, { retries: 3 }), (e) => e instanceof TypeError && e.code === 'unknown_option' && e.field === 'retries');
  assert.throws(() => checkOptions(client, { tools: { t: 'safe' } }), (e) => e instanceof RangeError && e.field === 'tools.t');
  assert.throws(() => checkOptions(client, { reconnect() {}, transport() {} }), (e) => e.code === 'conflicting_options');
  assert.deepEqual(settingsOf({}), { trusted: false, overrides: {}, idArg: 'operation_id', statusTool: 'operation_status' });
  assert.equal(settingsOf({ statusTool: false }).statusTool, false);
});

test('toolsCache: a session lost before the first list is re-initialized once, as the engine says; a refused list is not retried', async () => {
  const engine = new RetryEngine(undefined, { seed: 1, revision: '2025-11-25' });
  const pages = { undefined: { tools: [{ name: 'a' }], nextCursor: 'p2' }, p2: { tools: [{ name: 'b' }] } };
  let fail = new StreamableHTTPError(404, 'Error POSTing to endpoint: session not found');
  let listed = 0;
  const reconnected = [];
  const client = {
    transport: { sessionId: 'old' },
    listTools: async (p) => {
      listed++;
      if (fail) {
        const e = fail;
        fail = undefined;
        throw e;
      }
      return pages[p?.cursor];
    },
  };
  const cache = toolsCache({ client, engine, now: () => 0, reconnect: async (cause) => reconnected.push(cause.code) });
  const [a, b] = await Promise.all([cache.info('a'), cache.info('b')]);
  assert.deepEqual([a, b], [{ name: 'a' }, { name: 'b' }], 'both pages, one shared listing');
  assert.deepEqual(reconnected, [404], 're-initialized once, for the lost session');
  assert.equal(listed, 3, 'the failed list, then two pages');
  assert.equal(cache.has('b'), true);
  // A 400 is the server refusing the read: no recovery, the list stays unknown.
  fail = new StreamableHTTPError(400, 'Error POSTing to endpoint: bad request');
  const refused = toolsCache({ client, engine, now: () => 0, reconnect: async () => reconnected.push('again') });
  assert.equal(await refused.info('a'), undefined);
  assert.deepEqual(reconnected, [404]);
  engine.free();
});

test('resolveOutcome: the engine turns the status answer into the end; polled while in progress; no answer changes nothing', async () => {
  const engine = new RetryEngine({ baseDelayMs: 1, maxDelayMs: 1 }, { seed: 1 });
  let t = 1_000;
  const answers = [{ status: 'in_progress', operation_id: 'op-1', retryAfterMs: 0 }, { status: 'succeeded', operation_id: 'op-1', result: { content: [] } }];
  const seen = [];
  const ctx = baseCtx({
    engine, now: () => t, statusTool: 'operation_status', toolInfo: async () => ({ name: 'operation_status' }), emit: (e) => seen.push(e.answer),
    askStatus: async () => (t += 10, answers.shift()),
  });
  const open = { tool: 'pay', safety: 'keyed', operationId: 'op-1', status: 'unknown', reason: 'unsafe_after_unknown', attempts: [] };
  const done = await resolveOutcome(ctx, open, { deadlineMs: 60_000, attempts: [] });
  assert.deepEqual([done.status, done.reason, done.result], ['succeeded', 'resolved_by_status', { content: [] }]);
  assert.deepEqual(seen, ['in_progress', 'succeeded']);
  const notFound = await resolveOutcome({ ...ctx, askStatus: async () => ({ status: 'not_found', operation_id: 'op-1' }) }, open, { deadlineMs: 60_000, attempts: [] });
  assert.deepEqual([notFound.status, notFound.reason], ['unknown', 'status_not_found'], 'not found stays unknown');
  assert.equal(await resolveOutcome({ ...ctx, askStatus: async () => undefined }, open, { deadlineMs: 60_000, attempts: [] }), undefined);
  assert.equal(await resolveOutcome({ ...ctx, statusTool: false }, open, { deadlineMs: 60_000, attempts: [] }), undefined, 'no status tool: not asked');
  engine.free();
});

test('finishCall: the outcome is the decision\'s; an open keyed outcome is asked about unless autoResolve is off; the journal is settled', async () => {
  const journal = new MemoryJournal();
  await journal.begin({ tool: 'pay', server: 'test-server', operationId: 'op-2', createdAt: 0 });
  let asked = 0;
  const ctx = baseCtx({ journal, options: { autoResolve: false }, statusTool: 'operation_status', askStatus: async () => (asked++, undefined) });
  const op = { name: 'pay', safety: 'keyed', operationId: 'op-2' };
  const ended = { decision: { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' }, attempts: [] };
  const events = [];
  const outcome = await finishCall(ctx, op, ended, { say: (e) => events.push(e.type), deadlineMs: 60_000 });
  assert.deepEqual([outcome.status, outcome.reason, asked], ['unknown', 'unsafe_after_unknown', 0]);
  assert.deepEqual(events, ['give_up']);
  assert.deepEqual((await journal.pending()).map((e) => e.operationId), ['op-2'], 'unknown stays pending in the journal');
  await finishCall(ctx, op, { decision: { action: 'stop', status: 'succeeded', reason: 'succeeded' }, result: { content: [] }, attempts: [] }, { say: () => {}, deadlineMs: 0 });
  assert.deepEqual(await journal.pending(), [], 'settled');
  // autoResolve on (the default): an open keyed end is asked about once; not when the caller cancelled, not a
  // settled end, not an unkeyed call. The status tool answering nothing leaves the end as it was.
  const asking = (options) => baseCtx({ journal, options, statusTool: 'operation_status', toolInfo: async () => ({}), askStatus: async () => (asked++, undefined) });
  const cases = [
    [{}, op, 'unknown', undefined, 1],
    [{}, op, 'unknown', AbortSignal.abort(), 0],
    [{}, op, 'succeeded', undefined, 0],
    [{}, { ...op, operationId: undefined, safety: 'unsafe' }, 'unknown', undefined, 0],
  ];
  for (const [options, o, status, signal, looks] of cases) {
    asked = 0;
    const decision = { action: 'stop', status, reason: status === 'unknown' ? 'unsafe_after_unknown' : 'succeeded' };
    const got = await finishCall(asking(options), o, { decision, attempts: [] }, { say: () => {}, signal, deadlineMs: 60_000 });
    assert.deepEqual([got.status, asked], [status, looks], `${status}, keyed ${!!o.operationId}, aborted ${!!signal}`);
  }
});

test('toolResultOf: the tool\'s own result when it answered; otherwise an error result carrying the outcome', () => {
  const result = { content: [{ type: 'text', text: 'ok' }] };
  assert.equal(toolResultOf({ status: 'succeeded', result }), result);
  assert.equal(toolResultOf({ status: 'pending', result }), result, 'the task a pending call created');
  const failed = assembleOutcome({ name: 'pay', safety: 'unsafe', attempts: [], decision: { action: 'stop', status: 'unknown', reason: 'unsafe_after_unknown' } });
  const r = toolResultOf(failed);
  assert.equal(r.isError, true);
  assert.equal(r.content[0].text, failed.message);
  assert.deepEqual(Object.values(r._meta)[0].status, 'unknown');
});

test('toolsForModel: the operation-id argument is taken out of keyed tools, and the status tool named when listed', () => {
  const keyed = { name: 'pay', description: 'Pays.', inputSchema: { type: 'object', properties: { amount: {}, operation_id: {} }, required: ['amount', 'operation_id'] } };
  const status = { name: 'operation_status', inputSchema: { type: 'object', properties: { operation_id: {} } } };
  const [pay, st] = toolsForModel([keyed, status], { idArg: 'operation_id', statusTool: 'operation_status', statusListed: true });
  assert.deepEqual(Object.keys(pay.inputSchema.properties), ['amount']);
  assert.deepEqual(pay.inputSchema.required, ['amount']);
  assert.match(pay.description, /^Pays\. \(Retries are handled for you; calling this tool again is a new operation\..*use operation_status/);
  assert.equal(st, status, 'the status tool keeps its argument');
  const [quiet] = toolsForModel([keyed], { idArg: 'operation_id', statusTool: 'operation_status', statusListed: false });
  assert.doesNotMatch(quiet.description, /operation_status/);
  assert.match(quiet.description, /unless you pass the operation_id its answer named/);
});

test('watchStreamBreaks: notes when the SDK reports a broken SSE stream, and chains the onerror it found', () => {
  const theirs = [];
  const client = { onerror: (e) => theirs.push(e.message) };
  let t = 5;
  const brokeAt = watchStreamBreaks(client, () => t);
  assert.equal(brokeAt(), -Infinity);
  client.onerror(new Error('something else'));
  assert.equal(brokeAt(), -Infinity);
  t = 9;
  client.onerror(new Error('SSE stream disconnected: reset'));
  assert.equal(brokeAt(), 9);
  assert.deepEqual(theirs, ['something else', 'SSE stream disconnected: reset']);
});
