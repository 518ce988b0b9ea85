// RetryEngine#safety's reading: a Tool's annotations and input schema (only the fields used; hints of the wrong
// type count as absent) and the app's options, into safetyOf's bits. Which safety they make is the core's.
import * as w from '../mcp_retry_policy_client.js';
import { typeError, typeName } from '../errors.js';
import {
  SAFETIES, TOOL_DECLARES_ID, TOOL_DESTRUCTIVE, TOOL_DESTRUCTIVE_GIVEN, TOOL_IDEMPOTENT, TOOL_IDEMPOTENT_GIVEN,
  TOOL_READ_ONLY, TOOL_READ_ONLY_GIVEN, TOOL_TRUSTED,
} from '../generated/names.js';
import { bool, fields, ok, ours } from './engine-read.js';
import { safetyCode } from './engine-codec.js';

/**
 * The safety of `tool` (an MCP `Tool`): the override if given; else, for a trusted server, from its
 * annotations and whether its input schema declares the operation-id argument; else `"unsafe"`.
 */
export function safetyOf(tool, options) {
  let flags = 0;
  let override = 0;
  let arg = 'operation_id';
  let at = 'options';
  try {
    fields(options, 'options', ['trusted', 'override', 'operationIdArgument'], (key, v, field) => {
      at = field;
      if (v === undefined) return;
      if (key === 'trusted') flags |= bool(v, field) ? TOOL_TRUSTED : 0;
      else if (key === 'override') {
        if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
        override = safetyCode(v) + 1;
      } else if (typeof v !== 'string') throw typeError(field, `${field} must be a string, got ${typeName(v)}`);
      else arg = v;
    });
    // Only the fields used are read; a Tool has many more. Hints of the wrong type count as absent (the
    // spec's default): they come from a server, not from the app.
    at = 'tool';
    if (tool !== undefined && (tool === null || typeof tool !== 'object' || Array.isArray(tool))) {
      throw typeError('tool', `tool must be an object, got ${typeName(tool)}`);
    }
    at = 'tool.annotations';
    const a = tool?.annotations;
    if (a !== null && typeof a === 'object') {
      const hint = (v, given, yes) => (typeof v === 'boolean' ? given | (v ? yes : 0) : 0);
      at = 'tool.annotations.readOnlyHint';
      flags |= hint(a.readOnlyHint, TOOL_READ_ONLY_GIVEN, TOOL_READ_ONLY);
      at = 'tool.annotations.destructiveHint';
      flags |= hint(a.destructiveHint, TOOL_DESTRUCTIVE_GIVEN, TOOL_DESTRUCTIVE);
      at = 'tool.annotations.idempotentHint';
      flags |= hint(a.idempotentHint, TOOL_IDEMPOTENT_GIVEN, TOOL_IDEMPOTENT);
    }
    at = 'tool.inputSchema.properties';
    const props = tool?.inputSchema?.properties;
    if (props !== null && typeof props === 'object' && Reflect.has(props, arg)) flags |= TOOL_DECLARES_ID;
  } catch (e) {
    throw ours(e, at);
  }
  return SAFETIES[ok(w.safetyOf(flags, override))] ?? SAFETIES[SAFETIES.length - 1];
}
