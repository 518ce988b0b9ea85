// Step 2 of a call — one attempt: the recovery step the engine asked for, then one `tools/call` with the
// attempt's timeout and the caller's signal, observed as an outcome for the engine. Decides nothing.
import { ATTEMPT_META_KEY, errorOutcome, resultOutcome } from './attempt.js';
import { PARAM_HEADER_REVISIONS } from '../generated/names.js';
import { RESULT_SCHEMA } from './result-schema.js';
import { linkedSignal } from './own-signal.js';
import { brokenStream, reportsStreamEnd, watchStreamEnd } from './stream-end.js';
import { mismatchCode, mismatchConfirmed } from './mismatch.js';
import { paramHeaders } from './param-headers.js';

/**
 * Step 2a — recover: the step the engine asked for before the re-send (a new session, a fresh tool list).
 * `cause`: the error of the attempt that made the engine ask (handed to `reconnect`, which may find that
 * someone else already replaced the session it came from).
 */
export async function recoverStep(ctx, action, cause) {
  if (action === 'reinitialize' || action === 'renegotiate') {
    await ctx.reconnect(ctx.client, { cause });
    ctx.learnRevision();
  } else if (action === 'refresh_tools') {
    await ctx.refreshTools();
  }
}

const IN_BROWSER = typeof document !== 'undefined';

// Each attempt's tag (its `_meta` key, how observeFetch and stream-end.js tell attempts apart): unique in the
// process — a random prefix drawn once, on the first attempt (never at module load: Workers forbid it), and a count.
let TAG_PREFIX;
let tagSeq = 0;
const noWatch = () => {};

/**
 * Step 2 — run one attempt: recover if asked, send `tools/call` with the attempt's timeout and the caller's
 * signal, and observe how it ended. Returns `{ outcome, result?, error? }`; decides nothing.
 */
export async function runAttempt(ctx, run, { admission, recover, cause, started, streamBrokeAt }) {
  const { client, options, now } = ctx;
  const { params, requestOptions, args } = run;
  const { signal } = requestOptions;
  TAG_PREFIX ??= `${Math.random().toString(36).slice(2, 10)}-`;
  const tag = `${TAG_PREFIX}${(++tagSeq).toString(36)}`;
  // The attempt's own signal: aborted by the caller's (one listener on the caller's signal for all the calls it
  // is given to: own-signal.js — the SDK v1 hangs a listener it never removes on the signal of each request), and
  // by the end of this attempt's response stream (stream-end.js). A v1 client (no stream end to hear) without a
  // caller's signal gets none: no controller.
  let attempt;
  let streamEnded = false;
  let unwatch = noWatch;
  const ends = reportsStreamEnd(client);
  const linked = linkedSignal(signal);
  if (linked) attempt = linked.controller;
  else if (ends) attempt = new AbortController();
  if (ends) {
    unwatch = watchStreamEnd(client, tag, () => {
      streamEnded = true;
      attempt.abort(new Error('the response stream of this tools/call ended without an answer'));
    });
  }
  let sent = false;
  let sentTool;
  try {
    // A -32020 just checked fetched the tool list already (mismatch.js): the step does not fetch it twice.
    if (!(recover === 'refresh_tools' && run.toolsFresh)) await recoverStep(ctx, recover, cause);
    run.toolsFresh = false;
    if (recover === 'resume_stream' && !resumable(client, run)) {
      // Nothing to resume here: no event id, or the session the stream was on is gone (re-initialized since —
      // its Last-Event-ID would replay another request's answer under this one's id). Nothing is sent; the engine
      // reads what that means for the lost stream (an unsafe tool stays unknown; a retry-safe one is re-sent), and
      // the breaker counts nothing (`withheld`: nothing was heard from the server; a probe frees its slot).
      return { outcome: { kind: 'withheld' } };
    }
    sent = !signal?.aborted;
    sentTool = ctx.knownTool?.(params.name); // the listing this attempt goes out under (a -32020 is checked against it)
    const send = (f) => (ctx.session ? ctx.session.send(f) : f());
    // Built field by field: the spreads of conditional objects were a sixth of a call's cost.
    const callParams = { ...params, arguments: args, ...run.round };
    if (run.task) callParams.task = run.task;
    const meta = params._meta || run.traceMeta ? { ...params._meta, ...run.traceMeta } : {};
    meta[ATTEMPT_META_KEY] = tag;
    callParams._meta = meta;
    const sendOptions = {
      timeout: admission.timeoutMs,
      signal: attempt ? attempt.signal : signal,
      // The v2 SDK client (@modelcontextprotocol/client; agents turns this on) would otherwise answer a
      // 2026-07-28 input request itself and send tools/call again: the engine would see only the last leg,
      // and a refused last leg could read "not processed" after the first leg ran. Handed back, the input
      // request is the answer the engine stops on (`answersInput: false`). v1 ignores the option.
      allowInputRequired: true,
      onresumptiontoken: (t) => {
        run.resumptionToken = t;
        run.resumptionSession = client.transport?.sessionId; // a token is good only on the session that gave it
      },
    };
    if (options.resetTimeoutOnProgress) {
      // With progress resets, attemptTimeoutMs is the longest silence; the call's deadline stays the hard cap.
      sendOptions.resetTimeoutOnProgress = true;
      sendOptions.maxTotalTimeout = Math.max(1, run.state.deadlineMs - now());
      sendOptions.onprogress = requestOptions.onprogress ?? (() => {});
    } else if (requestOptions.onprogress) sendOptions.onprogress = requestOptions.onprogress;
    if (recover === 'resume_stream') sendOptions.resumptionToken = run.resumptionToken;
    // 2026-07-28: the tool's `x-mcp-header` arguments as `Mcp-Param-*` headers (param-headers.js), as the SDK's own
    // callTool sends them — not from a browser (they would need a CORS preflight; the SDK does not either).
    const headers = paramHeaders(sentTool, args);
    if (headers && !IN_BROWSER && PARAM_HEADER_REVISIONS.includes(ctx.engine.revision)) sendOptions.headers = headers;
    // run.round: a continuation's inputResponses and requestState (input-rounds.js).
    const result = await send(() => client.request({ method: 'tools/call', params: callParams }, RESULT_SCHEMA, sendOptions));
    return { outcome: resultOutcome(result), result };
  } catch (error) {
    let outcome = sent || signal?.aborted
      ? errorOutcome(error, { tag, aborted: !!signal?.aborted, sent, hadSession: !!client.transport?.sessionId })
      : { kind: 'network', sent: 'no' }; // the recovery step failed: the call itself never left
    // A stdio server: what its process did meanwhile — exited, or went silent past this timeout and a ping
    // bounded like the attempt (session.js, stdio.js).
    if (sent && ctx.session) outcome = await ctx.session.outcomeOf(error, outcome, Math.min(admission.timeoutMs, run.state.deadlineMs - now()));
    // A -32020 or -32022 proves nothing until checked (a handler may relay one after it acted): what can be
    // checked is, and the engine reads the answer.
    const mismatch = sent ? mismatchCode(outcome) : undefined;
    if (mismatch !== undefined && (await mismatchConfirmed(ctx, run, error, mismatch, sentTool))) outcome = { ...outcome, mismatchConfirmed: true };
    // The v2 transport said this attempt's stream ended without an answer (and without the SDK resuming it):
    // a broken stream, at once rather than at the attempt's timeout. With v1, a stream that broke during this
    // attempt after the server gave an event id is seen at the timeout. Either can be resumed (≤ 2025-11-25,
    // an event id seen) instead of re-sent; the server's SSE `retry:` goes with it. A plain timeout on a live
    // stream stays a timeout.
    if (streamEnded && !signal?.aborted && sent) outcome = brokenStream(client, !!run.resumptionToken);
    else if (outcome.kind === 'timeout' && run.resumptionToken && streamBrokeAt() >= started) outcome = brokenStream(client, true);
    return { outcome, error };
  } finally {
    unwatch();
    linked?.untie();
  }
}

/** Whether the call's broken stream can be resumed now: an event id was seen, on the session still in use. */
const resumable = (client, run) => !!run.resumptionToken && client.transport?.sessionId === run.resumptionSession;
