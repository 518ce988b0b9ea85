// Cloudflare Workers entry of the server face: workerd compiles imported .wasm modules ahead of time.
// Initialization draws no randomness, so it is safe at module scope; randomness is drawn inside calls.
import wasm from './mcp_retry_policy_server_bg.wasm';
import { initSync } from './mcp_retry_policy_server.js';

initSync({ module: wasm });

export * from './server.api.js';
