// Tasks (MCP 2025-11-25) end to end: the real SDK client, withRetry, and a real McpServer whose tools run as
// tasks (the SDK's own `registerToolTask` and InMemoryTaskStore; tests/support/task-server.mjs). A created
// task is followed to its end within the call's deadline — `tasks/get` with the engine's waits, then
// `tasks/result` — never by sending the call again; an abort cancels it.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RetryEngine, withRetry } from '../../pkg/node.js';
import { startTaskServer } from '../support/task-server.mjs';

let server;
const clients = [];

before(async () => {
  server = await startTaskServer();
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await server?.close();
});

async function connect(options = {}) {
  const client = new Client({ name: 'task-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(server.url));
  clients.push(client);
  const events = [];
  const mcp = withRetry(client, { trusted: true, onEvent: (e) => events.push(e), ...options });
  return { mcp, events };
}

const count = (method) => server.methods.filter((m) => m === method).length;

test('a tool that runs only as a task is followed to its end: tasks/get with the engine\'s waits, then tasks/result; sent once', async () => {
  const { mcp, events } = await connect();
  const calls = count('tools/call');
  const gets = count('tasks/get');
  const out = await mcp.call({ name: 'render_report', arguments: { ms: 400, label: 'Q3' } });
  assert.equal(out.status, 'succeeded', out.message);
  assert.equal(out.reason, 'succeeded');
  assert.equal(out.result.structuredContent.label, 'Q3');
  assert.equal(out.result.content[0].text, 'report Q3');
  assert.equal(count('tools/call') - calls, 1, 'the call was sent once');
  assert.equal(server.runs.render_report, 1);
  assert.ok(count('tasks/get') - gets >= 2, 'it looked while the task worked');
  assert.equal(count('tasks/result'), 1);
  const looks = events.filter((e) => e.type === 'task' && e.delayMs !== undefined);
  assert.ok(looks.length >= 2, JSON.stringify(events.filter((e) => e.type === 'task')));
  // The server's pollInterval (100 ms) is the engine's hint: no look sooner, at most a tenth later.
  for (const l of looks) assert.ok(l.delayMs >= 100 && l.delayMs <= 110, JSON.stringify(l));
  assert.equal(events.filter((e) => e.type === 'task').at(-1).status, 'completed');
});

test('an optional task tool runs as a task only when asked ({ task: { ttl } }); a failed task is the tool\'s error', async () => {
  const { mcp, events } = await connect();
  const direct = await mcp.call({ name: 'optional_echo', arguments: { label: 'now', ms: 50 } });
  assert.equal(direct.status, 'succeeded');
  assert.equal(direct.result.content[0].text, 'echo now');
  assert.equal(events.filter((e) => e.type === 'task').length, 0, 'no task was asked for: the server ran it in the request');
  const asTask = await mcp.call({ name: 'optional_echo', arguments: { label: 'later', ms: 150 } }, { task: { ttl: 30_000 } });
  assert.equal(asTask.status, 'succeeded');
  assert.equal(asTask.result.content[0].text, 'echo later');
  assert.ok(events.some((e) => e.type === 'task' && e.status === 'completed'));

  const failed = await mcp.call({ name: 'flaky_job', arguments: { ms: 150 } });
  assert.equal(failed.status, 'tool_error', failed.message);
  assert.equal(failed.result.isError, true);
  assert.match(failed.result.content[0].text, /disk full/);
  assert.equal(server.runs.flaky_job, 1);
});

test('a task the server cancels is unknown (part of it may have run), never failed or succeeded', async () => {
  const { mcp } = await connect();
  const out = await mcp.call({ name: 'self_cancelling', arguments: { ms: 150 } });
  assert.equal(out.status, 'unknown');
  assert.equal(out.reason, 'task_cancelled');
  assert.match(out.message, /may or may not have taken effect/);
});

test('abort cancels the task (tasks/cancel); the call is unknown; the server\'s work stops', async () => {
  const { mcp, events } = await connect();
  const ac = new AbortController();
  const started = Date.now();
  setTimeout(() => ac.abort(), 400);
  const out = await mcp.call({ name: 'render_report', arguments: { ms: 30_000 } }, { signal: ac.signal });
  assert.ok(Date.now() - started < 3_000, 'the abort ended the call promptly');
  assert.equal(out.status, 'unknown', out.message);
  assert.equal(out.reason, 'aborted');
  assert.equal(count('tasks/cancel'), 1);
  const cancelled = events.find((e) => e.type === 'task' && e.status === 'cancelled');
  assert.ok(cancelled, JSON.stringify(events.filter((e) => e.type === 'task')));
  const stored = await server.taskStore.getTask(cancelled.taskId);
  assert.equal(stored.status, 'cancelled');
  for (let i = 0; i < 50 && !server.stopped.has(cancelled.taskId); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(server.stopped.has(cancelled.taskId), 'the work saw the cancellation');
});

test('a task still working at the deadline ends pending, with the task to check later; nothing is sent again', async () => {
  const { mcp } = await connect({ policy: { totalTimeoutMs: 1_200, attemptTimeoutMs: 1_000 } });
  const calls = count('tools/call');
  const out = await mcp.call({ name: 'render_report', arguments: { ms: 20_000 } });
  assert.equal(out.status, 'pending', out.message);
  assert.equal(out.reason, 'deadline');
  assert.equal(typeof out.result.task.taskId, 'string');
  assert.match(out.message, new RegExp(`still in progress as task ${out.result.task.taskId}`));
  assert.equal(count('tools/call') - calls, 1);
  const stored = await server.taskStore.getTask(out.result.task.taskId);
  assert.equal(stored.status, 'working', 'the task goes on');
  await server.taskStore.updateTaskStatus(out.result.task.taskId, 'cancelled');
});

test('the AI SDK tool of a task still working at the deadline tells the model the outcome\'s message, not the raw task', async () => {
  const { aiSdkTools, mcpToModelOutput } = await import('../../pkg/ai-sdk.js');
  const { mcp } = await connect({ policy: { totalTimeoutMs: 1_200, attemptTimeoutMs: 1_000 } });
  const tools = await aiSdkTools(mcp);
  const output = await tools.render_report.execute({ ms: 20_000 }, { toolCallId: 'tc-task-1', messages: [] });
  const model = mcpToModelOutput({ output });
  assert.equal(model.type, 'content', `before: { type: 'json', value: { task } } — ${JSON.stringify(model)}`);
  assert.match(model.value[0].text, /still in progress as task \S+.*instead of calling it again/);
  assert.equal(output._meta['dev.mcp-retry-policy/outcome'].status, 'pending');
  const taskId = /as task (\S+?)[ .]/.exec(model.value[0].text)[1];
  await server.taskStore.updateTaskStatus(taskId, 'cancelled');
});

test('a task that completes with the server ledger\'s in_progress or unknown answer is open (pending, unknown), never succeeded; sent once', async () => {
  // Idempotent (the app says so): the engine would wait and send it again on the ledger's answer — which a
  // created task never is. (An unsafe tool stops there on its own: pending / unknown either way.)
  const { mcp } = await connect({ policy: { totalTimeoutMs: 5_000 }, tools: { ledgered_job: 'idempotent' } });
  for (const [label, status, reason] of [['in_progress', 'pending', 'status_in_progress'], ['unknown', 'unknown', 'status_unknown']]) {
    const calls = count('tools/call');
    const out = await mcp.call({ name: 'ledgered_job', arguments: { ms: 100, label } });
    assert.deepEqual([out.status, out.reason], [status, reason], `${label}: before, succeeded (the task's own "completed") — ${out.message}`);
    assert.equal(count('tools/call') - calls, 1, 'the created task is never sent again');
  }
});

test('bad task options are refused by name before anything is sent; engine.poll refuses bad hints by name', async () => {
  const { mcp } = await connect();
  const calls = count('tools/call');
  await assert.rejects(mcp.call({ name: 'render_report' }, { task: 'yes' }), (e) => e instanceof TypeError && e.field === 'task');
  await assert.rejects(mcp.call({ name: 'render_report' }, { task: { ttl: -1 } }), (e) => e instanceof RangeError && e.field === 'task.ttl');
  await assert.rejects(mcp.call({ name: 'render_report' }, { task: { ttl: 1, poll: 2 } }), (e) => e instanceof TypeError && e.code === 'unknown_option');
  assert.equal(count('tools/call'), calls);

  const engine = new RetryEngine();
  const call = engine.begin(0);
  for (const [hintMs, type, code] of [[NaN, RangeError, 'not_finite'], [-1, RangeError, 'negative'], ['5', TypeError, 'invalid_type'], [1e12, RangeError, 'too_large']]) {
    assert.throws(() => engine.poll(call, { hintMs }, 0), (e) => e instanceof type && e.code === code && e.field === 'options.hintMs', String(hintMs));
  }
  assert.throws(() => engine.poll(call, { every: 5 }, 0), (e) => e.code === 'unknown_option');
  assert.deepEqual(engine.poll(call, { hintMs: 1000 }, 0).action, 'retry');
  assert.equal(call.polls, 1, 'refused looks are not counted');
  call.free();
  engine.free();
});
