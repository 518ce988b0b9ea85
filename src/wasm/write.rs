//! One write behind the ledger for JS (the core's [`crate::ledger::write`] driver), numbers only like the
//! other rules: the write crosses as its code ([`Write::code`]), each event as its `WRITE_EVENTS` code and what
//! it carries, the next step as its `WRITE_STEPS` code with the write's next code, a record's state and an
//! answer in the server's out slots. A code no write packs, or an event no write takes, is refused by name
//! (`write`, `event`), never stepped.

use wasm_bindgen::prelude::*;

use super::fail::{run, Fail, FailKind, Field};
use super::ledger::code_of;
use super::out::put_ledger as put;
use crate::ledger::write::{Answer, Write, WriteChecks, WriteEvent, WriteStep};
use crate::seam::LedgerOut;

fn flag(v: f64) -> Result<bool, Fail> {
    match v {
        0.0 => Ok(false),
        1.0 => Ok(true),
        _ => Err(Fail::new(FailKind::InvalidValue, Field::WriteChecks, v)),
    }
}

fn code(v: f64, field: Field) -> Result<u32, Fail> {
    code_of(v).and_then(|c| u32::try_from(c).ok()).ok_or(Fail::new(FailKind::InvalidValue, field, v))
}

/// A new write with these checks (each 1 or 0): its code. Its first step is `read_operation_id`.
#[wasm_bindgen(js_name = ledgerWriteStart)]
pub fn ledger_write_start(authorize: f64, principal: f64, validate: f64, transaction: f64) -> f64 {
    run(|| {
        let checks = WriteChecks {
            authorize: flag(authorize)?,
            principal: flag(principal)?,
            validate: flag(validate)?,
            transaction: flag(transaction)?,
        };
        Ok(f64::from(Write::new(checks).code()))
    })
}

/// One step of the write `write` (its code): `event` a `WRITE_EVENTS` code, `arg` what it carries (1 or 0 for
/// a flag; a `WRITE_VALIDATIONS`, `WRITE_BEGUNS` or `WRITE_RANS` code; 0 for `recorded`). Returns the next
/// step's `WRITE_STEPS` code; the out slots hold the write's next code (`write`), a `record` step's `state`,
/// and an `answer` step's `answer`, `reply`, `why` and `kind`.
#[wasm_bindgen(js_name = ledgerWrite)]
pub fn ledger_write(write: f64, event: f64, arg: f64) -> f64 {
    run(|| {
        let bad = Fail::new(FailKind::InvalidValue, Field::Write, write);
        let mut w = Write::from_code(code(write, Field::Write)?).ok_or(bad)?;
        let (e, a) = (code(event, Field::LookEvent)?, code(arg, Field::LookEvent)?);
        let e = WriteEvent::from_code(e, a).ok_or(Fail::new(FailKind::InvalidValue, Field::LookEvent, arg))?;
        let step = w.step(e);
        put(LedgerOut::Write, f64::from(w.code()));
        match step {
            WriteStep::Record(state) => put(LedgerOut::State, f64::from(state as u32)),
            WriteStep::Answer(answer) => {
                put(LedgerOut::Answer, f64::from(answer.with.code()));
                let (reply, why) = match answer.with {
                    Answer::Reply { reply, why } => (f64::from(reply as u32), why),
                    Answer::Result | Answer::Replay => (f64::NAN, false),
                };
                put(LedgerOut::Reply, reply);
                put(LedgerOut::Why, f64::from(u8::from(why)));
                put(LedgerOut::Kind, f64::from(answer.kind as u32));
            }
            _ => {}
        }
        Ok(f64::from(step.code()))
    })
}
