#!/usr/bin/env node
// The `mcp-retry-policy` executable (package.json `bin`): the command line is check/cli.js's. The checker
// speaks MCP through @modelcontextprotocol/sdk, an optional peer: without it, say so (exit 3) instead of a stack.
let cli;
try {
  cli = await import('./cli.js');
} catch (e) {
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !String(e.message).includes('@modelcontextprotocol/sdk')) throw e;
  process.stderr.write('mcp-retry-policy: the checker needs @modelcontextprotocol/sdk (an optional peer): install it next to this package, ' +
    'or run `npx -p mcp-retry-policy -p @modelcontextprotocol/sdk mcp-retry-policy check …`\n');
  process.exit(3);
}
// Whatever escapes the command (an error thrown in a callback, a rejection nobody awaited) is the checker's own
// error: exit 4, said without a stack or a secret — never exit 1, which means a check found a violation.
const crash = (e) => {
  process.exitCode = cli.internalError(e);
  process.exit();
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);
process.exitCode = await cli.main(process.argv.slice(2));
