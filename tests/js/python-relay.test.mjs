// A code a handler relays, from the real software that relays it: a Python SDK 2.x `MCPServer` whose tool charges,
// then raises the -32020 (or -32022) its downstream MCP server answered. At 2026-07-28 the SDK answers it as HTTP
// 400 with that code — the same answer its transport gives a real header or version mismatch before dispatch.
// Before: withRetry read "not processed", refreshed the tool list (renegotiated) and charged again — two charges,
// reported succeeded. Now nothing confirms the mismatch (the tool's header declarations did not change; the
// -32022 lists the version the request carried), so the unsafe charge ends `unknown`, charged once.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { withRetry } from '../../pkg/node.js';
import { freePort, killTree, start, until } from '../zoo/lib/procs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'python-relay-'));
const effects = path.join(dir, 'effects.jsonl');
let child;
let url;

before(async () => {
  const port = await freePort();
  child = start(path.resolve(here, '../zoo/.venv/bin/python'), [path.resolve(here, '../support/py_relay.py'), '--port', String(port), '--effects', effects], { log: path.join(dir, 'server.log') });
  await until(async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) })).ok;
    } catch {
      return false;
    }
  }, 30_000, `the Python relay server (see ${dir}/server.log)`);
  url = new URL(`http://127.0.0.1:${port}/mcp`);
});
after(() => {
  if (child && child.exitCode === null) killTree(child.pid);
});

const chargesOf = (intent) => (fs.existsSync(effects) ? fs.readFileSync(effects, 'utf8') : '').split('\n').filter((l) => l && JSON.parse(l).intent === intent).length;

for (const code of [-32020, -32022]) {
  test(`a relayed ${code} after the charge ran (Python SDK 2.x, 2026-07-28): unknown, charged once`, async () => {
    const client = new Client({ name: 'relay-agent', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      assert.equal(client.transport.protocolVersion, '2026-07-28');
      const mcp = withRetry(client, { tools: { charge: 'unsafe' }, policy: { baseDelayMs: 10, maxDelayMs: 50 }, seed: 9 });
      const intent = `relay-${code}-${process.pid}`;
      const out = await mcp.call({ name: 'charge', arguments: { amount: 42, intent, relay: code } });
      const first = out.attempts[0];
      assert.equal(first.outcome.code ?? first.outcome.jsonrpcCode, code, JSON.stringify(first.outcome));
      assert.equal(chargesOf(intent), 1, `charged ${chargesOf(intent)} times: ${JSON.stringify(out.attempts.map((a) => a.outcome))}`);
      assert.equal(first.classification.delivery, 'unknown');
      assert.equal(out.status, 'unknown');
      assert.equal(out.reason, 'unsafe_after_unknown');
      // The same relay for an idempotent tool: the recovery step, then the re-send — which succeeds.
      const again = `relay-${code}-idem-${process.pid}`;
      const idem = await withRetry(client, { tools: { charge: 'idempotent' }, policy: { baseDelayMs: 10, maxDelayMs: 50 }, seed: 9 })
        .call({ name: 'charge', arguments: { amount: 1, intent: again, relay: code } });
      assert.equal(idem.status, 'succeeded');
      assert.equal(chargesOf(again), 2);
    } finally {
      await client.close().catch(() => {});
    }
  });
}
