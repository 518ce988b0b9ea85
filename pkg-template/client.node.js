// Node entry of the client face: compile its wasm synchronously from the file beside this one.
import { readFileSync } from 'node:fs';
import { initSync } from './mcp_retry_policy_client.js';

initSync({ module: readFileSync(new URL('./mcp_retry_policy_client_bg.wasm', import.meta.url)) });

export * from './client.api.js';
