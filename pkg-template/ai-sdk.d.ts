// Types of the AI SDK adapter ('mcp-retry-policy/ai-sdk'). `ai` (v6) is an optional peer: only this entry uses it.
import type { Tool, ToolExecutionOptions } from 'ai';
import type { RetryingClient, CallToolResultLike } from './client/index.js';

export interface AiSdkToolsOptions {
  /** The call's intent (default: the model's tool-call id). The same intent reuses the same operation id. */
  intent?: (execution: ToolExecutionOptions | undefined) => string | undefined;
  /** Put in each tool's `metadata.clientName`, as @ai-sdk/mcp does. */
  clientName?: string;
}

/**
 * AI SDK tools for every tool the server lists, each executed through `mcp` (what `withRetry` returned):
 * `succeeded`/`tool_error` → the tool's result; `failed`/`unknown`/`pending` → an `isError` result whose text is
 * the outcome's message (never a thrown error).
 */
export declare function aiSdkTools(mcp: RetryingClient, options?: AiSdkToolsOptions): Promise<Record<string, Tool<unknown, CallToolResultLike>>>;

/** MCP content → the AI SDK's tool-result content (as @ai-sdk/mcp converts it). */
export declare function mcpToModelOutput(options: { output: unknown }): unknown;
