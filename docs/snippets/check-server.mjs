// run: client
// check.md: the checker from code, against the quick-start server (MCP_URL from the environment) in place of a
// staging server; the quick start's stand-in tokens are the tenants' names.
import assert from 'node:assert/strict';

// ANCHOR: code
import { checkServer, formatTable } from 'mcp-retry-policy/check';

const report = await checkServer(process.env.MCP_URL ?? 'https://staging.example/mcp', {
  tool: 'create_ticket', args: { title: 'Printer on fire' },
  headers: { authorization: 'Bearer alice' },               // your staging tokens: tenant A …
  otherTenantHeaders: { authorization: 'Bearer bob' },      // … and tenant B
});
if (!report.ok) throw new Error(formatTable(report));
// ANCHOR_END: code

assert.equal(report.ok, true);
assert.equal(report.tested, true);
assert.ok(report.counts.pass >= 8, JSON.stringify(report.counts));
assert.equal(report.counts.fail, 0);
assert.deepEqual(report.checks.map((c) => c.n), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
assert.match(formatTable(report), new RegExp(`${report.counts.pass} pass · 0 fail`));
