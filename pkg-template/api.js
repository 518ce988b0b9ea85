// The public API, shared by every runtime entry (node.js, browser.js, workerd.js). Each entry initializes
// the wasm module its own way, then re-exports this file.
export { RetryEngine, RetryCall, newOperationId, revisionFor } from './mcp_retry_policy.js';
export { withRetry, OUTCOME_META_KEY } from './client/with-retry.js';
export { observeFetch, parseRetryAfter, ATTEMPT_META_KEY } from './client/attempt.js';
export { MemoryJournal, IndexedDbJournal, DurableObjectJournal } from './client/journal.js';
