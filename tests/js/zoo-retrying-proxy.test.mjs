// The fault zoo's retrying-proxy case: nginx with `proxy_next_upstream error timeout non_idempotent` over two
// real MCP servers (the zoo's TS SDK 1.32 server, each its own process with its own sessions). A tools/call that
// ran on replica A and lost its connection before the answer is re-sent by nginx to replica B, which does not know
// A's session and answers 404 — a lost session, "not processed" as far as the last hop can tell. Without
// `behindRetryingProxy` withRetry re-initializes and sends the unsafe write again: it runs twice. With it, the
// same 404 proves nothing: the write ends `unknown`, run once; a read still recovers and succeeds.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch } from '../../pkg/node.js';
import { freePorts, killTree, start, until } from '../zoo/lib/procs.mjs';
import { Effects } from '../zoo/lib/effects.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const zoo = path.resolve(here, '../zoo');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zoo-retrying-proxy-'));
const procs = [];
let effects;
let url;

const listening = async (port) => {
  try {
    await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
};

before(async () => {
  effects = new Effects(path.join(dir, 'effects.jsonl'));
  const [a, b, front] = await freePorts(3);
  for (const [name, port] of [['replica-a', a], ['replica-b', b]]) {
    procs.push(start(process.execPath, [
      path.join(zoo, 'servers/ts-server.mjs'), '--sdk', 'new', '--name', name, '--port', port, '--effects', effects.file,
      '--ledger', path.join(dir, `${name}.db`), '--wire', 'json', '--slow', 100,
    ].map(String), { log: path.join(dir, `${name}.log`) }));
    await until(() => listening(port), 20_000, `${name} to start (see ${dir})`);
  }
  // A first, B only when a request to A fails (`backup`); `max_fails=0`: A is never taken out of the rotation, so
  // every new session starts on A. `non_idempotent`: nginx re-sends a POST that failed on A to B (off by default).
  const conf = `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream replicas { server 127.0.0.1:${a} max_fails=0; server 127.0.0.1:${b} backup; }
  server {
    listen 127.0.0.1:${front};
    location / {
      proxy_pass http://replicas;
      proxy_next_upstream error timeout non_idempotent;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_connect_timeout 1s;
    }
  }
}
`;
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  procs.push(start('nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir, '-g', 'daemon off;'], { log: path.join(dir, 'nginx.log') }));
  await until(() => listening(front), 10_000, `nginx (see ${dir}/nginx-error.log)`);
  url = new URL(`http://127.0.0.1:${front}/mcp`);
});

after(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) killTree(p.pid);
});

/**
 * A fetch that asks replica A, on the next tools/call only, to commit and then drop the connection before
 * answering (the zoo server's `cut_after_commit`, through the header every proxy passes on).
 */
function faulty() {
  let next;
  const inner = async (input, init) => {
    if (next && init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"tools/call"')) {
      const headers = new Headers(init.headers);
      headers.set('x-zoo-fault', next);
      next = undefined;
      return fetch(input, { ...init, headers });
    }
    return fetch(input, init);
  };
  return { fetch: observeFetch(inner), arm: (fault) => (next = fault) };
}

async function wrapped(options) {
  const f = faulty();
  const transport = () => new StreamableHTTPClientTransport(url, { fetch: f.fetch });
  const client = new Client({ name: 'zoo-retrying-proxy', version: '1.0.0' });
  await client.connect(transport());
  return { mcp: withRetry(client, { trusted: true, transport, policy: { baseDelayMs: 10, maxDelayMs: 50 }, ...options }), arm: f.arm, client };
}

/** The writes `intent` made, on which replica. */
const effectsOf = (intent) => effects.of(intent).filter((e) => e.ev === 'effect').map((e) => e.srv);

let seq = 0;
for (const behindRetryingProxy of [false, true]) {
  test(`an unsafe write whose answer replica B refuses as an unknown session (${behindRetryingProxy ? 'behindRetryingProxy' : 'no setting'})`, async () => {
    const { mcp, arm, client } = await wrapped(behindRetryingProxy ? { behindRetryingProxy } : {});
    try {
      const intent = `proxy-${process.pid}-${++seq}`;
      arm('cut_after_commit');
      const out = await mcp.call({ name: 'create_ticket', arguments: { intent, title: 'printer on fire' } });
      const first = out.attempts[0];
      // What the client saw: replica B's 404 for A's session (nginx passed the request on after A dropped it).
      assert.equal(first.outcome.kind, 'http', JSON.stringify(first.outcome));
      assert.equal(first.outcome.status, 404);
      assert.equal(first.outcome.hadSession, true);
      if (behindRetryingProxy) {
        assert.equal(first.classification.delivery, 'unknown');
        assert.equal(out.status, 'unknown');
        assert.equal(out.reason, 'unsafe_after_unknown');
        assert.match(out.message, /retrying proxy/);
        assert.deepEqual(effectsOf(intent), ['replica-a'], 'run once, on A');
      } else {
        // The 404 reads "not processed": re-initialized (on A) and sent again — the write ran twice. This is the
        // deployment the setting is for.
        assert.equal(first.classification.delivery, 'not_processed');
        assert.equal(out.status, 'succeeded');
        assert.deepEqual(effectsOf(intent), ['replica-a', 'replica-a'], 'run twice: the proxy made the 404 a lie');
      }
    } finally {
      await client.close().catch(() => {});
    }
  });
}

test('behind the retrying proxy a read still recovers: a new session, the read sent again, succeeded', async () => {
  const { mcp, arm, client } = await wrapped({ behindRetryingProxy: true });
  try {
    const intent = `proxy-${process.pid}-${++seq}`;
    arm('cut_after_commit');
    const out = await mcp.call({ name: 'lookup', arguments: { intent } });
    assert.equal(out.status, 'succeeded');
    assert.equal(out.attempts[0].outcome.status, 404);
    assert.equal(out.attempts[0].decision.recover, 'reinitialize');
    assert.equal(effectsOf(intent).length, 2);
  } finally {
    await client.close().catch(() => {});
  }
});
