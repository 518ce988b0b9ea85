//! The ledger's rules for JS, numbers only (the fingerprint and the operation-id form: `strings.rs`). Stores, handlers and
//! I/O live in the JS layer (`pkg-template/server/`); `server/rules.js` reads a record's fields and hands
//! them in as numbers (its state as a `RECORD_STATES` code; the fingerprints stay in JS, which tells the
//! rules only whether two are equal).
//!
//! The rule exports take and return `f64`s and import nothing, like the client face's: a failure is
//! `-(1 + kind + ERROR_KINDS.len() · field)` (`super::fail`), a result is a code, and the rest of the answer
//! (a wait, the record a rule made) is in the server's out slots ([`crate::seam::LedgerOut`], read in place
//! by the generated `seam.js`): one crossing a rule.

use wasm_bindgen::prelude::*;

use super::fail::{run, Fail, FailKind, Field};
use super::out::put_ledger as put;
use crate::input::MAX_DURATION_MS;
use crate::ledger::{
    admit_matching, claim, finish, give_up_at_ms, keep_alive_ms, lookup, release, renew, Admission, LedgerConfig,
    LedgerConfigError, Look, LookEnd, LookEvent, LookStep, Lookup, ReconcileVerdict, Record, RecordState,
    ReleaseRefusal,
};
use crate::seam::{LedgerOut, RECORD_NUMBERS};

/// The largest millisecond value or version a record may hold (JS's safe integers).
const MAX_SAFE: u64 = (1 << 53) - 1;
/// The longest TTL: a year of days.
const MAX_TTL_MS: u64 = 366 * MAX_DURATION_MS;

fn number(field: Field, v: f64) -> Result<u64, Fail> {
    Fail::number(field, v, 0, MAX_SAFE, true)
}

/// A record from its numbers (`state` a `RECORD_STATES` code).
pub(super) fn record(
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
) -> Result<Record, Fail> {
    let bad = Fail::new(FailKind::InvalidValue, Field::RecordState, state);
    let code = if state >= 0.0 && state.fract() == 0.0 && state < RecordState::ALL.len() as f64 {
        state as usize
    } else {
        usize::MAX
    };
    let state = RecordState::ALL.get(code).copied().ok_or(bad)?;
    // In `RECORD_NUMBERS`' order (what JS sends), each refused by the field the description gives it.
    let mut n = [0u64; 4];
    for ((out, v), (_, field)) in
        n.iter_mut().zip([lease_until_ms, created_ms, expires_ms, version]).zip(RECORD_NUMBERS)
    {
        *out = number(field, v)?;
    }
    let [lease_until_ms, created_ms, expires_ms, version] = n;
    Ok(Record { state, fingerprint: String::new(), lease_until_ms, created_ms, expires_ms, version })
}

/// `has` (1: a record is given) and its numbers.
fn maybe(has: f64, state: f64, lease: f64, created: f64, expires: f64, version: f64) -> Result<Option<Record>, Fail> {
    if has == 1.0 {
        record(state, lease, created, expires, version).map(Some)
    } else {
        Ok(None)
    }
}

pub(super) fn now(now_ms: f64) -> Result<u64, Fail> {
    Fail::number(Field::NowMs, now_ms, 0, 1 << 53, false)
}

fn config(ttl_ms: f64, lease_ms: f64) -> Result<Result<LedgerConfig, LedgerConfigError>, Fail> {
    let ttl = Fail::number(Field::TtlMs, ttl_ms, 1, MAX_TTL_MS, false)?;
    let lease = Fail::number(Field::LeaseMs, lease_ms, 1, MAX_DURATION_MS, false)?;
    Ok(LedgerConfig::new(ttl, lease))
}

pub(super) fn valid_config(ttl_ms: f64, lease_ms: f64) -> Result<LedgerConfig, Fail> {
    config(ttl_ms, lease_ms)?.map_err(|_| Fail::new(FailKind::TooSmall, Field::TtlMs, ttl_ms).bound(lease_ms))
}

/// A record made by a rule, into the out slots; its state code is the answer.
fn made(r: &Record) -> f64 {
    let state = f64::from(r.state as u8);
    put(LedgerOut::Code, state);
    put(LedgerOut::RetryAfterMs, 0.0);
    put(LedgerOut::State, state);
    put(LedgerOut::LeaseUntilMs, r.lease_until_ms as f64);
    put(LedgerOut::CreatedMs, r.created_ms as f64);
    put(LedgerOut::ExpiresMs, r.expires_ms as f64);
    put(LedgerOut::Version, r.version as f64);
    state
}

/// An answer's code and wait, into the out slots; the code is the answer.
fn coded(code: u32, retry_after_ms: u64) -> f64 {
    put(LedgerOut::Code, f64::from(code));
    put(LedgerOut::RetryAfterMs, retry_after_ms as f64);
    f64::from(code)
}

/// The default settings: `0` the TTL, `1` the lease (ms).
#[wasm_bindgen(js_name = ledgerDefault)]
pub fn ledger_default(which: f64) -> f64 {
    let d = LedgerConfig::default();
    if which == 0.0 {
        d.ttl_ms as f64
    } else {
        d.lease_ms as f64
    }
}

/// Checks the ledger's settings: 0 when they hold, 1 when the TTL is shorter than the lease
/// (`ttl_below_lease`), or a failure.
#[wasm_bindgen(js_name = ledgerConfig)]
pub fn ledger_config(ttl_ms: f64, lease_ms: f64) -> f64 {
    run(|| Ok(if config(ttl_ms, lease_ms)?.is_ok() { 0.0 } else { 1.0 }))
}

/// What to do with a write at `now_ms`: an `ADMISSIONS` code (and `retryAfterMs` in the out slots for
/// `in_progress`).
/// `same_input` (1 or 0): whether the write's input fingerprint equals the stored record's.
#[wasm_bindgen(js_name = ledgerAdmit)]
#[allow(clippy::too_many_arguments)]
pub fn ledger_admit(
    has: f64,
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
    same_input: f64,
    now_ms: f64,
) -> f64 {
    run(|| {
        let stored = maybe(has, state, lease_until_ms, created_ms, expires_ms, version)?;
        let a = admit_matching(stored.as_ref(), same_input == 1.0, now(now_ms)?);
        let retry = if let Admission::InProgress { retry_after_ms } = a { retry_after_ms } else { 0 };
        Ok(coded(a.code(), retry))
    })
}

/// What a status lookup finds at `now_ms`: a `LOOKUPS` code (and `retryAfterMs` in the out slots for
/// `in_progress`).
#[wasm_bindgen(js_name = ledgerLookup)]
pub fn ledger_lookup(
    has: f64,
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
    now_ms: f64,
) -> f64 {
    run(|| {
        let stored = maybe(has, state, lease_until_ms, created_ms, expires_ms, version)?;
        let l = lookup(stored.as_ref(), now(now_ms)?);
        let retry = if let Lookup::InProgress { retry_after_ms } = l { retry_after_ms } else { 0 };
        Ok(coded(l.code(), retry))
    })
}

/// The pending record that claims a key at `now_ms`, replacing the given one (if `has`): its state code;
/// the record in the out slots.
#[wasm_bindgen(js_name = ledgerClaim)]
#[allow(clippy::too_many_arguments)]
pub fn ledger_claim(
    has: f64,
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
    now_ms: f64,
    ttl_ms: f64,
    lease_ms: f64,
) -> f64 {
    run(|| {
        let previous = maybe(has, state, lease_until_ms, created_ms, expires_ms, version)?;
        let cfg = valid_config(ttl_ms, lease_ms)?;
        Ok(made(&claim(previous.as_ref(), "", now(now_ms)?, &cfg)))
    })
}

/// A whole number in `0..(1 << 32)` as an index, or `None`.
pub(super) fn code_of(v: f64) -> Option<usize> {
    (v >= 0.0 && v.fract() == 0.0 && v < 4_294_967_296.0).then_some(v as usize)
}

/// One step of a look (`src/ledger/look.rs`): `look` its code, `event` a `LOOK_EVENTS` code and `arg` what it
/// carries (`read`: 1 when the input fingerprints are equal; `held`: the wait to suggest, or -1 when not held;
/// `reconciled`: a `LOOK_VERDICTS` code; `wrote`: 1 when the write won); the stored record read last
/// (`has` … `version`, as `ledgerClaim` takes it). Returns the next step's `LOOK_STEPS` code; the out slots hold
/// the look's next code (`look`), and the step's record (`write_claim`, `write_reconciled`: the record and the
/// version it replaces, `expected`) or its end (`done`: `end`, with `retryAfterMs` or the replayed `state`).
#[wasm_bindgen(js_name = ledgerLook)]
#[allow(clippy::too_many_arguments)]
pub fn ledger_look(
    look: f64,
    event: f64,
    arg: f64,
    has: f64,
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
    now_ms: f64,
    ttl_ms: f64,
    lease_ms: f64,
) -> f64 {
    run(|| {
        let bad_look = Fail::new(FailKind::InvalidValue, Field::Look, look);
        let mut l = code_of(look).and_then(|c| u32::try_from(c).ok()).and_then(Look::from_code).ok_or(bad_look)?;
        let bad_event = Fail::new(FailKind::InvalidValue, Field::LookEvent, arg);
        let e = match code_of(event) {
            Some(0) => LookEvent::Read { same_input: arg == 1.0 },
            Some(1) if arg == -1.0 => LookEvent::Held(None),
            Some(1) => LookEvent::Held(Some(Fail::number(Field::LookEvent, arg, 0, MAX_DURATION_MS, false)?)),
            Some(2) => LookEvent::Reconciled(
                code_of(arg)
                    .and_then(|c| u32::try_from(c).ok())
                    .and_then(ReconcileVerdict::from_code)
                    .ok_or(bad_event)?,
            ),
            Some(3) => LookEvent::Wrote(arg == 1.0),
            _ => return Err(Fail::new(FailKind::InvalidValue, Field::LookEvent, event)),
        };
        let stored = maybe(has, state, lease_until_ms, created_ms, expires_ms, version)?;
        let cfg = valid_config(ttl_ms, lease_ms)?;
        let step = l.step(e, stored.as_ref(), "", now(now_ms)?, &cfg);
        put(LedgerOut::Look, f64::from(l.code()));
        put(LedgerOut::Expected, f64::NAN);
        match &step {
            LookStep::WriteClaim { claim: r, expected } => {
                made(r);
                put(LedgerOut::Expected, expected.map_or(f64::NAN, |v| v as f64));
            }
            LookStep::WriteReconciled { record: r, .. } => {
                made(r);
                put(LedgerOut::Expected, stored.as_ref().map_or(f64::NAN, |s| s.version as f64));
            }
            LookStep::Done(end) => {
                put(LedgerOut::End, f64::from(end.code()));
                put(
                    LedgerOut::RetryAfterMs,
                    match end {
                        LookEnd::InProgress { retry_after_ms } => *retry_after_ms as f64,
                        _ => 0.0,
                    },
                );
                put(
                    LedgerOut::State,
                    match end {
                        LookEnd::Replay(s) => f64::from(*s as u8),
                        _ => f64::NAN,
                    },
                );
                if let LookEnd::Execute { expected } = end {
                    put(LedgerOut::Expected, expected.map_or(f64::NAN, |v| v as f64));
                }
            }
            LookStep::Read | LookStep::AskHeld | LookStep::AskReconcile => {}
        }
        Ok(f64::from(step.code()))
    })
}

/// The record after the handler finished as `new_state` (a `RECORD_STATES` code: succeeded, failed or
/// unknown): its state code; the record in the out slots.
#[wasm_bindgen(js_name = ledgerFinish)]
#[allow(clippy::too_many_arguments)]
pub fn ledger_finish(
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
    new_state: f64,
    now_ms: f64,
    ttl_ms: f64,
    lease_ms: f64,
) -> f64 {
    run(|| {
        let claimed = record(state, lease_until_ms, created_ms, expires_ms, version)?;
        let to = match RecordState::ALL.get(if new_state.fract() == 0.0 && new_state >= 0.0 {
            new_state as usize
        } else {
            99
        }) {
            Some(s @ (RecordState::Succeeded | RecordState::Failed | RecordState::Unknown)) => *s,
            _ => return Err(Fail::new(FailKind::InvalidValue, Field::State, new_state)),
        };
        let cfg = valid_config(ttl_ms, lease_ms)?;
        Ok(made(&finish(&claimed, to, now(now_ms)?, &cfg)))
    })
}

/// The claim renewed at `now_ms` by the run that holds it (a heartbeat): its state code (pending), its
/// the record in the out slots. A record that is not pending is an `invalid_value` failure of
/// `record.state` (the JS layer renews only the claim it holds).
#[wasm_bindgen(js_name = ledgerRenew)]
#[allow(clippy::too_many_arguments)]
pub fn ledger_renew(
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
    now_ms: f64,
    ttl_ms: f64,
    lease_ms: f64,
) -> f64 {
    run(|| {
        let claimed = record(state, lease_until_ms, created_ms, expires_ms, version)?;
        let cfg = valid_config(ttl_ms, lease_ms)?;
        let renewed = renew(&claimed, now(now_ms)?, &cfg);
        renewed.map(|r| made(&r)).ok_or(Fail::new(FailKind::InvalidValue, Field::RecordState, state))
    })
}

/// How often a running claim is renewed, and how long before its lease ends its owner gives up (ms): a
/// third of `lease_ms`, or a failure for a lease out of range.
#[wasm_bindgen(js_name = ledgerKeepAlive)]
pub fn ledger_keep_alive(ttl_ms: f64, lease_ms: f64) -> f64 {
    run(|| Ok(keep_alive_ms(&valid_config(ttl_ms, lease_ms)?) as f64))
}

/// When the owner of a claim whose lease ends at `lease_until_ms` gives up on it (ms, on the clock the claim
/// was written by): a third of the lease before its end, or a failure for a lease out of range.
#[wasm_bindgen(js_name = ledgerGiveUpAt)]
pub fn ledger_give_up_at(lease_until_ms: f64, ttl_ms: f64, lease_ms: f64) -> f64 {
    run(|| {
        let cfg = valid_config(ttl_ms, lease_ms)?;
        let claimed = record(0.0, lease_until_ms, 0.0, 0.0, 1.0)?;
        Ok(give_up_at_ms(&claimed, &cfg) as f64)
    })
}

/// An operator's release at `now_ms`: 0 when released (the record in the out slots), 1 when refused (the
/// `RELEASE_REFUSALS` code and its `retryAfterMs` in the out slots).
#[wasm_bindgen(js_name = ledgerRelease)]
#[allow(clippy::too_many_arguments)]
pub fn ledger_release(
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
    now_ms: f64,
    ttl_ms: f64,
    lease_ms: f64,
) -> f64 {
    run(|| {
        let stored = record(state, lease_until_ms, created_ms, expires_ms, version)?;
        let cfg = valid_config(ttl_ms, lease_ms)?;
        Ok(match release(&stored, now(now_ms)?, &cfg) {
            Ok(r) => {
                made(&r);
                0.0
            }
            Err(refusal) => {
                let retry = if let ReleaseRefusal::LeaseLive { retry_after_ms } = refusal { retry_after_ms } else { 0 };
                coded(refusal.index(), retry);
                1.0
            }
        })
    })
}
