//! The hot path's encodings: an outcome in as a kind code and four numbers ([`unpack_outcome`]); a decision,
//! classification, step or admission out into the client's out slots ([`crate::seam::Out`], read in place
//! by the generated `pkg-template/generated/seam.js`), so that a decision costs one boundary crossing and no
//! object traffic. The kind codes are [`crate::vocab`]'s, generated for JS like the slots.

use super::fail::{Fail, FailKind, Field};
use super::out::put;
use crate::input::MAX_DURATION_MS;
use crate::retry::breaker::{BreakerState, Transition};
use crate::retry::engine::{Admission, Step};
use crate::retry::{AttemptOutcome, Classification, Decision, LedgerStatus, ResultType, Safety, Sent};
use crate::seam::Out;
use crate::vocab::{
    C_B_PRESENT, C_D_PRESENT, C_HAD_SESSION, C_MISMATCH_CONFIRMED, KIND_ABORTED, KIND_HTTP, KIND_JSONRPC_ERROR,
    KIND_LEDGER, KIND_NETWORK, KIND_PROCESS_EXITED, KIND_PROCESS_UNRESPONSIVE, KIND_RESULT, KIND_STREAM_BROKEN,
    KIND_TIMEOUT, KIND_WITHHELD,
};

/// A breaker transition's code (`BREAKER_TRANSITIONS`; 0: none).
#[inline(never)] // one copy for every export
pub fn transition_code(t: Option<Transition>) -> f64 {
    match t.map(|t| (t.from, t.to)) {
        Some((BreakerState::Closed, BreakerState::Open { .. })) => 1.0,
        Some((BreakerState::Open { .. }, BreakerState::HalfOpen { .. })) => 2.0,
        Some((BreakerState::HalfOpen { .. }, BreakerState::Closed)) => 3.0,
        Some((BreakerState::HalfOpen { .. }, BreakerState::Open { .. })) => 4.0,
        _ => 0.0,
    }
}

/// A code, or `NaN` for none.
fn maybe(code: Option<u32>) -> f64 {
    code.map_or(f64::NAN, f64::from)
}

/// A decision: `stop`, `reason`, `recover`, `delayMs`.
#[inline(never)] // one copy for every export
pub fn put_decision(d: &Decision) {
    match *d {
        Decision::Retry { delay_ms, recover, reason } => {
            put(Out::Stop, f64::NAN);
            put(Out::Reason, f64::from(reason as u32));
            put(Out::Recover, maybe(recover.map(|r| r as u32)));
            put(Out::DelayMs, delay_ms as f64);
        }
        Decision::Stop { status, reason } => {
            put(Out::Stop, f64::from(status as u32));
            put(Out::Reason, f64::from(reason as u32));
            put(Out::Recover, f64::NAN);
            put(Out::DelayMs, 0.0);
        }
    }
}

/// A classification: `verdict`, `delivery`, `cause`, `causeRecover`, `retryAfterMs`.
#[inline(never)] // one copy for every export
pub fn put_classification(c: &Classification) {
    put(Out::Verdict, f64::from(c.verdict as u32));
    put(Out::Delivery, f64::from(c.delivery as u32));
    put(Out::Cause, f64::from(c.cause as u32));
    put(Out::CauseRecover, maybe(c.cause.recover().map(|r| r as u32)));
    put(Out::RetryAfterMs, c.retry_after_ms.map_or(f64::NAN, |ms| ms as f64));
}

/// One step: its decision, its classification and the breaker's transition.
#[inline(never)] // one copy for every export
pub fn put_step(s: &Step) {
    put_decision(&s.decision);
    put_classification(&s.classification);
    put(Out::Breaker, transition_code(s.breaker));
}

/// An admission: `admitted` and the attempt, its timeout and the breaker's transition; or the stop.
#[inline(never)] // one copy for every export
pub fn put_admission(a: &Result<Admission, Decision>) {
    match a {
        Ok(a) => {
            put(Out::Admitted, 1.0);
            put(Out::Attempt, f64::from(a.attempt));
            put(Out::TimeoutMs, a.timeout_ms as f64);
            put(Out::Breaker, transition_code(a.breaker));
        }
        Err(d) => {
            put(Out::Admitted, 0.0);
            put(Out::Breaker, 0.0);
            put_decision(d);
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
    let flags = if c.fract() == 0.0 && (0.0..16.0).contains(&c) { c as u32 } else { 0 };
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
    let kind = if kind.fract() == 0.0 && (0.0..=f64::from(KIND_WITHHELD)).contains(&kind) {
        kind as u32
    } else {
        return Err(Fail::new(FailKind::InvalidValue, Field::Kind, kind));
    };
    Ok(match kind {
        KIND_RESULT => {
            AttemptOutcome::Result { is_error: flag(a), result_type: code(&ResultType::ALL, b, Field::Kind)? }
        }
        KIND_JSONRPC_ERROR => AttemptOutcome::JsonRpcError {
            code: jsonrpc_code(Field::OutcomeCode, a)?,
            mismatch_confirmed: present(C_MISMATCH_CONFIRMED),
        },
        KIND_HTTP => AttemptOutcome::Http {
            status: u16::try_from(Fail::number(Field::OutcomeStatus, a, 100, 999, true)?).unwrap_or(999),
            retry_after_ms: wait(Field::OutcomeRetryAfterMs)?,
            had_session: present(C_HAD_SESSION),
            jsonrpc_code: if present(C_D_PRESENT) { Some(jsonrpc_code(Field::OutcomeJsonrpcCode, d)?) } else { None },
            mismatch_confirmed: present(C_MISMATCH_CONFIRMED),
        },
        KIND_NETWORK => AttemptOutcome::Network { sent: sent()? },
        KIND_TIMEOUT => AttemptOutcome::Timeout,
        KIND_STREAM_BROKEN => {
            AttemptOutcome::StreamBroken { event_id_seen: flag(a), retry_ms: wait(Field::OutcomeRetryMs)? }
        }
        KIND_ABORTED => AttemptOutcome::Aborted { sent: sent()? },
        KIND_LEDGER => AttemptOutcome::Ledger {
            status: code(&LedgerStatus::ALL, a, Field::Kind)?,
            retry_after_ms: wait(Field::OutcomeRetryAfterMs)?,
        },
        KIND_PROCESS_EXITED => AttemptOutcome::ProcessExited { sent: sent()? },
        KIND_PROCESS_UNRESPONSIVE => AttemptOutcome::ProcessUnresponsive,
        _ => AttemptOutcome::Withheld,
    })
}

/// The safety from its code (the order of `Safety`'s variants).
pub fn unpack_safety(v: f64) -> Result<Safety, Fail> {
    code(&Safety::ALL, v, Field::Safety)
}
