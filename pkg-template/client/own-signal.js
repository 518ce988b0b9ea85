// Each request its own abort signal. The MCP SDK's Streamable HTTP transport hands one long-lived
// AbortSignal (its own controller's, aborted by `close()`) to every fetch. Node's fetch (undici) hooks an abort
// listener onto the signal it is given and unhooks it only when the request is garbage-collected, so under
// sustained traffic the shared signal collects listeners by the thousand between major collections: memory,
// a longer listener list on every request, and past 1,500 listeners a MaxListenersExceededWarning printed per
// request (nodejs/undici#5285). Here each fetch gets a signal of its own, tied to the shared one by a listener
// this module removes as soon as the response is done with it: the shared signal holds one listener per
// request in flight, and `close()` still aborts every request and stream it has. Mechanics only.

/**
 * `init` with a signal of its own in place of `init.signal`, and `release()` to untie it. `undefined` when
 * there is nothing to isolate (no signal).
 */
export function ownSignal(init) {
  const shared = init?.signal;
  if (!shared || typeof shared.addEventListener !== 'function') return undefined;
  const own = new AbortController();
  if (shared.aborted) {
    own.abort(shared.reason);
    return { init: { ...init, signal: own.signal }, release: () => {} };
  }
  const forward = () => own.abort(shared.reason);
  shared.addEventListener('abort', forward, { once: true });
  let tied = true;
  const release = () => {
    if (tied) shared.removeEventListener('abort', forward);
    tied = false;
  };
  return { init: { ...init, signal: own.signal }, release };
}

/**
 * `response`, untying `release` when it no longer needs the shared signal: at once for an answer without a
 * body or with a JSON one (the transport reads it whole right away); for a stream (SSE), when the stream ends,
 * fails or is cancelled — until then `close()` must still be able to abort it.
 */
export function releasingWhenDone(response, release) {
  const body = response?.body;
  const type = response?.headers?.get?.('content-type') ?? '';
  if (!body || typeof body.getReader !== 'function' || !type.includes('text/event-stream')) {
    release();
    return response;
  }
  const reader = body.getReader();
  const stream = new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        release();
        throw e;
      }
      if (chunk.done) {
        release();
        controller.close();
      } else controller.enqueue(chunk.value);
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
}
