// Edge entry of the client face (the `edge-light` condition: Next.js's edge runtime, Vercel Edge Functions): the
// bundler hands the .wasm over as a compiled module (`?module`, the edge runtime's way; it forbids compiling
// wasm from bytes). That module may come from another realm (Next.js's edge sandbox), where the glue's
// `instanceof WebAssembly.Module` check fails although the engine accepts it (it checks the module's internal
// slot): it is given this realm's prototype first.
import wasm from './mcp_retry_policy_client_bg.wasm?module';
import { initSync } from './mcp_retry_policy_client.js';

initSync({ module: wasm instanceof WebAssembly.Module ? wasm : Object.setPrototypeOf(wasm, WebAssembly.Module.prototype) });

export * from './client.api.js';
// Here every optional part is built in (bytes cost nothing): withRetry takes hedging, tasks, input rounds and
// opentelemetry without a `parts` option.
export { withRetry } from './client/with-retry-all.js';
