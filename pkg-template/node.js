// The whole package for node: the client face (withRetry, the engine, journals) and the server face (the
// operation ledger). A browser front end that needs only the client imports 'mcp-retry-policy/client'.
export * from './client.node.js';
export * from './server.node.js';
