// examples/fastmcp-server, as a user runs it: punkpeye's FastMCP (the real package) with withIdempotency and the
// framework-neutral status tool, started as its own process on 127.0.0.1. The package's checker passes it, and a
// withRetry client (the real MCP SDK client) whose first answer is dropped after the server committed ends
// `succeeded` with one ticket, not two.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { observeFetch, withRetry } from '../../pkg/client.node.js';
import { checkServer } from '../../pkg/check/index.js';
import { startFaultProxy } from '../support/fault-proxy.mjs';

const example = fileURLToPath(new URL('../../examples/fastmcp-server/server.mjs', import.meta.url));
let child;
let url;
let proxy;

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

before(async () => {
  // The package linked under its name beside the examples, as an app has it installed.
  const link = fileURLToPath(new URL('../../examples/node_modules/mcp-retry-policy', import.meta.url));
  if (!existsSync(link)) {
    mkdirSync(fileURLToPath(new URL('../../examples/node_modules', import.meta.url)), { recursive: true });
    symlinkSync('../../pkg', link, 'dir');
  }
  const port = await freePort();
  child = spawn(process.execPath, [example, '--port', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  // Ready when it says so (an event, not a wait). The stream stays read to its end: a closed pipe would kill it.
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the example exited (${code}) before listening: ${out}`)));
  });
  url = `http://127.0.0.1:${port}/mcp`;
  proxy = await startFaultProxy(url);
});
after(async () => {
  await proxy?.close();
  child?.kill();
  if (child && child.exitCode === null) await once(child, 'exit');
});

test('the checker passes the FastMCP example: every testable window right', async () => {
  const report = await checkServer(url, {
    tool: 'open_ticket', args: { title: 'checked' },
    headers: { authorization: 'Bearer alice' }, otherTenantHeaders: { authorization: 'Bearer bob' },
  });
  const failed = report.checks.filter((c) => c.status === 'fail').map((c) => `${c.key}: ${c.reason}`);
  assert.deepEqual(failed, []);
  for (const key of ['same_id_twice', 'cut_response', 'other_tenant', 'status_tool', 'status_tenant_scoped']) {
    assert.equal(report.checks.find((c) => c.key === key).status, 'pass', key);
  }
  assert.equal(report.ok, true);
});

test('withRetry against the FastMCP example: the first answer dropped after the commit → succeeded, one ticket', async () => {
  const client = new Client({ name: 'fastmcp-example-test', version: '1.0.0' });
  const headers = { authorization: 'Bearer carol' };
  const transport = () => new StreamableHTTPClientTransport(new URL(proxy.url), { requestInit: { headers }, fetch: observeFetch() });
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
