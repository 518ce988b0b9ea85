//! The hot path: outcomes in as small integers and numbers, decisions out as one packed `f64`, so that a
//! decision costs one boundary crossing and no object traffic. `client.api.js` encodes and decodes; the
//! name tables come from here (`RetryEngine.codeTables()`), so the two sides cannot drift apart.
//!
//! A packed step is `meta + delay_ms · 2^26` (exact: below 2^53), where `meta` holds, from bit 0:
//! action 1 · status 3 · reason 5 · recover 3 (0 = none) · verdict 3 · delivery 2 · cause 6 · breaker 3.

use js_sys::{Array, Object};
use wasm_bindgen::JsValue;

use super::error::range_error;
use super::outcome::{http_status, jsonrpc_code};
use super::read::set;
use super::JsResult;
use crate::retry::breaker::{BreakerState, Transition};
use crate::retry::engine::{Admission, Step};
use crate::retry::policy::{check_number, MAX_DURATION_MS};
use crate::retry::{
    AttemptOutcome, Cause, Classification, Decision, Delivery, FinalStatus, LedgerStatus, Reason, Recover, ResultType,
    Safety, Sent, Verdict,
};

const DELAY_SHIFT: f64 = 67_108_864.0; // 2^26

fn transition_code(t: Option<Transition>) -> u32 {
    match t.map(|t| (t.from, t.to)) {
        Some((BreakerState::Closed, BreakerState::Open { .. })) => 1,
        Some((BreakerState::Open { .. }, BreakerState::HalfOpen { .. })) => 2,
        Some((BreakerState::HalfOpen { .. }, BreakerState::Closed)) => 3,
        Some((BreakerState::HalfOpen { .. }, BreakerState::Open { .. })) => 4,
        _ => 0,
    }
}

fn decision_bits(d: &Decision) -> (u32, u64) {
    match *d {
        Decision::Retry { delay_ms, recover, reason } => {
            let r = recover.map_or(0, |r| (r as u32).saturating_add(1));
            ((reason as u32) << 4 | r << 9, delay_ms)
        }
        Decision::Stop { status, reason } => (1 | (status as u32) << 1 | (reason as u32) << 4, 0),
    }
}

fn classification_bits(c: &Classification) -> u32 {
    (c.verdict as u32) << 12 | (c.delivery as u32) << 15 | (c.cause as u32) << 17
}

/// A classification alone, packed like a step's classification bits.
pub fn pack_classification(c: &Classification) -> f64 {
    f64::from(classification_bits(c))
}

/// One step, packed.
pub fn pack_step(s: &Step) -> f64 {
    let (d, delay) = decision_bits(&s.decision);
    let meta = d | classification_bits(&s.classification) | transition_code(s.breaker) << 23;
    // Delays are at most a day (< 2^27): the sum stays an exact integer.
    f64::from(meta) + (delay.min(MAX_DURATION_MS) as f64) * DELAY_SHIFT
}

/// An admission, packed: bit 0 admitted · bits 1–3 breaker transition · bits 4–6 status · bits 7–11 reason ·
/// bits 12–19 attempt; plus `timeout_ms · 2^26`.
pub fn pack_admission(a: &Result<Admission, Decision>) -> f64 {
    match a {
        Ok(a) => {
            let meta = 1 | transition_code(a.breaker) << 1 | a.attempt.min(255) << 12;
            f64::from(meta) + (a.timeout_ms.min(MAX_DURATION_MS) as f64) * DELAY_SHIFT
        }
        Err(d) => {
            let (bits, _) = decision_bits(d);
            // bits: 1 | status << 1 | reason << 4 → status into 4–6, reason into 7–11
            let status = (bits >> 1) & 7;
            let reason = (bits >> 4) & 31;
            f64::from(status << 4 | reason << 7)
        }
    }
}

fn flag(v: f64) -> bool {
    v != 0.0
}

fn optional_ms(field: &str, v: f64) -> JsResult<Option<u64>> {
    if v < 0.0 && v.is_finite() {
        return Ok(None); // the encoder's "absent"
    }
    Ok(Some(check_number(field, v, 0, MAX_DURATION_MS, false)?))
}

fn bad(field: &str, what: &str) -> JsValue {
    range_error("invalid_value", field, &format!("{field} must be {what}"))
}

/// The outcome from `kind` and three numbers (see `client.api.js` for the encoding).
pub fn unpack_outcome(kind: u32, a: f64, b: f64, c: f64) -> JsResult<AttemptOutcome> {
    let sent = |v: f64| if flag(v) { Sent::Maybe } else { Sent::No };
    Ok(match kind {
        0 => AttemptOutcome::Result {
            is_error: flag(a),
            result_type: match b as u32 {
                1 => ResultType::InputRequired,
                2 => ResultType::Task,
                _ => ResultType::Complete,
            },
        },
        1 => AttemptOutcome::JsonRpcError { code: jsonrpc_code(a)? },
        2 => AttemptOutcome::Http {
            status: http_status(a)?,
            retry_after_ms: optional_ms("outcome.retryAfterMs", b)?,
            had_session: flag(c),
            // An HTTP answer with a JSON-RPC body takes the object reader (its code has no slot here).
            jsonrpc_code: None,
        },
        3 => AttemptOutcome::Network { sent: sent(a) },
        4 => AttemptOutcome::Timeout,
        5 => AttemptOutcome::StreamBroken { event_id_seen: flag(a), retry_ms: optional_ms("outcome.retryMs", b)? },
        6 => AttemptOutcome::Aborted { sent: sent(a) },
        7 => AttemptOutcome::Ledger {
            status: match a as u32 {
                0 => LedgerStatus::InProgress,
                1 => LedgerStatus::Unknown,
                2 => LedgerStatus::Conflict,
                3 => LedgerStatus::Rejected,
                _ => return Err(bad("outcome.status", "in_progress, unknown, conflict or rejected")),
            },
            retry_after_ms: optional_ms("outcome.retryAfterMs", b)?,
        },
        _ => return Err(bad("outcome.kind", "a known outcome kind")),
    })
}

/// The safety from its code (the order of `Safety`'s variants).
pub fn unpack_safety(code: u32) -> JsResult<Safety> {
    match code {
        0 => Ok(Safety::ReadOnly),
        1 => Ok(Safety::Idempotent),
        2 => Ok(Safety::Keyed),
        3 => Ok(Safety::Unsafe),
        _ => Err(bad("safety", "one of read_only, idempotent, keyed, unsafe")),
    }
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
    let t: Array =
        [("", ""), ("closed", "open"), ("open", "half_open"), ("half_open", "closed"), ("half_open", "open")]
            .iter()
            .map(|(from, to)| -> JsValue {
                [JsValue::from_str(from), JsValue::from_str(to)].iter().collect::<Array>().into()
            })
            .collect();
    set(&o, "transitions", t.into());
    o.into()
}
