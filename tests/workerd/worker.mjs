// A Cloudflare Worker that uses the package through its `workerd` entry, run in real workerd by miniflare.
import { RetryEngine, newOperationId, withRetry, DurableObjectJournal } from '../../pkg/workerd.js';
import { Client, StreamableHTTPClientTransport } from './sdk-bundle.js';
import { runJournalContract } from '../support/journal-contract.mjs';

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
      if (url.pathname === '/call') {
        const client = new Client({ name: 'worker-agent', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(env.MCP_URL)));
        const mcp = withRetry(client, { trusted: true, policy: { baseDelayMs: 10, maxDelayMs: 50 } });
        const name = url.searchParams.get('tool');
        const out = await mcp.call({ name, arguments: JSON.parse(url.searchParams.get('args') ?? '{}') });
        await client.close();
        return Response.json({ status: out.status, attempts: out.attempts.length, operationId: out.operationId, message: out.message, revision: mcp.engine.revision });
      }
      return new Response('not found', { status: 404 });
    } catch (e) {
      return Response.json({ error: String(e?.stack ?? e) }, { status: 500 });
    }
  },
};
