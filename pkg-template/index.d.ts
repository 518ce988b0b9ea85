// Public types of mcp-retry-policy: both faces.
export * from './client.js';
export * from './server.js';
