// Public types of mcp-retry-policy. The engine's types are generated from the Rust sources
// (mcp_retry_policy.d.ts); the runtime entries hide the wasm initialization functions.
export {
  RetryEngine,
  RetryCall,
  newOperationId,
  revisionFor,
} from './mcp_retry_policy.js';
export type {
  PolicyOptions,
  Policy,
  EngineOptions,
  Revision,
  Safety,
  AttemptOutcome,
  Delivery,
  Recover,
  Classification,
  FinalStatus,
  Decision,
  BreakerTransition,
  Step,
  Admission,
  SafetyOptions,
  ToolLike,
} from './mcp_retry_policy.js';
export {
  withRetry,
  OUTCOME_META_KEY,
  ATTEMPT_META_KEY,
  observeFetch,
  parseRetryAfter,
  MemoryJournal,
  IndexedDbJournal,
  DurableObjectJournal,
} from './client/index.js';
export type {
  CallStatus,
  AttemptRecord,
  CallOutcome,
  CallToolResultLike,
  ClientLike,
  JournalEntry,
  Journal,
  RetryEvent,
  WithRetryOptions,
  CallOptions,
  RetryingClient,
} from './client/index.js';
export { LedgerRules, isValidOperationId } from './mcp_retry_policy.js';
export type { LedgerRecord, LedgerAdmission, LedgerRulesOptions, RecordState } from './mcp_retry_policy.js';
export {
  OperationLedger,
  withIdempotency,
  OutcomeUnknown,
  LEDGER_META_KEY,
  fingerprint,
  MemoryLedgerStore,
  SqliteLedgerStore,
  D1LedgerStore,
  DurableObjectLedgerStore,
} from './server/index.js';
export type { LedgerKey, LedgerStore, ReconcileVerdict, OperationLedgerOptions, LedgerBegin, IdempotencyOptions } from './server/index.js';
