// Each request its own abort signal, and one listener per shared signal. The MCP SDK's Streamable HTTP
// transport hands one long-lived AbortSignal (its own controller's, aborted by `close()`) to every fetch. Node's
// fetch (undici) hooks an abort listener onto the signal it is given and unhooks it only when the request is
// garbage-collected, so under sustained traffic the shared signal collects listeners by the thousand between
// major collections: memory, a longer listener list on every request, and a MaxListenersExceededWarning
// (nodejs/undici#5285). The same goes for a caller's signal given to many calls at once (the SDK v1's
// `Protocol.request` adds a listener to the signal it is given and never removes it). So every tie to a signal
// this package did not make goes through `tie`: one 'abort' listener per signal, whatever the number of requests
// or waits on it (a Set of callbacks behind it), removed when the last of them is untied — Node warns past 10
// listeners on one signal, and 50 calls in flight on one signal hold one. Each fetch through observeFetch gets a
// signal of its own tied that way, untied as soon as the response is done with it; `close()` still aborts every
// request and stream it has, and a caller's abort still reaches each call. Mechanics only.

// signal → { fns, listener }: the callbacks tied to it and the one listener that runs them. Bounded by the
// signals with a tie alive (an entry goes when its last tie is untied, or when the signal aborts); weak besides.
const ties = new WeakMap();

/**
 * Runs `fn` once when `signal` aborts; returns `untie()`. `signal` must not be aborted yet (the caller checks
 * first): an aborted signal fires no more. One listener on `signal` serves every tie to it. `untie()` may be
 * called more than once.
 */
export function tie(signal, fn) {
  let t = ties.get(signal);
  if (!t) {
    const fns = new Set();
    const listener = () => {
      ties.delete(signal);
      for (const f of fns) {
        try {
          f();
        } catch (error) {
          queueMicrotask(() => {
            throw error; // reported as a listener's own error would be, after the others ran
          });
        }
      }
      fns.clear();
    };
    t = { fns, listener };
    ties.set(signal, t);
    signal.addEventListener('abort', listener, { once: true });
  }
  const mine = () => fn(); // its own identity: the same fn tied twice is two ties
  t.fns.add(mine);
  const held = t;
  return () => {
    if (!held.fns.delete(mine) || held.fns.size > 0 || ties.get(signal) !== held) return;
    ties.delete(signal);
    signal.removeEventListener('abort', held.listener);
  };
}

const untied = () => {};

/**
 * A controller of its own that aborts (with the same reason) when `signal` does — at once if it already has —
 * and `untie()`; `undefined` without a signal. What a request or an attempt is given in place of a signal many
 * share, so that whatever the SDK hangs on it goes with the request.
 */
export function linkedSignal(signal) {
  if (!signal || typeof signal.addEventListener !== 'function') return undefined;
  const controller = new AbortController();
  if (signal.aborted) {
    controller.abort(signal.reason);
    return { controller, signal: controller.signal, untie: untied };
  }
  return { controller, signal: controller.signal, untie: tie(signal, () => controller.abort(signal.reason)) };
}

/**
 * `init` with a signal of its own in place of `init.signal`, and `release()` to untie it. `undefined` when
 * there is nothing to isolate (no signal).
 */
export function ownSignal(init) {
  const own = linkedSignal(init?.signal);
  return own && { init: { ...init, signal: own.signal }, release: own.untie }; // untie: once, then nothing
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
