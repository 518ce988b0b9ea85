// The MCP SDK client, bundled by esbuild for workerd (the test builds it; it is not committed).
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
