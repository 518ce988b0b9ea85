// Node entry: compile the wasm synchronously from the file beside this one.
import { readFileSync } from 'node:fs';
import { initSync } from './mcp_retry_policy.js';

initSync({ module: readFileSync(new URL('./mcp_retry_policy_bg.wasm', import.meta.url)) });

export * from './api.js';
