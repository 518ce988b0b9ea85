//! Attempt outcomes from JS, and classifications, decisions and steps back to JS.
//!
//! An outcome is a tagged object: `{ kind: "result", isError?, resultType? }`,
//! `{ kind: "jsonrpc_error", code }`, `{ kind: "http", status, retryAfterMs?, hadSession?, jsonrpcCode? }`,
//! `{ kind: "network", sent: "no" | "maybe" }`, `{ kind: "timeout" }`,
//! `{ kind: "stream_broken", eventIdSeen?, retryMs? }`, `{ kind: "aborted", sent: "no" | "maybe" }`.

use js_sys::Object;
use wasm_bindgen::JsValue;

use super::error::range_error;
use super::read::{ms, set, Fields};
use super::JsResult;
use crate::retry::breaker::Transition;
use crate::retry::engine::{Admission, Step};
use crate::retry::policy::{check_number, Num, Quoted, MAX_DURATION_MS};
use crate::retry::{AttemptOutcome, Classification, Decision, LedgerStatus, ResultType, Sent};

fn invalid_value(field: &str, got: &str, expected: &str) -> JsValue {
    range_error("invalid_value", field, &format!("{field} must be one of {expected}, got {}", Quoted(got)))
}

fn required<T>(v: Option<T>, field: &str, what: &str) -> JsResult<T> {
    v.ok_or_else(|| super::error::type_error("missing", field, &format!("{field} is required ({what})")))
}

fn sent(f: &mut Fields<'_>) -> JsResult<Sent> {
    let s = required(f.string("sent")?, &f.name("sent"), "\"no\" or \"maybe\"")?;
    match s.as_str() {
        "no" => Ok(Sent::No),
        "maybe" => Ok(Sent::Maybe),
        _ => Err(invalid_value(&f.name("sent"), &s, "no, maybe")),
    }
}

fn optional_ms(f: &mut Fields<'_>, key: &'static str) -> JsResult<Option<u64>> {
    match f.number(key)? {
        None => Ok(None),
        // A server may ask for any wait; the policy clamps it. Past a day is nonsense and rejected.
        Some(v) => Ok(Some(check_number(&f.name(key), v, 0, MAX_DURATION_MS, false)?)),
    }
}

/// `outcome.code`: a safe integer (shared by the object reader and the packed hot path).
pub fn jsonrpc_code(v: f64) -> JsResult<i64> {
    jsonrpc_code_of("outcome.code", v)
}

/// A JSON-RPC code in `field`: a safe integer.
pub fn jsonrpc_code_of(field: &str, v: f64) -> JsResult<i64> {
    if !v.is_finite() || v.fract() != 0.0 || v.abs() > 9_007_199_254_740_991.0 {
        return Err(range_error("not_integer", field, &format!("{field} must be a safe integer, got {}", Num(v))));
    }
    Ok(v as i64)
}

/// `outcome.status`: a three-digit HTTP status (shared by the object reader and the packed hot path).
pub fn http_status(v: f64) -> JsResult<u16> {
    let status = check_number("outcome.status", v, 100, 999, true)?;
    Ok(u16::try_from(status).unwrap_or(999))
}

/// Reads an attempt outcome object.
pub fn read_outcome(value: &JsValue) -> JsResult<AttemptOutcome> {
    let Some(mut f) = Fields::new(value, "outcome", "outcome")? else {
        return Err(super::error::type_error("missing", "outcome", "outcome is required"));
    };
    let kind = required(f.string("kind")?, "outcome.kind", "the outcome's kind")?;
    let outcome = match kind.as_str() {
        "result" => {
            let is_error = f.boolean("isError")?.unwrap_or(false);
            let result_type = match f.string("resultType")?.as_deref() {
                None | Some("complete") => ResultType::Complete,
                Some("input_required") => ResultType::InputRequired,
                Some("task") => ResultType::Task,
                Some(other) => {
                    return Err(invalid_value("outcome.resultType", other, "complete, input_required, task"))
                }
            };
            AttemptOutcome::Result { is_error, result_type }
        }
        "jsonrpc_error" => AttemptOutcome::JsonRpcError {
            code: jsonrpc_code(required(f.number("code")?, "outcome.code", "the JSON-RPC error code")?)?,
        },
        "http" => {
            let status = required(f.number("status")?, "outcome.status", "the HTTP status")?;
            AttemptOutcome::Http {
                status: http_status(status)?,
                retry_after_ms: optional_ms(&mut f, "retryAfterMs")?,
                had_session: f.boolean("hadSession")?.unwrap_or(false),
                jsonrpc_code: match f.number("jsonrpcCode")? {
                    Some(v) => Some(jsonrpc_code_of("outcome.jsonrpcCode", v)?),
                    None => None,
                },
            }
        }
        "network" => AttemptOutcome::Network { sent: sent(&mut f)? },
        "timeout" => AttemptOutcome::Timeout,
        "stream_broken" => AttemptOutcome::StreamBroken {
            event_id_seen: f.boolean("eventIdSeen")?.unwrap_or(false),
            retry_ms: optional_ms(&mut f, "retryMs")?,
        },
        "aborted" => AttemptOutcome::Aborted { sent: sent(&mut f)? },
        "ledger" => {
            let s = required(f.string("status")?, "outcome.status", "the ledger's status")?;
            let status = match s.as_str() {
                "in_progress" => LedgerStatus::InProgress,
                "unknown" => LedgerStatus::Unknown,
                "conflict" => LedgerStatus::Conflict,
                "rejected" => LedgerStatus::Rejected,
                _ => return Err(invalid_value("outcome.status", &s, "in_progress, unknown, conflict, rejected")),
            };
            AttemptOutcome::Ledger { status, retry_after_ms: optional_ms(&mut f, "retryAfterMs")? }
        }
        other => {
            return Err(invalid_value(
                "outcome.kind",
                other,
                "result, jsonrpc_error, http, network, timeout, stream_broken, aborted, ledger",
            ))
        }
    };
    f.finish()?;
    Ok(outcome)
}

fn opt_ms(v: Option<u64>) -> JsValue {
    v.map_or(JsValue::UNDEFINED, ms)
}

/// `{ verdict, delivery, recover?, retryAfterMs?, cause }`.
pub fn classification_to_js(c: &Classification) -> JsValue {
    let o = Object::new();
    set(&o, "verdict", c.verdict.as_str().into());
    set(&o, "delivery", c.delivery.as_str().into());
    set(&o, "recover", c.recover.map_or(JsValue::UNDEFINED, |r| r.as_str().into()));
    set(&o, "retryAfterMs", opt_ms(c.retry_after_ms));
    set(&o, "cause", c.cause.as_str().into());
    o.into()
}

/// `{ action: "retry", delayMs, recover?, reason }` or `{ action: "stop", status, reason }`.
pub fn decision_to_js(d: &Decision) -> JsValue {
    let o = Object::new();
    match *d {
        Decision::Retry { delay_ms, recover, reason } => {
            set(&o, "action", "retry".into());
            set(&o, "delayMs", ms(delay_ms));
            set(&o, "recover", recover.map_or(JsValue::UNDEFINED, |r| r.as_str().into()));
            set(&o, "reason", reason.as_str().into());
        }
        Decision::Stop { status, reason } => {
            set(&o, "action", "stop".into());
            set(&o, "status", status.as_str().into());
            set(&o, "reason", reason.as_str().into());
        }
    }
    o.into()
}

fn transition_to_js(t: Option<Transition>) -> JsValue {
    match t {
        None => JsValue::UNDEFINED,
        Some(t) => {
            let o = Object::new();
            set(&o, "from", t.from.as_str().into());
            set(&o, "to", t.to.as_str().into());
            o.into()
        }
    }
}

/// `{ classification, decision, breaker? }`.
pub fn step_to_js(s: &Step) -> JsValue {
    let o = Object::new();
    set(&o, "classification", classification_to_js(&s.classification));
    set(&o, "decision", decision_to_js(&s.decision));
    set(&o, "breaker", transition_to_js(s.breaker));
    o.into()
}

/// `{ admitted: true, attempt, timeoutMs, breaker? }` or `{ admitted: false, decision }`.
pub fn admission_to_js(a: &Result<Admission, Decision>) -> JsValue {
    let o = Object::new();
    match a {
        Ok(a) => {
            set(&o, "admitted", JsValue::TRUE);
            set(&o, "attempt", a.attempt.into());
            set(&o, "timeoutMs", ms(a.timeout_ms));
            set(&o, "breaker", transition_to_js(a.breaker));
        }
        Err(d) => {
            set(&o, "admitted", JsValue::FALSE);
            set(&o, "decision", decision_to_js(d));
        }
    }
    o.into()
}
