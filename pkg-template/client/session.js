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
//
// A stdio server (stdio.js) is the same with a process for a session: the SDK drops a transport whose process
// exited, so the last one stays known here; a send after the exit is refused without calling the SDK (nothing
// written: `process_exited`, sent `no`); a request's failure is read against what its process did meanwhile
// (`outcomeOf`); and a re-initialization first ends a process found unresponsive (nothing to drain from it)
// and lets the fresh transport start only once the client let go of the old one. All calls that lost the
// process join one re-initialization: one fresh process.
import { NO_STDIO } from './parts.js';

/** How long a re-initialization waits for the requests still in flight on the lost session. */
const DRAIN_MS = 5_000;

/** `stdio`: the stdio part (stdio.js), or none: then no transport is watched as a process. */
export function sessionKeeper(client, reconnect, stdio = NO_STDIO) {
  const { endUnresponsive, foundUnresponsive, processExitedError, processOutcome, watchProcess } = stdio;
  // Bounded: one entry per transport object with requests in flight, deleted when its count comes back to 0.
  const inflight = new Map(); // transport object → { n, idle: Promise, settle }
  const origin = new WeakMap(); // error → the transport object its request went out on (weak: goes with the error)
  const marks = new WeakMap(); // error → what its process had done when it went out and when it failed
  let reinit;
  let processTransport = watchProcess(client.transport) && client.transport; // the last stdio transport seen

  /** The client's transport; when it has none, the stdio transport whose process exited (the SDK dropped it). */
  function transportNow() {
    const t = client.transport;
    if (t) {
      if (t !== processTransport && watchProcess(t)) processTransport = t;
      return t;
    }
    return processTransport && watchProcess(processTransport)?.closed ? processTransport : undefined;
  }

  async function send(use) {
    for (let round = 0; reinit && round < 3; round++) await reinit.catch(() => {});
    const transport = transportNow();
    let slot = transport && inflight.get(transport);
    if (transport && !slot) {
      let settle;
      const idle = new Promise((r) => (settle = r));
      inflight.set(transport, (slot = { n: 0, idle, settle }));
    }
    if (slot) slot.n++;
    const watch = transport === processTransport ? watchProcess(transport) : undefined;
    const heard = watch?.heard;
    try {
      if (watch?.closed) throw processExitedError();
      return await use();
    } catch (e) {
      if (transport && e !== null && typeof e === 'object') {
        origin.set(e, transport);
        if (watch) marks.set(e, { transport, heard, closedAtEnd: watch.closed });
      }
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
      if (foundUnresponsive(current === processTransport && watchProcess(current))) {
        await endUnresponsive(current); // its requests end now (connection closed): nothing would come back
      } else if (busy) {
        let timer;
        await Promise.race([busy.idle, new Promise((r) => (timer = setTimeout(r, DRAIN_MS)))]);
        clearTimeout(timer);
      }
      await reconnect(client, { cause });
      transportNow(); // the fresh transport watched from its start
    })().finally(() => (reinit = undefined));
    return reinit;
  }

  /**
   * How the attempt that failed with `error` ended, read against its stdio server's process (stdio.js): the
   * SDK-level `outcome`, or `process_exited` / `process_unresponsive` (after a ping within `probeMs`).
   */
  function outcomeOf(error, outcome, probeMs) {
    const mark = error !== null && typeof error === 'object' ? marks.get(error) : undefined;
    return mark ? processOutcome(client, mark, error, outcome, probeMs) : outcome;
  }

  return { send, reinitialize, outcomeOf };
}
