// The whole package for browser: the client face (withRetry, the engine, journals) and the server face (the
// operation ledger). A browser front end that needs only the client imports 'mcp-retry-policy/client'.
export * from './client.browser.js';
export * from './server.browser.js';
