//! Policy options: a JS object (camelCase, unknown keys rejected) to [`PolicyOptions`], and a [`Policy`]
//! back to a plain object.

use js_sys::Object;
use wasm_bindgen::JsValue;

use super::read::{check_object, ms, set, Fields};
use super::JsResult;
use crate::retry::policy::{BreakerOptions, BudgetOptions, Section};
use crate::retry::{Policy, PolicyOptions};

/// Reads `value` (undefined, or an object) as policy options.
pub fn read_options(value: &JsValue) -> JsResult<PolicyOptions> {
    let Some(mut f) = Fields::new(value, "", "policy")? else { return Ok(PolicyOptions::default()) };
    let o = PolicyOptions {
        max_attempts: f.number("maxAttempts")?,
        base_delay_ms: f.number("baseDelayMs")?,
        max_delay_ms: f.number("maxDelayMs")?,
        jitter: f.string("jitter")?,
        attempt_timeout_ms: f.number("attemptTimeoutMs")?,
        total_timeout_ms: f.number("totalTimeoutMs")?,
        max_retry_after_ms: f.number("maxRetryAfterMs")?,
        budget: section(&f.get("budget")?, "budget", |b| {
            Ok(BudgetOptions {
                capacity: b.number("capacity")?,
                retry_cost: b.number("retryCost")?,
                timeout_cost: b.number("timeoutCost")?,
                success_refill: b.number("successRefill")?,
            })
        })?,
        breaker: section(&f.get("breaker")?, "breaker", |b| {
            Ok(BreakerOptions {
                consecutive_failures: b.number("consecutiveFailures")?,
                failure_ratio: b.number("failureRatio")?,
                minimum_calls: b.number("minimumCalls")?,
                window_ms: b.number("windowMs")?,
                open_ms: b.number("openMs")?,
            })
        })?,
    };
    f.finish()?;
    Ok(o)
}

/// `undefined` → defaults, `false` → off, an object → tuned. `true` means the defaults too.
fn section<T>(
    value: &JsValue,
    name: &'static str,
    read: impl FnOnce(&mut Fields<'_>) -> JsResult<T>,
) -> JsResult<Section<T>> {
    match value.as_bool() {
        Some(false) => return Ok(Section::Off),
        Some(true) => return Ok(Section::Default),
        None => {}
    }
    if !value.is_undefined() {
        check_object(value, name, "an object or false")?;
    }
    match Fields::new(value, name, name)? {
        None => Ok(Section::Default),
        Some(mut f) => {
            let t = read(&mut f)?;
            f.finish()?;
            Ok(Section::On(t))
        }
    }
}

fn tokens(milli: u64) -> JsValue {
    JsValue::from_f64(milli as f64 / 1000.0)
}

/// The policy as a plain object with the same names the options use (sections `false` when off).
pub fn to_js(p: &Policy) -> JsValue {
    let o = Object::new();
    set(&o, "maxAttempts", p.max_attempts.into());
    set(&o, "baseDelayMs", ms(p.base_delay_ms));
    set(&o, "maxDelayMs", ms(p.max_delay_ms));
    set(&o, "jitter", p.jitter.as_str().into());
    set(&o, "attemptTimeoutMs", ms(p.attempt_timeout_ms));
    set(&o, "totalTimeoutMs", ms(p.total_timeout_ms));
    set(&o, "maxRetryAfterMs", ms(p.max_retry_after_ms));
    set(
        &o,
        "budget",
        match p.budget {
            None => JsValue::FALSE,
            Some(b) => {
                let s = Object::new();
                set(&s, "capacity", tokens(b.capacity_milli));
                set(&s, "retryCost", tokens(b.retry_cost_milli));
                set(&s, "timeoutCost", tokens(b.timeout_cost_milli));
                set(&s, "successRefill", tokens(b.success_refill_milli));
                s.into()
            }
        },
    );
    set(
        &o,
        "breaker",
        match p.breaker {
            None => JsValue::FALSE,
            Some(b) => {
                let s = Object::new();
                set(&s, "consecutiveFailures", b.consecutive_failures.into());
                set(&s, "failureRatio", JsValue::from_f64(f64::from(b.failure_ratio_permille) / 1000.0));
                set(&s, "minimumCalls", b.minimum_calls.into());
                set(&s, "windowMs", ms(b.window_ms));
                set(&s, "openMs", ms(b.open_ms));
                s.into()
            }
        },
    );
    o.into()
}
