// One write behind the ledger, stepped by the core's driver (src/ledger/write.rs) through the server wasm's
// numbers-only exports: `withIdempotency` performs each step and feeds back what happened. Every choice —
// which checks run and in what order, each refusal, when the handler runs, what is recorded, which answer is
// a replay, and the telemetry kind of every answer — is the driver's. A write crosses as its code, an event
// as its name's code, the step's answer in the server's out slots (read through ../generated/seam.js).
import { initSync, ledgerWrite, ledgerWriteStart } from '../mcp_retry_policy_server.js';
import { ok, out } from './rules-slots.js';
import { typeError, typeName } from '../errors.js';
import { L_STATE, L_WRITE, readWriteAnswer } from '../generated/seam.js';
import {
  RECORD_STATES, WRITE_BEGUNS, WRITE_EVENTS, WRITE_EVENT_BEGUN, WRITE_EVENT_RAN, WRITE_EVENT_STATUS, WRITE_EVENT_VALIDATED,
  WRITE_RANS, WRITE_STEPS, WRITE_STEP_ANSWER, WRITE_STEP_RECORD, WRITE_VALIDATIONS,
} from '../generated/names.js';

const flag = (v) => (v === true ? 1 : v === false ? 0 : NaN); // anything else is refused by name (`checks`)

/** A new write's code, for the checks it runs (booleans). Its first step is `read_operation_id`. */
export function writeStart(authorize, principal, validate, transaction) {
  initSync(); // initialized by then (the ledger's rules): returns the exports
  return ok(ledgerWriteStart(flag(authorize), flag(principal), flag(validate), flag(transaction)));
}

// The events that carry a name, and the names they take.
const NAMED = new Map([
  [WRITE_EVENT_VALIDATED, WRITE_VALIDATIONS], [WRITE_EVENT_BEGUN, WRITE_BEGUNS], [WRITE_EVENT_STATUS, WRITE_BEGUNS],
  [WRITE_EVENT_RAN, WRITE_RANS],
]);

/**
 * One step of the write `write` (its code): `event` a `WRITE_EVENTS` name, `arg` what it carries — a boolean,
 * a `WRITE_VALIDATIONS` (`validated`), `WRITE_BEGUNS` (`begun`, `status`) or `WRITE_RANS` (`ran`) name, nothing
 * for `recorded`. Returns `{ step, write }` (the next step's name, the write's next code), with `state` for
 * `record` and `answer` (`{ answer, reply, why, kind }`) for `answer`. A name no event takes is a typed error.
 */
export function writeStep(write, event, arg) {
  if (typeof write !== 'number') throw typeError('write', `write must be a write's code (a number), got ${typeName(write)}`);
  const names = NAMED.get(event);
  const a = names ? names.indexOf(arg) : arg === true ? 1 : arg === false || arg === undefined ? 0 : -1;
  const step = WRITE_STEPS[ok(ledgerWrite(write, WRITE_EVENTS.indexOf(event), a))];
  const o = out();
  const next = { step, write: o[L_WRITE] };
  if (step === WRITE_STEP_RECORD) next.state = RECORD_STATES[o[L_STATE]];
  else if (step === WRITE_STEP_ANSWER) next.answer = readWriteAnswer(o);
  return next;
}
