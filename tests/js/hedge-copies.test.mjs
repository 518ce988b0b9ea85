// What a hedged read's copies leave behind, end to end over the real TypeScript SDK client and McpServer
// (Streamable HTTP on 127.0.0.1, through the fault proxy):
// - no copy answered: the attempt's outcome is the copy that says the most may have been delivered. The first
//   copy is forwarded, runs, and its answer is lost; the hedge is refused at connect (a real ECONNREFUSED, from
//   a port nobody listens on) and ends last — the call is `unknown`, never `failed` "did not take effect";
// - a SubrequestBudget: the hedge is paid from the invocation's room (its request and the
//   `notifications/cancelled` for the copy that loses), so the app's reserve is still there after the call.
import test, { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch, SubrequestBudget } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';
import { listenLocal } from '../support/listen.mjs';

const runs = new Map();
let server;
let proxy;
let deadUrl; // a port that was bound and closed: connecting to it is refused
const clients = [];
before(async () => {
  server = await startMcpServer({
    extraTools: (s) => {
      // Takes 300 ms on every call (a hedge at 100 ms goes out while the first copy runs).
      s.registerTool('slow_lookup', {
        description: 'slow_lookup: an idempotent read that takes 300 ms',
        inputSchema: {},
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      }, async () => {
        runs.set('slow_lookup', (runs.get('slow_lookup') ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 300));
        return { content: [{ type: 'text', text: 'looked up' }] };
      });
      // Slow (400 ms) on its first call, at once after: a hedge wins and the first copy is cancelled.
      s.registerTool('slow_first_read', {
        description: 'slow_first_read: slow on its first call',
        inputSchema: {},
        annotations: { readOnlyHint: true },
      }, async (_args, extra) => {
        const n = (runs.get('slow_first_read') ?? 0) + 1;
        runs.set('slow_first_read', n);
        if (n === 1) {
          await new Promise((resolve) => {
            const t = setTimeout(resolve, 400);
            extra.signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
          });
        }
        return { content: [{ type: 'text', text: `answer ${n}` }] };
      });
    },
  });
  proxy = await startFaultProxy(server.url);
  const dead = await listenLocal(http.createServer());
  deadUrl = dead.url;
  await dead.close();
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await proxy.close();
  await server.close();
});
beforeEach(() => {
  runs.clear();
  proxy.faults.length = 0;
});

const isCall = (init) => typeof init?.body === 'string' && init.body.includes('"tools/call"');

async function connect(fetch) {
  const client = new Client({ name: 'hedge-copies-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: observeFetch(fetch) }));
  clients.push(client);
  return client;
}

test('no copy answered: a hedge refused at connect, ending last, does not make a copy that ran read "not processed"', async () => {
  // The first tools/call goes through the proxy (which forwards it, lets the tool run, then drops the answer);
  // the hedge's goes, once the first has failed, to a port that refuses the connection: a real ECONNREFUSED.
  let first;
  let calls = 0;
  const fetch = (input, init) => {
    if (!isCall(init)) return globalThis.fetch(input, init);
    if (++calls === 1) {
      first = globalThis.fetch(input, init);
      return first;
    }
    return first.then(() => {}, () => {}).then(() => new Promise((r) => setTimeout(r, 50))).then(() => globalThis.fetch(deadUrl, init));
  };
  const events = [];
  const mcp = withRetry(await connect(fetch), {
    trusted: true, policy: { hedgeAfterMs: 100, maxAttempts: 1, attemptTimeoutMs: 5_000 }, seed: 1, onEvent: (e) => events.push(e),
  });
  proxy.faults.push('drop');
  const out = await mcp.call({ name: 'slow_lookup', arguments: {} });
  assert.equal(runs.get('slow_lookup'), 1, 'the tool ran once: the first copy was delivered');
  // (the next tick asks again: maxHedges, 1, is spent)
  assert.deepEqual(events.filter((e) => e.type === 'hedge').map((e) => e.refusal ?? e.phase), ['sent', 'max_hedges', 'failed']);
  assert.equal(out.status, 'unknown', `the call may have taken effect: ${out.status} (${out.message})`);
  const attempts = events.filter((e) => e.type === 'attempt');
  assert.equal(attempts.length, 1);
  assert.deepEqual(attempts[0].outcome, { kind: 'network', sent: 'maybe' }, 'the copy that may have run stands for the attempt');
  assert.deepEqual(mcp.engine.hedgeCounts, { sent: 1, won: 0, requestsInFlight: 0, hedgesInFlight: 0 });
});

test('a SubrequestBudget: a hedge is paid from the room, never from the app\'s reserve', async () => {
  let budget = new SubrequestBudget({ limit: 1_000, reserve: 0 }); // the connect's requests
  let events = [];
  const mcp = withRetry(await connect((input, init) => budget.fetch(input, init)), {
    trusted: true, policy: { hedgeAfterMs: 100, maxAttempts: 1, attemptTimeoutMs: 5_000 }, seed: 1,
    subrequestBudget: () => budget, onEvent: (e) => events.push(e),
  });
  await mcp.refreshTools(); // the tool list is fetched once, before the invocations below
  // room = remaining − reserve: 2 and 3 pay the attempt (its request and the cancellation the SDK sends if it
  // times out) but not a hedge (its request and the cancellation of the copy that loses); 4 pays both.
  for (const [remaining, hedged] of [[3, false], [4, false], [5, true]]) {
    runs.clear();
    events = [];
    budget = new SubrequestBudget({ limit: 10, reserve: 1, spent: 10 - remaining });
    const out = await mcp.call({ name: 'slow_first_read', arguments: {} });
    assert.equal(out.status, 'succeeded', `remaining ${remaining}: ${out.reason}`);
    await new Promise((r) => setTimeout(r, 100)); // the loser's notifications/cancelled, if any, has gone out
    const seen = `remaining ${remaining} before, ${budget.remaining} after (reserve ${budget.reserve})`;
    assert.ok(budget.remaining >= budget.reserve, seen);
    const phases = events.filter((e) => e.type === 'hedge').map((e) => e.refusal ?? e.phase);
    assert.deepEqual(phases, hedged ? ['sent', 'won'] : ['subrequest_budget'], seen);
    assert.equal(out.result.content[0].text, hedged ? 'answer 2' : 'answer 1', seen);
  }
});
