/** The `code` of the error `SubrequestBudget#fetch` throws instead of fetching once nothing is left. */
export declare const SUBREQUEST_BUDGET_SPENT: 'ERR_MCP_RETRY_SUBREQUEST_BUDGET';

/** Options of a {@link SubrequestBudget}. Whole numbers; a bad one is a `TypeError`/`RangeError` naming it. */
export interface SubrequestBudgetOptions {
  /**
   * The count of subrequests the invocation may make, 1 – 1,000,000 (Cloudflare Workers: 50 on the free plan,
   * 10,000 on the paid one; Workers for Platforms: its own). Required.
   */
  limit: number;
  /**
   * The count of subrequests kept for the app itself (its own answer's fetches): withRetry never spends them.
   * Below `limit`.
   * @default 1
   */
  reserve?: number;
  /**
   * The count of subrequests already used in this invocation (at most `limit`).
   * @default 0
   */
  spent?: number;
}

/**
 * One invocation's outgoing requests, counted. Give `fetch` to the MCP transport (and use it for the app's own
 * fetches) and the budget to `withRetry({ subrequestBudget })`: the engine never starts an attempt the
 * invocation cannot pay for, and stops with reason `subrequest_budget` instead.
 */
export declare class SubrequestBudget {
  /**
   * One budget per invocation (make it in the request handler, not at module scope).
   * @param options `limit` (required), `reserve` and `spent` (see {@link SubrequestBudgetOptions}).
   */
  constructor(options: SubrequestBudgetOptions);
  /** The invocation's subrequests, as given. */
  readonly limit: number;
  /** The subrequests kept for the app. */
  readonly reserve: number;
  /** The subrequests used so far (counted by `fetch` and `spend`). */
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
