//! The one protocol of `record`, `admit` and `classify`: outcomes in as a kind code and four numbers,
//! decisions out as one packed `f64`, so that a decision costs one boundary crossing and no object traffic.
//! `client/engine.js` encodes and decodes. The layout and the kind codes are [`crate::vocab`]'s, generated
//! for JS (`pkg-template/generated/names.js`), so the two sides cannot drift apart.

use super::fail::{Fail, FailKind, Field};
use crate::input::MAX_DURATION_MS;
use crate::retry::breaker::{BreakerState, Transition};
use crate::retry::engine::{Admission, Step};
use crate::retry::{AttemptOutcome, Classification, Decision, LedgerStatus, ResultType, Safety, Sent};
use crate::vocab::{
    ADMIT_ADMITTED, ADMIT_ATTEMPT, ADMIT_BREAKER, ADMIT_REASON, ADMIT_STATUS, C_B_PRESENT, C_D_PRESENT, C_HAD_SESSION,
    KIND_ABORTED, KIND_HTTP, KIND_JSONRPC_ERROR, KIND_LEDGER, KIND_NETWORK, KIND_RESULT, KIND_STREAM_BROKEN,
    KIND_TIMEOUT, STEP_BREAKER, STEP_CAUSE, STEP_DELIVERY, STEP_REASON, STEP_RECOVER, STEP_RETRY_AFTER, STEP_STOP,
    STEP_VERDICT, VALUE_SCALE,
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

/// A decision alone (a poll's): its bits, plus the delay as the value.
pub fn pack_decision(d: &Decision) -> f64 {
    let (bits, delay) = decision_bits(d);
    f64::from(bits) + value(delay)
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

/// The entry of `all` whose code is `v` (a whole number), or `invalid_value` naming `field`.
pub fn code<T: Copy>(all: &[T], v: f64, field: Field) -> Result<T, Fail> {
    index(v, all.len()).and_then(|i| all.get(i).copied()).ok_or(Fail::new(FailKind::InvalidValue, field, v))
}

fn index(v: f64, len: usize) -> Option<usize> {
    (v.fract() == 0.0 && v >= 0.0 && v < len as f64).then_some(v as usize)
}

/// A JSON-RPC code: a safe integer, else `not_integer` with the bound 2^53 − 1 (JS says "a safe integer").
fn jsonrpc_code(field: Field, v: f64) -> Result<i64, Fail> {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if !v.is_finite() || v.fract() != 0.0 || v.abs() > SAFE {
        return Err(Fail::new(FailKind::NotInteger, field, v).bound(SAFE));
    }
    Ok(v as i64)
}

/// The outcome from `kind` and four numbers (the encoding of each kind: [`crate::vocab`]'s `KIND_*`).
pub fn unpack_outcome(kind: f64, a: f64, b: f64, c: f64, d: f64) -> Result<AttemptOutcome, Fail> {
    let flags = if c.fract() == 0.0 && (0.0..8.0).contains(&c) { c as u32 } else { 0 };
    let present = |bit: u32| flags & bit != 0;
    let wait = |field: Field| -> Result<Option<u64>, Fail> {
        // A server may ask for any wait; the policy clamps it. Past a day is nonsense and rejected.
        if present(C_B_PRESENT) {
            Ok(Some(Fail::number(field, b, 0, MAX_DURATION_MS, false)?))
        } else {
            Ok(None)
        }
    };
    let sent = || code(&Sent::ALL, a, Field::Kind);
    let kind = if kind.fract() == 0.0 && (0.0..=f64::from(KIND_LEDGER)).contains(&kind) {
        kind as u32
    } else {
        return Err(Fail::new(FailKind::InvalidValue, Field::Kind, kind));
    };
    Ok(match kind {
        KIND_RESULT => {
            AttemptOutcome::Result { is_error: flag(a), result_type: code(&ResultType::ALL, b, Field::Kind)? }
        }
        KIND_JSONRPC_ERROR => AttemptOutcome::JsonRpcError { code: jsonrpc_code(Field::OutcomeCode, a)? },
        KIND_HTTP => AttemptOutcome::Http {
            status: u16::try_from(Fail::number(Field::OutcomeStatus, a, 100, 999, true)?).unwrap_or(999),
            retry_after_ms: wait(Field::OutcomeRetryAfterMs)?,
            had_session: present(C_HAD_SESSION),
            jsonrpc_code: if present(C_D_PRESENT) { Some(jsonrpc_code(Field::OutcomeJsonrpcCode, d)?) } else { None },
        },
        KIND_NETWORK => AttemptOutcome::Network { sent: sent()? },
        KIND_TIMEOUT => AttemptOutcome::Timeout,
        KIND_STREAM_BROKEN => {
            AttemptOutcome::StreamBroken { event_id_seen: flag(a), retry_ms: wait(Field::OutcomeRetryMs)? }
        }
        KIND_ABORTED => AttemptOutcome::Aborted { sent: sent()? },
        _ => AttemptOutcome::Ledger {
            status: code(&LedgerStatus::ALL, a, Field::Kind)?,
            retry_after_ms: wait(Field::OutcomeRetryAfterMs)?,
        },
    })
}

/// The safety from its code (the order of `Safety`'s variants).
pub fn unpack_safety(v: f64) -> Result<Safety, Fail> {
    code(&Safety::ALL, v, Field::Safety)
}
