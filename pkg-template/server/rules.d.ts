/// <reference path="../dispose.d.ts" />
import type { ClaimStanding, LedgerHoldAnswer, LedgerHoldEvent, LedgerHoldStep, LedgerHoldTell, RecordState } from '../generated/names.js';
export type { RecordState } from '../generated/names.js';

/**
 * A ledger record as stores keep it (the recorded result is kept beside it by the JS layer). `expiresMs`
 * applies to resolved records (succeeded/failed) only: pending and unknown records never expire.
 * `released`: an operator released an unresolved record (`OperationLedger.release`); the next call executes.
 */
export interface LedgerRecord {
  /** `pending` (claimed, running), `succeeded`, `failed`, `unknown` or `released`. */
  state: RecordState;
  /** The fingerprint of the write's input (`fingerprint(...)`): the same id with other input is a `conflict`. */
  fingerprint: string;
  /** When the claim's lease ends, in milliseconds since the epoch on the ledger's clock. */
  leaseUntilMs: number;
  /** When the record was first claimed, in milliseconds since the epoch. */
  createdMs: number;
  /** When a resolved record stops being replayed, in milliseconds since the epoch (resolved records only). */
  expiresMs: number;
  /** The record's version, a count that goes up with every write: the claim's fencing token. */
  version: number;
}
/** What `LedgerRules.admit` says to do with a write: execute it, replay the stored outcome, refuse it (`conflict`), ask the reconcile hook, or answer in progress (retry after `retryAfterMs` milliseconds). */
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
/**
 * A claim's hold after a step (`LedgerRules.holdStart` / `hold`, the core's driver): the step to carry out,
 * where the claim stands, when to wake the hold (`timer`, on the monotonic clock), the claim as last written,
 * the step's write (`renew`, `commit`, `read_back`) and what operators hear (`lost`; `late` with `leftMs`).
 */
export interface LedgerHoldReading {
  step: LedgerHoldStep;
  standing: ClaimStanding;
  timeout?: number;
  claimVersion: number;
  claimLeaseUntilMs: number;
  write?: { version: number; leaseUntilMs: number; expected: number };
  tell?: LedgerHoldTell;
  leftMs?: number;
}
/** The core's answer to a release: the released record, or why not. */
export type LedgerReleaseRule =
  | { released: LedgerRecord }
  | { refused: 'resolved' | 'already_released' }
  | { refused: 'lease_live'; retryAfterMs: number };
/**
 * The ledger's two durations (`new LedgerRules(options)`, and `OperationLedger`'s options). A TTL below the lease
 * is a `RangeError` with `code: 'ttl_below_lease'`, `field: 'ttlMs'`.
 */
export interface LedgerRulesOptions {
  /**
   * How long a resolved outcome (`succeeded`, `failed`) is replayed after it was recorded, in milliseconds
   * (1 ms – 366 days; at least `leaseMs`). Pending and unknown records never expire.
   * @default 86400000 (the core's default: 24 hours)
   */
  ttlMs?: number;
  /**
   * How long a claim holds before a repeat of its key is reconciled, in milliseconds (1 – 86,400,000). A
   * running handler's claim is renewed every third of it.
   * @default 60000 (the core's default: 60 seconds)
   */
  leaseMs?: number;
}

/**
 * The ledger's transitions, decided in wasm (numbers only). Bad input is a `TypeError`/`RangeError` with
 * `code` and `field` (`record.version`, `nowMs`, …); a TTL below the lease is `ttl_below_lease`.
 */
export declare class LedgerRules {
  /**
   * Validates the durations.
   * @param options `ttlMs` and `leaseMs`, absent ones the core's defaults (see {@link LedgerRulesOptions}).
   */
  constructor(options?: LedgerRulesOptions);
  /** How long a resolved outcome is replayed, in milliseconds. */
  readonly ttlMs: number;
  /** How long a claim holds, in milliseconds. */
  readonly leaseMs: number;
  /** What to do with a write of `fingerprint` given the record `stored` under its key, at `nowMs`. */
  admit(stored: LedgerRecord | undefined | null, fingerprint: string, nowMs: number): LedgerAdmission;
  /** What a read-only status lookup finds in `stored` at `nowMs`. */
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
  /** The pending claim to write over `previous` (the next version, a lease from `nowMs`). */
  claim(previous: LedgerRecord | undefined | null, fingerprint: string, nowMs: number): LedgerRecord;
  /** The record that resolves `claimed` as `state` at `nowMs` (the next version; expiring `ttlMs` later when resolved). */
  finish(claimed: LedgerRecord, state: 'succeeded' | 'failed' | 'unknown', nowMs: number): LedgerRecord;
  /** An operator's release of `stored`: the released record, or why not. */
  release(stored: LedgerRecord, nowMs: number): LedgerReleaseRule;
  /** The claim renewed by the run that holds it: a new lease from `nowMs`, the next version (pending only). */
  renew(claimed: LedgerRecord, nowMs: number): LedgerRecord;
  /** When the owner of `claimed` gives up on it (ms, on the clock it was written by): a third of the lease before its end. */
  giveUpAt(claimed: LedgerRecord): number;
  /**
   * The hold of `claimed`, just written at `nowMs` (the ledger's clock) = `monoMs` (a monotonic clock,
   * `performance.now()`): its state (keep it; hand it to each `hold` step) and its first reading.
   */
  holdStart(claimed: LedgerRecord, nowMs: number, monoMs: number): { state: Float64Array; reading: LedgerHoldReading };
  /**
   * One step of a hold (the core's driver; `state` is updated in place): `event` what happened — `timer`,
   * `renewed` / `committed` (`arg`: `won`, `changed`, `failed`), `look`, `stop`, `commit`, `read_back` (`arg`:
   * whether the record read back is the write).
   */
  hold(state: Float64Array, event: LedgerHoldEvent, arg: LedgerHoldAnswer | boolean | undefined, nowMs: number, monoMs: number): LedgerHoldReading;
  /** How often a running claim is renewed, and how long before its lease ends its owner gives up: a third of the lease. */
  readonly keepAliveMs: number;
  /** Ends their use; later calls are a `freed` TypeError. */
  free(): void;
  [Symbol.dispose](): void;
}

/** Whether an operation id has the accepted form: 8–128 characters of `A–Z a–z 0–9 - _ . :`. */
export declare function isValidOperationId(id: unknown): boolean;
