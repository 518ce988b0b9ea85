// Types of the Cloudflare Agents adapter ('mcp-retry-policy/agents'). It does not import `agents`: it works on
// the Agent instance you pass (its `mcp` manager and `ctx.storage`), so these types describe that shape.
import type { RetryingClient, WithRetryOptions } from './client/index.js';

/** The prefix of the journal's keys in the Agent's storage. */
export declare const JOURNAL_PREFIX: 'mcp-retry-policy:';

/** What the adapter uses of an `agents` Agent (`this` inside one). */
export interface AgentLike {
  mcp: {
    mcpConnections: Record<string, { client: unknown; clearResumedSession?(): void } | undefined>;
    connectToServer(id: string): Promise<unknown>;
    discoverIfConnected?(id: string): Promise<unknown>;
    callTool(...args: any[]): Promise<unknown>;
  };
  ctx: { storage: { get(key: string): Promise<any>; put(key: string | Record<string, unknown>, value?: unknown): Promise<void>; list(options: { prefix: string }): Promise<Map<string, any>>; delete(keys: string[]): Promise<number> } };
}

/**
 * `withRetry` over the Agent's MCP connection `serverId` (as added with `addMcpServer(…, { id })`): the journal
 * in the Agent's storage, a lost session re-initialized through the Agent's MCP manager. One per (agent,
 * server): the first call's options configure it; later calls get the same object. `options` are withRetry's,
 * with other defaults: `journal` a `DurableObjectJournal` in `agent.ctx.storage` (keys under `JOURNAL_PREFIX`),
 * `server` `agents:<serverId>`. `transport` and `reconnect` are refused (`code: 'conflicting_options'`): the
 * adapter re-initializes through the manager.
 */
export declare function retryingMcp(agent: AgentLike, serverId: string, options?: WithRetryOptions): RetryingClient;

/** The options of `installRetry(agent, options)`: withRetry's (as for `retryingMcp`), and which servers. */
export interface InstallRetryOptions extends WithRetryOptions {
  /**
   * Only these server ids; the others' calls go to the Agent's own `callTool` unchanged.
   * @default undefined (every server)
   */
  servers?: string[];
}

/**
 * Routes `agent.mcp.callTool` (and so `agent.mcp.getAITools()`'s tools) through `retryingMcp`. A call that did
 * not simply succeed answers an `isError` result with the outcome's message. Returns a function that undoes it.
 */
export declare function installRetry(agent: AgentLike, options?: InstallRetryOptions): () => void;
