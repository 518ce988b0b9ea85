// Demo (engine only, for now): scripted failure sequences through the built package, each decision printed.
// Issue #3 replaces this with a real MCP client and server over a flaky network.
import { RetryEngine, newOperationId } from '../pkg/node.js';

const bold = (s) => `\x1b[1m${s}\x1b[0m`;
const colour = { succeeded: 32, tool_error: 33, failed: 31, unknown: 35, pending: 36 };
const paint = (status) => `\x1b[${colour[status] ?? 0}m${status}\x1b[0m`;

function run(title, { tool, safety, outcomes, policy, revision }) {
  console.log(`\n${bold(title)}`);
  const engine = new RetryEngine(policy, { seed: 2026, revision });
  const operationId = safety === 'keyed' ? newOperationId() : undefined;
  if (operationId) console.log(`  operation_id ${operationId} created once, persisted before the first send`);
  const call = engine.begin(0);
  let now = 0;
  for (const outcome of outcomes) {
    const adm = engine.admit(call, now);
    if (!adm.admitted) {
      console.log(`  t=${now}ms refused before sending: ${paint(adm.decision.status)} (${adm.decision.reason})`);
      return;
    }
    const step = engine.record(call, outcome, safety, now + 40);
    const c = step.classification;
    const what = `${tool}${operationId ? `(operation_id=${operationId.slice(0, 8)}…)` : ''}`;
    console.log(`  t=${now}ms attempt ${adm.attempt} ${what} → ${JSON.stringify(outcome)}`);
    console.log(`      classified ${c.verdict}, delivery ${c.delivery} (${c.cause})`);
    const d = step.decision;
    if (d.action === 'stop') {
      console.log(`      stop: ${paint(d.status)} (${d.reason})`);
      return;
    }
    console.log(`      retry in ${d.delayMs} ms${d.recover ? ` after ${d.recover}` : ''} (${d.reason})`);
    now += 40 + d.delayMs;
  }
}

const lost = { kind: 'network', sent: 'maybe' };
const ok = { kind: 'result', isError: false };
run('1. create_ticket is unsafe, the response is lost: no blind retry, the outcome is unknown', {
  tool: 'create_ticket', safety: 'unsafe', outcomes: [lost, ok],
});
run('2. the same write with an operation id the server dedupes: retried with the same id', {
  tool: 'create_ticket', safety: 'keyed', outcomes: [lost, ok],
});
run('3. a read-only search times out twice, then answers', {
  tool: 'search_tickets', safety: 'read_only', outcomes: [{ kind: 'timeout' }, { kind: 'timeout' }, ok],
});
run('4. 503 with Retry-After: provably not processed, so even an unsafe tool is retried, after the server\'s wait', {
  tool: 'create_ticket', safety: 'unsafe', outcomes: [{ kind: 'http', status: 503, retryAfterMs: 1500 }, ok],
});
run('5. the tool ran and said no (isError): returned to the model, never retried', {
  tool: 'create_ticket', safety: 'keyed', outcomes: [{ kind: 'result', isError: true }],
});
run('6. the session expired (HTTP 404 with a session id, 2025-11-25): not processed, so re-initialize once and re-send', {
  tool: 'create_ticket', safety: 'unsafe', revision: '2025-11-25',
  outcomes: [{ kind: 'http', status: 404, hadSession: true }, ok],
});
run('7. -32603 (mcp-remote turns every forwarding failure into it): the server may have acted — unknown', {
  tool: 'create_ticket', safety: 'unsafe', outcomes: [{ kind: 'jsonrpc_error', code: -32603 }],
});

console.log(`\n${bold('8. a server that is down: the breaker opens after 5 transport failures and fails fast')}`);
const engine = new RetryEngine({ maxAttempts: 1 }, { seed: 1 });
for (let i = 0; i < 7; i++) {
  const now = i * 100;
  const call = engine.begin(now);
  const adm = engine.admit(call, now);
  if (!adm.admitted) {
    console.log(`  call ${i + 1}: not sent — ${paint(adm.decision.status)} (${adm.decision.reason}); breaker ${engine.breakerState}`);
    continue;
  }
  const step = engine.record(call, { kind: 'network', sent: 'no' }, 'read_only', now + 5);
  const change = step.breaker ? `, breaker ${step.breaker.from} → ${step.breaker.to}` : '';
  console.log(`  call ${i + 1}: connection refused → ${paint(step.decision.status)} (${step.decision.reason})${change}`);
}
