// The client side of every cell: `withRetry` from the built package (pkg/) around the real TS SDK client —
// v1 (`@modelcontextprotocol/sdk` 1.32.2) for every peer but the v2 server, the v2 client
// (`@modelcontextprotocol/client` 2.4.0) for it. A fresh client per cell; re-initializations counted as the
// transports the `transport` factory made after the first.
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { withRetry, observeFetch } from '../../../pkg/node.js';
import { argsFor } from './servers.mjs';

export const POLICY = { maxAttempts: 6, baseDelayMs: 50, maxDelayMs: 500, attemptTimeoutMs: 5_000, totalTimeoutMs: 25_000 };
// The SDK's own SSE resumption (GET with Last-Event-ID after a broken stream), shortened from its defaults so
// a cell ends in seconds.
const RECONNECTION = { initialReconnectionDelay: 100, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 };

/** One attempt as the report shows it: outcome[:status][:code] → delivery/action[ recover] (duration). */
const attemptText = (a) =>
  `${a.outcome.kind}${a.outcome.status ? `:${a.outcome.status}` : ''}${a.outcome.code ? `:${a.outcome.code}` : ''}` +
  `→${a.classification?.delivery ?? '?'}/${a.decision?.action ?? '?'}${a.decision?.recover && a.decision.recover !== 'none' ? ` ${a.decision.recover}` : ''}` +
  `${a.durationMs !== undefined ? ` (${Math.round(a.durationMs)} ms)` : ''}`;

export async function connect(peer, { url = peer.url, policy = POLICY, seed = 1, options = {} } = {}) {
  const v2 = peer.spec.client === 'v2';
  const Client = v2 ? V2Client : V1Client;
  const Transport = v2 ? V2Transport : V1Transport;
  let made = 0;
  const transport = () => {
    made++;
    return new Transport(new URL(url), { fetch: observeFetch(), ...(v2 ? {} : { reconnectionOptions: RECONNECTION }) });
  };
  const client = new Client({ name: 'peers', version: '1.0.0' }, peer.spec.clientOptions);
  client.onerror = () => {};
  await client.connect(transport());
  const mcp = withRetry(client, {
    trusted: true, policy, seed, transport, statusTool: false, ...(peer.spec.overrides ? { tools: peer.spec.overrides } : {}), ...options,
  });
  return {
    mcp,
    reinits: () => made - 1,
    /** One call of a role's tool for an intent; resolves to a row for the table. */
    async call(role, intent, extra = {}) {
      const name = peer.spec.tools[role];
      if (!name) return { role, intent, na: true };
      const t0 = Date.now();
      let out;
      let error;
      try {
        out = await mcp.call({ name, arguments: argsFor(peer.name, role, intent, extra) });
      } catch (e) {
        error = String(e?.stack ?? e).split('\n').slice(0, 3).join(' / ');
      }
      return {
        role, intent, name, status: out?.status, reason: out?.reason, safety: out?.safety, result: out?.result, error, ms: Date.now() - t0,
        attempts: out?.attempts?.map(attemptText) ?? [],
      };
    },
    close: () => client.close().catch(() => {}),
  };
}
