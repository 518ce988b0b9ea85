/// <reference path="../dispose.d.ts" />
import type { RecordState } from '../generated/names.js';
export type { RecordState } from '../generated/names.js';

/**
 * A ledger record as stores keep it (the recorded result is kept beside it by the JS layer). `expiresMs`
 * applies to resolved records (succeeded/failed) only: pending and unknown records never expire.
 * `released`: an operator released an unresolved record (`OperationLedger.release`); the next call executes.
 */
export interface LedgerRecord {
  state: RecordState;
  fingerprint: string;
  leaseUntilMs: number;
  createdMs: number;
  expiresMs: number;
  version: number;
}
export type LedgerAdmission =
  | { action: 'execute' } | { action: 'replay' } | { action: 'conflict' } | { action: 'reconcile' }
  | { action: 'in_progress'; retryAfterMs: number };
/** What a status lookup finds (read-only): `reconcile` means pending past its lease, or unknown. */
export type LedgerLookup =
  | { status: 'not_found' | 'not_done' | 'succeeded' | 'failed' | 'reconcile' }
  | { status: 'in_progress'; retryAfterMs: number };
/** One step of a ledger look (`LedgerRules.look`): what to do next, and the look's next code. */
export type LedgerLookStepResult =
  | { step: 'read' | 'ask_held' | 'ask_reconcile'; look: number }
  | { step: 'write_claim' | 'write_reconciled'; look: number; record: LedgerRecord; expected?: number }
  | { step: 'done'; look: number; end: 'replay'; state: 'succeeded' | 'failed' }
  | { step: 'done'; look: number; end: 'in_progress'; retryAfterMs: number }
  | { step: 'done'; look: number; end: 'execute' | 'conflict' | 'unknown' | 'not_found' | 'not_done' };
/** The core's answer to a release: the released record, or why not. */
export type LedgerReleaseRule =
  | { released: LedgerRecord }
  | { refused: 'resolved' | 'already_released' }
  | { refused: 'lease_live'; retryAfterMs: number };
/**
 * `ttlMs` (default 24 h): how long a resolved record is replayed after its outcome; at least `leaseMs`.
 * `leaseMs` (default 60 s): how long a claim holds before a repeat is reconciled.
 */
export interface LedgerRulesOptions { ttlMs?: number; leaseMs?: number }

/**
 * The ledger's transitions, decided in wasm (numbers only). Bad input is a `TypeError`/`RangeError` with
 * `code` and `field` (`record.version`, `nowMs`, …); a TTL below the lease is `ttl_below_lease`.
 */
export declare class LedgerRules {
  constructor(options?: LedgerRulesOptions);
  readonly ttlMs: number;
  readonly leaseMs: number;
  admit(stored: LedgerRecord | undefined | null, fingerprint: string, nowMs: number): LedgerAdmission;
  lookup(stored: LedgerRecord | undefined | null, nowMs: number): LedgerLookup;
  /** A new look at a key (what `OperationLedger` runs for a write, an atomic write, the status tool): its code. */
  lookStart(mode: 'claim' | 'atomic' | 'status'): number;
  /**
   * One step of a look (the core's driver): `event` is what happened — `read` (`arg`: whether the input
   * fingerprints are equal), `held` (the wait to suggest, or -1), `reconciled` (`not_done`, `unknown`,
   * `succeeded`, `failed`), `wrote` (whether the write won) — and `stored` the record read last.
   */
  look(
    look: number,
    event: 'read' | 'held' | 'reconciled' | 'wrote',
    arg: number | boolean | 'not_done' | 'unknown' | 'succeeded' | 'failed',
    stored: LedgerRecord | undefined | null,
    fingerprint: string | undefined,
    nowMs: number,
  ): LedgerLookStepResult;
  claim(previous: LedgerRecord | undefined | null, fingerprint: string, nowMs: number): LedgerRecord;
  finish(claimed: LedgerRecord, state: 'succeeded' | 'failed' | 'unknown', nowMs: number): LedgerRecord;
  release(stored: LedgerRecord, nowMs: number): LedgerReleaseRule;
  /** The claim renewed by the run that holds it: a new lease from `nowMs`, the next version (pending only). */
  renew(claimed: LedgerRecord, nowMs: number): LedgerRecord;
  /** When the owner of `claimed` gives up on it (ms, on the clock it was written by): a third of the lease before its end. */
  giveUpAt(claimed: LedgerRecord): number;
  /** How often a running claim is renewed, and how long before its lease ends its owner gives up: a third of the lease. */
  readonly keepAliveMs: number;
  /** Ends their use; later calls are a `freed` TypeError. */
  free(): void;
  [Symbol.dispose](): void;
}

/** Whether an operation id has the accepted form: 8–128 characters of `A–Z a–z 0–9 - _ . :`. */
export declare function isValidOperationId(id: unknown): boolean;
