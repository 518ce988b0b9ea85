// Browser (and bundler) entry of the client face: fetch and instantiate its wasm. Bundlers such as Vite
// resolve `new URL(..., import.meta.url)` and emit the .wasm as an asset.
import init from './mcp_retry_policy_client.js';

await init({ module_or_path: new URL('./mcp_retry_policy_client_bg.wasm', import.meta.url) });

export * from './client.api.js';
