// The client face's public API, shared by its runtime entries (client.node.js, client.browser.js,
// client.workerd.js), each of which initializes the client wasm its own way first.
export { RetryEngine, RetryCall, newOperationId, revisionFor } from './client/engine.js';
export { withRetry, OUTCOME_META_KEY } from './client/with-retry.js';
export { observeFetch, parseRetryAfter, ATTEMPT_META_KEY } from './client/attempt.js';
export { MemoryJournal, IndexedDbJournal, DurableObjectJournal } from './client/journal.js';
export { SubrequestBudget, SUBREQUEST_BUDGET_SPENT } from './client/subrequests.js';
export { SharedBreaker, DurableObjectBreakerState } from './client/shared-breaker.js';
