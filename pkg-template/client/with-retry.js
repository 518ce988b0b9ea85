// withRetry: the MCP SDK client, made safe to retry. This file observes, waits and acts; every decision
// (retry or not, how long, what status) comes from the wasm engine.
import { rangeError, typeError } from '../errors.js';
import { RetryEngine, newOperationId } from './engine.js';
import { ATTEMPT_META_KEY, errorOutcome, resultOutcome, typeOptionError } from './attempt.js';
import { sessionKeeper } from './session.js';
import { answersInput, continueInput } from './input-rounds.js';
import { watchStreamEnd } from './stream-end.js';
import { MemoryJournal } from './journal.js';
import { checkServerOption, ofServer, ofServerOrUnbound, serverIdentity } from './scope.js';
import { messageFor } from './messages.js';
import { sleep } from './sleep.js';
import { telemetryFor } from './telemetry.js';
import { RESULT_SCHEMA } from './result-schema.js';
import { MAX_HINT_MS, createdTask, followTask, hintOf, taskRequest } from './tasks.js';
import {
  ACTION_STOP, OPERATION_FAILED, OPERATION_IN_PROGRESS, OPERATION_NOT_DONE, OPERATION_NOT_FOUND, OPERATION_STATUSES, OPERATION_SUCCEEDED,
  OPERATION_UNKNOWN, OUTCOME_META_KEY, REASON_RESOLVED_BY_STATUS, REASON_STATUS_IN_PROGRESS, REASON_STATUS_NOT_ASKED, REASON_STATUS_NOT_FOUND, REASON_STATUS_UNKNOWN,
  REASON_TASK_PENDING, SAFETIES, STATUS_PENDING,
} from '../generated/names.js';

/** The `_meta` key under which `callTool` attaches the full `CallOutcome` to a non-succeeded result. */
export { OUTCOME_META_KEY };
export { RESULT_SCHEMA, followTask };

const OPTION_KEYS = new Set([
  'policy', 'trusted', 'tools', 'operationIdArgument', 'journal', 'onEvent', 'revision', 'seed', 'reconnect',
  'transport', 'now', 'resetTimeoutOnProgress', 'statusTool', 'autoResolve', 'idFromIntent', 'opentelemetry',
  'server', 'journalArguments',
  'sharedBreaker', // issue 20 §4: client/shared-breaker.js
]);

/** The status tool's default name (the server's `registerStatusTool`). */
export const DEFAULT_STATUS_TOOL = 'operation_status';

function checkOptions(client, o) {
  if (!client || typeof client.request !== 'function') throw typeOptionError('client', 'an MCP SDK Client');
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw typeOptionError('options', 'an object');
  for (const k of Object.keys(o)) {
    if (!OPTION_KEYS.has(k)) throw typeError(k, `${k} is not a known option`, 'unknown_option');
  }
  if (o.trusted !== undefined && typeof o.trusted !== 'boolean') throw typeOptionError('trusted', 'a boolean');
  if (o.operationIdArgument !== undefined && (typeof o.operationIdArgument !== 'string' || !o.operationIdArgument))
    throw typeOptionError('operationIdArgument', 'a non-empty string');
  if (o.tools !== undefined) {
    if (o.tools === null || typeof o.tools !== 'object') throw typeOptionError('tools', 'an object of tool name → safety');
    for (const [name, s] of Object.entries(o.tools)) {
      if (!SAFETIES.includes(s)) throw rangeError(`tools.${name}`, `tools.${name} must be one of ${SAFETIES.join(', ')}`);
    }
  }
  for (const f of ['onEvent', 'reconnect', 'transport', 'now']) {
    if (o[f] !== undefined && typeof o[f] !== 'function') throw typeOptionError(f, 'a function');
  }
  if (o.reconnect !== undefined && o.transport !== undefined) {
    throw typeError('transport', 'pass either transport (a factory of fresh transports) or reconnect, not both', 'conflicting_options');
  }
  if (o.statusTool !== undefined && o.statusTool !== false && (typeof o.statusTool !== 'string' || !o.statusTool)) {
    throw typeOptionError('statusTool', 'a tool name, or false');
  }
  if (o.autoResolve !== undefined && typeof o.autoResolve !== 'boolean') throw typeOptionError('autoResolve', 'a boolean');
  if (o.idFromIntent !== undefined && typeof o.idFromIntent !== 'boolean') throw typeOptionError('idFromIntent', 'a boolean');
  if (o.journalArguments !== undefined && typeof o.journalArguments !== 'boolean') throw typeOptionError('journalArguments', 'a boolean');
  checkServerOption(o.server);
  if (o.sharedBreaker !== undefined && (typeof o.sharedBreaker?.beforeAdmit !== 'function' || typeof o.sharedBreaker?.afterRecord !== 'function')) {
    throw typeOptionError('sharedBreaker', 'a SharedBreaker');
  }
  if (o.journal !== undefined) {
    for (const m of ['begin', 'settle', 'pending']) {
      if (typeof o.journal?.[m] !== 'function') throw typeOptionError('journal', `a journal (missing ${m}())`);
    }
  }
}

/** The server's name from its `initialize` answer, when the SDK client has one. */
function serverName(client) {
  try {
    const name = client.getServerVersion?.()?.name;
    return typeof name === 'string' && name ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Closes the client and connects it again over a fresh transport from the caller's factory (a new session). */
async function reconnectWith(client, transport) {
  const fresh = await transport();
  if (!fresh || typeof fresh.start !== 'function' || typeof fresh.send !== 'function') {
    throw typeOptionError('transport', 'a function returning an MCP transport (start, send, close)');
  }
  await client.close().catch(() => {});
  await client.connect(fresh);
}

/**
 * Without `transport` or `reconnect`: re-creates a Streamable HTTP transport like the client's, best effort. It
 * reads the SDK transport's private fields (`_url`, `_requestInit`, …), so options newer than these are lost and a
 * future SDK may break it: pass `transport` instead.
 */
async function defaultReconnect(client) {
  const old = client.transport;
  if (!old || typeof old.constructor !== 'function' || !(old._url instanceof URL)) {
    throw new Error('cannot re-create this transport; pass options.reconnect');
  }
  const fresh = new old.constructor(old._url, {
    requestInit: old._requestInit,
    authProvider: old._authProvider,
    fetch: old._fetch,
    reconnectionOptions: old._reconnectionOptions,
  });
  await client.close().catch(() => {});
  await client.connect(fresh);
}

/**
 * Wraps an `@modelcontextprotocol/sdk` `Client` so that `tools/call` is retried only where a retry is safe.
 * Call it once per client and share the wrapper: the retry budget and the breaker are per server.
 */
export function withRetry(client, options = {}) {
  checkOptions(client, options);
  const engine = new RetryEngine(options.policy, {
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.revision !== undefined ? { revision: options.revision } : {}),
  });
  const trusted = options.trusted ?? false;
  const overrides = options.tools ?? {};
  const idArg = options.operationIdArgument ?? 'operation_id';
  const journal = options.journal ?? new MemoryJournal();
  const now = options.now ?? (() => Date.now());
  // Concurrent calls share one session: one re-initialization at a time, after the requests in flight on the
  // lost one came back (session.js).
  const session = sessionKeeper(
    client,
    options.reconnect ?? (options.transport ? () => reconnectWith(client, options.transport) : () => defaultReconnect(client)),
  );
  const reconnect = (_client, context) => session.reinitialize(context?.cause);
  const emit = (event) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A listener's failure must not change the call.
    }
  };
  const telemetry = telemetryFor(options.opentelemetry);
  let callSeq = 0;
  // The SDK reports a broken SSE stream to client.onerror, not to the request: note when it happens, so a
  // timeout after a break (and after an event id) can be resumed instead of re-sent. Chained, not replaced.
  let streamBrokeAt = -Infinity;
  const previousOnError = client.onerror;
  client.onerror = (error) => {
    if (/SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts/.test(String(error?.message ?? ''))) {
      streamBrokeAt = now();
    }
    previousOnError?.call(client, error);
  };
  let tools; // name → Tool, from tools/list
  let toolsLoading;
  let revisionSource;

  async function refreshTools() {
    const list = new Map();
    let cursor;
    for (let page = 0; page < 100; page++) {
      const res = await client.listTools(cursor ? { cursor } : undefined);
      for (const t of res.tools ?? []) list.set(t.name, t);
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    tools = list;
    return list;
  }

  // tools/list is a read. When it fails, the engine says whether the session must be re-initialized first (a
  // session that expired before the first call): without the list the call would go out knowing nothing of the
  // tool — unsafe, and without the operation id a keyed tool needs. Only that recovery is followed, once; any
  // other failure leaves the list unknown, as before.
  async function listTools() {
    try {
      return await refreshTools();
    } catch (error) {
      const state = engine.begin(now(), { answersInput: false });
      let decision;
      try {
        if (!engine.admit(state, now()).admitted) throw error;
        const outcome = errorOutcome(error, { aborted: false, sent: true, hadSession: !!client.transport?.sessionId });
        decision = engine.record(state, outcome, 'read_only', now()).decision;
      } finally {
        state.free();
      }
      if (decision.action !== 'retry' || (decision.recover !== 'reinitialize' && decision.recover !== 'renegotiate')) throw error;
      if (decision.delayMs > 0) await sleep(decision.delayMs);
      await reconnect(client, { cause: error });
      return refreshTools();
    }
  }

  async function toolInfo(name) {
    if (!tools || !tools.has(name)) {
      toolsLoading ??= listTools().finally(() => (toolsLoading = undefined));
      try {
        await toolsLoading;
      } catch {
        // Without tools/list the tool's safety is the app's override or `unsafe`.
      }
    }
    return tools?.get(name);
  }

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

  // The call's steps share this context: the client, the engine, the journal and the options.
  const statusTool = options.statusTool === undefined ? DEFAULT_STATUS_TOOL : options.statusTool;
  // One status query: a call of the read-only status tool (never the write), through the same loop as any call,
  // so a lost session is re-initialized and a transient failure retried as the engine decides. Its answer is in
  // structuredContent; anything else (an error, a refusal, a malformed answer) is no answer.
  async function askStatus({ action, operationId }, { signal }) {
    try {
      const out = await call({ name: statusTool, arguments: { action, operation_id: operationId } }, { signal });
      const res = out.status === 'succeeded' ? out.result : undefined;
      const sc = res?.structuredContent;
      if (!sc || !OPERATION_STATUSES.includes(sc.status) || sc.operation_id !== operationId) return undefined;
      return sc;
    } catch {
      return undefined;
    }
  }
  // The server this wrapper's journal entries belong to (client/scope.js).
  const server = () => serverIdentity(client, options.server);
  const ctx = {
    client, engine, journal, now, emit, reconnect, refreshTools, toolInfo, learnRevision, trusted, overrides, idArg, options, statusTool, askStatus,
    telemetry, session, server,
  };

  async function call(params, requestOptions = {}) {
    if (!params || typeof params.name !== 'string') throw typeOptionError('params.name', 'a string');
    if (params.arguments !== undefined && (params.arguments === null || typeof params.arguments !== 'object'))
      throw typeOptionError('params.arguments', 'an object');
    const { signal } = requestOptions;
    const task = taskRequest(requestOptions.task);
    const op = await resolveTool(ctx, params, requestOptions.intent);
    // Every event of this call names it and its server, so listeners can map them without guessing.
    const callId = ++callSeq;
    const server = serverName(client);
    const say = (event) => emit({ ...event, callId, ...(server ? { server } : {}) });
    const callStarted = now();
    const tel = telemetry.call({
      tool: op.name, safety: op.safety, operationId: op.operationId,
      sessionId: client.transport?.sessionId, protocolVersion: client.transport?.protocolVersion,
    });
    // A 2026-07-28 input request is answered through the client's own handlers (input-rounds.js) when it has
    // any; without, the engine stops the call there (input_required_unhandled).
    const run = {
      params, requestOptions, args: op.args, state: engine.begin(now(), { answersInput: answersInput(client) }), resumptionToken: undefined,
      // Ask for a task when the caller does, or when the tool runs only as one (2025-11-25 `execution.taskSupport`).
      ...(task ?? (op.taskSupport === 'required' ? { task: {} } : {})),
    };
    let deadlineMs;
    const attempts = [];
    let recover;
    let result;
    let lastError;
    let previousError; // the error of the attempt just before: what a recovery step answers
    let decision;
    try {
      try {
        for (;;) {
          // A shared breaker (shared-breaker.js): the fleet's newest state adopted, a probe only under its lease.
          if (options.sharedBreaker) await options.sharedBreaker.beforeAdmit(engine, now());
          const admission = engine.admit(run.state, now());
          if (!admission.admitted) {
            decision = admission.decision;
            break;
          }
          if (admission.breaker) say({ type: 'breaker', tool: op.name, ...admission.breaker });
          const started = now();
          const traced = tel.attempt(attempts.length + 1);
          run.traceMeta = traced.meta;
          const sent = await traced.run(() => runAttempt(ctx, run, { admission, recover, cause: previousError, started, streamBrokeAt: () => streamBrokeAt }));
          result = sent.result;
          previousError = sent.error;
          if (sent.error !== undefined) lastError = sent.error;
          const step = engine.record(run.state, sent.outcome, op.safety, now());
          const durationMs = now() - started;
          traced.end(sent.outcome, step.classification, durationMs);
          attempts.push({ attempt: attempts.length + 1, startedAt: started, durationMs, outcome: sent.outcome, ...step });
          say({ type: 'attempt', tool: op.name, attempt: attempts.length, durationMs, outcome: sent.outcome, ...step });
          if (step.breaker) say({ type: 'breaker', tool: op.name, ...step.breaker });
          if (options.sharedBreaker) await options.sharedBreaker.afterRecord(engine, now(), !!step.breaker);
          decision = step.decision;
          if (decision.action === ACTION_STOP) break;
          tel.retry(decision, step.classification.cause);
          say({ type: 'retry', tool: op.name, delayMs: decision.delayMs, recover: decision.recover, reason: decision.reason });
          recover = decision.recover;
          if (!(await sleep(decision.delayMs, signal))) {
            // Aborted during the backoff: the engine says what that means.
            decision = engine.record(run.state, { kind: 'aborted', sent: 'no' }, op.safety, now()).decision;
            break;
          }
          if (recover === 'continue_input') {
            // The server asked for input: the next round carries it (never the first phase again).
            const stopped = await continueInput(ctx, run, result, { safety: op.safety, signal, say: (e) => say({ ...e, tool: op.name }) });
            if (stopped) {
              decision = stopped.decision;
              if (stopped.error !== undefined) lastError = stopped.error;
              break;
            }
          }
        }
        // The server created a task: follow it to its end within the call's deadline (never re-sending the call).
        const created = decision.status === STATUS_PENDING && decision.reason === REASON_TASK_PENDING ? createdTask(result) : undefined;
        if (created) {
          const followed = await followTask({ ...ctx, emit: say }, run.state, created, { tool: op.name, safety: op.safety, signal });
          decision = followed.decision;
          if (followed.result !== undefined) result = followed.result;
          if (followed.error !== undefined) lastError = followed.error;
        }
      } finally {
        deadlineMs = run.state.deadlineMs;
        run.state.free(); // the engine's slot for this call, now, not when the collector gets to it
      }

      let outcome = assembleOutcome({
        ...op,
        attempts,
        result,
        lastError,
        decision,
        operationIdArgument: idArg,
        breakerOpenForMs: engine.breakerState === 'open' ? engine.policy.breaker?.openMs : undefined,
      });
      // A keyed write whose outcome is not known: ask the server's status tool, within the call's deadline, before
      // answering. It never sends the write again to find out.
      if (op.operationId && (outcome.status === 'unknown' || outcome.status === 'pending') && options.autoResolve !== false) {
        outcome = (await resolveOutcome({ ...ctx, emit: say }, outcome, { deadlineMs, signal, attempts })) ?? outcome;
      }
      if (op.operationId) {
        try {
          await journal.settle(op.operationId, outcome.status, now());
        } catch {
          // The entry stays pending: pendingOperations() will list it.
        }
      }
      if (outcome.status !== 'succeeded' && outcome.status !== 'tool_error') {
        say({ type: 'give_up', tool: op.name, status: outcome.status, reason: outcome.reason, operationId: op.operationId });
      }
      say({ type: 'done', tool: op.name, status: outcome.status, reason: outcome.reason, attempts: attempts.length, durationMs: now() - callStarted });
      tel.end(outcome);
      return outcome;
    } catch (error) {
      tel.fail(error);
      throw error;
    }
  }

  async function callTool(params, requestOptions) {
    const outcome = await call(params, requestOptions);
    if (outcome.status === 'succeeded' || outcome.status === 'tool_error') return outcome.result;
    if (outcome.status === 'pending' && outcome.result) return outcome.result;
    return {
      isError: true,
      content: [{ type: 'text', text: outcome.message }],
      _meta: { [OUTCOME_META_KEY]: summary(outcome) },
    };
  }

  /**
   * Asks the server's status tool what happened to one journaled operation (or `{ tool }` for one the journal
   * does not hold), updates the journal, and returns a CallOutcome with what is known: `succeeded`/`tool_error`
   * with the recorded result, `failed` (it did not take effect), `pending`, or still `unknown`.
   */
  async function resolve(operationId, requestOptions = {}) {
    if (typeof operationId !== 'string' || !operationId) throw typeOptionError('operationId', 'a non-empty string');
    const entry = (await journal.pending()).find((e) => e.operationId === operationId);
    // Another server's operation is never asked here: its answer would be about an id it never saw.
    if (entry && !ofServerOrUnbound(entry, server())) {
      throw rangeError('operationId', `operation ${operationId.slice(0, 64)} went to another server (${String(entry.server).slice(0, 120)}): resolve it through that server's withRetry`, 'other_server');
    }
    const tool = entry?.tool ?? requestOptions.tool;
    if (typeof tool !== 'string' || !tool) {
      throw rangeError('operationId', `no pending journal entry for ${operationId.slice(0, 64)}: pass { tool }`, 'not_pending');
    }
    const base = assembleOutcome({
      name: tool, safety: 'keyed', operationId, attempts: [], decision: { status: 'unknown', reason: REASON_STATUS_NOT_ASKED }, operationIdArgument: idArg,
    });
    const deadlineMs = now() + engine.policy.totalTimeoutMs;
    const outcome = (await resolveOutcome(ctx, base, { deadlineMs, signal: requestOptions.signal, attempts: [] })) ?? base;
    try {
      await journal.settle(operationId, outcome.status, now());
    } catch {
      // The entry stays pending.
    }
    return outcome;
  }

  /**
   * `resolve` for every operation the journal holds as not finished *for this server*; one CallOutcome each.
   * Entries written before entries were bound to a server are left alone (pendingOperations() lists them).
   */
  async function reconcile(requestOptions = {}) {
    const out = [];
    const mine = server();
    for (const e of await journal.pending()) if (ofServer(e, mine)) out.push(await resolve(e.operationId, requestOptions));
    return out;
  }

  /**
   * The server's tools as a model should see them with `idFromIntent`: the operation-id argument removed from
   * each input schema (withRetry adds it, from the call's intent), and a sentence on the keyed tools saying so and
   * pointing at the status tool. Without `idFromIntent`, the tools as listed.
   */
  async function listToolsForModel() {
    const list = [...(await refreshTools()).values()];
    if (!options.idFromIntent) return list;
    return list.map((t) => {
      const props = t.inputSchema?.properties;
      if (!props || !Object.hasOwn(props, idArg) || t.name === statusTool) return t;
      const { [idArg]: _, ...rest } = props;
      const required = Array.isArray(t.inputSchema.required) ? t.inputSchema.required.filter((r) => r !== idArg) : undefined;
      const check = statusTool && tools?.has(statusTool) ? ` To check an earlier call, use ${statusTool}; do not call this tool again to find out.` : '';
      return {
        ...t,
        description: `${t.description ?? ''}${t.description ? ' ' : ''}(Repeating this exact call is safe: it is deduplicated for you.${check})`,
        inputSchema: { ...t.inputSchema, properties: rest, ...(required ? { required } : {}) },
      };
    });
  }

  return {
    call,
    callTool,
    resolve,
    reconcile,
    listToolsForModel,
    engine,
    journal,
    refreshTools,
    /** This server's operations whose outcome is not known to be final (after a crash, or `unknown`), and any
     *  written before entries were bound to a server. */
    pendingOperations: async () => (await journal.pending()).filter((e) => ofServerOrUnbound(e, server())),
  };
}

/** What a status answer makes of the call: its final status and reason. */
const STATUS_OUTCOME = {
  [OPERATION_SUCCEEDED]: ['succeeded', REASON_RESOLVED_BY_STATUS],
  [OPERATION_FAILED]: ['tool_error', REASON_RESOLVED_BY_STATUS],
  [OPERATION_NOT_DONE]: ['failed', REASON_RESOLVED_BY_STATUS],
  [OPERATION_IN_PROGRESS]: ['pending', REASON_STATUS_IN_PROGRESS],
  [OPERATION_NOT_FOUND]: ['unknown', REASON_STATUS_NOT_FOUND],
  [OPERATION_UNKNOWN]: ['unknown', REASON_STATUS_UNKNOWN],
};

/**
 * Closing the unknown: asks the server's status tool (when the server lists one) about `outcome`'s operation,
 * polling while it is in progress with the waits the engine decides, until `deadlineMs`. Resolves to the
 * CallOutcome with what the server knows, or `undefined` when it cannot be asked (no status tool, the query
 * failed, no time left). The write itself is never sent again.
 */
export async function resolveOutcome(ctx, outcome, { deadlineMs, signal, attempts }) {
  const { engine, now, statusTool } = ctx;
  if (!statusTool || !outcome.operationId || !(deadlineMs > now())) return undefined;
  if (!(await ctx.toolInfo(statusTool))) return undefined;
  const action = outcome.tool;
  const state = engine.begin(now(), { answersInput: false });
  let answer;
  try {
    for (;;) {
      answer = await ctx.askStatus({ action, operationId: outcome.operationId }, { signal });
      ctx.emit({ type: 'resolve', tool: action, operationId: outcome.operationId, answer: answer?.status ?? 'no_answer' });
      if (!answer || answer.status !== OPERATION_IN_PROGRESS) break;
      // Still running: the engine says when to look again (the ledger's hint, jittered; within the deadline).
      const next = engine.poll(state, hintOf(answer.retryAfterMs), now());
      if (next.action === ACTION_STOP || now() + next.delayMs >= deadlineMs) break;
      if (!(await sleep(next.delayMs, signal))) break;
    }
  } finally {
    state.free();
  }
  if (!answer) return undefined;
  const by = STATUS_OUTCOME[answer.status];
  if (!by) return undefined;
  const [status, reason] = by;
  const result = answer.result;
  return assembleOutcome({
    name: outcome.tool,
    safety: outcome.safety,
    operationId: outcome.operationId,
    attempts,
    result: status === 'succeeded' || status === 'tool_error' ? result : undefined,
    decision: { status, reason },
    operationIdArgument: ctx.idArg,
  });
}

/**
 * Step 1 — resolve the tool: its metadata (`tools/list`, cached), its safety as the engine judges it, and for a
 * keyed tool (or one whose schema declares the operation-id argument) the operation id: created once per
 * intended call, written to the journal before the first send, reused on every retry.
 */
export async function resolveTool(ctx, params, intent) {
  const name = params.name;
  const tool = await ctx.toolInfo(name);
  ctx.learnRevision();
  // The status tool is a lookup by this package's own protocol: read-only unless the app says otherwise.
  const override = ctx.overrides[name] ?? (name === ctx.statusTool ? 'read_only' : undefined);
  const safety = ctx.engine.safety(tool ?? {}, {
    trusted: ctx.trusted,
    ...(override ? { override } : {}),
    operationIdArgument: ctx.idArg,
  });
  const declares = !!tool?.inputSchema?.properties && Object.hasOwn(tool.inputSchema.properties, ctx.idArg);
  const args = { ...(params.arguments ?? {}) };
  let operationId;
  if ((safety === 'keyed' || declares) && name !== ctx.statusTool) {
    // With `idFromIntent` the id is never the caller's (the model's): it comes from the journal, by intent.
    const given = !ctx.options.idFromIntent && typeof args[ctx.idArg] === 'string' ? args[ctx.idArg] : undefined;
    const server = ctx.server();
    const entry = await ctx.journal.begin({
      tool: name,
      server,
      operationId: given ?? newOperationId(),
      ...(intent !== undefined ? { intent } : {}),
      ...(ctx.options.journalArguments === false ? {} : { arguments: args }),
      createdAt: ctx.now(),
    });
    // An intent is one intended call: the same intent for another tool, or for another server, is a caller's
    // mistake (a tool-call id reused across conversations, one journal shared by two servers' wrappers), refused
    // by name rather than sent under the other call's id.
    const otherServer = entry.server !== undefined && entry.server !== server;
    if (intent !== undefined && (entry.tool !== name || otherServer)) {
      const of = otherServer ? `${entry.tool} on another server (${String(entry.server).slice(0, 120)})` : entry.tool;
      throw rangeError('intent', `intent ${JSON.stringify(String(intent)).slice(0, 80)} already names a call of ${of}: give each intended call its own intent (prefix tool-call ids with a conversation id if they repeat)`, 'intent_reused');
    }
    operationId = entry.operationId;
    args[ctx.idArg] = operationId;
  }
  const taskSupport = tool?.execution?.taskSupport;
  return { name, safety, args, ...(operationId ? { operationId } : {}), ...(typeof taskSupport === 'string' ? { taskSupport } : {}) };
}

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

/**
 * Step 2 — run one attempt: recover if asked, send `tools/call` with the attempt's timeout and the caller's
 * signal, and observe how it ended. Returns `{ outcome, result?, error? }`; decides nothing.
 */
export async function runAttempt(ctx, run, { admission, recover, cause, started, streamBrokeAt }) {
  const { client, options, now } = ctx;
  const { params, requestOptions, args } = run;
  const { signal } = requestOptions;
  const tag = `${started.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  // The attempt's own signal: the caller's, and the end of this attempt's response stream (stream-end.js).
  const attempt = new AbortController();
  const onAbort = () => attempt.abort(signal.reason);
  if (signal?.aborted) attempt.abort(signal.reason);
  else signal?.addEventListener('abort', onAbort, { once: true });
  let streamEnded = false;
  const unwatch = watchStreamEnd(client, tag, () => {
    streamEnded = true;
    attempt.abort(new Error('the response stream of this tools/call ended without an answer'));
  });
  let sent = false;
  try {
    await recoverStep(ctx, recover, cause);
    sent = !signal?.aborted;
    const send = (f) => (ctx.session ? ctx.session.send(f) : f());
    const result = await send(() => client.request(
      {
        method: 'tools/call',
        // run.round: a continuation's inputResponses and requestState (input-rounds.js).
        params: { ...params, arguments: args, ...run.round, ...(run.task ? { task: run.task } : {}), _meta: { ...params._meta, ...run.traceMeta, [ATTEMPT_META_KEY]: tag } },
      },
      RESULT_SCHEMA,
      {
        timeout: admission.timeoutMs,
        signal: attempt.signal,
        // The v2 SDK client (@modelcontextprotocol/client; agents turns this on) would otherwise answer a
        // 2026-07-28 input request itself and send tools/call again: the engine would see only the last leg,
        // and a refused last leg could read "not processed" after the first leg ran. Handed back, the input
        // request is the answer the engine stops on (`answersInput: false`). v1 ignores the option.
        allowInputRequired: true,
        // With progress resets, attemptTimeoutMs is the longest silence; the call's deadline stays the hard cap.
        ...(options.resetTimeoutOnProgress
          ? { resetTimeoutOnProgress: true, maxTotalTimeout: Math.max(1, run.state.deadlineMs - now()), onprogress: requestOptions.onprogress ?? (() => {}) }
          : {}),
        ...(recover === 'resume_stream' && run.resumptionToken ? { resumptionToken: run.resumptionToken } : {}),
        onresumptiontoken: (t) => (run.resumptionToken = t),
        ...(requestOptions.onprogress && !options.resetTimeoutOnProgress ? { onprogress: requestOptions.onprogress } : {}),
      },
    ));
    return { outcome: resultOutcome(result), result };
  } catch (error) {
    let outcome = sent || signal?.aborted
      ? errorOutcome(error, { tag, aborted: !!signal?.aborted, sent, hadSession: !!client.transport?.sessionId })
      : { kind: 'network', sent: 'no' }; // the recovery step failed: the call itself never left
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
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * A broken stream as the engine's outcome, with the SSE `retry:` interval the server last sent on this
 * transport (2025-11-25 transports.mdx: the client MUST respect it). Both SDK generations keep it as
 * `_serverRetryMs` on the Streamable HTTP transport (the value their own reconnection waits); no public getter.
 */
function brokenStream(client, eventIdSeen) {
  let retryMs;
  try {
    retryMs = client.transport?._serverRetryMs;
  } catch {
    retryMs = undefined;
  }
  const ok = typeof retryMs === 'number' && retryMs >= 0 && retryMs !== Infinity;
  return { kind: 'stream_broken', eventIdSeen, ...(ok ? { retryMs: Math.min(Math.round(retryMs), MAX_HINT_MS) } : {}) };
}

/**
 * Step 3 — assemble the CallOutcome from the engine's last decision: the status and reason are the engine's;
 * the result only when the tool answered; the words for the model from `messages.js`. Pure.
 */
export function assembleOutcome({ name, safety, operationId, attempts, result, lastError, decision, operationIdArgument, breakerOpenForMs }) {
  const { status, reason } = decision;
  return {
    status,
    tool: name,
    ...(result !== undefined && (status === 'succeeded' || status === 'tool_error' || status === 'pending') ? { result } : {}),
    ...(lastError !== undefined && status !== 'succeeded' && status !== 'tool_error' ? { error: describeError(lastError) } : {}),
    ...(operationId ? { operationId } : {}),
    safety,
    attempts,
    reason,
    message: messageFor({
      tool: name,
      status,
      reason,
      taskId: typeof result?.task?.taskId === 'string' ? result.task.taskId : undefined,
      cause: attempts.at(-1)?.classification?.cause,
      operationId,
      operationIdArgument,
      breakerOpenForMs,
    }),
  };
}

function describeError(error) {
  return {
    name: error?.name ?? 'Error',
    message: String(error?.message ?? error),
    ...(error?.code !== undefined ? { code: error.code } : {}),
  };
}

// What goes into `_meta` (JSON-safe, without the full per-attempt details' raw errors).
function summary(o) {
  return {
    status: o.status,
    reason: o.reason,
    tool: o.tool,
    safety: o.safety,
    ...(o.operationId ? { operationId: o.operationId } : {}),
    attempts: o.attempts.map((a) => ({ outcome: a.outcome, classification: a.classification, decision: a.decision })),
    ...(o.error ? { error: o.error } : {}),
  };
}
