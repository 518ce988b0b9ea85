// `mcp-retry-policy check` against a hostile party: the URL and headers it is given hold secrets, and the server it
// checks misbehaves on purpose (support/hostile-front.mjs: a raw node:http front for the real SDK booking server,
// or a real SDK server whose tool answers with terminal escapes). The checker never prints a credential, never
// carries the user's headers to another origin, never crashes (exit 1 means a check found a violation, nothing
// else), bounds what it reads of one answer, and says "nothing could be tested" with an exit code of its own.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { checkServer } from '../../pkg/check/index.js';
import { main } from '../../pkg/check/cli.js';
import { startBookingServer } from '../support/check-servers.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';
import { endlessStream, rawAnswer, startHostileFront, startSink } from '../support/hostile-front.mjs';

const BIN = fileURLToPath(new URL('../../pkg/check/bin.js', import.meta.url));
const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));
const keep = (s) => (servers.push(s), s);

function cli(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const booking = (url, ...more) => ['check', url, '--tool', 'book_room', '--args', '{"guest":"Ada","nights":2}',
  '--header', 'Authorization: Bearer alice', ...more];
const hostile = async (target, misbehave) => keep(await startHostileFront(target, misbehave));

test('secrets in the URL (userinfo, query values) and in --header values are printed nowhere: table, JSON, errors', async () => {
  const s = keep(await startBookingServer());
  const u = new URL(s.url);
  u.username = 'ops';
  u.password = 'PASSWORD-SECRET';
  u.search = '?api_key=QUERY-SECRET&region=eu-west';
  const args = [...booking(u.href), '--header', 'x-api-key: HEADER-SECRET'];
  for (const json of [false, true]) {
    const r = await cli(json ? [...args, '--json'] : args);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.doesNotMatch(r.stdout + r.stderr, /SECRET|eu-west/, json ? 'json' : 'table');
    const target = `http://***:***@127.0.0.1:${u.port}/mcp?api_key=***&region=***`;
    if (json) assert.equal(JSON.parse(r.stdout).target, target);
    else assert.ok(r.stdout.includes(`mcp-retry-policy check  ${target}  tool book_room`), r.stdout);
  }
  // The API's report too, and the run's error when the server is gone.
  const report = await checkServer(u.href, { tool: 'book_room', args: { guest: 'Ada', nights: 2 }, headers: { 'x-api-key': 'HEADER-SECRET' } });
  assert.doesNotMatch(JSON.stringify(report), /SECRET/);
  await s.close();
  const gone = await cli([...args, '--timeout', '2000']);
  assert.equal(gone.code, 3, gone.stderr);
  assert.doesNotMatch(gone.stdout + gone.stderr, /SECRET|eu-west/);
  const usage = await cli(['check', u.href, '--tool', 'book_room', '--header', 'Bearer HEADER-SECRET']);
  assert.equal(usage.code, 2);
  assert.doesNotMatch(usage.stderr, /SECRET/, 'a malformed --header is not echoed');
});

test('a redirect to another origin is never followed with the user\'s headers: the lost-session 307 is the answer (fail), and a redirected initialize is exit 3', async () => {
  const s = keep(await startBookingServer());
  const sink = keep(await startSink());
  const redirect = (res) => (res.writeHead(307, { location: `${sink.url}/steal` }).end(), true);
  const f = await hostile(s.url, (r, req, res) => r.lostSession && redirect(res));
  const r = await cli([...booking(f.url, '--header', 'x-api-key: HEADER-SECRET'), '--json']);
  assert.deepEqual(sink.seen, [], 'nothing reached the other origin');
  const lost = JSON.parse(r.stdout).checks.find((c) => c.key === 'lost_session');
  assert.equal(lost.status, 'fail', lost.reason);
  assert.match(lost.reason, /HTTP 307, a redirect to another origin \(not followed: the checker follows no redirect\)/);
  assert.equal(r.code, 1, r.stderr);
  // Every request redirected, initialize included: the SDK sessions follow none to another origin either.
  const all = await hostile(s.url, (q, req, res) => redirect(res));
  const init = await cli(booking(all.url, '--header', 'x-api-key: HEADER-SECRET'));
  assert.equal(init.code, 3, init.stderr);
  assert.deepEqual(sink.seen, []);
});

test('an answer with HTTP status 099 is no crash: the lost-session check fails naming it (exit 1 for that finding); on initialize it is exit 3', async () => {
  const s = keep(await startBookingServer());
  const odd = (res) => (rawAnswer(res, '099 Odd', '{}'), true);
  const f = await hostile(s.url, (r, req, res) => r.lostSession && odd(res));
  const r = await cli([...booking(f.url), '--json']);
  assert.doesNotMatch(r.stderr, /internal error|at .*\.js:\d+/, r.stderr);
  const report = JSON.parse(r.stdout);
  const lost = report.checks.find((c) => c.key === 'lost_session');
  assert.deepEqual([lost.status, lost.reason.startsWith('HTTP 099, not a valid status')], ['fail', true], lost.reason);
  assert.deepEqual(report.counts, { pass: 7, fail: 1, not_testable: 2, skipped: 2 });
  assert.equal(r.code, 1);
  const all = await hostile(s.url, (q, req, res) => odd(res));
  const init = await cli(booking(all.url));
  assert.equal(init.code, 3, init.stderr);
  assert.match(init.stderr, /could not initialize an MCP session .*invalid HTTP status 099/);
  // Every tools/call answered 099 (before: the proxy threw, exit 1 with a stack): nothing could be tested.
  const calls = await hostile(s.url, (q, req, res) => q.method === 'tools/call' && odd(res));
  const none = await cli(booking(calls.url));
  assert.equal(none.code, 3, none.stderr);
  assert.match(none.stderr, /nothing could be tested/);
  assert.doesNotMatch(none.stderr, /ERR_HTTP_INVALID_STATUS_CODE|internal error/);
});

test('a tool error with terminal escapes is printed escaped; a run where no failure window could be tested is exit 3, not 0', async () => {
  const evil = '\u001b]0;pwned\u0007\u001b[2J\u001b[31mdenied\u009b0m \u202eevil';
  const s = keep(await startMcpServer({
    extraTools: (server) => server.registerTool('book_room', { inputSchema: { guest: z.string(), nights: z.number(), operation_id: z.string() } },
      async () => ({ content: [{ type: 'text', text: evil }], isError: true })),
  }));
  for (const json of [false, true]) {
    const r = await cli(json ? [...booking(s.url), '--json'] : booking(s.url));
    assert.doesNotMatch(r.stdout + r.stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/, `no raw control character (${json ? 'json' : 'table'})`);
    assert.ok(r.stdout.includes('\\u001b[31mdenied'), r.stdout);
    assert.equal(r.code, 3, `nothing tested: ${r.stderr}`);
    assert.match(r.stderr, /nothing could be tested/);
    if (json) assert.deepEqual([JSON.parse(r.stdout).ok, JSON.parse(r.stdout).tested], [true, false]);
  }
});

test('an endless SSE answer is cut at 1 MiB and the cut reported; the run goes on', async () => {
  const s = keep(await startBookingServer());
  const stats = { written: 0 };
  // Check 2's changed input (the guest altered) is answered with one SSE event that never ends.
  const changed = (r) => r.method === 'tools/call' && r.message.params?.arguments?.guest === 'Ada (changed)';
  const f = await hostile(s.url, (r, req, res) => changed(r) && (endlessStream(req, res, stats), true));
  const r = await cli([...booking(f.url, '--timeout', '2000'), '--json']);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.cuts, [{ method: 'tools/call', status: 200, bytes: 1_048_576 }], r.stderr);
  // What the server got out before the checker closed: the 1 MiB read, and what the sockets' buffers held.
  assert.ok(stats.written < 8 * 1_048_576, `${stats.written} bytes written`);
  const two = report.checks[1];
  assert.deepEqual([two.key, two.status], ['same_id_changed_input', 'not_testable'], two.reason);
  assert.deepEqual(report.counts, { pass: 7, fail: 0, not_testable: 3, skipped: 2 }, JSON.stringify(report.checks.map((c) => c.reason)));
  assert.equal(r.code, 0, r.stderr);
  const table = await cli(booking(f.url, '--timeout', '2000'));
  assert.match(table.stdout, /^1 answer over 1 MiB cut there \(tools\/call\): the checker reads no more of one answer$/m, table.stdout);
});

test('the checker\'s own error is exit 4, said without a secret — never exit 1 (a violation) nor a rejection', async () => {
  const s = keep(await startBookingServer());
  const u = new URL(s.url);
  u.password = 'PASSWORD-SECRET';
  let said = '';
  // Its output breaks (a closed pipe, a bug of its own): thrown where the report is printed.
  const out = () => {
    throw new Error(`the output broke at ${u.href}`);
  };
  const code = await main([...booking(u.href), '--json'], { out, err: (t) => (said += t) });
  assert.equal(code, 4, said);
  assert.match(said, /internal error \(a bug of the checker, not a finding about the server\): the output broke at http:\/\/:\*\*\*@127\.0\.0\.1/);
  assert.doesNotMatch(said, /SECRET/);
});
