// The server's tool list (`tools/list`, every page), cached per wrapper: what resolveTool reads a tool's
// annotations and schema from. A failed list is a read like any other: the engine says whether to recover and
// list again (`listFailed`: a session that expired before the first call is re-initialized, once); any other
// failure leaves the list unknown, and a tool's safety is then the app's override or `unsafe`.
import { ACTION_RETRY } from '../generated/names.js';
import { errorOutcome } from './attempt.js';
import { sleep } from './sleep.js';

/** The most pages one listing reads (a server whose cursor never ends is not followed forever). */
const MAX_PAGES = 100;

/**
 * The tool list of `client`'s server. `reconnect(cause)` opens a new session when the engine asks for one;
 * `session` (session.js), when given, carries each page's request, so that a stdio server's lost process reads as
 * one (`process_exited`) and the listing goes to the fresh process like a call.
 * Returns `{ refresh, info, has }`: `refresh()` lists again (and resolves to the Map name → Tool), `info(name)`
 * the tool (listing once when it is not known; concurrent callers share one listing), `has(name)` whether the
 * last list named it.
 */
export function toolsCache({ client, engine, now, reconnect, session }) {
  let tools; // name → Tool, from the last tools/list: replaced whole by each listing (bounded by MAX_PAGES pages)
  let loading;
  const send = session ? session.send : (f) => f();

  async function refresh() {
    const list = new Map();
    let cursor;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await send(() => client.listTools(cursor ? { cursor } : undefined));
      for (const t of res.tools ?? []) list.set(t.name, t);
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    tools = list;
    return list;
  }

  async function listRecovering() {
    try {
      return await refresh();
    } catch (error) {
      let outcome = errorOutcome(error, { aborted: false, sent: true, hadSession: !!client.transport?.sessionId });
      if (session) outcome = await session.outcomeOf(error, outcome, 0); // no ping: a slow list stays a timeout
      const decision = engine.listFailed(outcome, now());
      if (decision.action !== ACTION_RETRY) throw error;
      if (decision.delayMs > 0) await sleep(decision.delayMs);
      await reconnect(error);
      return refresh();
    }
  }

  async function info(name) {
    if (!tools || !tools.has(name)) {
      loading ??= listRecovering().finally(() => (loading = undefined));
      try {
        await loading;
      } catch {
        // Without tools/list the tool's safety is the app's override or `unsafe`.
      }
    }
    return tools?.get(name);
  }

  return { refresh, info, has: (name) => !!tools?.has(name) };
}
