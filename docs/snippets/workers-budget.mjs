// run: standalone
// workers.md, "A Worker's subrequests": runs docs/snippets/workers-budget.worker.js in real workerd (miniflare),
// bundled as wrangler bundles it (esbuild, the `workerd` condition; the package's .wasm files as CompiledWasm
// modules). Against a real MCP server on 127.0.0.1 (the SDK's McpServer) whose front refuses every tools/call with
// a 503 (Retry-After: 0, nothing processed) and an audit endpoint beside it. With 9 subrequests, withRetry retries
// once, then stops `subrequest_budget` before the reserve; every attempt it started reached the server, and the
// Worker's own audit POST goes out. With the server answering, the same Worker's call succeeds within its 50.
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

// The MCP server, and its front: `refusing` → every tools/call answered 503 before it reaches the server.
let refusing = false;
const calls = [];
const audits = [];
const web = http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  if (req.url === '/audit') {
    audits.push(JSON.parse(body));
    return res.writeHead(204).end();
  }
  const message = body ? JSON.parse(body) : undefined;
  if (message?.method === 'tools/call') {
    calls.push(message.params.name);
    if (refusing) return res.writeHead(503, { 'retry-after': '0' }).end('overloaded');
  }
  const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
  server.registerTool('search_tickets', { inputSchema: { query: z.string() }, annotations: { readOnlyHint: true } },
    async ({ query }) => ({ content: [{ type: 'text', text: `0 tickets match ${query}` }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => transport.close());
  await server.connect(transport);
  await transport.handleRequest(req, res, message);
});
await new Promise((r) => web.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${web.address().port}`;

// Bundle the Worker as wrangler would; its .wasm imports stay imports of the package's files.
const here = fileURLToPath(new URL('.', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'workers-budget-'));
const outfile = join(dir, 'worker.js');
await build({
  entryPoints: [join(here, 'workers-budget.worker.js')], outfile, bundle: true, format: 'esm', platform: 'browser',
  conditions: ['workerd', 'worker', 'browser'], logLevel: 'error',
  plugins: [{
    name: 'wasm-modules',
    setup(b) {
      b.onResolve({ filter: /\.wasm$/ }, (args) => ({ path: relative(dir, resolve(args.resolveDir, args.path)), external: true }));
    },
  }],
});

async function invoke(limit) {
  const mf = new Miniflare({
    modules: true, scriptPath: outfile, modulesRoot: '/',
    modulesRules: [{ type: 'ESModule', include: ['**/*.js', '**/*.mjs'] }, { type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2026-04-01',
    bindings: { MCP_URL: `${base}/mcp`, AUDIT_URL: `${base}/audit`, SUBREQUEST_LIMIT: String(limit) },
  });
  try {
    const res = await mf.dispatchFetch('http://worker/');
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return JSON.parse(text);
  } finally {
    await mf.dispose();
  }
}

try {
  // Every tools/call refused, 9 subrequests: the engine stops before the reserve, the audit still goes out.
  refusing = true;
  const out = await invoke(9);
  assert.equal(out.status, 'failed', JSON.stringify(out));
  assert.equal(out.reason, 'subrequest_budget');
  assert.ok(out.attempts.length >= 2, "it retried, then stopped");
  assert.equal(calls.length, out.attempts.length, 'every attempt the engine started reached the server, and no more');
  assert.equal(audits.length, 1, 'the reserve paid for the audit');
  assert.equal(audits[0].reason, 'subrequest_budget');

  // The server answering: the same Worker, 50 subrequests, one attempt.
  refusing = false;
  calls.length = 0;
  const ok = await invoke(50);
  assert.equal(ok.status, 'succeeded', JSON.stringify(ok));
  assert.equal(ok.result.content[0].text, '0 tickets match printer');
  assert.equal(calls.length, 1);
  assert.equal(audits.length, 2);
  console.log(`workerd: refused → ${out.status} (${out.reason}) after ${out.attempts.length} attempt(s), audit sent; answering → ${ok.status}`);
} finally {
  web.close();
  rmSync(dir, { recursive: true, force: true });
}
