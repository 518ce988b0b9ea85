// Public types of the client face ('mcp-retry-policy/client'). The engine's types are generated from the
// Rust sources (mcp_retry_policy_client.d.ts); the entries hide the wasm initialization functions.
import { RetryEngine as WasmRetryEngine, RetryCall, type AttemptOutcome as Outcome, type Safety as SafetyName, type Step as StepResult, type Admission as AdmissionResult, type Classification as ClassificationResult } from './mcp_retry_policy_client.js';
export { RetryCall, newOperationId, revisionFor } from './mcp_retry_policy_client.js';

/**
 * The per-server engine: the wasm class, with `record`, `admit` and `classify` on its one protocol (the outcome
 * encoded as numbers, the answer decoded from one packed number). A malformed outcome is a `TypeError` or
 * `RangeError` with `code` and `field`.
 */
export declare class RetryEngine extends WasmRetryEngine {
  /** Classifies one attempt's outcome under the engine's revision. Changes nothing. */
  classify(outcome: Outcome): ClassificationResult;
  /** Asks to send the next attempt of `call` at `nowMs`. */
  admit(call: RetryCall, nowMs: number): AdmissionResult;
  /** Records how an attempt of `call` ended and decides what comes next. */
  record(call: RetryCall, outcome: Outcome, safety: SafetyName, nowMs: number): StepResult;
  /** `record` under the name DESIGN.md gives the step: classify the outcome, then decide. */
  decide(call: RetryCall, outcome: Outcome, safety: SafetyName, nowMs: number): StepResult;
}
export type {
  PolicyOptions,
  Policy,
  EngineOptions,
  Revision,
  RevisionSetting,
  Safety,
  AttemptOutcome,
  Delivery,
  Recover,
  Classification,
  FinalStatus,
  Reason,
  Cause,
  Verdict,
  ResultType,
  Sent,
  LedgerStatus,
  Decision,
  BreakerTransition,
  Step,
  Admission,
  SafetyOptions,
  BeginOptions,
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
