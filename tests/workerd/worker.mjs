// A Cloudflare Worker that uses the package through its `workerd` entry, run in real workerd by miniflare.
import {
  RetryEngine, newOperationId, withRetry, DurableObjectJournal, DurableObjectLedgerStore, D1LedgerStore, OperationLedger, MemoryLedgerStore, fingerprint,
  withIdempotency, LEDGER_META_KEY, SubrequestBudget, observeFetch,
} from '../../pkg/workerd.js';
import { Client, StreamableHTTPClientTransport } from './sdk-bundle.js';
import { runJournalContract } from '../support/journal-contract.mjs';
import { runLedgerStoreContract } from '../support/ledger-store-contract.mjs';

// Module scope: building an engine draws no randomness (workerd would refuse it here).
const engine = new RetryEngine({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 });

export class JournalObject {
  constructor(ctx) {
    this.ctx = ctx;
  }
  async fetch(request) {
    const url = new URL(request.url);
    const journal = new DurableObjectJournal(this.ctx.storage);
    if (url.pathname === '/contract') return Response.json(await runJournalContract(journal));
    if (url.pathname === '/pending') return Response.json(await journal.pending());
    if (url.pathname === '/prefixed') {
      // Two journals in one storage, one under a prefix (the agents adapter's case): the contract holds for the
      // prefixed one, every key it wrote is under its prefix, and neither sees the other's entries.
      const prefixed = new DurableObjectJournal(this.ctx.storage, { prefix: 'p1:' });
      const plainBefore = JSON.stringify(await journal.pending());
      const checks = await runJournalContract(prefixed);
      const keys = [...(await this.ctx.storage.list({ prefix: 'p1:' })).keys()];
      const plainUnchanged = JSON.stringify(await journal.pending()) === plainBefore;
      const prefixedIds = (await prefixed.pending()).map((e) => e.operationId);
      let refused;
      try {
        new DurableObjectJournal(this.ctx.storage, { prefix: 7 });
      } catch (e) {
        refused = `${e.name} ${e.code} ${e.field}`;
      }
      return Response.json({ checks, keys, plainUnchanged, prefixedPending: prefixedIds.length, refused });
    }
    return new Response('not found', { status: 404 });
  }
}

/**
 * The transaction option over one store: `write(tx, id)` is the business write through the store's
 * transaction, `count(id)` counts it. A first call, a replay, a throwing handler (rolled back), and four
 * concurrent first calls of one id: one business write each time it committed.
 */
async function atomicFlow(store, write, count) {
  const ledger = new OperationLedger({ store });
  let runs = 0;
  const handler = withIdempotency(ledger, async ({ operation_id, fail }, _extra, tx) => {
    runs++;
    await write(tx, operation_id);
    if (fail) throw new Error('refused downstream');
    return { content: [{ type: 'text', text: `wrote ${operation_id}` }] };
  }, { action: 'atomic', tenant: () => 'acme', transaction: true });
  const id = (n) => `atomic-${n}-${newOperationId()}`;
  const a = id('a');
  const first = await handler({ operation_id: a });
  const replay = await handler({ operation_id: a });
  const b = id('b');
  const failed = await handler({ operation_id: b, fail: true });
  const c = id('c');
  const runsBefore = runs;
  const racers = await Promise.all(Array.from({ length: 4 }, () => handler({ operation_id: c })));
  return {
    first: first.content[0].text === `wrote ${a}`,
    replay: replay.content[0].text === `wrote ${a}`,
    writesA: await count(a),
    failed: failed._meta?.[LEDGER_META_KEY],
    writesB: await count(b),
    statusB: (await ledger.status({ tenant: 'acme', action: 'atomic', operationId: b })).status,
    racersAgree: racers.every((r) => r.content?.[0]?.text === `wrote ${c}`),
    writesC: await count(c),
    raceRuns: runs - runsBefore,
  };
}

// The purge alarm's period in the test (an hour or so in an app).
const PURGE_EVERY_MS = 150;
const ledgerKey = (operationId) => ({ tenant: 'acme', action: 'purge_alarm', operationId });
const recordAt = (state, expiresMs) => ({ state, fingerprint: 'f', leaseUntilMs: 0, createdMs: 0, expiresMs, version: 1 });

export class LedgerObject {
  constructor(ctx) {
    this.ctx = ctx;
    this.store = new DurableObjectLedgerStore(ctx.storage);
  }
  // The documented way: purge on the object's alarm, then set the next one.
  async alarm() {
    const purged = await this.store.purgeOnAlarm(PURGE_EVERY_MS);
    await this.ctx.storage.put('test:alarms', [...((await this.ctx.storage.get('test:alarms')) ?? []), purged]);
  }
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/contract') return Response.json(await runLedgerStoreContract(this.store, { OperationLedger, MemoryLedgerStore }));
    if (url.pathname === '/atomic') {
      return Response.json(await atomicFlow(this.store,
        (txn, id) => txn.put(`ticket:${id}`, { id }),
        async (id) => ((await this.ctx.storage.get(`ticket:${id}`)) ? 1 : 0)));
    }
    if (url.pathname === '/alarm/start') {
      const now = Date.now();
      await this.store.insert(ledgerKey('expired-done'), recordAt('succeeded', now - 1_000));
      await this.store.insert(ledgerKey('expired-pending'), recordAt('pending', now - 1_000));
      await this.store.insert(ledgerKey('live-done'), recordAt('failed', now + 3_600_000));
      const refused = [];
      for (const bad of [0, 1.5, NaN, '100', 40_000_000_000]) {
        try {
          await this.store.scheduleAlarm(bad);
          refused.push('no error');
        } catch (e) {
          refused.push(`${e.name} ${e.code} ${e.field}`);
        }
      }
      const at = await this.store.scheduleAlarm(PURGE_EVERY_MS);
      const again = await this.store.scheduleAlarm(60_000); // one is set: kept, not moved
      return Response.json({ now, at, again, refused });
    }
    if (url.pathname === '/alarm/state') {
      const has = async (id) => (await this.store.get(ledgerKey(id))) !== undefined;
      return Response.json({
        alarms: (await this.ctx.storage.get('test:alarms')) ?? [],
        expiredDone: await has('expired-done'),
        expiredPending: await has('expired-pending'),
        liveDone: await has('live-done'),
        next: await this.ctx.storage.getAlarm(),
      });
    }
    if (url.pathname === '/alarm/stop') {
      await this.ctx.storage.deleteAlarm();
      return Response.json({ next: await this.ctx.storage.getAlarm() });
    }
    if (url.pathname === '/legacy') {
      // Rows as an earlier version wrote them (no expiry index entries): the first purge indexes them.
      const raw = (id) => `ledger:${JSON.stringify(['acme', 'legacy', id])}`;
      const now = Date.now();
      await this.ctx.storage.put(raw('old-done'), { record: recordAt('succeeded', now - 5_000), result: '{}' });
      await this.ctx.storage.put(raw('old-failed-live'), { record: recordAt('failed', now + 60_000), result: '{}' });
      await this.ctx.storage.put(raw('old-unknown'), { record: recordAt('unknown', now - 5_000) });
      for (let i = 0; i < 150; i++) await this.ctx.storage.put(raw(`old-bulk-${i}`), { record: recordAt('failed', now - 1_000 - i) });
      // Resolved through the store (indexed), then claimed again by an older version (row rewritten, index not):
      // the purge reads the row again and keeps it.
      await this.store.insert({ tenant: 'acme', action: 'legacy', operationId: 'rewritten' }, recordAt('succeeded', now - 5_000));
      await this.ctx.storage.put(raw('rewritten'), { record: recordAt('pending', now - 5_000) });
      const purged = await this.store.purge(now);
      const later = await this.store.purge(now + 120_000);
      const left = [...(await this.ctx.storage.list({ prefix: 'ledger:' })).values()].map((row) => row.record.state);
      const index = [...(await this.ctx.storage.list({ prefix: 'ledger-expiry:' })).keys()];
      return Response.json({ purged, later, left, index });
    }
    if (url.pathname === '/claim') {
      // One claim attempt per request: many requests race for the same key.
      const key = { tenant: 'acme', action: 'open_ticket', operationId: url.searchParams.get('id') };
      const won = await this.store.insert(key, { state: 'pending', fingerprint: 'f', leaseUntilMs: 1, createdMs: 0, expiresMs: 9e15, version: 1 });
      return Response.json({ won });
    }
    return new Response('not found', { status: 404 });
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (url.pathname === '/engine') {
        const call = engine.begin(Date.now());
        engine.admit(call, Date.now());
        const lost = engine.record(call, { kind: 'network', sent: 'maybe' }, 'unsafe', Date.now());
        const call2 = engine.begin(Date.now());
        engine.admit(call2, Date.now());
        const retry = engine.record(call2, { kind: 'http', status: 503, retryAfterMs: 200 }, 'unsafe', Date.now());
        return Response.json({ lost: lost.decision, retry: retry.decision, ids: [newOperationId(), newOperationId()] });
      }
      if (url.pathname.startsWith('/journal/')) {
        const stub = env.JOURNAL.get(env.JOURNAL.idFromName('journal'));
        return stub.fetch(new Request(`https://do${url.pathname.slice('/journal'.length)}`));
      }
      if (url.pathname.startsWith('/ledger-do/')) {
        const stub = env.LEDGER.get(env.LEDGER.idFromName(url.searchParams.get('object') ?? 'ledger'));
        return stub.fetch(new Request(`https://do${url.pathname.slice('/ledger-do'.length)}${url.search}`));
      }
      if (url.pathname === '/ledger-d1/contract') return Response.json(await runLedgerStoreContract(new D1LedgerStore(env.DB), { OperationLedger, MemoryLedgerStore }));
      if (url.pathname === '/ledger-d1/atomic') {
        await env.DB.prepare('CREATE TABLE IF NOT EXISTS tickets (op TEXT NOT NULL)').run();
        return Response.json(await atomicFlow(new D1LedgerStore(env.DB),
          (tx, id) => tx.add(tx.db.prepare('INSERT INTO tickets (op) VALUES (?)').bind(id)),
          async (id) => (await env.DB.prepare('SELECT count(*) AS n FROM tickets WHERE op = ?').bind(id).first()).n));
      }
      if (url.pathname === '/ledger-d1/flow') {
        const ledger = new OperationLedger({ store: new D1LedgerStore(env.DB) });
        const key = { tenant: 'acme', action: 'open_ticket', operationId: `flow-${newOperationId()}` };
        const fp = fingerprint({ title: 'from D1' });
        const first = await ledger.begin(key, fp);
        const during = await ledger.begin(key, fp);
        await ledger.finish(key, first.claim, 'succeeded', { content: [{ type: 'text', text: 'opened T-1' }] });
        const replay = await ledger.begin(key, fp);
        const conflict = await ledger.begin(key, fingerprint({ title: 'other' }));
        return Response.json({ first: first.action, during: during.action, replay, conflict: conflict.action });
      }
      if (url.pathname === '/call') {
        const client = new Client({ name: 'worker-agent', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(env.MCP_URL)));
        const mcp = withRetry(client, { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 50 } });
        const name = url.searchParams.get('tool');
        const out = await mcp.call({ name, arguments: JSON.parse(url.searchParams.get('args') ?? '{}') });
        await client.close();
        return Response.json({ status: out.status, attempts: out.attempts.length, operationId: out.operationId, message: out.message, revision: mcp.engine.revision });
      }
      if (url.pathname === '/clock-call') {
        // A call that cannot finish (a slow tool, attempts shorter than it) under a 600 ms deadline, with CPU
        // work after each attempt: the deadline on the Worker's own clock, which stands still during CPU work.
        // Production Workers move Date.now() only across I/O; local workerd does not (measured: 289 ms passed on
        // it during these loops), so that clock is stood in for by one refreshed between tasks — still during
        // CPU work, as production's — and given to withRetry as its `now`.
        let clock = Date.now();
        const tick = setInterval(() => (clock = Date.now()), 1);
        const now = () => clock;
        const iterations = Number(url.searchParams.get('burn'));
        let frozen = 0;
        const burn = () => {
          const before = now();
          let x = 0;
          for (let i = 0; i < iterations; i++) x = (x * 31 + i) % 1_000_003;
          frozen += now() - before; // 0: the clock stood still through the loop
          return x;
        };
        const client = new Client({ name: 'worker-agent', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(env.MCP_URL)));
        const mcp = withRetry(client, {
          trusted: true,
          policy: { totalTimeoutMs: 600, attemptTimeoutMs: 250, baseDelayMs: 10, maxDelayMs: 20, maxAttempts: 10, budget: false, breaker: false },
          onEvent: (e) => e.type === 'attempt' && burn(),
          now,
        });
        const started = now();
        const out = await mcp.call({ name: 'build_report', arguments: { steps: 20 } });
        const elapsed = now() - started;
        clearInterval(tick);
        await client.close();
        return Response.json({ status: out.status, reason: out.reason, attempts: out.attempts.length, elapsed, frozen });
      }
      if (url.pathname === '/budget-call') {
        // One invocation's subrequests, counted (the transport's and the app's own): withRetry with or without
        // the budget, then the app's own fetch (its answer's) with what is left.
        const budget = new SubrequestBudget({ limit: Number(url.searchParams.get('limit')), reserve: 1 });
        const client = new Client({ name: 'worker-agent', version: '1.0.0' });
        // observeFetch over the budget's fetch: withRetry sees Retry-After, and every request is counted.
        await client.connect(new StreamableHTTPClientTransport(new URL(env.MCP_URL), { fetch: observeFetch(budget.fetch) }));
        const atConnect = budget.spent;
        const counted = url.searchParams.get('counted') === '1';
        const mcp = withRetry(client, {
          trusted: true,
          policy: { baseDelayMs: 10, maxDelayMs: 20, maxAttempts: 10, budget: false, breaker: false },
          ...(counted ? { subrequestBudget: budget } : {}),
        });
        const out = await mcp.call({ name: 'search_tickets', arguments: { query: 'budget' } });
        const beforeOwn = budget.spent;
        let own;
        try {
          own = (await budget.fetch(env.MCP_URL, { method: 'GET' })).status;
        } catch (e) {
          own = e.code ?? String(e);
        }
        return Response.json({ status: out.status, reason: out.reason, attempts: out.attempts.length, atConnect, beforeOwn, spent: budget.spent, own });
      }
      return new Response('not found', { status: 404 });
    } catch (e) {
      return Response.json({ error: String(e?.stack ?? e) }, { status: 500 });
    }
  },
};
