// Browser (and bundler) entry of the server face: fetch and instantiate its wasm. Bundlers such as Vite
// resolve `new URL(..., import.meta.url)` and emit the .wasm as an asset.
import init from './mcp_retry_policy_server.js';

await init({ module_or_path: new URL('./mcp_retry_policy_server_bg.wasm', import.meta.url) });

export * from './server.api.js';
