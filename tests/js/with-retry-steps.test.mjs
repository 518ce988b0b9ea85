// withRetry's named steps, each alone (no server): resolve the tool, recover, run one attempt, assemble the
// outcome. The loop that strings them together is tested end to end in with-retry.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTool, recoverStep, runAttempt, assembleOutcome, RESULT_SCHEMA } from '../../pkg/client/with-retry.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { RetryEngine, MemoryJournal } from '../../pkg/node.js';

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
