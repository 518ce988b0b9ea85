// What the rest of withRetry knows of a SubrequestBudget without importing it (subrequests.js is an optional
// part's, imported by the app that makes one): the budgets made, and the code of the error a spent one throws.

/** Every SubrequestBudget made (its constructor adds itself): `options.subrequestBudget` is checked against it. */
export const BUDGETS = new WeakSet();

/** The code of the error `budget.fetch` throws instead of fetching when nothing is left (nothing was sent). */
export const SUBREQUEST_BUDGET_SPENT = 'ERR_MCP_RETRY_SUBREQUEST_BUDGET';
