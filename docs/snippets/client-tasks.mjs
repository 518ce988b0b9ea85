// run: standalone
// client.md, "Tasks": a call asked as a task is followed, never re-sent. A real MCP server with 2025-11-25 tasks
// (the SDK's McpServer, InMemoryTaskStore, registerToolTask) over Streamable HTTP on 127.0.0.1, in process.
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch } from 'mcp-retry-policy';

// --- the server: `render_report` runs as a task; quarter 'Q3' completes after 100 ms, any other keeps working
const taskStore = new InMemoryTaskStore();
const methods = []; // every JSON-RPC method the server received
const runs = { render_report: 0 };
const watches = new Set();
function reportServer() {
  const server = new McpServer({ name: 'reports', version: '1.0.0' }, {
    capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore,
  });
  server.experimental.tasks.registerToolTask('render_report', {
    description: 'Render a quarterly report (a task).',
    inputSchema: { quarter: z.string() },
    execution: { taskSupport: 'optional' },
  }, {
    async createTask({ quarter }, extra) {
      runs.render_report += 1;
      const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60_000, pollInterval: 50 });
      const started = Date.now();
      const watch = setInterval(async () => {
        const now = await taskStore.getTask(task.taskId);
        if (!now || now.status === 'cancelled') return stop();
        if (quarter === 'Q3' && Date.now() - started >= 100) {
          stop();
          await extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `report ${quarter}` }], structuredContent: { quarter } });
        }
      }, 20);
      const stop = () => { clearInterval(watch); watches.delete(watch); };
      watches.add(watch);
      return { task };
    },
    getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  });
  return server;
}
const sessions = new Map();
const httpServer = http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const parsed = body ? JSON.parse(body) : undefined;
  for (const m of [parsed].flat()) if (m?.method) methods.push(m.method);
  let transport = sessions.get(req.headers['mcp-session-id']);
  if (!transport && isInitializeRequest(parsed)) {
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => sessions.set(id, transport) });
    await reportServer().connect(transport);
  }
  if (!transport) return res.writeHead(404).end();
  await transport.handleRequest(req, res, parsed);
});
await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
const url = new URL(`http://127.0.0.1:${httpServer.address().port}/mcp`);

// --- the client, as in the quick start
const client = new Client({ name: 'my-agent', version: '1.0.0' });
const transport = () => new StreamableHTTPClientTransport(url, { fetch: observeFetch() });
await client.connect(transport());
let onWorking = () => {};
const mcp = withRetry(client, {
  transport, trusted: true, onEvent: (e) => e.type === 'task' && e.status === 'working' && onWorking(),
});
const count = (method) => methods.filter((m) => m === method).length;

// ANCHOR: task
const ac = new AbortController();
const out = await mcp.call({ name: 'render_report', arguments: { quarter: 'Q3' } }, { task: { ttl: 600_000 }, signal: ac.signal });
// completed → 'succeeded' with the result · failed → 'tool_error' · cancelled by the server → 'unknown'
// ac.abort() → tasks/cancel is sent; the call is 'unknown' (some of the work may have run)
// still working at the deadline → 'pending', reason 'deadline', out.result.task.taskId to check later
// ANCHOR_END: task

// completed → succeeded, with the tool's result; sent once, then followed (tasks/get, tasks/result).
assert.equal(out.status, 'succeeded', out.message);
assert.deepEqual(out.result.structuredContent, { quarter: 'Q3' });
assert.equal(count('tools/call'), 1);
assert.equal(runs.render_report, 1);
assert.ok(count('tasks/get') >= 1, 'it looked while the task worked');
assert.equal(count('tasks/result'), 1);

// ac.abort() while the task works → tasks/cancel, unknown. The abort waits for the event of the first look at it.
const ac2 = new AbortController();
const watching = mcp.call({ name: 'render_report', arguments: { quarter: 'Q4' } }, { task: { ttl: 600_000 }, signal: ac2.signal });
await new Promise((resolve) => { onWorking = resolve; });
ac2.abort();
const aborted = await watching;
assert.equal(aborted.status, 'unknown', aborted.message);
assert.equal(aborted.reason, 'aborted');
assert.equal(count('tasks/cancel'), 1);
assert.equal(count('tools/call'), 2, 'never sent again');

// Still working at the deadline → pending, the task in result.task to check later.
const short = withRetry(client, { transport, trusted: true, policy: { totalTimeoutMs: 400 } });
const late = await short.call({ name: 'render_report', arguments: { quarter: 'Q1' } }, { task: true });
assert.equal(late.status, 'pending', late.message);
assert.equal(late.reason, 'deadline');
assert.ok(late.result.task.taskId, 'the task to check later');
assert.equal((await taskStore.getTask(late.result.task.taskId)).status, 'working');
assert.equal(count('tools/call'), 3);

await client.close();
for (const w of watches) clearInterval(w);
for (const t of sessions.values()) await t.close().catch(() => {});
taskStore.cleanup();
httpServer.closeAllConnections();
await new Promise((r) => httpServer.close(r));
