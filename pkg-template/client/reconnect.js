// A new session for withRetry's re-initialization: the caller's `reconnect`, or a fresh transport from its
// `transport` factory (for stdio: a fresh server process), or — neither given — the client's own Streamable HTTP
// transport re-created from its private fields (best effort). Mechanics: when to re-initialize is the engine's (`recover: reinitialize`).
import { typeOptionError } from './attempt.js';
import { NO_STDIO } from './parts.js';

/**
 * Closes the client and connects it again over a fresh transport from the caller's factory (a new session; for
 * stdio, a fresh server process). A stdio transport's `close()` can return before its process is gone (it sends
 * SIGKILL last and does not wait), and the client refuses to connect while it still holds the old transport: so
 * the fresh one is connected once the client let go of the old one (stdio.js).
 */
async function reconnectWith(client, transport, letGo) {
  const fresh = await transport();
  if (!fresh || typeof fresh.start !== 'function' || typeof fresh.send !== 'function') {
    throw typeOptionError('transport', 'a function returning an MCP transport (start, send, close)');
  }
  const old = client.transport;
  await client.close().catch(() => {});
  await letGo(client, old);
  await client.connect(fresh);
}

/**
 * Without `transport` or `reconnect`: re-creates a Streamable HTTP transport like the client's, best effort. It
 * reads the SDK transport's private fields (`_url`, `_requestInit`, …), so options newer than these are lost and a
 * future SDK may break it: pass `transport` instead.
 */
async function defaultReconnect(client) {
  const old = client.transport;
  if (!old || typeof old.constructor !== 'function' || !(old._url instanceof URL)) {
    throw new Error('cannot re-create this transport; pass options.reconnect');
  }
  const fresh = new old.constructor(old._url, {
    requestInit: old._requestInit,
    authProvider: old._authProvider,
    fetch: old._fetch,
    reconnectionOptions: old._reconnectionOptions,
  });
  await client.close().catch(() => {});
  await client.connect(fresh);
}

/** The function that opens a new session for `client`, from the options (see above). */
export function reconnectorFor(client, options, stdio = NO_STDIO) {
  if (options.reconnect) return options.reconnect;
  return options.transport ? () => reconnectWith(client, options.transport, stdio.letGo) : () => defaultReconnect(client);
}
