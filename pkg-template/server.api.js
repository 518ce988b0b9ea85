// The server face's public API, shared by its runtime entries (server.node.js, server.browser.js,
// server.workerd.js), each of which initializes the server wasm its own way first.
export { LedgerRules, isValidOperationId } from './server/rules.js';
export { OperationLedger, OutcomeUnknown, LedgerStoreError, LEDGER_META_KEY } from './server/ledger.js';
export { withIdempotency, claimOf } from './server/with-idempotency.js';
export { LeaseLost } from './server/lease.js';
export { fingerprint, MAX_FINGERPRINT_BYTES } from './server/fingerprint.js';
export { MemoryLedgerStore, SqliteLedgerStore, D1LedgerStore, DurableObjectLedgerStore } from './server/stores.js';
export { registerStatusTool, statusTool, STATUS_TOOL_NAME } from './server/status.js';
