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
const same: Step = engine.decide(call, outcome, safety, Date.now());
void same;
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

// The runtime layer: withRetry around an SDK client, journals, events, the drop-in callTool.
import {
  withRetry,
  observeFetch,
  MemoryJournal,
  IndexedDbJournal,
  DurableObjectJournal,
  OUTCOME_META_KEY,
  type CallOutcome,
  type ClientLike,
  type RetryEvent,
  type JournalEntry,
} from '../../pkg/index.js';

declare const client: ClientLike;
const events: RetryEvent[] = [];
const mcp = withRetry(client, {
  policy: { maxAttempts: 3 },
  trusted: true,
  tools: { create_ticket: 'keyed', search: 'read_only' },
  operationIdArgument: 'operation_id',
  journal: new MemoryJournal(),
  onEvent: (e) => events.push(e),
  revision: '2025-11-25',
});
async function useIt(): Promise<void> {
  const out: CallOutcome = await mcp.call({ name: 'create_ticket', arguments: { title: 't' } }, { intent: 'call-1', signal: AbortSignal.timeout(1000) });
  const unknown: boolean = out.status === 'unknown';
  const opId: string | undefined = out.operationId;
  const res = await mcp.callTool({ name: 'search', arguments: {} });
  const meta = res._meta?.[OUTCOME_META_KEY];
  const pending: JournalEntry[] = await mcp.pendingOperations();
  const f: typeof fetch = observeFetch(fetch);
  void [unknown, opId, meta, pending, f, IndexedDbJournal, DurableObjectJournal, mcp.engine.breakerState];
  // The default journal's retention, its counts, and the backlog event.
  const kept = new MemoryJournal({ maxSettled: 50_000, settledTtlMs: 7 * 86_400_000, backlogThreshold: 500 });
  const open: number = kept.stats().unresolved;
  for (const e of events) if (e.type === 'journal_backlog') void [e.unresolved + e.threshold, e.tool, open];
}
void useIt;

// The server face: the ledger, its stores, withIdempotency, fingerprints.
import {
  OperationLedger,
  withIdempotency,
  OutcomeUnknown,
  MemoryLedgerStore,
  SqliteLedgerStore,
  D1LedgerStore,
  DurableObjectLedgerStore,
  fingerprint,
  isValidOperationId,
  LEDGER_META_KEY,
  claimOf,
  LeaseLost,
  type LedgerBegin,
} from '../../pkg/index.js';

const ledger = new OperationLedger({
  store: new MemoryLedgerStore(),
  ttlMs: 86_400_000,
  leaseMs: 60_000,
  reconcile: async ({ operationId }) => (operationId ? { status: 'not_done' } : { status: 'unknown' }),
});
type Extra = { authInfo?: { clientId: string } };
const handler = withIdempotency(
  ledger,
  async (args: { title: string; operation_id: string }, _extra: Extra) => {
    if (!args.title) throw new OutcomeUnknown('bank timeout');
    return { content: [{ type: 'text' as const, text: 'ok' }] };
  },
  { action: 'open_ticket', tenant: (extra) => extra.authInfo?.clientId },
);
async function serve(): Promise<void> {
  const r = await handler({ title: 't', operation_id: 'op-12345678' }, { authInfo: { clientId: 'acme' } });
  const b: LedgerBegin = await ledger.begin({ tenant: 't', action: 'a', operationId: 'op-12345678' }, fingerprint({ a: 1 }));
  void [r, b, isValidOperationId('x'), LEDGER_META_KEY, SqliteLedgerStore, D1LedgerStore, DurableObjectLedgerStore];
}
void serve;

// The transaction option: the handler's third argument is the store's transaction.
interface FakeDb { prepare(sql: string): { run(...a: unknown[]): { lastInsertRowid: number | bigint } }; exec(sql: string): unknown }
declare const sqlite: FakeDb;
const atomicLedger = new OperationLedger({ store: new SqliteLedgerStore(sqlite) });
const atomic = withIdempotency(
  atomicLedger,
  async (args: { title: string; operation_id: string }, _extra: Extra, db: FakeDb) => {
    const { lastInsertRowid } = db.prepare('INSERT INTO tickets (title) VALUES (?)').run(args.title);
    return { content: [{ type: 'text' as const, text: `T-${lastInsertRowid}` }] };
  },
  { action: 'open_ticket', tenant: (extra) => extra.authInfo?.clientId, transaction: true },
);
void atomic;
// A lease-held handler's fenced commit, authorize and principal binding.
const fenced = withIdempotency(
  atomicLedger,
  async (args: { title: string; operation_id: string }, extra: Extra & { authInfo?: { extra?: { sub?: string } } }) => {
    const claim = claimOf(extra);
    if (!claim || claim.signal.aborted) return { content: [] };
    const id: number | bigint = await claim.transaction((db: FakeDb) => db.prepare('INSERT INTO t VALUES (?)').run(args.title).lastInsertRowid);
    return { content: [{ type: 'text' as const, text: `T-${id}` }] };
  },
  {
    action: 'open_ticket', tenant: (extra) => extra.authInfo?.clientId, principal: (extra) => extra.authInfo?.extra?.sub,
    authorize: ({ action, args, extra }) => action === 'open_ticket' && typeof args.title === 'string' && !!extra.authInfo,
  },
);
void fenced;
const refused = (e: unknown): boolean => e instanceof LeaseLost && e.committed === false;
void refused;
const transactional: boolean = atomicLedger.transactional;
void transactional;

// OpenTelemetry: the app's own @opentelemetry/api module, on the client and on the ledger.
import * as otel from '@opentelemetry/api';
const traced = withRetry(client, { opentelemetry: otel, onEvent: (e) => void [e.callId, e.server] });
const countedLedger = new OperationLedger({ store: new MemoryLedgerStore(), opentelemetry: otel });
void [traced, countedLedger];

// The AI SDK adapter: tools for generateText from what withRetry returned.
import { aiSdkTools } from '../../pkg/ai-sdk.js';
async function aiTools(): Promise<void> {
  const tools = await aiSdkTools(mcp, { intent: (o) => (o ? `conversation-1:${o.toolCallId}` : undefined) });
  void tools;
}
void aiTools;

// The Cloudflare Agents adapter (the agents Agent type itself needs @cloudflare/workers-types; not checked here).
import { retryingMcp, installRetry, JOURNAL_PREFIX, type AgentLike } from '../../pkg/agents.js';
function inAgent(agent: AgentLike): void {
  const tickets = retryingMcp(agent, 'tickets', { trusted: true, idFromIntent: true });
  const undo: () => void = installRetry(agent, { servers: ['tickets'] });
  const prefix: 'mcp-retry-policy:' = JOURNAL_PREFIX;
  void [tickets.call({ name: 'create_ticket', arguments: {} }, { intent: 'tool-call-1' }), undo, prefix];
}
void inAgent;

// The server checker (Node only): a report of twelve checks, each pass | fail | not_testable | skipped.
import { checkServer, formatTable, type CheckStatus, type Report } from '../../pkg/check/index.js';
async function checkStaging(): Promise<boolean> {
  const report: Report = await checkServer('https://staging.example/mcp', {
    tool: 'open_ticket',
    args: { title: 'checked' },
    headers: { authorization: 'Bearer staging-a' },
    otherTenantHeaders: { authorization: 'Bearer staging-b' },
  });
  const failed: CheckStatus[] = report.checks.map((c) => c.status).filter((s) => s === 'fail');
  void formatTable(report, { width: 80 });
  return report.ok && failed.length === 0;
}
void checkStaging;

// Hedged reads: the policy options, the engine's answers and counts.
{
  const hedged: PolicyOptions = { hedgeAfterMs: 100, maxHedges: 2 };
  const e = new RetryEngine(hedged);
  const c = e.begin(0);
  const h = e.hedge(c, 'read_only', 10);
  if (h.admitted) { const t: number = h.timeoutMs; void t; } else { const r: 'off' | 'safety' | 'not_in_flight' | 'max_hedges' | 'deadline' | 'breaker_open' | 'budget' | 'concurrency' | 'subrequest_budget' = h.refusal; void r; }
  e.hedgeEnded(c, true);
  const counts: { sent: number; won: number; requestsInFlight: number; hedgesInFlight: number } = e.hedgeCounts;
  const on: { hedgeAfterMs: number; maxHedges: number } | undefined = e.hedging;
  void counts; void on;
}
