// The Worker of workers.md's "A Worker's subrequests", run in workerd by docs/snippets/workers-budget.mjs
// (bundled as wrangler bundles it). Its bindings: MCP_URL, AUDIT_URL, SUBREQUEST_LIMIT.
// ANCHOR: worker
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch, SubrequestBudget } from 'mcp-retry-policy';

export default {
  async fetch(request, env) {
    // Your plan's limit per invocation (50 on the free plan); keep 2 for this handler's own fetches.
    const budget = new SubrequestBudget({ limit: Number(env.SUBREQUEST_LIMIT ?? 50), reserve: 2 });
    const client = new Client({ name: 'edge-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(env.MCP_URL), { fetch: observeFetch(budget.fetch) }));
    const mcp = withRetry(client, { subrequestBudget: budget });
    const out = await mcp.call({ name: 'search_tickets', arguments: { query: 'printer' } });
    // out.reason === 'subrequest_budget': the engine did not start an attempt it could not pay for.
    await budget.fetch(env.AUDIT_URL, { method: 'POST', body: JSON.stringify(out) }); // the reserve is still there
    return Response.json(out);
  },
};
// ANCHOR_END: worker
