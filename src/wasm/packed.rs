//! The one protocol of `record`, `admit` and `classify`: outcomes in as a kind code and four numbers,
//! decisions out as one packed `f64`, so that a decision costs one boundary crossing and no object traffic.
//! `client/engine.js` encodes and decodes. The layout, the kind codes and the name tables are
//! [`crate::vocab`]'s, generated for JS (`pkg-template/generated/names.js`), so the two sides cannot drift
//! apart; `RetryEngine.codeTables()` gives the same tables from the wasm itself.

use js_sys::{Array, Object};
use wasm_bindgen::JsValue;

use super::error::range_error;
use super::outcome::{http_status, jsonrpc_code, jsonrpc_code_of};
use super::read::set;
use super::JsResult;
use crate::retry::breaker::{BreakerState, Transition};
use crate::retry::engine::{Admission, Step};
use crate::retry::policy::{check_number, MAX_DURATION_MS};
use crate::retry::{
    AttemptOutcome, Cause, Classification, Decision, Delivery, FinalStatus, LedgerStatus, Reason, Recover, ResultType,
    Safety, Sent, Verdict,
};
use crate::vocab::{
    ADMIT_ADMITTED, ADMIT_ATTEMPT, ADMIT_BREAKER, ADMIT_REASON, ADMIT_STATUS, BREAKER_TRANSITIONS, C_B_PRESENT,
    C_D_PRESENT, C_HAD_SESSION, KIND_ABORTED, KIND_HTTP, KIND_JSONRPC_ERROR, KIND_LEDGER, KIND_NETWORK, KIND_RESULT,
    KIND_STREAM_BROKEN, KIND_TIMEOUT, STEP_BREAKER, STEP_CAUSE, STEP_DELIVERY, STEP_REASON, STEP_RECOVER,
    STEP_RETRY_AFTER, STEP_STOP, STEP_VERDICT, VALUE_SCALE,
};

const SCALE: f64 = VALUE_SCALE as f64;

fn transition_code(t: Option<Transition>) -> u32 {
    match t.map(|t| (t.from, t.to)) {
        Some((BreakerState::Closed, BreakerState::Open { .. })) => 1,
        Some((BreakerState::Open { .. }, BreakerState::HalfOpen { .. })) => 2,
        Some((BreakerState::HalfOpen { .. }, BreakerState::Closed)) => 3,
        Some((BreakerState::HalfOpen { .. }, BreakerState::Open { .. })) => 4,
        _ => 0,
    }
}

/// A code + 1 (0 stays "none").
fn plus_one(code: u32) -> u32 {
    code.saturating_add(1)
}

fn decision_bits(d: &Decision) -> (u32, u64) {
    match *d {
        Decision::Retry { delay_ms, recover, reason } => {
            (STEP_REASON.put(reason as u32) | STEP_RECOVER.put(recover.map_or(0, |r| plus_one(r as u32))), delay_ms)
        }
        Decision::Stop { status, reason } => {
            (STEP_STOP.put(plus_one(status as u32)) | STEP_REASON.put(reason as u32), 0)
        }
    }
}

fn classification_bits(c: &Classification) -> u32 {
    STEP_VERDICT.put(c.verdict as u32)
        | STEP_DELIVERY.put(c.delivery as u32)
        | STEP_CAUSE.put(c.cause as u32)
        | STEP_RETRY_AFTER.put(u32::from(c.retry_after_ms.is_some()))
}

fn value(ms: u64) -> f64 {
    // At most a day (< 2^27): the sum with a meta below 2^26 stays an exact integer.
    (ms.min(MAX_DURATION_MS) as f64) * SCALE
}

/// A classification alone: its bits, plus its `Retry-After` as the value.
pub fn pack_classification(c: &Classification) -> f64 {
    f64::from(classification_bits(c)) + value(c.retry_after_ms.unwrap_or(0))
}

/// One step: decision, classification and breaker bits, plus the delay as the value.
pub fn pack_step(s: &Step) -> f64 {
    let (d, delay) = decision_bits(&s.decision);
    let meta = d | classification_bits(&s.classification) | STEP_BREAKER.put(transition_code(s.breaker));
    f64::from(meta) + value(delay)
}

/// An admission: admitted, breaker, attempt and the timeout as the value; or the stop's status and reason.
pub fn pack_admission(a: &Result<Admission, Decision>) -> f64 {
    match a {
        Ok(a) => {
            let meta = ADMIT_ADMITTED.put(1)
                | ADMIT_BREAKER.put(transition_code(a.breaker))
                | ADMIT_ATTEMPT.put(a.attempt.min(ADMIT_ATTEMPT.mask));
            f64::from(meta) + value(a.timeout_ms)
        }
        Err(d) => {
            let (bits, _) = decision_bits(d);
            let status = STEP_STOP.get(bits).saturating_sub(1);
            f64::from(ADMIT_STATUS.put(status) | ADMIT_REASON.put(STEP_REASON.get(bits)))
        }
    }
}

fn flag(v: f64) -> bool {
    v != 0.0
}

fn bad(field: &str, what: &str) -> JsValue {
    range_error("invalid_value", field, &format!("{field} must be {what}"))
}

/// The entry of `all` whose code is `v` (a whole number), or the `invalid_value` error naming `field`. (The
/// JS encoder names the choices; a raw caller gets the short form.)
fn code<T: Copy>(all: &[T], v: f64, field: &str) -> JsResult<T> {
    index(v, all.len()).and_then(|i| all.get(i).copied()).ok_or_else(|| bad(field, "a known code"))
}

fn index(v: f64, len: usize) -> Option<usize> {
    (v.fract() == 0.0 && v >= 0.0 && v < len as f64).then_some(v as usize)
}

/// The outcome from `kind` and four numbers (the encoding of each kind: [`crate::vocab`]'s `KIND_*`).
pub fn unpack_outcome(kind: u32, a: f64, b: f64, c: f64, d: f64) -> JsResult<AttemptOutcome> {
    let flags = if c.fract() == 0.0 && (0.0..8.0).contains(&c) { c as u32 } else { 0 };
    let present = |bit: u32| flags & bit != 0;
    let wait = |field: &str| -> JsResult<Option<u64>> {
        // A server may ask for any wait; the policy clamps it. Past a day is nonsense and rejected.
        if present(C_B_PRESENT) {
            Ok(Some(check_number(field, b, 0, MAX_DURATION_MS, false)?))
        } else {
            Ok(None)
        }
    };
    let sent = || code(&Sent::ALL, a, "outcome.sent");
    Ok(match kind {
        KIND_RESULT => {
            AttemptOutcome::Result { is_error: flag(a), result_type: code(&ResultType::ALL, b, "outcome.resultType")? }
        }
        KIND_JSONRPC_ERROR => AttemptOutcome::JsonRpcError { code: jsonrpc_code(a)? },
        KIND_HTTP => AttemptOutcome::Http {
            status: http_status(a)?,
            retry_after_ms: wait("outcome.retryAfterMs")?,
            had_session: present(C_HAD_SESSION),
            jsonrpc_code: if present(C_D_PRESENT) { Some(jsonrpc_code_of("outcome.jsonrpcCode", d)?) } else { None },
        },
        KIND_NETWORK => AttemptOutcome::Network { sent: sent()? },
        KIND_TIMEOUT => AttemptOutcome::Timeout,
        KIND_STREAM_BROKEN => {
            AttemptOutcome::StreamBroken { event_id_seen: flag(a), retry_ms: wait("outcome.retryMs")? }
        }
        KIND_ABORTED => AttemptOutcome::Aborted { sent: sent()? },
        KIND_LEDGER => AttemptOutcome::Ledger {
            status: code(&LedgerStatus::ALL, a, "outcome.status")?,
            retry_after_ms: wait("outcome.retryAfterMs")?,
        },
        _ => return Err(bad("kind", "the code of a known outcome kind")),
    })
}

/// The safety from its code (the order of `Safety`'s variants).
pub fn unpack_safety(v: u32) -> JsResult<Safety> {
    code(&Safety::ALL, f64::from(v), "safety")
}

fn names<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> JsValue {
    all.iter().map(|v| JsValue::from_str(name(*v))).collect::<Array>().into()
}

/// `{ statuses, reasons, recovers, verdicts, deliveries, causes, causeRecovers, transitions }`: the name of
/// each code (and the recovery step each cause implies).
pub fn code_tables() -> JsValue {
    let o = Object::new();
    set(&o, "statuses", names(&FinalStatus::ALL, FinalStatus::as_str));
    set(&o, "reasons", names(&Reason::ALL, Reason::as_str));
    set(&o, "recovers", names(&Recover::ALL, Recover::as_str));
    set(&o, "verdicts", names(&Verdict::ALL, Verdict::as_str));
    set(&o, "deliveries", names(&Delivery::ALL, Delivery::as_str));
    set(&o, "causes", names(Cause::ALL, Cause::as_str));
    let cause_recovers: Array =
        Cause::ALL.iter().map(|c| c.recover().map_or(JsValue::UNDEFINED, |r| r.as_str().into())).collect();
    set(&o, "causeRecovers", cause_recovers.into());
    let t: Array = BREAKER_TRANSITIONS
        .iter()
        .map(|(from, to)| -> JsValue {
            [JsValue::from_str(from), JsValue::from_str(to)].iter().collect::<Array>().into()
        })
        .collect();
    set(&o, "transitions", t.into());
    o.into()
}
