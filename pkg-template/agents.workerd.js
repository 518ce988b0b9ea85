// Cloudflare Workers entry of the Agents adapter: the client wasm initialized the workerd way first.
import './client.workerd.js';

export * from './agents.api.js';
