// The server's tools as a model should see them with `idFromIntent`: the operation-id argument removed from
// each input schema (withRetry adds it, from the call's intent), and a sentence on the keyed tools saying so
// and pointing at the status tool. Pure: a list in, a list out.

/**
 * `list` (the server's Tools) as the model sees them. `idArg`: the operation-id argument; `statusTool`: the
 * status tool's name (or false); `statusListed`: whether the server lists it.
 */
export function toolsForModel(list, { idArg, statusTool, statusListed }) {
  return list.map((t) => {
    const props = t.inputSchema?.properties;
    if (!props || !Object.hasOwn(props, idArg) || t.name === statusTool) return t;
    const { [idArg]: _, ...rest } = props;
    const required = Array.isArray(t.inputSchema.required) ? t.inputSchema.required.filter((r) => r !== idArg) : undefined;
    // What is true of a new call: withRetry retries this one under its id; a new tool call is a new operation,
    // unless it carries the open call's id back (resolve-tool.js takes that one from the journal).
    const check = statusTool && statusListed
      ? ` To check an earlier call, use ${statusTool}; do not call this tool again to find out.`
      : ` If an earlier call's outcome is unclear, do not call it again unless you pass the ${idArg} its answer named.`;
    return {
      ...t,
      description: `${t.description ?? ''}${t.description ? ' ' : ''}(Retries are handled for you; calling this tool again is a new operation.${check})`,
      inputSchema: { ...t.inputSchema, properties: rest, ...(required ? { required } : {}) },
    };
  });
}
