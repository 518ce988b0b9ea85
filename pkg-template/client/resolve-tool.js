// Step 1 of a call — resolve the tool: its metadata (the cached tools/list), its safety as the engine judges
// it, and for a keyed tool the operation id, created once per intended call and journaled before the first send.
import { rangeError, typeError } from '../errors.js';
import { newOperationId } from './engine.js';
import { unresolved } from './journal-entry.js';

/**
 * Step 1 — resolve the tool: its metadata (`tools/list`, cached), its safety as the engine judges it, and for a
 * keyed tool (or one whose schema declares the operation-id argument) the operation id: created once per
 * intended call, written to the journal before the first send, reused on every retry.
 */
export async function resolveTool(ctx, params, intent) {
  const name = params.name;
  const tool = await ctx.toolInfo(name);
  ctx.learnRevision();
  // The status tool is a lookup by this package's own protocol: read-only on a trusted server unless the app says
  // otherwise. A name proves nothing on an untrusted one (any server may call a write `operation_status`): there it
  // is what the app says, else `unsafe` — sent once, never re-sent, hedged or retried.
  const override = ctx.overrides[name] ?? (name === ctx.statusTool && ctx.trusted ? 'read_only' : undefined);
  // The engine's answer for this tool object, kept (weakly) while tools/list gives the same object (a refresh
  // makes new ones); the overrides and the trust are the wrapper's, fixed. A tool the list does not name is
  // judged again on each call: kept by name, a model inventing names would grow the cache without end.
  const cache = tool !== null && typeof tool === 'object' ? ctx.safetyOf : undefined;
  let safety = cache?.get(tool);
  if (safety === undefined) {
    safety = ctx.engine.safety(tool ?? {}, { trusted: ctx.trusted, ...(override ? { override } : {}), operationIdArgument: ctx.idArg });
    cache?.set(tool, safety);
  }
  const declares = !!tool?.inputSchema?.properties && Object.hasOwn(tool.inputSchema.properties, ctx.idArg);
  const args = { ...(params.arguments ?? {}) };
  let operationId;
  if ((safety === 'keyed' || declares) && name !== ctx.statusTool) {
    const server = ctx.server();
    let given = typeof args[ctx.idArg] === 'string' ? args[ctx.idArg] : undefined;
    if (given !== undefined && ctx.options.idFromIntent) {
      // With `idFromIntent` the id comes from the journal, by intent — a model's own id is never taken, with one
      // exception: the call it was told is still open ("call again with the same operation_id …"), which the
      // journal holds open for this tool on this server. Repeated under a new tool-call id, it goes out under
      // its first id, and the server answers with the first outcome instead of doing it twice.
      const earlier = typeof ctx.journal.get === 'function' ? await ctx.journal.get(given) : undefined;
      const open = unresolved(earlier) && earlier.tool === name && (earlier.server === undefined || earlier.server === server);
      if (!open) given = undefined;
    }
    const entry = await ctx.journal.begin({
      tool: name,
      server,
      operationId: given ?? newOperationId(),
      ...(intent !== undefined ? { intent } : {}),
      ...(ctx.options.journalArguments === false ? {} : { arguments: args }),
      createdAt: ctx.now(),
    });
    // A journal of the app's own must answer with the entry (its id sent on every attempt): anything else is
    // refused by name before anything is sent.
    if (entry === null || typeof entry !== 'object' || typeof entry.operationId !== 'string' || entry.operationId === '' || typeof entry.tool !== 'string') {
      throw typeError('journal', 'journal.begin must resolve to the entry (with its operationId and tool)');
    }
    // The entry names another tool's (or server's) call: sent, this call would go out under that call's id and
    // settle its entry with its own outcome. Refused by name, nothing sent — as the intent reused (a tool-call id
    // reused across conversations, one journal shared by two servers' wrappers) or as the operation id reused.
    const otherServer = entry.server !== undefined && entry.server !== server;
    if (entry.tool !== name || otherServer) {
      const of = otherServer ? `${entry.tool} on another server (${String(entry.server).slice(0, 120)})` : entry.tool;
      if (intent !== undefined) {
        throw rangeError('intent', `intent ${JSON.stringify(String(intent)).slice(0, 80)} already names a call of ${of}: give each intended call its own intent (prefix tool-call ids with a conversation id if they repeat)`, 'intent_reused');
      }
      throw rangeError(ctx.idArg, `${ctx.idArg} ${JSON.stringify(String(entry.operationId)).slice(0, 80)} already names a call of ${of}: give this call its own`, 'operation_id_reused');
    }
    operationId = entry.operationId;
    args[ctx.idArg] = operationId;
  }
  const taskSupport = tool?.execution?.taskSupport;
  return { name, safety, args, ...(operationId ? { operationId } : {}), ...(typeof taskSupport === 'string' ? { taskSupport } : {}) };
}

