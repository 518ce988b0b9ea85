// Public types of the client face ('mcp-retry-policy/client'). The engine's types are generated from the
// Rust sources (mcp_retry_policy_client.d.ts); the entries hide the wasm initialization functions.
export { RetryEngine, RetryCall, newOperationId, revisionFor } from './mcp_retry_policy_client.js';
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
} from './mcp_retry_policy_client.js';
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
