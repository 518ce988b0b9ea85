// One MCP session's life as withRetry's concurrent calls share it: which transport object each request went
// out on, and one re-initialization at a time. Mechanics only — whether to re-initialize is the engine's.
//
// Re-initializing closes the client, and closing rejects every request still in flight on it ("connection
// closed": maybe processed). When several calls lost the same session at once, the first one's reconnect used
// to do that to the others — an unsafe write among them ended `unknown` although its own answer, had it come,
// would have been a 404 (not processed) — and each of them then reconnected again, closing the session the
// previous one had just opened. So: calls that ask while a re-initialization is under way join it; a
// re-initialization first lets the requests in flight on the old transport come back (at most DRAIN_MS); a
// request waits for a re-initialization under way before it goes out, and is counted before anything else is
// awaited; and a recovery asked for by an error that came from a transport already replaced by a live one
// does nothing (someone already made the new session).

/** How long a re-initialization waits for the requests still in flight on the lost session. */
const DRAIN_MS = 5_000;

export function sessionKeeper(client, reconnect) {
  // Bounded: one entry per transport object with requests in flight, deleted when its count comes back to 0.
  const inflight = new Map(); // transport object → { n, idle: Promise, settle }
  const origin = new WeakMap(); // error → the transport object its request went out on (weak: goes with the error)
  let reinit;

  async function send(use) {
    for (let round = 0; reinit && round < 3; round++) await reinit.catch(() => {});
    const transport = client.transport;
    let slot = transport && inflight.get(transport);
    if (transport && !slot) {
      let settle;
      const idle = new Promise((r) => (settle = r));
      inflight.set(transport, (slot = { n: 0, idle, settle }));
    }
    if (slot) slot.n++;
    try {
      return await use();
    } catch (e) {
      if (transport && e !== null && typeof e === 'object') origin.set(e, transport);
      throw e;
    } finally {
      if (slot && --slot.n === 0) {
        inflight.delete(transport);
        slot.settle();
      }
    }
  }

  function reinitialize(cause) {
    if (reinit) return reinit;
    const from = cause !== null && typeof cause === 'object' ? origin.get(cause) : undefined;
    const current = client.transport;
    if (from && current && from !== current) return Promise.resolve();
    reinit = (async () => {
      const busy = current && inflight.get(current);
      if (busy) {
        let timer;
        await Promise.race([busy.idle, new Promise((r) => (timer = setTimeout(r, DRAIN_MS)))]);
        clearTimeout(timer);
      }
      await reconnect(client, { cause });
    })().finally(() => (reinit = undefined));
    return reinit;
  }

  return { send, reinitialize };
}
