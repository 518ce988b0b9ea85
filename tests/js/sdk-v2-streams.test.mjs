// The SSE `retry:` field (2025-11-25 transports.mdx: "the client MUST respect the retry field"), with a real
// server that sends one: the TS SDK 1.32 StreamableHTTPServerTransport's `retryInterval` puts it on its priming
// events (tests/support/mcp-server.mjs, SSE with an event store), and our fault proxy cuts the answer after that
// event, after the tool ran. The SDK clients are told not to reconnect by themselves (`maxRetries: 0`), so
// the resume is withRetry's: it must wait what the server asked, within the call's deadline. Before this, the
// broken stream reached the engine without `retryMs` (measured: the resume waited the policy's own jittered
// 4 ms, not the server's 700 ms; the tests below go red so). Both client generations; v2 also ends the attempt when the
// transport reports its stream's end instead of at the attempt timeout.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';

const RETRY_MS = 700;
let server;
let proxy;
const clients = [];
before(async () => {
  server = await startMcpServer({ sse: true, retryInterval: RETRY_MS });
  proxy = await startFaultProxy(server.url);
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy.close();
  await server.close();
});

const noReconnect = { maxRetries: 0, initialReconnectionDelay: 10, maxReconnectionDelay: 10, reconnectionDelayGrowFactor: 1 };
const generations = {
  v1: () => [new ClientV1({ name: 'v1', version: '1' }), new TransportV1(new URL(proxy.url), { reconnectionOptions: noReconnect })],
  v2: () => [new ClientV2({ name: 'v2', version: '1' }), new TransportV2(new URL(proxy.url), { reconnectionOptions: noReconnect })],
};
async function connect(gen) {
  const [client, transport] = generations[gen]();
  await client.connect(transport);
  clients.push(client);
  return client;
}
const fast = { baseDelayMs: 10, maxDelayMs: 50, attemptTimeoutMs: 2_000, maxAttempts: 2 };

for (const gen of ['v1', 'v2']) {
  test(`${gen}: a broken stream is resumed after the server's SSE retry (${RETRY_MS} ms), not the policy's backoff; one ticket`, async () => {
    const mcp = withRetry(await connect(gen), { trusted: true, policy: fast, seed: 5 });
    server.effects.tickets.length = 0;
    proxy.faults.push('cut');
    const t0 = Date.now();
    const out = await mcp.call({ name: 'create_ticket', arguments: { title: `resumed after retry (${gen})` } });
    assert.equal(out.status, 'succeeded', JSON.stringify(out.attempts.map((a) => [a.outcome, a.decision])));
    assert.deepEqual(out.attempts[0].outcome, { kind: 'stream_broken', eventIdSeen: true, retryMs: RETRY_MS });
    assert.equal(out.attempts[0].decision.recover, 'resume_stream');
    assert.ok(out.attempts[0].decision.delayMs >= RETRY_MS, `waited ${out.attempts[0].decision.delayMs} ms`);
    const cutAt = proxy.log.findLast((l) => l.method === 'tools/call').at;
    const resumedAt = proxy.log.findLast((l) => l.method === 'GET').at;
    assert.ok(resumedAt - cutAt >= RETRY_MS, `resumed ${resumedAt - cutAt} ms after the call`);
    assert.equal(server.effects.tickets.length, 1, 'resumed, not re-sent');
    // v2 reports the end of this request's stream: the attempt ends then, not at its 2 s timeout.
    if (gen === 'v2') assert.ok(Date.now() - t0 < 2_000 + RETRY_MS, `took ${Date.now() - t0} ms`);
  });
}

test('v2: a server retry past the call\'s deadline is not waited for: an unsafe write stops unknown (retry_after_beyond_deadline)', async () => {
  const slowServer = await startMcpServer({ sse: true, retryInterval: 30_000 });
  const slowProxy = await startFaultProxy(slowServer.url);
  try {
    const client = new ClientV2({ name: 'v2', version: '1' });
    await client.connect(new TransportV2(new URL(slowProxy.url), { reconnectionOptions: noReconnect }));
    clients.push(client);
    const mcp = withRetry(client, { trusted: true, policy: { ...fast, totalTimeoutMs: 5_000 } });
    slowProxy.faults.push('cut');
    const t0 = Date.now();
    const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'no time to wait' } });
    assert.equal(out.status, 'unknown');
    assert.equal(out.reason, 'retry_after_beyond_deadline');
    assert.equal(out.attempts[0].outcome.retryMs, 30_000);
    assert.ok(Date.now() - t0 < 3_000, `took ${Date.now() - t0} ms`);
    assert.equal(slowServer.effects.tickets.length, 1);
  } finally {
    await slowProxy.close();
    await slowServer.close();
  }
});
