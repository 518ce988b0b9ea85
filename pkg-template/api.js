// The public API, shared by every runtime entry (node.js, browser.js, workerd.js). Each entry initializes
// the wasm module its own way, then re-exports this file.
export { RetryEngine, RetryCall, newOperationId, revisionFor } from './mcp_retry_policy.js';
