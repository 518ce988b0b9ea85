// Step 1 of a call — resolve the tool: its metadata (the cached tools/list), its safety as the engine judges
// it, and for a keyed tool the operation id, created once per intended call and journaled before the first send.
import { rangeError } from '../errors.js';
import { newOperationId } from './engine.js';

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
  // The engine's answer for this tool object, kept while tools/list gives the same object (a refresh makes
  // new ones); the overrides and the trust are the wrapper's, fixed.
  const known = ctx.safetyOf?.get(name);
  let safety;
  if (known !== undefined && known.tool === tool) safety = known.safety;
  else {
    safety = ctx.engine.safety(tool ?? {}, { trusted: ctx.trusted, ...(override ? { override } : {}), operationIdArgument: ctx.idArg });
    ctx.safetyOf?.set(name, { tool, safety });
  }
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

