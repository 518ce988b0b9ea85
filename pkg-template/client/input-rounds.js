// 2026-07-28 multi round-trip requests (basic/utilities/mrtr): a tools/call the server answers
// `input_required` is continued round by round through the SDK client's *own* registered handlers
// (elicitation/create, sampling/createMessage, roots/list), each round a new request (a new JSON-RPC id, the
// SDK's) with the answers as `inputResponses` and the server's `requestState` echoed as the very string it
// sent. Mechanics only: whether to continue, and the call's status when a round cannot be answered, are the
// core's call driver (`gather_input`, then `input_gathered` or `input_unanswered`).
//
// The v2 client (`@modelcontextprotocol/client` 2.4.0) keeps its handlers behind `_getRequestHandler(method)`
// — the lookup its own auto-fulfilment engine uses (`dispatchInputRequest`), handing the stored handler (its
// elicitation/sampling checks included) a JSON-RPC-shaped request and a context from `buildContext`. It has no
// public equivalent; without it (the v1 client, which never negotiates 2026-07-28, or an adapter's face) the
// caller answers no input and the engine stops the call `input_required_unhandled`, as before.
import { HAPPENED_CANCELLED, HAPPENED_INPUT_GATHERED, HAPPENED_INPUT_UNANSWERED } from '../generated/names.js';
import { linkedSignal } from './own-signal.js';

const INPUT_METHODS = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);

function handlerFor(client, method) {
  try {
    const h = typeof client?._getRequestHandler === 'function' ? client._getRequestHandler(method) : undefined;
    return typeof h === 'function' ? h : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the client can answer input requests at all (the v2 client with at least one input handler). */
export function answersInput(client) {
  for (const m of INPUT_METHODS) if (handlerFor(client, m)) return true;
  return false;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const unavailable = (what) => () => {
  throw new Error(`ctx.mcpReq.${what} is not available while answering an embedded input request`);
};

/** The context the v2 client's own engine gives an embedded request's handler (no live peer request). */
function contextFor(client, key, method, params, signal) {
  const base = {
    sessionId: client.transport?.sessionId,
    mcpReq: { id: key, method, _meta: params?._meta, requestState: () => undefined, signal, send: unavailable('send'), notify: unavailable('notify') },
  };
  try {
    return typeof client.buildContext === 'function' ? client.buildContext(base, undefined) ?? base : base;
  } catch {
    return base;
  }
}

/**
 * Answers one `input_required` result's `inputRequests` through the client's handlers, concurrently, within
 * `untilMs` and the caller's `signal` (the first failure, the deadline or an abort cancels the others).
 * Resolves to `{ responses }`, `{ missing }` (no handler for a request's method), `{ error }` (a handler
 * failed), `{ timedOut }` or `{ aborted }`. Never throws.
 */
export async function gatherInput(client, inputRequests, { signal, untilMs, now }) {
  const entries = isObject(inputRequests) ? Object.entries(inputRequests) : [];
  const jobs = [];
  for (const [key, entry] of entries) {
    const method = isObject(entry) && typeof entry.method === 'string' ? entry.method : undefined;
    const handler = method && INPUT_METHODS.has(method) ? handlerFor(client, method) : undefined;
    if (!handler) return { missing: method ?? String(key) };
    jobs.push({ key, method, handler, params: isObject(entry.params) ? entry.params : undefined });
  }
  if (!jobs.length) return { responses: undefined };
  if (signal?.aborted) return { aborted: true };
  // The round's own signal, tied to the caller's (one listener on it for all its calls: own-signal.js).
  const linked = linkedSignal(signal);
  const round = linked?.controller ?? new AbortController();
  let timer;
  const ending = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true }), Math.max(0, untilMs - now()));
    round.signal.addEventListener('abort', () => resolve(signal?.aborted ? { aborted: true } : { error: round.signal.reason }), { once: true });
  });
  const answered = Promise.all(jobs.map(async ({ key, method, handler, params }) => {
    const request = { jsonrpc: '2.0', id: key, method, ...(params !== undefined ? { params } : {}) };
    try {
      return [key, await handler(request, contextFor(client, key, method, params, round.signal))];
    } catch (error) {
      round.abort(error);
      throw error;
    }
  })).then((pairs) => ({ responses: Object.fromEntries(pairs) }), (error) => ({ error }));
  try {
    const out = await Promise.race([answered, ending]);
    if (!out.responses) round.abort(new Error('input round ended')); // stop the handlers still running
    return out.error !== undefined && signal?.aborted ? { aborted: true } : out;
  } finally {
    clearTimeout(timer);
    linked?.untie();
  }
}

/**
 * Gathers the answers to the server's input requests in `payload` for the call's next round (the call driver
 * said `gather_input`) and says what happened, for the driver to decide: `'input_gathered'` (the next round
 * carries them: `run.round`), `'cancelled'` (aborted while the handlers ran), or `{ kind: 'input_unanswered',
 * timedOut, handlerMissing }` with the handler's `error`, if it threw.
 */
export async function gatherRound(ctx, run, payload, { signal, say }) {
  const { client, now } = ctx;
  const got = await gatherInput(client, payload?.inputRequests, { signal, untilMs: run.state.deadlineMs, now });
  if (got.aborted) return { happened: HAPPENED_CANCELLED };
  if (got.missing !== undefined || got.error !== undefined || got.timedOut) {
    const happened = { kind: HAPPENED_INPUT_UNANSWERED, timedOut: !!got.timedOut, handlerMissing: got.missing !== undefined };
    return { happened, ...(got.error !== undefined ? { error: got.error } : {}) };
  }
  const state = typeof payload?.requestState === 'string' ? payload.requestState : undefined;
  run.round = {
    ...(got.responses ? { inputResponses: got.responses } : {}),
    ...(state !== undefined ? { requestState: state } : {}),
  };
  run.rounds = (run.rounds ?? 0) + 1;
  say({ type: 'input', round: run.rounds, answered: Object.keys(got.responses ?? {}), requestState: state !== undefined });
  return { happened: HAPPENED_INPUT_GATHERED };
}

/** The input-rounds part (`withRetry(client, { parts: [inputRounds] })`): from the browser entry, needed to answer a
 *  2026-07-28 server's input requests through the client's handlers; without it the call stops there. */
export const inputRounds = Object.freeze({ part: 'inputRounds', answersInput, gatherRound });
