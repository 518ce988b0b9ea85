// Cloudflare Workers entry of the client face: workerd compiles imported .wasm modules ahead of time.
// Initialization draws no randomness, so it is safe at module scope; randomness is drawn inside calls.
import wasm from './mcp_retry_policy_client_bg.wasm';
import { initSync } from './mcp_retry_policy_client.js';

initSync({ module: wasm });

export * from './client.api.js';
// Here every optional part is built in (bytes cost nothing): withRetry takes hedging, tasks, input rounds and
// opentelemetry without a `parts` option.
export { withRetry } from './client/with-retry-all.js';
