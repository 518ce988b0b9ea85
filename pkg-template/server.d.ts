// Public types of the server face ('mcp-retry-policy/server'): the operation ledger.
export { LedgerRules, isValidOperationId } from './server/rules.js';
export type { LedgerRecord, LedgerAdmission, LedgerLookup, LedgerReleaseRule, LedgerRulesOptions, RecordState } from './server/rules.js';
export {
  OperationLedger,
  withIdempotency,
  claimOf,
  OutcomeUnknown,
  LedgerStoreError,
  LeaseLost,
  LEDGER_META_KEY,
  fingerprint,
  MAX_FINGERPRINT_BYTES,
  MemoryLedgerStore,
  SqliteLedgerStore,
  D1LedgerStore,
  DurableObjectLedgerStore,
  PostgresLedgerStore,
  registerStatusTool,
  statusTool,
  STATUS_TOOL_NAME,
} from './server/index.js';
export type {
  LedgerKey, LedgerStore, ReconcileVerdict, OperationLedgerOptions, LedgerBegin, IdempotencyOptions, LedgerReleased, LedgerReleaseRefusal,
  LedgerRejectReason, LedgerMeta, LedgerEvent, LedgerClaimHold, LedgerClaimContext, UnresolvedFilter, UnresolvedRecord, UnresolvedCount, SqliteDurability, SqliteLedgerStoreOptions, PostgresQueryable, OperationStatusAnswer, StatusToolOptions, StatusToolDefinition,
} from './server/index.js';
