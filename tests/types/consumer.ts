// A consumer of the whole public API, type-checked by `tsc` on every build: if the published types drift
// from what users write, the build fails.
import {
  RetryEngine,
  newOperationId,
  revisionFor,
  type AttemptOutcome,
  type Decision,
  type PolicyOptions,
  type Safety,
  type Step,
} from '../../pkg/index.js';

const policy: PolicyOptions = { maxAttempts: 4, jitter: 'equal', budget: false, breaker: { openMs: 5_000 } };
const engine = new RetryEngine(policy, { seed: 7, revision: '2025-11-25' });
const safety: Safety = engine.safety(
  { name: 'create_ticket', annotations: { readOnlyHint: false }, inputSchema: { type: 'object', properties: { operation_id: {} } } },
  { trusted: true },
);
const call = engine.begin(Date.now());
const admission = engine.admit(call, Date.now());
if (admission.admitted) {
  const timeout: number = admission.timeoutMs;
  void timeout;
}
const outcome: AttemptOutcome = { kind: 'http', status: 503, retryAfterMs: 1000 };
const step: Step = engine.record(call, outcome, safety, Date.now());
const d: Decision = step.decision;
const wait: number = d.action === 'retry' ? d.delayMs : 0;
const status: string = d.action === 'stop' ? d.status : 'retrying';
const id: string = newOperationId();
const rev: string = revisionFor('2025-06-18');
const maxAttempts: number = engine.policy.maxAttempts;
const tokens: number | undefined = engine.budgetTokens;
const breaker: string | undefined = engine.breakerState;
engine.setProtocolVersion('2026-07-28');
void [wait, status, id, rev, maxAttempts, tokens, breaker, engine.classify({ kind: 'timeout' }).delivery, call.attempts];
