// withRetry: the MCP SDK client, made safe to retry. This file wires the call's steps together (each in its
// own file: options.js, tools-cache.js, resolve-tool.js, run-attempt.js, call-loop.js, status-resolution.js,
// outcome.js, model-tools.js); every decision (retry or not, how long, what status, what reason) comes from the
// wasm engine. The optional parts (hedging, tasks, input rounds, telemetry: parts.js) are not imported here: they
// come in through `parts`, or from an entry that hands in every part (with-retry-all.js).
import { RetryEngine, beginOwned } from './engine.js';
import { sessionKeeper } from './session.js';
import { watchStreamBreaks } from './stream-end.js';
import { MemoryJournal } from './memory-journal.js';
import { ofServerOrUnbound, serverIdentity, serverName } from './scope.js';
import { NO_TELEMETRY } from './no-telemetry.js';
import { partMissing, partsOf } from './parts.js';
import { backlogWatch } from './backlog.js';
import { RESULT_SCHEMA } from './result-schema.js';
import { DEFAULT_STATUS_TOOL, callParamsOf, checkOptions, settingsOf } from './options.js';
import { reconnectorFor } from './reconnect.js';
import { toolsCache } from './tools-cache.js';
import { resolveTool } from './resolve-tool.js';
import { recoverStep, runAttempt } from './run-attempt.js';
import { attemptLoop, finishCall } from './call-loop.js';
import { reconcileOperations, resolveOperation, resolveOutcome, statusAsker } from './status-resolution.js';
import { assembleOutcome, toolResultOf } from './outcome.js';
import { toolsForModel } from './model-tools.js';
import { OUTCOME_META_KEY } from '../generated/names.js';

/** The `_meta` key under which `callTool` attaches the full `CallOutcome` to a non-succeeded result. */
export { OUTCOME_META_KEY };
// The steps, for tests and for callers who compose their own loop.
export { DEFAULT_STATUS_TOOL, RESULT_SCHEMA, assembleOutcome, recoverStep, resolveOutcome, resolveTool, runAttempt };

const noEvent = () => {};
const DETACHED = ['decision', 'classification', 'breaker', 'outcome'];

/**
 * Wraps an `@modelcontextprotocol/sdk` `Client` so that `tools/call` is retried only where a retry is safe.
 * Call it once per client and share the wrapper: the retry budget and the breaker are per server.
 */
export function withRetry(client, options = {}) {
  return wrap(client, options, []);
}

/** `withRetry` with the parts `builtIn` always in (the Node, Workers and edge entries hand in every part). */
export function withRetryOf(builtIn) {
  return function withRetry(client, options = {}) {
    return wrap(client, options, builtIn);
  };
}

function wrap(client, options, builtIn) {
  checkOptions(client, options);
  const parts = partsOf(options.parts, builtIn);
  if (options.opentelemetry !== undefined && !parts.telemetry) throw partMissing('opentelemetry', 'telemetry');
  const engine = new RetryEngine(options.policy, {
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.revision !== undefined ? { revision: options.revision } : {}),
    ...(options.behindRetryingProxy ? { behindRetryingProxy: true } : {}),
  });
  if (!parts.hedging && engine.hedging) {
    engine.free();
    throw partMissing('policy.hedgeAfterMs', 'hedging');
  }
  const journal = options.journal ?? new MemoryJournal();
  const now = options.now ?? (() => Date.now());
  // Concurrent calls share one session: one re-initialization at a time, after the requests in flight on the
  // lost one came back (session.js).
  const stdio = parts.stdio; // undefined: the keeper's default, no process watched
  const session = sessionKeeper(client, reconnectorFor(client, options, stdio), stdio);
  const reconnect = (_client, context) => session.reinitialize(context?.cause);
  const emit = (event) => {
    if (!options.onEvent) return;
    // The listener gets its own copies of what the call goes on with (the engine's decision and classification,
    // the breaker's transition, the attempt's outcome): a listener that labels them in place cannot change how
    // the call ends.
    for (const k of DETACHED) if (event[k] !== null && typeof event[k] === 'object') event[k] = { ...event[k] };
    try {
      options.onEvent(event);
    } catch {
      // A listener's failure must not change the call.
    }
  };
  const telemetry = parts.telemetry ? parts.telemetry.telemetryFor(options.opentelemetry) : NO_TELEMETRY;
  parts.telemetry?.watchJournal(options.opentelemetry, journal); // the unresolved entries' gauge, when the journal counts them
  const backlog = backlogWatch(journal);
  const tools = toolsCache({ client, engine, now, reconnect: (cause) => reconnect(client, { cause }), session });
  let revisionSource;
  function learnRevision() {
    const pv = client.transport?.protocolVersion;
    if (typeof pv === 'string' && pv !== revisionSource && options.revision === undefined) {
      try {
        engine.setProtocolVersion(pv);
        revisionSource = pv;
      } catch {
        // Not a date: keep the revision we have.
      }
    }
  }
  // The call's steps share this context: the client, the engine, the journal, the settings and the options.
  const settings = settingsOf(options);
  const ctx = {
    client, engine, journal, now, emit, reconnect, learnRevision, options, parts, telemetry, session, ...settings,
    // Tool object → the engine's safety for it (resolve-tool.js). Weak: bounded by the Tool objects alive (the
    // current tools/list's); a name the server does not list is judged on each call, never kept.
    safetyOf: new WeakMap(),
    refreshTools: tools.refresh,
    toolInfo: tools.info,
    knownTool: tools.known,
    askStatus: statusAsker((params, requestOptions) => call(params, requestOptions), settings.statusTool),
    // When the SDK last reported a broken SSE stream (client.onerror, chained): stream-end.js.
    streamBrokeAt: watchStreamBreaks(client, now),
    // The server this wrapper's journal entries belong to (client/scope.js).
    server: () => serverIdentity(client, options.server),
  };
  let callSeq = 0; // a number: nothing per call is kept here (the engine's call slot is freed when it ends)

  async function call(given, requestOptions = {}) {
    const params = callParamsOf(given);
    const { signal } = requestOptions;
    const asked = requestOptions.task;
    if (asked !== undefined && asked !== false && !parts.tasks) throw partMissing('task', 'tasks');
    const task = parts.tasks?.taskRequest(asked);
    const op = await resolveTool(ctx, params, requestOptions.intent);
    if (op.taskSupport === 'required' && !parts.tasks) {
      throw partMissing(`tools.${op.name}`, 'tasks'); // the tool runs only as a task: it cannot be called without one
    }
    // Every event of this call names it and its server, so listeners can map them without guessing.
    const callId = ++callSeq;
    const name = serverName(client);
    // Without a listener, no event is built at all (measured: the spreads were a tenth of a call's cost).
    const say = options.onEvent ? (event) => emit({ ...event, callId, ...(name ? { server: name } : {}) }) : noEvent;
    if (op.operationId !== undefined) backlog?.(say, op.name);
    const callStarted = now();
    const tel = telemetry.call({
      tool: op.name, safety: op.safety, operationId: op.operationId,
      sessionId: client.transport?.sessionId, protocolVersion: client.transport?.protocolVersion,
    });
    // A 2026-07-28 input request is answered through the client's own handlers (the input-rounds part) when it
    // has any; without either, the engine stops the call there (input_required_unhandled).
    const run = {
      params, requestOptions, args: op.args, state: beginOwned(engine, now(), parts.inputRounds?.answersInput(client) ?? false), resumptionToken: undefined,
      // Ask for a task when the caller does, or when the tool runs only as one (2025-11-25 `execution.taskSupport`).
      ...(task ?? (op.taskSupport === 'required' ? { task: {} } : {})),
    };
    try {
      let ended;
      let deadlineMs;
      try {
        ended = await attemptLoop(ctx, op, run, { say, tel, signal });
      } finally {
        deadlineMs = run.state.deadlineMs;
        run.state.free(); // the engine's slot for this call, now, not when the collector gets to it
      }
      const outcome = await finishCall(ctx, op, ended, { say, signal, deadlineMs });
      say({ type: 'done', tool: op.name, status: outcome.status, reason: outcome.reason, attempts: ended.attempts.length, durationMs: now() - callStarted });
      tel.end(outcome);
      return outcome;
    } catch (error) {
      tel.fail(error);
      throw error;
    }
  }

  return {
    call,
    callTool: async (params, requestOptions) => toolResultOf(await call(params, requestOptions)),
    /**
     * Asks the server's status tool what happened to one journaled operation (or `{ tool }` for one the journal
     * does not hold), updates the journal, and returns a CallOutcome with what is known.
     */
    resolve: (operationId, requestOptions) => resolveOperation(ctx, operationId, requestOptions),
    /** `resolve` for every operation the journal holds as not finished *for this server*. */
    reconcile: (requestOptions) => reconcileOperations(ctx, requestOptions),
    /** The server's tools as a model should see them (with `idFromIntent`: model-tools.js); else as listed. */
    listToolsForModel: async () => {
      const list = [...(await tools.refresh()).values()];
      if (!options.idFromIntent) return list;
      return toolsForModel(list, { idArg: settings.idArg, statusTool: settings.statusTool, statusListed: tools.has(settings.statusTool) });
    },
    engine,
    journal,
    refreshTools: tools.refresh,
    /** This server's operations whose outcome is not known to be final (after a crash, or `unknown`), and any
     *  written before entries were bound to a server. */
    pendingOperations: async () => (await journal.pending()).filter((e) => ofServerOrUnbound(e, ctx.server())),
  };
}
