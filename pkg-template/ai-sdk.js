// The Vercel AI SDK (v6) adapter: `mcp-retry-policy/ai-sdk`. AI SDK tools whose every execution goes
// through withRetry — the model's tool-call id as the call's intent (so a repeated tool call reuses its
// operation id), the AI SDK's abort signal as the call's signal, and an outcome the model can read instead of
// a thrown error when the call did not simply succeed.
//
//   const mcp = withRetry(client, { transport, trusted: true, idFromIntent: true });
//   const tools = await aiSdkTools(mcp);
//   await generateText({ model, tools, stopWhen: stepCountIs(5), prompt });
//
// The tools have the shape @ai-sdk/mcp's `mcpClient.tools()` gives (dynamicTool + jsonSchema, description,
// title, metadata.annotations, _meta, and the same conversion of MCP content for the model), built from
// `mcp.listToolsForModel()` (with `idFromIntent` the operation-id argument is hidden from the model). Why not
// wrap @ai-sdk/mcp's own client: it has no request-level hook to observe an attempt (HTTP status, whether it
// was sent), and its `maxRetries` re-sends any tools/call on a connection error or a 5xx, safe or not.
//
// `execute` answers the call's outcome: for `succeeded` and `tool_error` the tool's own CallToolResult (what
// @ai-sdk/mcp returns); for `failed`, `unknown` and `pending` (a created task too) an `isError` result whose text is the outcome's
// message (what happened, whether it may have run, what to do next) — never a thrown error. Only an abort
// before anything was sent throws, as @ai-sdk/mcp's tools do. `ai` is an optional peer (^6); only this entry
// imports it.
import { dynamicTool, jsonSchema } from 'ai';
import { typeError } from './errors.js';
import { modelResultOf } from './client/outcome.js';

const HINTS = ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];

/**
 * AI SDK tools for every tool the server lists, executed through `mcp` (what `withRetry` returned).
 * `options.intent(executionOptions)` names the call's intent (default: the model's tool-call id; prefix it with
 * a conversation id if your provider's tool-call ids repeat across conversations). `options.clientName` goes
 * into each tool's `metadata`, as @ai-sdk/mcp does.
 */
export async function aiSdkTools(mcp, options = {}) {
  if (!mcp || typeof mcp.callTool !== 'function' || typeof mcp.listToolsForModel !== 'function') {
    throw typeError('mcp', 'aiSdkTools needs what withRetry(client, options) returned');
  }
  const { intent = (o) => o?.toolCallId, clientName } = options ?? {};
  if (typeof intent !== 'function') throw typeError('intent', 'intent must be a function of the AI SDK execution options');
  const tools = Object.create(null);
  for (const t of await mcp.listToolsForModel()) {
    const { name, title, description, inputSchema, annotations, _meta } = t;
    tools[name] = {
      ...dynamicTool({
        description,
        title: title ?? annotations?.title,
        metadata: { ...(clientName ? { clientName } : {}), ...(annotations ? { annotations: pickHints(annotations) } : {}) },
        inputSchema: jsonSchema({ ...inputSchema, properties: inputSchema?.properties ?? {}, additionalProperties: false }),
        execute: async (args, execution) => {
          execution?.abortSignal?.throwIfAborted();
          const params = { name, arguments: args ?? {} };
          const requestOptions = { intent: intent(execution), ...(execution?.abortSignal ? { signal: execution.abortSignal } : {}) };
          // A pending call that created a task is told as the outcome's message, not as the raw task.
          return typeof mcp.call === 'function' ? modelResultOf(await mcp.call(params, requestOptions)) : mcp.callTool(params, requestOptions);
        },
        toModelOutput: mcpToModelOutput,
      }),
      ...(_meta ? { _meta } : {}),
    };
  }
  return tools;
}

function pickHints(a) {
  return Object.fromEntries(HINTS.filter((k) => a[k] != null).map((k) => [k, a[k]]));
}

/** MCP content → the AI SDK's tool-result content (the mapping @ai-sdk/mcp 1.x uses; it does not export it). */
export function mcpToModelOutput({ output }) {
  if (!output || !Array.isArray(output.content)) return { type: 'json', value: output ?? null };
  return {
    type: 'content',
    value: output.content.map((part) => {
      if (part.type === 'text' && 'text' in part) return { type: 'text', text: part.text };
      if (part.type === 'image' && 'data' in part && 'mimeType' in part) return { type: 'image-data', data: part.data, mediaType: part.mimeType };
      return { type: 'text', text: JSON.stringify(part) };
    }),
  };
}
