// observeFetch gives each request an abort signal of its own (client/own-signal.js). The MCP SDK's transport
// hands one signal to every fetch and Node's fetch unhooks its listener from it only at garbage collection, so
// the shared signal piles up listeners under sustained traffic (nodejs/undici#5285). Real SDK v1 client, real
// server, Node's own fetch.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { observeFetch } from '../../pkg/client.node.js';
import { startMcpServer } from '../support/mcp-server.mjs';

let json;
let sse;
before(async () => {
  json = await startMcpServer();
  sse = await startMcpServer({ sse: true });
});
after(async () => {
  await json?.close();
  await sse?.close();
});

async function connect(url, fetch) {
  const transport = new StreamableHTTPClientTransport(new URL(url), fetch ? { fetch } : {});
  const client = new Client({ name: 'own-signal', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, listeners: () => getEventListeners(transport._abortController.signal, 'abort').length };
}

/** The most abort listeners the transport's shared signal held, sampled every 100 of `n` calls. */
async function peak(c, n) {
  let most = 0;
  for (let i = 1; i <= n; i++) {
    await c.client.callTool({ name: 'search_tickets', arguments: { query: 'x' } });
    if (i % 100 === 0) most = Math.max(most, c.listeners());
  }
  return most;
}

test('the transport\'s shared signal holds no listener per finished request (JSON answers)', async () => {
  const bare = await connect(json.url);
  const ours = await connect(json.url, observeFetch());
  try {
    const bareMost = await peak(bare, 1000);
    const oursMost = await peak(ours, 1000);
    // Bare, the listeners of finished requests stay until a collection (hundreds between two); ours, none.
    assert.ok(bareMost > 50, `the SDK alone: ${bareMost} listeners at most (the problem is real)`);
    assert.ok(oursMost <= 2, `through observeFetch: ${oursMost} listeners at most`);
  } finally {
    await bare.client.close();
    await ours.client.close();
  }
});

test('over SSE the stream keeps its tie until it ends, and close() still aborts what is in flight', async () => {
  const ours = await connect(sse.url, observeFetch());
  const most = await peak(ours, 300);
  assert.ok(most <= 3, `SSE answers: ${most} listeners at most (the standalone stream and the call in flight)`);
  // A slow call in flight when the client closes: the shared signal's abort reaches it.
  const slow = ours.client.callTool({ name: 'build_report', arguments: { steps: 20 } }).then(() => 'answered', (e) => e);
  await new Promise((r) => setTimeout(r, 200));
  await ours.client.close();
  const ended = await slow;
  assert.notEqual(ended, 'answered');
  assert.ok(ended instanceof Error, String(ended));
});

test('a signal already aborted is honoured, and a fetch that fails unties at once', async () => {
  const controller = new AbortController();
  controller.abort(new Error('gone'));
  const seen = [];
  const f = observeFetch(async (_url, init) => {
    seen.push(init.signal.aborted);
    throw new Error('refused');
  });
  await assert.rejects(f('http://127.0.0.1:9/', { signal: controller.signal }), /refused/);
  assert.deepEqual(seen, [true], 'the request got an aborted signal of its own');
  const live = new AbortController();
  await assert.rejects(f('http://127.0.0.1:9/', { signal: live.signal }), /refused/);
  assert.equal(getEventListeners(live.signal, 'abort').length, 0, 'a failed fetch leaves no listener');
});
