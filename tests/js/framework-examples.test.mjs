// The server half in the frameworks people build MCP servers with, as a user runs each example: its own process on
// 127.0.0.1, the real framework, `withIdempotency` around the write and the status tool. For each, the package's
// checker reports no failed check, and a withRetry client (the real SDK client that framework's users pair it with)
// whose first answer is dropped after the server committed ends `succeeded` with one ticket, not two.
//   examples/fastmcp-server       — punkpeye's FastMCP: `statusTool` through its `jsonSchemaAdapter`;
//   examples/v2-server            — the TS SDK v2 `McpServer` per request (`createMcpHandler`): `registerStatusTool`;
//   examples/tmcp-server          — tmcp with `@tmcp/adapter-zod` and `@tmcp/transport-http`: `statusTool`'s JSON
//                                   Schema as zod (`z.fromJSONSchema`), the tenant as the transport's custom context,
//                                   the spec's 404 for a session it never issued answered in front of its transport;
//   examples/mcp-framework-server — mcp-framework's class tools on `MCPServer` (HTTP stream), the tenant from its
//                                   `AuthProvider`: tools that override `toolCall` to answer whole results.
// The last two are paired with the v1 SDK client (`@modelcontextprotocol/sdk`), the one their users connect with.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { observeFetch, withRetry } from '../../pkg/client.node.js';
import { checkServer } from '../../pkg/check/index.js';
import { startFaultProxy } from '../support/fault-proxy.mjs';

const EXAMPLES = [
  { name: 'fastmcp-server', Client, Transport: StreamableHTTPClientTransport },
  { name: 'v2-server', Client: ClientV2, Transport: TransportV2 },
  { name: 'tmcp-server', Client, Transport: StreamableHTTPClientTransport },
  { name: 'mcp-framework-server', Client, Transport: StreamableHTTPClientTransport },
];
const children = [];
const proxies = [];

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

/** Starts an example; resolves to its URL once it says it listens (an event, not a wait). */
async function start(name) {
  const port = await freePort();
  const file = fileURLToPath(new URL(`../../examples/${name}/server.mjs`, import.meta.url));
  const child = spawn(process.execPath, [file, '--port', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  // The stream stays read to its end: a closed pipe would kill the example at its next line of output.
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before listening: ${out}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

before(() => {
  // The package linked under its name beside the examples, as an app has it installed.
  const link = fileURLToPath(new URL('../../examples/node_modules/mcp-retry-policy', import.meta.url));
  if (!existsSync(link)) {
    mkdirSync(fileURLToPath(new URL('../../examples/node_modules', import.meta.url)), { recursive: true });
    symlinkSync('../../pkg', link, 'dir');
  }
});
after(async () => {
  for (const p of proxies) await p.close();
  for (const child of children) {
    child.kill();
    if (child.exitCode === null) await once(child, 'exit');
  }
});

for (const example of EXAMPLES) {
  test(`examples/${example.name}: the checker finds nothing wrong; withRetry over a dropped answer makes one ticket`, async () => {
    const url = await start(example.name);
    const report = await checkServer(url, {
      tool: 'open_ticket', args: { title: 'checked' },
      headers: { authorization: 'Bearer alice' }, otherTenantHeaders: { authorization: 'Bearer bob' },
    });
    const failed = report.checks.filter((c) => c.status === 'fail').map((c) => `${c.key}: ${c.reason}`);
    assert.deepEqual(failed, []);
    for (const key of ['same_id_twice', 'same_id_changed_input', 'concurrent_calls', 'cut_response', 'other_tenant', 'status_tool', 'status_tenant_scoped']) {
      assert.equal(report.checks.find((c) => c.key === key).status, 'pass', key);
    }
    assert.equal(report.ok, true);

    const proxy = await startFaultProxy(url);
    proxies.push(proxy);
    const client = new example.Client({ name: `${example.name}-test`, version: '1.0.0' });
    const headers = { authorization: 'Bearer carol' };
    const transport = () => new example.Transport(new URL(proxy.url), { requestInit: { headers }, fetch: observeFetch() });
    await client.connect(transport());
    try {
      const mcp = withRetry(client, { trusted: true, transport, policy: { baseDelayMs: 10, maxDelayMs: 50 } });
      proxy.faults.push('drop');
      const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'printer on fire' } });
      assert.equal(out.status, 'succeeded', JSON.stringify(out.attempts.map((a) => a.outcome)));
      assert.ok(out.attempts.length >= 2, 'the dropped answer was retried');
      const counted = await client.callTool({ name: 'count_tickets', arguments: {} });
      assert.equal(counted.content[0].text, '1', 'one ticket for the one intent');
    } finally {
      await client.close();
    }
  });
}
