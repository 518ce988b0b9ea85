// The public API, shared by every runtime entry (node.js, browser.js, workerd.js). Each entry initializes
// the wasm module its own way, then re-exports this file.
export { RetryEngine, RetryCall, LedgerRules, newOperationId, revisionFor, isValidOperationId } from './mcp_retry_policy.js';
export { withRetry, OUTCOME_META_KEY } from './client/with-retry.js';
export { observeFetch, parseRetryAfter, ATTEMPT_META_KEY } from './client/attempt.js';
export { MemoryJournal, IndexedDbJournal, DurableObjectJournal } from './client/journal.js';
export { OperationLedger, withIdempotency, OutcomeUnknown, LEDGER_META_KEY } from './server/ledger.js';
export { fingerprint } from './server/fingerprint.js';
export { MemoryLedgerStore, SqliteLedgerStore, D1LedgerStore, DurableObjectLedgerStore } from './server/stores.js';
