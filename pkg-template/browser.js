// Browser (and bundler) entry: fetch and instantiate the wasm beside this file. Bundlers such as Vite
// resolve `new URL(..., import.meta.url)` and emit the .wasm as an asset.
import init from './mcp_retry_policy.js';

await init({ module_or_path: new URL('./mcp_retry_policy_bg.wasm', import.meta.url) });

export * from './api.js';
