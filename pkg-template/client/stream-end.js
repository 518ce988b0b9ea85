// Which tools/call a broken response stream belonged to. The v2 SDK client (`@modelcontextprotocol/client`
// 2.4.0) reports a POST's SSE stream that broke only to `client.onerror` ("SSE stream disconnected: …", no
// request id), and the request then waits for its own timeout. Its Streamable HTTP transport does take a
// per-message send option for exactly this — `onRequestStreamEnd` (TransportSendOptions: "fired … when that
// stream ends or errors for any reason OTHER than a deliberate requestSignal abort — i.e. the server closed the
// stream, the network dropped it, or reconnection was exhausted") — but `Protocol.request` sets it only for
// `subscriptions/listen`, not for `tools/call`. So the transport's `send` is wrapped, once per transport
// object, to set it for the messages withRetry tagged (`_meta[ATTEMPT_META_KEY]`): the attempt whose stream
// ended hears of it, and no other. v1's transport ignores the option (its breaks stay `client.onerror`'s).
// Mechanics only: what the end means for the call is the engine's.
import { ATTEMPT_META_KEY, MAX_DURATION_MS } from '../generated/names.js';

// Weak per transport; each Map bounded by the attempts in flight on it (runAttempt's `finally` unwatches).
const watched = new WeakMap(); // transport → Map(attempt tag → callback)

function hook(transport) {
  let byTag = watched.get(transport);
  if (byTag) return byTag;
  const send = transport.send;
  if (typeof send !== 'function') return undefined;
  byTag = new Map();
  watched.set(transport, byTag);
  transport.send = function sendWatched(message, options) {
    const tag = message?.params?._meta?.[ATTEMPT_META_KEY];
    const onEnd = typeof tag === 'string' ? byTag.get(tag) : undefined;
    if (!onEnd) return send.call(this, message, options);
    const theirs = options?.onRequestStreamEnd;
    return send.call(this, message, {
      ...options,
      onRequestStreamEnd: () => {
        onEnd();
        if (typeof theirs === 'function') theirs();
      },
    });
  };
  return byTag;
}

/**
 * Calls `onEnd` when the response stream of the attempt tagged `tag` ends for good without having answered
 * (checked a turn later, so an answer that came just before the end wins). Returns `stop()`. Best effort: a
 * transport that cannot be wrapped is not watched.
 */
export function watchStreamEnd(client, tag, onEnd) {
  const transport = client.transport;
  let byTag;
  try {
    byTag = transport && typeof transport === 'object' ? hook(transport) : undefined;
  } catch {
    byTag = undefined; // a frozen transport: its breaks reach only client.onerror
  }
  if (!byTag) return () => {};
  let live = true;
  byTag.set(tag, () => setTimeout(() => live && onEnd(), 0));
  return () => {
    live = false;
    byTag.delete(tag);
  };
}

/**
 * The SDK reports a broken SSE stream to `client.onerror`, not to the request: this notes when it happens (the
 * handler is chained, not replaced), so a timeout after a break — and after an event id — can be resumed
 * instead of re-sent. Returns `() => when the stream last broke` (`-Infinity`: never).
 */
export function watchStreamBreaks(client, now) {
  let brokeAt = -Infinity;
  const previous = client.onerror;
  client.onerror = (error) => {
    if (/SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts/.test(String(error?.message ?? ''))) {
      brokeAt = now();
    }
    previous?.call(client, error);
  };
  return () => brokeAt;
}

/**
 * A broken stream as the engine's outcome, with the SSE `retry:` interval the server last sent on this
 * transport (2025-11-25 transports.mdx: the client MUST respect it). Both SDK generations keep it as
 * `_serverRetryMs` on the Streamable HTTP transport (the value their own reconnection waits); no public getter.
 */
export function brokenStream(client, eventIdSeen) {
  let retryMs;
  try {
    retryMs = client.transport?._serverRetryMs;
  } catch {
    retryMs = undefined;
  }
  const ok = typeof retryMs === 'number' && retryMs >= 0 && retryMs !== Infinity;
  return { kind: 'stream_broken', eventIdSeen, ...(ok ? { retryMs: Math.min(Math.round(retryMs), MAX_DURATION_MS) } : {}) };
}

/**
 * Whether `client` may hear that a request's response stream ended: the v2 SDK client and anything this does
 * not recognize — not the v1 SDK client (its Protocol keeps `_requestHandlers` and has no
 * `_getRequestHandler`), whose transport ignores `onRequestStreamEnd`. Wrong either way costs only time: an
 * end not heard is seen at the attempt's timeout.
 */
export function reportsStreamEnd(client) {
  try {
    return !(client._requestHandlers instanceof Map) || typeof client._getRequestHandler === 'function';
  } catch {
    return true;
  }
}
