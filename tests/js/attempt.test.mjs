// How an attempt's failure is observed: which network errors prove "not sent", and the JSON-RPC code in the
// body of a non-2xx answer. Observation only (the engine decides); these are the facts it is given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorOutcome, provablyNotSent, bodyErrorCode, resultOutcome } from '../../pkg/client/attempt.js';
import { RetryEngine } from '../../pkg/node.js';

const sysError = (code, syscall) => {
  const cause = Object.assign(new Error(`${syscall} ${code}`), { code, ...(syscall ? { syscall } : {}) });
  return new TypeError('fetch failed', { cause });
};

test('a socket error proves "not sent" only when the failing step was connect or DNS', () => {
  for (const code of ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']) {
    assert.equal(provablyNotSent(sysError(code, 'connect')), true, `${code} at connect`);
    // On a reused keep-alive socket Linux reports a stored ICMP error on the next read: maybe sent.
    assert.equal(provablyNotSent(sysError(code, 'read')), false, `${code} at read`);
    assert.equal(provablyNotSent(sysError(code, 'write')), false, `${code} at write`);
    assert.equal(provablyNotSent(sysError(code)), false, `${code} without a syscall`);
  }
  assert.equal(provablyNotSent(sysError('ENOTFOUND', 'getaddrinfo')), true);
  assert.equal(provablyNotSent(sysError('ECONNRESET', 'read')), false);
  assert.equal(provablyNotSent(new TypeError('Failed to fetch')), false, "a browser's bare TypeError");
  assert.deepEqual(errorOutcome(sysError('EHOSTUNREACH', 'read'), {}), { kind: 'network', sent: 'maybe' });
  assert.deepEqual(errorOutcome(sysError('EHOSTUNREACH', 'connect'), {}), { kind: 'network', sent: 'no' });
});

test('the JSON-RPC error code in the body of a non-2xx answer is read, and only a well-formed one', () => {
  const msg = (body) => `Streamable HTTP error: Error POSTing to endpoint: ${body}`;
  assert.equal(bodyErrorCode(msg('{"jsonrpc":"2.0","id":3,"error":{"code":-32020,"message":"x"}}')), -32020);
  assert.equal(bodyErrorCode(msg('[{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"x"}}]')), -32022);
  assert.equal(bodyErrorCode(msg('<html>502 Bad Gateway</html>')), undefined);
  assert.equal(bodyErrorCode(msg('{"error":{"code":-32020}}')), undefined, 'not JSON-RPC 2.0');
  assert.equal(bodyErrorCode(msg('{"jsonrpc":"2.0","error":{"code":1.5}}')), undefined, 'not an integer');
  assert.equal(bodyErrorCode(msg('{"jsonrpc":"2.0","error":{"code":-32020')), undefined, 'cut short');
  assert.equal(bodyErrorCode(undefined), undefined);
  const e = Object.assign(new Error(msg('{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no session"}}')), {
    name: 'StreamableHTTPError', code: 400,
  });
  assert.deepEqual(errorOutcome(e, { hadSession: true }), { kind: 'http', status: 400, hadSession: true, jsonrpcCode: -32600 });
});

test("a ledger refusal before any claim ('rejected') is a failure: nothing was done", () => {
  const outcome = resultOutcome({
    isError: true,
    content: [{ type: 'text', text: 'operation_id must be …; nothing was done.' }],
    _meta: { 'dev.mcp-retry-policy/ledger': { status: 'rejected', reason: 'invalid_operation_id' } },
  });
  assert.deepEqual(outcome, { kind: 'ledger', status: 'rejected' });
  const engine = new RetryEngine(undefined, { revision: '2025-11-25' });
  const call = engine.begin(0);
  engine.admit(call, 0);
  const step = engine.record(call, outcome, 'keyed', 0);
  assert.deepEqual(step.decision, { action: 'stop', status: 'failed', reason: 'permanent' });
  assert.equal(step.classification.cause, 'ledger_rejected');
});

test('without a known revision each outcome gets its most conservative reading', () => {
  const engine = new RetryEngine();
  assert.equal(engine.revision, 'unknown');
  // -32020 is implementation-defined before 2026-07-28 (the work may have happened), a pre-dispatch header
  // mismatch from it — once confirmed: unknown until a version is known, even confirmed.
  const confirmed = { kind: 'jsonrpc_error', code: -32020, mismatchConfirmed: true };
  assert.equal(engine.classify(confirmed).delivery, 'unknown');
  engine.setProtocolVersion('2026-07-28');
  assert.equal(engine.classify(confirmed).delivery, 'not_processed');
  assert.equal(engine.classify({ kind: 'jsonrpc_error', code: -32020 }).delivery, 'unknown', 'unconfirmed');
  assert.equal(new RetryEngine(undefined, { revision: 'unknown' }).revision, 'unknown');
  assert.throws(() => new RetryEngine(undefined, { revision: 'latest' }), (e) => e instanceof RangeError && e.field === 'options.revision');
});
