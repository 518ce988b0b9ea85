// The status tool: a read-only MCP tool through which a client finds out what happened to one of its writes,
// by operation id, without sending the write again. It answers from the operation ledger (OperationLedger.status),
// for the caller's own tenant only: an id of another tenant reads as not found.
import { z as defaultZod } from 'zod';
import { isValidOperationId } from './rules.js';
import { INTERNALS, LedgerStoreError, OperationLedger } from './ledger.js';
import { rejected } from './with-idempotency.js';
import { optionError as optError } from '../errors.js';
import {
  OPERATION_FAILED, OPERATION_IN_PROGRESS, OPERATION_NOT_DONE, OPERATION_NOT_FOUND,
  OPERATION_SUCCEEDED, OPERATION_UNKNOWN,
} from '../generated/names.js';

/** The status tool's default name. */
export const STATUS_TOOL_NAME = 'operation_status';


const WORDS = {
  [OPERATION_NOT_FOUND]: (id) =>
    `No record of operation ${id}: the server never received it, or it finished long ago and its record was purged. ` +
    'This does not prove it did not happen. Calling the tool again with the same operation id does it at most once.',
  [OPERATION_NOT_DONE]: (id) => `Operation ${id} did not take effect. Calling the tool again with the same operation id does it now.`,
  [OPERATION_IN_PROGRESS]: (id, s) =>
    `Operation ${id} is still running. Ask again in about ${Math.max(1, Math.round(s.retryAfterMs / 1000))} s; do not call the tool again with a new operation id.`,
  [OPERATION_SUCCEEDED]: (id) => `Operation ${id} succeeded; its result is attached, exactly as it was first returned.`,
  [OPERATION_FAILED]: (id) => `Operation ${id} ran and reported an error; its result is attached.`,
  [OPERATION_UNKNOWN]: (id) =>
    `The outcome of operation ${id} is unknown to the server too: it may or may not have taken effect. Do not call the tool again with a new operation id.`,
};

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
  if (!(ledger instanceof OperationLedger)) throw optError('ledger', 'an OperationLedger');
  const { tenant, name = STATUS_TOOL_NAME, z = defaultZod, description, authorize } = options ?? {};
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
  if (typeof z?.string !== 'function') throw optError('z', 'zod (the `z` export)');

  return server.registerTool(
    name,
    {
      description: description ??
        'Reports what happened to an earlier write, by the operation id it was sent with: succeeded (with its result), failed, ' +
          'still in progress, not done, not found, or unknown. Read-only: it never runs the write. Use it instead of calling a write again with a new id.',
      inputSchema: {
        action: z.string().min(1).max(256).describe('The tool (action) the operation was sent to.'),
        operation_id: z.string().describe('The operation id the write was sent with.'),
      },
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async ({ action, operation_id: operationId }, extra) => {
      if (!isValidOperationId(operationId)) {
        return rejected('invalid_operation_id', undefined, 'operation_id must be 8–128 characters of A–Z a–z 0–9 - _ . : (a UUID works).');
      }
      let who;
      try {
        who = await tenant(extra);
      } catch {
        who = undefined;
      }
      if (typeof who !== 'string' || !who) return rejected('unauthenticated', undefined, 'This request has no authenticated tenant.');
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
        content: [{ type: 'text', text: WORDS[s.status](operationId, s) }],
        structuredContent: structured,
      };
    },
  );
}

