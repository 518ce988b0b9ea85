// Issue 20 §1: `mcp-retry-policy check` and `checkServer` against real MCP SDK servers on 127.0.0.1 — servers that
// get every failure window right (the package's own withIdempotency + status tool; one written by hand) and one
// server per wrong behaviour (support/check-servers.mjs). Every wrong one must be caught as `fail` by the check
// that names it; a check that cannot tell is `not_testable`, never `pass`. The CLI runs as a subprocess.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { checkServer, formatTable, STATUSES } from '../../pkg/check/index.js';
import { MemoryLedgerStore, OperationLedger, registerStatusTool, withIdempotency } from '../../pkg/node.js';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startAuthServer } from '../support/ledger-auth-server.mjs';
import { startBookingServer, startTlsFront } from '../support/check-servers.mjs';
import { startFaultProxy } from '../support/fault-proxy.mjs';

const BIN = fileURLToPath(new URL('../../pkg/check/bin.js', import.meta.url));
const KEYS = ['same_id_twice', 'same_id_changed_input', 'concurrent_calls', 'cut_response', 'other_tenant', 'downstream_timeout',
  'id_argument', 'annotations', 'status_tool', 'status_tenant_scoped', 'lost_session', 'retry_after'];
const LETTER = { pass: 'P', fail: 'F', not_testable: 'N', skipped: 'S' };
const ALICE = { authorization: 'Bearer alice' };
const BOB = { authorization: 'Bearer bob' };
const BOOKING = { tool: 'book_room', args: { guest: 'Ada', nights: 2 } };

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));
const keep = (s) => (servers.push(s), s);

/** The report as one letter per check, in table order (P pass · F fail · N not testable · S skipped), six then six. */
const row = (report) => {
  assert.deepEqual(report.checks.map((c) => c.key), KEYS);
  const letters = report.checks.map((c) => LETTER[c.status]).join('');
  return `${letters.slice(0, 6)} ${letters.slice(6)}`;
};

/** Operations that were booked more than once (per tenant): the ground truth of "a second write". */
const doubled = (bookings) => {
  const seen = new Map();
  for (const b of bookings) seen.set(`${b.tenant}/${b.operationId}`, (seen.get(`${b.tenant}/${b.operationId}`) ?? 0) + 1);
  return [...seen.values()].filter((n) => n > 1).length;
};

const run = (url, options = BOOKING) => checkServer(url, { headers: ALICE, otherTenantHeaders: BOB, ...options });

for (const sse of [false, true]) {
  test(`a server that gets every window right — the package's withIdempotency and status tool, answering ${sse ? 'over SSE' : 'JSON'} — passes everything testable; 6 is not_testable`, async () => {
    const s = keep(await startMcpServer({ sse, ledger: new OperationLedger({ store: new MemoryLedgerStore() }) }));
    const report = await run(s.url, { tool: 'open_ticket', args: { title: 'checked' } });
    assert.equal(row(report), 'PPPPPN PPPPPN', formatTable(report));
    assert.equal(report.ok, true);
    assert.match(report.checks[1].reason, /refused \(a ledger conflict\)/);
    assert.match(report.checks[5].reason, /cannot be caused from outside/);
    assert.match(report.checks[11].reason, /no 429 or 503/);
    // What the checker wrote: 8 operations (2 baseline, 1 each for checks 2 and 3, 2 for check 4, one per tenant in 5).
    assert.equal(s.effects.tickets.length, 8);
  });
}

test('a server written by hand that gets every window right passes the same', async () => {
  const s = keep(await startBookingServer());
  const report = await run(s.url);
  assert.equal(row(report), 'PPPPPN PPPPPN', formatTable(report));
  assert.equal(doubled(s.bookings), 0, 'nothing was booked twice');
});

// Server × check: each wrong behaviour is a `F` where the check that names it stands (and nowhere it does not belong).
const WRONG = [
  ['ignores the operation id (books again every time)', { dedupe: false }, 'FFFFNN PPFPPN', ['same_id_twice', 'cut_response', 'concurrent_calls']],
  ['overwrites on a changed input', { onChanged: 'overwrite' }, 'PFPPPN PPPPPN', ['same_id_changed_input']],
  ['leaks across tenants (records keyed by id alone)', { tenantScoped: false }, 'PPPPFN PPPFPN', ['other_tenant', 'status_tenant_scoped']],
  ['has no status tool', { statusTool: false }, 'PPPPPN PPFSPN', ['status_tool']],
  ['lets identical concurrent calls all execute (look up, then record)', { atomic: false }, 'PPFPPN PPPPPN', ['concurrent_calls']],
  ['annotates a write readOnlyHint: true', { readOnlyHint: true }, 'PPPPPN PFPPPN', ['annotations']],
];

for (const [what, flags, expected, caughtBy] of WRONG) {
  test(`a server that ${what}: caught (${caughtBy.join(', ')} fail)`, async () => {
    const s = keep(await startBookingServer(flags));
    const report = await run(s.url);
    assert.equal(row(report), expected, formatTable(report));
    assert.equal(report.ok, false);
    for (const key of caughtBy) assert.equal(report.checks.find((c) => c.key === key).status, 'fail', key);
    if (flags.dedupe === false || flags.atomic === false) assert.ok(doubled(s.bookings) > 0, 'the server really booked an operation twice');
  });
}

test('a server that answers a lost session with 400 -32600 (not 404): caught; 400 -32000 is read as lost and passes, with a note', async () => {
  const wrong = keep(await startBookingServer({ lostSession: [400, -32600, 'Invalid session'] }));
  const report = await run(wrong.url);
  assert.equal(row(report), 'PPPPPN PPPPFN', formatTable(report));
  assert.match(report.checks[10].reason, /HTTP 400 .* the spec says 404/);
  const old = keep(await startBookingServer({ lostSession: [400, -32000, 'Bad Request: No valid session ID provided'] }));
  const note = (await run(old.url)).checks[10];
  assert.equal(note.status, 'pass');
  assert.match(note.reason, /not the spec's 404; withRetry reads it as a lost session too/);
});

test('Retry-After: a throttling answer (429) during the run is checked — with the header pass, a 503 without it fail', async () => {
  // The server's front throttles one of check 3's concurrent calls (the ninth tools/call of a run; the checker's calls
  // before it are sequential): support/fault-proxy.mjs answers it without forwarding.
  for (const [fault, expected] of [[{ status: 429, retryAfter: 1 }, 'PPPPPN PPPPPP'], [{ status: 503 }, 'PPPPPN PPPPPF']]) {
    const s = keep(await startBookingServer());
    const front = keep(await startFaultProxy(s.url));
    front.faults.push(...Array(8).fill('pass'), fault);
    const report = await run(front.url);
    assert.equal(row(report), expected, formatTable(report));
    assert.match(report.checks[2].reason, /; 1 told to come back later \(HTTP (429|503)\)/);
  }
});

test('what each wrong server is told: the reasons name what came back', async () => {
  const s = keep(await startBookingServer({ tenantScoped: false }));
  const report = await run(s.url);
  const leak = report.checks.find((c) => c.key === 'other_tenant');
  assert.match(leak.reason, /tenant B, sending tenant A's operation id, was given tenant A's result/);
  assert.equal(leak.evidence.tenantB, leak.evidence.tenantA);
  const o = keep(await startBookingServer({ onChanged: 'overwrite' }));
  const changed = (await run(o.url)).checks.find((c) => c.key === 'same_id_changed_input');
  assert.match(changed.reason, /second write or an overwrite/);
  assert.match(changed.evidence.changed, /Ada \(changed\)/);
});

test('a stateless server with one tenant given: the cross-tenant checks and the lost session are skipped, never passed', async () => {
  const tokens = { alice: { clientId: 'app', sub: 'user-alice' } };
  const tenant = (extra) => extra.authInfo?.extra?.sub;
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  let n = 0;
  const s = keep(await startAuthServer({
    tokens,
    register: (server) => {
      registerStatusTool(server, ledger, { tenant, z });
      server.registerTool('open_ticket', { inputSchema: { title: z.string(), operation_id: z.string() } },
        withIdempotency(ledger, async ({ title }) => ({ content: [{ type: 'text', text: 'ok' }], structuredContent: { ticket: `T-${++n}`, title } }),
          { action: 'open_ticket', tenant }));
    },
  }));
  const report = await checkServer(s.url, { tool: 'open_ticket', args: { title: 'x' }, headers: ALICE });
  assert.equal(row(report), 'PPPPSN PPPSSN', formatTable(report));
  assert.equal(report.ok, true);
  assert.match(report.checks[4].reason, /--other-tenant-header/);
  assert.match(report.checks[10].reason, /stateless/);
});

test('a tool whose results do not tell operations apart: the replay checks are not_testable, never pass', async () => {
  const s = keep(await startMcpServer({
    extraTools: (server) => server.registerTool('set_flag', { inputSchema: { on: z.boolean(), operation_id: z.string() } },
      async ({ on }) => ({ content: [{ type: 'text', text: 'ok' }], structuredContent: { on } })),
  }));
  const report = await run(s.url, { tool: 'set_flag', args: { on: true } });
  for (const key of ['same_id_twice', 'concurrent_calls', 'cut_response', 'other_tenant']) {
    const c = report.checks.find((x) => x.key === key);
    assert.equal(c.status, 'not_testable', `${key}: ${c.reason}`);
    assert.match(c.reason, /same result for two different operations/);
  }
  assert.ok(report.checks.every((c) => STATUSES.includes(c.status)));
});

test('check 2: a changed input the tool itself refuses is not_testable, never a pass; --changed-args makes it testable', async () => {
  const ledger = new OperationLedger({ store: new MemoryLedgerStore() });
  let n = 0;
  const s = keep(await startMcpServer({
    extraTools: (server) => server.registerTool('ship', { inputSchema: { speed: z.enum(['slow', 'fast']), operation_id: z.string() } },
      withIdempotency(ledger, async ({ speed }) => ({ content: [{ type: 'text', text: 'shipped' }], structuredContent: { parcel: `P-${++n}`, speed } }),
        { action: 'ship', tenant: (extra) => extra.authInfo?.clientId })),
  }));
  const invalid = (await run(s.url, { tool: 'ship', args: { speed: 'slow' } })).checks[1];
  assert.equal(invalid.status, 'not_testable', invalid.reason);
  assert.match(invalid.reason, /refused under a fresh id too/);
  const chosen = (await run(s.url, { tool: 'ship', args: { speed: 'slow' }, changedArgs: { speed: 'fast' } })).checks[1];
  assert.equal(chosen.status, 'pass', chosen.reason);
  assert.match(chosen.reason, /a ledger conflict/);
});

test('checkServer: bad options are typed errors naming the field', async () => {
  await assert.rejects(checkServer('not a url', { tool: 'x' }), { name: 'TypeError', field: 'url' });
  await assert.rejects(checkServer('ftp://127.0.0.1/mcp', { tool: 'x' }), { name: 'TypeError', field: 'url' });
  await assert.rejects(checkServer('http://127.0.0.1:1/mcp', {}), { name: 'TypeError', field: 'tool' });
  await assert.rejects(checkServer('http://127.0.0.1:1/mcp', { tool: 'x', tol: 1 }), { name: 'RangeError', field: 'tol', code: 'unknown_option' });
  await assert.rejects(checkServer('http://127.0.0.1:1/mcp', { tool: 'x', timeoutMs: 0 }), { name: 'RangeError', field: 'timeoutMs' });
  await assert.rejects(checkServer('http://127.0.0.1:1/mcp', { tool: 'x', headers: { a: 1 } }), { name: 'TypeError', field: 'headers' });
  await assert.rejects(checkServer('http://127.0.0.1:1/mcp', { tool: 'x', timeoutMs: 2000 }), { name: 'CheckRunError', code: 'unreachable' });
});

/** Runs the installed command as a subprocess; resolves to { code, stdout, stderr }. */
function cli(args, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const cliArgs = (url) => ['check', url, '--tool', 'book_room', '--args', '{"guest":"Ada","nights":2}',
  '--header', 'Authorization: Bearer alice', '--other-tenant-header', 'Authorization: Bearer bob'];

test('the CLI: a table and exit 0 for a right server; --json and exit 1 for a leaking one', async () => {
  const right = keep(await startBookingServer());
  const ok = await cli(cliArgs(right.url));
  assert.equal(ok.code, 0, ok.stderr + ok.stdout);
  assert.match(ok.stderr, /staging only, never production/);
  assert.match(ok.stdout, /^1 {3}same id, same input, twice → one outcome +pass$/m);
  assert.match(ok.stdout, /^6 {3}downstream timeout inside the server +not testable$/m);
  assert.match(ok.stdout, /10 pass · 0 fail · 2 not testable · 0 skipped/);

  const leaky = keep(await startBookingServer({ tenantScoped: false }));
  const bad = await cli([...cliArgs(leaky.url), '--json']);
  assert.equal(bad.code, 1, bad.stderr);
  const report = JSON.parse(bad.stdout);
  assert.equal(report.ok, false);
  assert.equal(report.checks.find((c) => c.key === 'other_tenant').status, 'fail');
  assert.deepEqual(report.counts, { pass: 8, fail: 2, not_testable: 2, skipped: 0 });
});

test('the CLI: bad input is exit 2 with the flag named; a run that cannot start is exit 3', async () => {
  const s = keep(await startBookingServer());
  const usage = [
    [['check', s.url], /--tool is required/],
    [['check', s.url, '--tool', 'book_room', '--args', '{guest'], /--args must be JSON/],
    [['check', s.url, '--tool', 'book_room', '--args', '[1]'], /--args must be a JSON object/],
    [['check', s.url, '--tool', 'book_room', '--header', 'no colon'], /--header must be 'Name: value'/],
    [['check', s.url, '--tool', 'book_room', '--timeout', '5s'], /--timeout must be milliseconds/],
    [['check', s.url, '--toll', 'book_room'], /--toll/],
    [['chek', s.url], /unknown command "chek"/],
    [['check', 'not-a-url', '--tool', 'book_room'], /<url>: url must be an http\(s\) URL/],
  ];
  for (const [args, message] of usage) {
    const r = await cli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  const missing = await cli(['check', s.url, '--tool', 'no_such_tool']);
  assert.equal(missing.code, 3);
  assert.match(missing.stderr, /lists no tool no_such_tool \(it lists: .*book_room/);
  await s.close();
  const gone = await cli(['check', s.url, '--tool', 'book_room', '--timeout', '2000']);
  assert.equal(gone.code, 3);
  assert.match(gone.stderr, /could not initialize an MCP session/);
  const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /never\s+at production/);
});

test('the CLI against an https server whose CA the user trusts through NODE_EXTRA_CA_CERTS (staging with its own CA)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'check-tls-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  const s = keep(await startBookingServer());
  const tls = keep(await startTlsFront(s.url, { key: readFileSync(key), cert: readFileSync(cert) }));
  const untrusted = await cli(cliArgs(tls.url));
  assert.equal(untrusted.code, 3, 'without the CA: the session cannot start');
  const ok = await cli(cliArgs(tls.url), { ...process.env, NODE_EXTRA_CA_CERTS: cert });
  assert.equal(ok.code, 0, ok.stderr + ok.stdout);
  assert.match(ok.stdout, /^mcp-retry-policy check {2}https:\/\/127\.0\.0\.1:\d+\/mcp {2}tool book_room$/m);
  assert.match(ok.stdout, /10 pass · 0 fail · 2 not testable · 0 skipped/);
});
