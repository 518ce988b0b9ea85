/** The `code` of the error `SubrequestBudget#fetch` throws instead of fetching once nothing is left. */
export declare const SUBREQUEST_BUDGET_SPENT: 'ERR_MCP_RETRY_SUBREQUEST_BUDGET';

/** Options of a {@link SubrequestBudget}. Whole numbers; a bad one is a `TypeError`/`RangeError` naming it. */
export interface SubrequestBudgetOptions {
  /** The invocation's subrequests (Cloudflare Workers: 50 free, 10,000 paid; Workers for Platforms: its own). */
  limit: number;
  /** Kept for the app itself (its own answer's fetches); below `limit`. Default 1. */
  reserve?: number;
  /** Already used in this invocation. Default 0. */
  spent?: number;
}

/**
 * One invocation's outgoing requests, counted. Give `fetch` to the MCP transport (and use it for the app's own
 * fetches) and the budget to `withRetry({ subrequestBudget })`: the engine never starts an attempt the
 * invocation cannot pay for, and stops with reason `subrequest_budget` instead.
 */
export declare class SubrequestBudget {
  constructor(options: SubrequestBudgetOptions);
  readonly limit: number;
  readonly reserve: number;
  readonly spent: number;
  /** Requests left in the invocation. */
  readonly remaining: number;
  /** Requests withRetry may still make: `remaining` less `reserve`, at least 0. */
  readonly room: number;
  /** Counts `n` requests made some other way; returns `remaining`. */
  spend(n?: number): number;
  /** `fetch`, counted; bound (pass it as is). With nothing left it rejects with `SUBREQUEST_BUDGET_SPENT`, not sent. */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}
