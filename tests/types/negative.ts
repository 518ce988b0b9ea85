// Types that must NOT compile: each `@ts-expect-error` line fails the build if the published types accept it
// (tsc reports an unused `@ts-expect-error`). They pin what the types promise beyond "it compiles".
import {
  RetryEngine,
  withRetry,
  SqliteLedgerStore,
  MemoryLedgerStore,
  MemoryJournal,
  OperationLedger,
  withIdempotency,
  type AttemptOutcome,
  type Safety,
} from '../../pkg/index.js';

declare const client: Parameters<typeof withRetry>[0];
declare const db: { prepare(sql: string): any; exec(sql: string): unknown };

// A SQLite store is a ledger store, not a memory store: it has no `size`.
const sqlite = new SqliteLedgerStore(db);
// @ts-expect-error — `size` exists only on MemoryLedgerStore
void sqlite.size;
void new MemoryLedgerStore().size;

// `reconnect` is called with the client.
withRetry(client, { reconnect: async (c) => void c.listTools() });
// @ts-expect-error — `transport` and `reconnect` take functions
withRetry(client, { transport: 'http://example.test' });

// MemoryJournal's retention options are numbers, and only those three.
// @ts-expect-error — a count, not a string
new MemoryJournal({ maxSettled: '100' });
// @ts-expect-error — not an option
new MemoryJournal({ maxEntries: 100 });

// Closed sets stay closed.
// @ts-expect-error — not a safety
const s: Safety = 'mostly_safe';
void s;
// @ts-expect-error — not an outcome kind
const o: AttemptOutcome = { kind: 'maybe' };
void o;
// @ts-expect-error — a ledger status the engine does not know
const l: AttemptOutcome = { kind: 'ledger', status: 'done' };
void l;
// @ts-expect-error — unknown revision strings are refused
new RetryEngine(undefined, { revision: 'latest' });
new RetryEngine(undefined, { revision: 'unknown' });
// @ts-expect-error — a field of another kind (the union is generated from src/vocab.rs's OUTCOME_KINDS)
const wrongField: AttemptOutcome = { kind: 'timeout', status: 503 };
void wrongField;
// @ts-expect-error — `sent` is required on a network outcome
const noSent: AttemptOutcome = { kind: 'network' };
void noSent;
// A decision's action is one of the generated ACTIONS.
const engine = new RetryEngine();
const step = engine.record(engine.begin(0), { kind: 'timeout' }, 'read_only', 1);
// @ts-expect-error — not an action
if (step.decision.action === 'retry_later') void 0;
// @ts-expect-error — a jitter the core does not know
new RetryEngine({ jitter: 'random' });
// @ts-expect-error — RetryCall is made by begin(), not constructed
new (engine.begin(0).constructor as typeof import('../../pkg/index.js').RetryCall)();

// Durability is one of two levels.
// @ts-expect-error — not a durability level
new SqliteLedgerStore(db, { durability: 'fast' });
// @ts-expect-error — durability is the only option
new SqliteLedgerStore(db, { journalMode: 'wal' });

// The transaction option: a boolean, and the third argument exists only with it.
const txLedger = new OperationLedger({ store: sqlite });
// @ts-expect-error — `transaction` is a boolean
withIdempotency(txLedger, async () => ({}), { action: 'a', tenant: () => 't', transaction: 'yes' });
// @ts-expect-error — a handler that takes the transaction needs { transaction: true }
withIdempotency(txLedger, async (_a: { operation_id: string }, _e: unknown, _tx: unknown) => ({}), { action: 'a', tenant: () => 't' });
withIdempotency(txLedger, async (_a: { operation_id: string }, _e: unknown, _tx: unknown) => ({}), { action: 'a', tenant: () => 't', transaction: true });

// The checker needs the tool to check, and its statuses are the four.
import { checkServer as checkServerNeg, type CheckStatus as CheckStatusNeg } from '../../pkg/check/index.js';
// @ts-expect-error — `tool` is required
void checkServerNeg('http://127.0.0.1:1/mcp', {});
// @ts-expect-error — a check is never "passed"
const notAStatus: CheckStatusNeg = 'passed';
void notAStatus;
