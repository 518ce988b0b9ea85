// The server's tool list (`tools/list`, every page), cached per wrapper: what resolveTool reads a tool's
// annotations and schema from. A failed list is a read like any other: the engine says whether to recover and
// list again (`listFailed`: a session that expired before the first call is re-initialized, once); any other
// failure leaves the list unknown, and a tool's safety is then the app's override or `unsafe`.
import { ACTION_RETRY, LIST_TTL_REVISIONS, MAX_DURATION_MS } from '../generated/names.js';
import { errorOutcome } from './attempt.js';
import { sleep } from './sleep.js';

/** The most pages one listing reads (a server whose cursor never ends is not followed forever). */
const MAX_PAGES = 100;
const REFRESH = Object.freeze({ cacheMode: 'refresh' });
/** The longest a server's `ttlMs` is believed (the core's longest duration, a day): a server cannot pin its
 *  annotations for ever. */
const MAX_TTL_MS = MAX_DURATION_MS;

/**
 * When a listing fetched at `at` goes stale. 2026-07-28 `caching.mdx`: a result is fresh for its `ttlMs`, then the
 * client SHOULD fetch it again on next access; 0 — and, at 2026-07-28, an absent `ttlMs` — is stale at once. Read
 * from the first page, capped at a day. Before 2026-07-28 (no caching rule, no `ttlMs`) a list stays until it is
 * refreshed. `revision`: the engine's (`unknown` until negotiated: then an absent ttl keeps the list too).
 */
const expiryOf = (page, at, revision) => {
  const ttl = page?.ttlMs;
  if (typeof ttl === 'number' && Number.isFinite(ttl)) return at + Math.min(Math.max(0, ttl), MAX_TTL_MS);
  return LIST_TTL_REVISIONS.includes(revision) ? at : Infinity;
};

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
  let expiresAt = Infinity; // when `tools` goes stale (the server's ttlMs)
  let loading;
  const send = session ? session.send : (f) => f();

  async function refresh() {
    const list = new Map();
    const at = now();
    let cursor;
    let expiry = Infinity;
    for (let page = 0; page < MAX_PAGES; page++) {
      // `cacheMode: 'refresh'`: the v2 SDK client keeps its own copy for the server's ttlMs; a listing made here is
      // meant to reach the server (a stale list, a -32020 to check). v1 ignores the option.
      const res = await send(() => client.listTools(cursor ? { cursor } : undefined, REFRESH));
      if (page === 0) expiry = expiryOf(res, at, engine.revision);
      for (const t of res.tools ?? []) list.set(t.name, t);
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    tools = list;
    expiresAt = expiry;
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
    // Listed again when the tool is not known, or when the server's ttlMs has passed: annotations, which decide
    // a tool's safety, are not trusted past it (a failed re-listing leaves the old list in place).
    if (!tools || !tools.has(name) || now() >= expiresAt) {
      loading ??= listRecovering().finally(() => (loading = undefined));
      try {
        await loading;
      } catch {
        // Without tools/list the tool's safety is the app's override or `unsafe`.
      }
    }
    return tools?.get(name);
  }

  return { refresh, info, has: (name) => !!tools?.has(name), known: (name) => tools?.get(name) };
}
