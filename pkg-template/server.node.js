// Node entry of the server face: compile its wasm synchronously from the file beside this one.
import { readFileSync } from 'node:fs';
import { initSync } from './mcp_retry_policy_server.js';

initSync({ module: readFileSync(new URL('./mcp_retry_policy_server_bg.wasm', import.meta.url)) });

export * from './server.api.js';
