// Types of the AI SDK adapter ('mcp-retry-policy/ai-sdk'). `ai` (v6) is an optional peer: only this entry uses it.
import type { Tool, ToolExecutionOptions } from 'ai';
import type { RetryingClient, CallToolResultLike } from './client/index.js';

/** The options of `aiSdkTools(mcp, options)`. */
export interface AiSdkToolsOptions {
  /**
   * The call's intent, from the AI SDK's execution options: the same intent reuses the same operation id. Prefix
   * the tool-call id with a conversation id if your provider's tool-call ids repeat across conversations.
   * @default (execution) => execution?.toolCallId (the model's tool-call id)
   */
  intent?: (execution: ToolExecutionOptions | undefined) => string | undefined;
  /**
   * Put in each tool's `metadata.clientName`, as @ai-sdk/mcp does.
   * @default undefined (no `clientName` in the metadata)
   */
  clientName?: string;
}

/**
 * AI SDK tools for every tool the server lists, each executed through `mcp` (what `withRetry` returned):
 * `succeeded`/`tool_error` → the tool's result; `failed`/`unknown`/`pending` → an `isError` result whose text is
 * the outcome's message (never a thrown error).
 */
export declare function aiSdkTools(mcp: RetryingClient, options?: AiSdkToolsOptions): Promise<Record<string, Tool<unknown, CallToolResultLike>>>;

/** MCP content → the AI SDK's tool-result content (as @ai-sdk/mcp converts it): each tool's `toModelOutput`. */
export declare function mcpToModelOutput(options: {
  /** The tool's result (an MCP `CallToolResult`), as the AI SDK hands it to `toModelOutput`. Required. */
  output: unknown;
}): unknown;
