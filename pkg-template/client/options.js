// withRetry's options: the known keys and the checks of each (a TypeError/RangeError with `code` and
// `field`), and the settings a call's steps read, with their defaults. Reads; decides nothing about a call.
import { rangeError, typeError } from '../errors.js';
import { typeOptionError } from './attempt.js';
import { checkServerOption } from './scope.js';
import { BUDGETS } from './subrequest-brand.js';
import { SAFETIES, STATUS_TOOL_NAME } from '../generated/names.js';

const OPTION_KEYS = new Set([
  'policy', 'trusted', 'tools', 'operationIdArgument', 'journal', 'onEvent', 'revision', 'seed', 'reconnect',
  'transport', 'now', 'resetTimeoutOnProgress', 'statusTool', 'autoResolve', 'idFromIntent', 'opentelemetry',
  'server', 'journalArguments', 'subrequestBudget', 'behindRetryingProxy', 'parts',
  'sharedBreaker', // client/shared-breaker.js
]);

/** The status tool's default name (the server's `registerStatusTool`). */
export const DEFAULT_STATUS_TOOL = STATUS_TOOL_NAME;

export function checkOptions(client, o) {
  if (!client || typeof client.request !== 'function') throw typeOptionError('client', 'an MCP SDK Client');
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw typeOptionError('options', 'an object');
  for (const k of Object.keys(o)) {
    if (!OPTION_KEYS.has(k)) throw typeError(k, `${k} is not a known option`, 'unknown_option');
  }
  if (o.trusted !== undefined && typeof o.trusted !== 'boolean') throw typeOptionError('trusted', 'a boolean');
  if (o.behindRetryingProxy !== undefined && typeof o.behindRetryingProxy !== 'boolean') throw typeOptionError('behindRetryingProxy', 'a boolean');
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
  const budget = o.subrequestBudget;
  if (budget !== undefined && typeof budget !== 'function' && !BUDGETS.has(budget)) {
    throw typeOptionError('subrequestBudget', 'a SubrequestBudget, or a function returning the invocation\'s');
  }
  if (o.journal !== undefined) {
    for (const m of ['begin', 'settle', 'pending']) {
      if (typeof o.journal?.[m] !== 'function') throw typeOptionError('journal', `a journal (missing ${m}())`);
    }
  }
}

/** A call's `params`: a tool name, and arguments that are an object when given. */
/**
 * The call's params, checked and copied once, before anything awaits: every attempt sends this copy, so a
 * caller that reuses its params object for its next call (a new name, new arguments) cannot make a retry send
 * another tool under the first one's safety. Each field is read once (a getter cannot answer twice).
 */
export function callParamsOf(params) {
  if (!params || typeof params !== 'object') throw typeOptionError('params.name', 'a string');
  const { name, arguments: args, _meta: meta, ...rest } = params;
  if (typeof name !== 'string') throw typeOptionError('params.name', 'a string');
  if (args !== undefined && (args === null || typeof args !== 'object')) throw typeOptionError('params.arguments', 'an object');
  const copy = { ...rest, name };
  if (args !== undefined) copy.arguments = Array.isArray(args) ? [...args] : { ...args };
  if (meta !== undefined) copy._meta = meta !== null && typeof meta === 'object' ? { ...meta } : meta;
  return copy;
}

/** The settings the steps read (client/resolve-tool.js, status.js, model-tools.js), with their defaults. */
export function settingsOf(options) {
  return {
    trusted: options.trusted ?? false,
    overrides: options.tools ?? {},
    idArg: options.operationIdArgument ?? 'operation_id',
    statusTool: options.statusTool === undefined ? DEFAULT_STATUS_TOOL : options.statusTool,
  };
}

/**
 * What the engine is told of the invocation's outgoing requests before an attempt or a look:
 * `{ subrequests: room }` with a `subrequestBudget` (a SubrequestBudget, or a function returning the current
 * invocation's), else `undefined` (not counted).
 */
export function subrequestRoom(options) {
  const budget = subrequestBudgetOf(options);
  return budget === undefined ? undefined : { subrequests: budget.room };
}

/** The current invocation's `SubrequestBudget` (`subrequestBudget`, called if it is a function), or `undefined`. */
export function subrequestBudgetOf(options) {
  const o = options?.subrequestBudget;
  if (o === undefined) return undefined;
  const budget = typeof o === 'function' ? o() : o;
  if (!BUDGETS.has(budget)) throw typeOptionError('subrequestBudget', 'a function returning a SubrequestBudget');
  return budget;
}
