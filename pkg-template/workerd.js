// Cloudflare Workers entry: the runtime compiles imported .wasm modules ahead of time (CompiledWasm).
// Initialization draws no randomness, so it is safe at module scope; randomness is drawn inside calls.
import wasm from './mcp_retry_policy_bg.wasm';
import { initSync } from './mcp_retry_policy.js';

initSync({ module: wasm });

export * from './api.js';
