// One Worker of the shared-breaker storm (tests/js/workerd-breaker.test.mjs): the test runs this script as several
// Workers at once (each its own isolate, its own engine and breaker), all calling one failing upstream; the first
// also holds the Durable Object with the shared state, which the others reach through their bindings.
import { withRetry, SharedBreaker, DurableObjectBreakerState, SubrequestBudget } from '../../pkg/workerd.js';
import { Client, StreamableHTTPClientTransport } from './sdk-bundle.js';
import { runBreakerStateContract } from '../support/breaker-state-contract.mjs';

/** The Durable Object: the package's state class, handed the object's requests. */
export class BreakerObject {
  constructor(ctx) {
    this.storage = ctx.storage;
    this.state = new DurableObjectBreakerState(ctx.storage);
  }
  async fetch(request) {
    if (new URL(request.url).pathname === '/contract') {
      let n = 0; // each state the contract makes keeps its keys apart in this object's storage
      return Response.json(await runBreakerStateContract((options) => new DurableObjectBreakerState(this.storage, { prefix: `contract${n++}:`, ...options })));
    }
    return this.state.fetch(request);
  }
}

// A storm in seconds instead of minutes: the breaker opens after 3 failing calls and stays open 300 ms.
const POLICY = { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20, attemptTimeoutMs: 2_000, budget: false, breaker: { consecutiveFailures: 3, openMs: 300 } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One request's call with a withRetry of its own (a fresh engine, as a Worker that makes one per request has). */
async function once(url, env) {
  const client = new Client({ name: 'request-worker', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(env.MCP_URL)));
  const shared = url.searchParams.get('mode') === 'shared'
    ? new SharedBreaker(env.BREAKER.get(env.BREAKER.idFromName(url.searchParams.get('run'))), { server: 'tickets', timeoutMs: 500 })
    : undefined;
  const policy = { maxAttempts: 1, breaker: { openMs: 300 } }; // the default trip: 5 failing calls in a row
  // `skew`: this request's clock runs that many ms ahead of the machine's (an isolate on a host whose clock is off).
  const skew = Number(url.searchParams.get('skew') ?? 0);
  const mcp = withRetry(client, { trusted: true, policy, now: () => Date.now() + skew, ...(shared ? { sharedBreaker: shared } : {}) });
  const out = await mcp.call({ name: 'search_tickets', arguments: { query: 'once' } });
  await client.close();
  return Response.json({ status: out.status, reason: out.reason, attempts: out.attempts.length, breaker: mcp.engine.breakerState });
}

/**
 * One invocation's budget paying for the transport's requests and the shared breaker's (the object reached
 * through this Worker's binding): calls until the engine stops one for the budget. Reports what was counted
 * against what went out, each call's room before it and how it ended.
 */
async function budgeted(url, env) {
  const budget = new SubrequestBudget({ limit: Number(url.searchParams.get('limit')), reserve: 1 });
  let sent = 0;
  let asked = 0;
  const object = env.BREAKER.get(env.BREAKER.idFromName(url.searchParams.get('run')));
  const stub = { fetch: (u, i) => { asked++; return object.fetch(u, i); } };
  const shared = new SharedBreaker(stub, { server: 'tickets', ttlMs: 0, timeoutMs: 500 });
  const client = new Client({ name: 'budget-worker', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(env.MCP_URL), { fetch: (u, i) => { sent++; return budget.fetch(u, i); } }));
  const mcp = withRetry(client, { trusted: true, seed: 1, sharedBreaker: shared, subrequestBudget: budget, policy: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
  const calls = [];
  for (let i = 0; i < 20; i++) {
    const room = budget.room;
    const out = await mcp.call({ name: 'search_tickets', arguments: { query: `budget ${i}` } });
    calls.push({ room, status: out.status, reason: out.reason, attempts: out.attempts.length, spent: budget.spent, counted: sent + asked });
    if (out.reason === 'subrequest_budget') break;
  }
  await client.close().catch(() => {}); // closing may want a request the budget no longer has
  return Response.json({ calls, asked, sent, spent: budget.spent, remaining: budget.remaining, stats: shared.stats });
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (url.pathname === '/once') return await once(url, env);
      if (url.pathname === '/budget') return await budgeted(url, env);
      if (url.pathname === '/raw') {
        // Anything that can reach the object can send it anything: these bodies as they are, one after another.
        const object = env.BREAKER.get(env.BREAKER.idFromName(url.searchParams.get('run')));
        const answers = [];
        for (const body of await request.json()) {
          const res = await object.fetch('https://shared-breaker/', { method: 'POST', body: JSON.stringify(body) });
          answers.push({ status: res.status, body: await res.json() });
        }
        return Response.json(answers);
      }
      if (url.pathname === '/contract') return await env.BREAKER.get(env.BREAKER.idFromName('contract')).fetch('https://do/contract');
      // /run?mode=shared|alone&ms=…&every=…&run=…: this isolate's caller, one withRetry (one engine), a call every
      // `every` ms for `ms` ms. Shared: its breaker meets the others' in the object named by `run`.
      const mode = url.searchParams.get('mode');
      const ms = Number(url.searchParams.get('ms'));
      const every = Number(url.searchParams.get('every'));
      const client = new Client({ name: 'storm-worker', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(env.MCP_URL)));
      const shared = mode === 'shared'
        ? new SharedBreaker(env.BREAKER.get(env.BREAKER.idFromName(url.searchParams.get('run'))), { server: 'tickets', ttlMs: 200, timeoutMs: 500 })
        : undefined;
      let probes = 0;
      const onEvent = (e) => {
        if (e.type === 'breaker' && e.to === 'half_open') probes++;
      };
      const mcp = withRetry(client, { trusted: true, seed: 7, policy: POLICY, onEvent, ...(shared ? { sharedBreaker: shared } : {}) });
      const calls = [];
      const start = Date.now();
      while (Date.now() - start < ms) {
        const at = Date.now();
        const out = await mcp.call({ name: 'search_tickets', arguments: { query: 'storm' } });
        calls.push({ at, status: out.status, reason: out.reason, attempts: out.attempts.length });
        const wait = every - (Date.now() - at);
        if (wait > 0) await sleep(wait);
      }
      await client.close();
      return Response.json({ calls, probes, stats: shared?.stats });
    } catch (e) {
      return Response.json({ error: String(e?.stack ?? e) }, { status: 500 });
    }
  },
};
