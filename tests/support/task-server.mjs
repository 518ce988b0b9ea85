// A real MCP server with 2025-11-25 tasks: the TypeScript SDK's McpServer with its InMemoryTaskStore and
// `experimental.tasks.registerToolTask`, over Streamable HTTP on 127.0.0.1. The tools' work runs in the
// background and ends as each test needs: completed, failed, cancelled by the server, or running until a
// client cancels it. `runs` counts each tool's executions (a tools/call that created a task).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MemoryLedgerStore, OperationLedger, OutcomeUnknown, withIdempotency } from '../../pkg/node.js';

const text = (t) => ({ content: [{ type: 'text', text: t }] });

export async function startTaskServer() {
  const taskStore = new InMemoryTaskStore();
  const runs = {};
  const stopped = new Set(); // task ids whose work saw its cancellation and stopped
  const timers = new Set();
  const later = (ms, f) => {
    const t = setTimeout(() => {
      timers.delete(t);
      f();
    }, ms);
    timers.add(t);
  };
  const methods = []; // every JSON-RPC method the server received, in order
  const calls = []; // every tools/call as it arrived: its params._meta and the Mcp-Session-Id it carried

  function tools(server) {
    // The work of a task: `end(store, taskId)` after `ms`, unless the task was cancelled meanwhile (watched
    // every 20 ms: the SDK's tasks/cancel only changes the stored status).
    const task = (name, execution, end, pollInterval = 100) => server.experimental.tasks.registerToolTask(
      name,
      { description: `${name} (a task)`, inputSchema: { ms: z.number().optional(), label: z.string().optional() }, ...(execution ? { execution } : {}) },
      {
        async createTask({ ms = 300, label = name }, extra) {
          runs[name] = (runs[name] ?? 0) + 1;
          const t = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60_000, pollInterval });
          const started = Date.now();
          const watch = setInterval(async () => {
            const now = await taskStore.getTask(t.taskId);
            if (!now || now.status === 'cancelled') {
              clearInterval(watch);
              timers.delete(watch);
              stopped.add(t.taskId);
              return;
            }
            if (Date.now() - started >= ms) {
              clearInterval(watch);
              timers.delete(watch);
              await end(extra.taskStore, t.taskId, label).catch(() => {});
            }
          }, 20);
          timers.add(watch);
          return { task: t };
        },
        getTask: (_a, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: (_a, extra) => extra.taskStore.getTaskResult(extra.taskId),
      },
    );
    task('render_report', undefined, (store, id, label) => store.storeTaskResult(id, 'completed', { ...text(`report ${label}`), structuredContent: { label } }));
    task('flaky_job', undefined, (store, id) => store.storeTaskResult(id, 'failed', { ...text('the job failed: disk full'), isError: true }));
    task('self_cancelling', undefined, (store, id) => store.updateTaskStatus(id, 'cancelled', 'the operator stopped it'));
    task('optional_echo', { taskSupport: 'optional' }, (store, id, label) => store.storeTaskResult(id, 'completed', text(`echo ${label}`)));
    // A keyed write behind the real operation ledger, run as a task: the task completes with the ledger's own
    // answer — `in_progress` (another request holds the operation's claim) or `unknown` (the handler could not
    // tell whether its write happened) — not with the tool's.
    const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
    const write = withIdempotency(ledger, async ({ label }) => {
      if (label === 'unknown') throw new OutcomeUnknown('the downstream API timed out after the request was sent');
      await new Promise((r) => later(2_000, r)); // holds its claim meanwhile
      return text(`wrote ${label}`);
    }, { action: 'ledgered_write', tenant: () => 'tenant-a' });
    task('ledgered_job', undefined, async (store, id, label) => {
      const operationId = `op-task-${id}`;
      if (label === 'in_progress') write({ label, operation_id: operationId }).catch(() => {}); // the claim's holder
      const answer = await write({ label, operation_id: operationId });
      await store.storeTaskResult(id, 'completed', answer);
    });
  }

  const transports = new Map();
  const httpServer = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const parsed = body ? JSON.parse(body) : undefined;
    for (const m of [parsed].flat()) if (m?.method) methods.push(m.method);
    for (const m of [parsed].flat()) {
      if (m?.method === 'tools/call') calls.push({ meta: m.params?._meta ?? null, session: req.headers['mcp-session-id'] ?? null });
    }
    const sid = req.headers['mcp-session-id'];
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport && isInitializeRequest(parsed)) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => transports.set(id, transport) });
      const server = new McpServer(
        { name: 'task-server', version: '1.0.0' },
        { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore },
      );
      tools(server);
      await server.connect(transport);
    }
    if (!transport) {
      res.writeHead(404).end();
      return;
    }
    await transport.handleRequest(req, res, parsed);
  });
  await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
  return {
    url: new URL(`http://127.0.0.1:${httpServer.address().port}/mcp`),
    runs,
    stopped,
    methods,
    calls,
    taskStore,
    async close() {
      for (const t of timers) {
        clearTimeout(t);
        clearInterval(t);
      }
      for (const t of transports.values()) await t.close().catch(() => {});
      taskStore.cleanup();
      httpServer.closeAllConnections?.();
      await new Promise((r) => httpServer.close(r));
    },
  };
}
