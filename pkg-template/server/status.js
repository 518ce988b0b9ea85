// The status tool: a read-only MCP tool through which a client finds out what happened to one of its writes,
// by operation id, without sending the write again. It answers from the operation ledger (OperationLedger.status),
// for the caller's own tenant only: an id of another tenant reads as not found.
import { z as defaultZod } from 'zod';
import { isValidOperationId } from './rules.js';
import { INTERNALS, LedgerStoreError, OperationLedger } from './ledger.js';
import { ledgerReply } from './replies.js';
import { optionError as optError } from '../errors.js';
import { OPERATION_NOT_FOUND, OPERATION_UNKNOWN, STATUS_TOOL, STATUS_TOOL_NAME, STATUS_WORDS } from '../generated/names.js';

/** The status tool's default name. */
export { STATUS_TOOL_NAME };

/** What the model reads for an answer (`STATUS_WORDS`, from the Rust: both faces say the same). */
const wordsFor = (status, id, s) =>
  (STATUS_WORDS[status] ?? STATUS_WORDS[OPERATION_UNKNOWN])
    .split('{id}').join(id)
    .split('{seconds}').join(String(Math.max(1, Math.round((s.retryAfterMs ?? 0) / 1000))));

/**
 * Registers the read-only status tool on an `McpServer`: `name` (default `operation_status`) takes
 * `{ action, operation_id }` and answers, for the caller's tenant, what the ledger knows — in
 * `structuredContent`: `{ status, action, operation_id, retryAfterMs?, result? }` where `status` is one of
 * `not_found`, `not_done`, `in_progress`, `succeeded`, `failed`, `unknown` and `result` is the recorded
 * result (what a replay returns). `action` may be the tool's name or the ledger's action: the record is
 * looked up under the asked action, then under the actions `withIdempotency` registered on this ledger
 * (`OperationLedger.locate`), within the caller's tenant only; an id held under several actions is
 * `unknown` (ambiguous). `tenant(extra)` reads the authenticated principal, as for `withIdempotency`; a
 * request without one is refused. `authorize({ tenant, action, operationId, extra })` (optional; may be
 * async) decides whether this caller may read records under `action`: it is asked first, for the asked action,
 * before anything is read, then for the action the record is found under; anything but `true` — a throw
 * included — answers exactly as an id never used (`not_found`), so a refusal tells nothing (an id held under
 * several actions is `unknown` only when the caller may read more than one of them). `z` is
 * the zod the server's SDK uses (default: the `zod` this package resolves; pass yours when several copies
 * are installed). Returns the registered tool.
 */
export function registerStatusTool(server, ledger, options = {}) {
  if (typeof server?.registerTool !== 'function') throw optError('server', 'an McpServer');
  const { z = defaultZod, ...rest } = options ?? {};
  if (typeof z?.string !== 'function') throw optError('z', 'zod (the `z` export)');
  const tool = statusTool(ledger, rest);
  return server.registerTool(
    tool.name,
    {
      description: tool.description,
      inputSchema: {
        action: z.string().min(1).max(256).describe(tool.inputSchema.properties.action.description),
        operation_id: z.string().describe(tool.inputSchema.properties.operation_id.description),
      },
      annotations: tool.annotations,
    },
    tool.handler,
  );
}

/**
 * The status tool for any MCP server framework: `{ name, description, inputSchema, annotations, handler }` —
 * `inputSchema` as JSON Schema (`{ action, operation_id }`), `handler(args, extra)` resolving to the
 * `CallToolResult` (text for the model, `structuredContent` for a client). Options as for `registerStatusTool`
 * but `z`: `tenant(extra)` reads the authenticated principal from whatever `extra` your framework hands the
 * handler; `authorize`, `name`, `description`. Register it the way your framework registers a tool (with a
 * schema of the same two strings when it wants its own schema type).
 */
export function statusTool(ledger, options = {}) {
  if (!(ledger instanceof OperationLedger)) throw optError('ledger', 'an OperationLedger');
  const { tenant, name = STATUS_TOOL_NAME, description, authorize } = options ?? {};
  if (typeof tenant !== 'function') throw optError('tenant', 'a function of the request context');
  if (authorize !== undefined && typeof authorize !== 'function') throw optError('authorize', 'a function ({ tenant, action, operationId, extra }) → true to allow');
  const { emit } = INTERNALS.get(ledger);
  const allowed = async (ctx) => {
    if (!authorize) return true;
    try {
      return (await authorize(ctx)) === true;
    } catch (error) {
      emit({ type: 'authorize_error', key: { tenant: ctx.tenant, action: ctx.action, operationId: ctx.operationId }, error });
      return false;
    }
  };
  // `authorize` is asked before anything is read, for the asked action, then for each action the id was found
  // under: a caller it refuses reads `not_found` whatever exists — never `unknown` for an id used under two
  // actions it may not read, nor a record's existence under another action.
  const lookup = async (who, action, operationId, extra) => {
    const may = (a) => allowed({ tenant: who, action: a, operationId, extra });
    if (!(await may(action))) return { status: OPERATION_NOT_FOUND };
    const found = await ledger.locate({ tenant: who, operationId, action });
    if (!found) return { status: OPERATION_NOT_FOUND };
    let hit = found.action;
    if (found.ambiguous) {
      const readable = [];
      for (const a of found.actions) if (await may(a)) readable.push(a);
      if (readable.length > 1) return { status: OPERATION_UNKNOWN }; // several it may read: never a guess
      hit = readable[0];
    } else if (hit !== action && !(await may(hit))) {
      hit = undefined;
    }
    if (hit === undefined) return { status: OPERATION_NOT_FOUND };
    return ledger.status({ tenant: who, action: hit, operationId });
  };
  if (typeof name !== 'string' || !name) throw optError('name', 'a non-empty string');
  if (description !== undefined && typeof description !== 'string') throw optError('description', 'a string');

  return {
    name,
    description: description ?? STATUS_TOOL.description,
    inputSchema: structuredClone(STATUS_TOOL.inputSchema),
    annotations: { ...STATUS_TOOL.annotations },
    handler: async (args, extra) => {
      const { action, operation_id: operationId } = args ?? {};
      if (typeof action !== 'string' || !action || action.length > 256) {
        return ledgerReply('status_invalid_action', undefined);
      }
      if (!isValidOperationId(operationId)) {
        return ledgerReply('status_invalid_operation_id', undefined);
      }
      let who;
      try {
        who = await tenant(extra);
      } catch {
        who = undefined;
      }
      if (typeof who !== 'string' || !who) return ledgerReply('status_unauthenticated', operationId);
      let s;
      try {
        s = await lookup(who, action, operationId, extra);
      } catch (e) {
        if (!(e instanceof LedgerStoreError)) throw e;
        s = { status: OPERATION_UNKNOWN }; // the store failed (told to onEvent): the server cannot say now
      }
      const structured = {
        status: s.status,
        action,
        operation_id: operationId,
        ...(s.retryAfterMs !== undefined ? { retryAfterMs: s.retryAfterMs } : {}),
        ...(s.result !== undefined ? { result: s.result } : {}),
      };
      return {
        content: [{ type: 'text', text: wordsFor(s.status, operationId, s) }],
        structuredContent: structured,
      };
    },
  };
}

