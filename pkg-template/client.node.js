// Node entry of the client face: compile its wasm synchronously from the file beside this one.
import { readFileSync } from 'node:fs';
import { initSync } from './mcp_retry_policy_client.js';

initSync({ module: readFileSync(new URL('./mcp_retry_policy_client_bg.wasm', import.meta.url)) });

export * from './client.api.js';
// Here every optional part is built in (bytes cost nothing): withRetry takes hedging, tasks, input rounds and
// opentelemetry without a `parts` option.
export { withRetry } from './client/with-retry-all.js';
