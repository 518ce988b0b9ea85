// A claim's hold as it crosses to the server wasm (`LedgerRules#holdStart`/`#hold`): its state's numbers in the
// hold slots, and the reading of a step — the driver's step, the claim's standing, its wake-up, its tell and the
// write it asks for — from the out slots.
import { initSync, ledgerHoldSlots } from '../mcp_retry_policy_server.js';
import { CLAIM_STANDINGS, HOLD_STEPS, HOLD_TELLS } from '../generated/names.js';
import {
  HOLD_WORDS, L_CLAIM_LEASE_UNTIL_MS, L_CLAIM_VERSION, L_EXPECTED, L_LEASE_UNTIL_MS, L_LEFT_MS, L_STANDING, L_TELL,
  L_TIMEOUT, L_VERSION,
} from '../generated/seam.js';
import { ok, out } from './rules-slots.js';

// The intrinsic typed-array accessors: a caller's state is read through them, never through its own
// (possibly tampered) prototype chain, so no caller code runs.
const TA = Object.getPrototypeOf(Uint8Array.prototype);
export const TA_TAG = Object.getOwnPropertyDescriptor(TA, Symbol.toStringTag).get;
export const TA_LENGTH = Object.getOwnPropertyDescriptor(TA, 'length').get;
export const TA_SET = TA.set;

let H = new Float64Array(0);
/** The hold slots: where a hold's state crosses (a new view after the memory grew). */
export function holdSlots() {
  if (H.length === 0) H = new Float64Array(initSync().memory.buffer, ledgerHoldSlots(), HOLD_WORDS);
  return H;
}

/** A hold's reading after the step whose answer is `r` (its state copied back into `state`). */
export function holdReading(r, state) {
  const step = HOLD_STEPS[ok(r)];
  TA_SET.call(state, holdSlots());
  const o = out();
  const t = o[L_TIMEOUT];
  const tell = o[L_TELL];
  const reading = {
    step,
    standing: CLAIM_STANDINGS[o[L_STANDING]],
    timeout: t === t ? t : undefined,
    claimVersion: o[L_CLAIM_VERSION],
    claimLeaseUntilMs: o[L_CLAIM_LEASE_UNTIL_MS],
  };
  if (tell === tell) {
    reading.tell = HOLD_TELLS[tell];
    reading.leftMs = o[L_LEFT_MS];
  }
  const v = o[L_VERSION];
  if (v === v) reading.write = { version: v, leaseUntilMs: o[L_LEASE_UNTIL_MS], expected: o[L_EXPECTED] };
  return reading;
}
