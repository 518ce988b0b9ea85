// Where the server wasm's answers are read: its out slots (in place), and a failure it returned as the typed
// error it encodes. Shared by the ledger's rules (rules.js) and the hold's readings (hold-slots.js).
import { errorDetail, initSync, ledgerSlots } from '../mcp_retry_policy_server.js';
import { wasmFailure } from '../wasm-failure.js';
import { L_SLOTS } from '../generated/seam.js';

let O = new Float64Array(0);
/** The server module's out slots, read in place (a new view after its memory grew and detached the old one). */
export function out() {
  if (O.length === 0) O = new Float64Array(initSync().memory.buffer, ledgerSlots(), L_SLOTS);
  return O;
}

/** `r`, or the typed error it encodes. */
export function ok(r) {
  if (r < 0) throw wasmFailure(r, errorDetail, 'LedgerRules');
  return r;
}
