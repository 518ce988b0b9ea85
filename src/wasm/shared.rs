//! A breaker and budget shared by every process calling one server. The state is stored elsewhere (a Durable
//! Object, `pkg-template/client/shared-breaker.js`); these exports hand the engine's side of it out and take the
//! newest in. Every decision stays the engine's.

use wasm_bindgen::prelude::wasm_bindgen;

use super::client::{time, with_engine, Field};
use super::fail::{run, Fail};
use super::out::put;
use super::packed::code;
use crate::seam::Out;

/// A shared state's code (`BREAKER_STATES`) + 1; 0 for none.
fn shared_code(s: Option<crate::retry::SharedState>) -> f64 {
    use crate::retry::SharedState;
    match s {
        None => 0.0,
        Some(SharedState::Closed) => 1.0,
        Some(SharedState::Open) => 2.0,
        Some(SharedState::HalfOpen) => 3.0,
    }
}

/// The breaker's and budget's shareable state, in one crossing, into the out slots: `state` (a
/// `BREAKER_STATES` code), `sinceMs` and `failures` (in a row, while closed), each `NaN` without a breaker;
/// `budgetTokens`, `NaN` without a budget.
#[wasm_bindgen(js_name = engineSnapshot)]
pub fn engine_snapshot(engine: f64) -> f64 {
    run(|| {
        with_engine(engine, |e| {
            let s = e.engine.breaker_snapshot();
            let code = shared_code(s.map(|s| s.state));
            put(Out::State, if code == 0.0 { f64::NAN } else { code - 1.0 });
            put(Out::SinceMs, s.map_or(f64::NAN, |s| s.since_ms as f64));
            put(Out::Failures, s.map_or(f64::NAN, |_| f64::from(e.engine.breaker_failures())));
            put(Out::BudgetTokens, e.engine.budget_milli().map_or(f64::NAN, |m| m as f64 / 1000.0));
            Ok(0.0)
        })
    })
}

/// 1 when the next admission at `now_ms` would send the breaker's probe, else 0.
#[wasm_bindgen(js_name = engineProbeDue)]
pub fn engine_probe_due(engine: f64, now_ms: f64) -> f64 {
    run(|| {
        let now = time(now_ms)?;
        with_engine(engine, |e| Ok(f64::from(u8::from(e.engine.breaker_probe_due(now)))))
    })
}

/// Adopts what other processes shared: when `has_state` is 1, a breaker snapshot (`state`: a `BREAKER_STATES`
/// code; `since_ms`); when `has_budget` is 1, the budget's shared tokens (`budget_tokens`, in tokens; rounded to
/// thousandths); when `has_failures` is 1, the failures in a row the fleet counted; when `has_now` is 1, the
/// snapshot is taken as of `now_ms` ([`BreakerSnapshot::no_later_than`]: a state from the future begins now).
/// Returns the breaker's state code + 1 afterwards (0 without a breaker).
#[wasm_bindgen(js_name = engineAdopt)]
#[allow(clippy::too_many_arguments)]
pub fn engine_adopt(
    engine: f64,
    has_state: f64,
    state: f64,
    since_ms: f64,
    has_budget: f64,
    budget_tokens: f64,
    has_failures: f64,
    failures: f64,
    has_now: f64,
    now_ms: f64,
) -> f64 {
    use crate::retry::{BreakerSnapshot, SharedState};
    run(|| {
        let now = if has_now == 1.0 { Some(time(now_ms)?) } else { None };
        let snapshot = if has_state == 1.0 {
            let state = code(&SharedState::ALL, state, Field::SnapshotState)?;
            let since_ms = Fail::number(Field::SnapshotSinceMs, since_ms, 0, 1 << 53, true)?;
            let s = BreakerSnapshot { state, since_ms };
            Some(now.map_or(s, |n| s.no_later_than(n)))
        } else {
            None
        };
        let budget = if has_budget == 1.0 {
            Fail::number(Field::SnapshotBudgetTokens, budget_tokens, 0, 1 << 43, false)?;
            Some((budget_tokens * 1000.0).round() as u64)
        } else {
            None
        };
        let failures = if has_failures == 1.0 {
            Some(Fail::number(Field::SnapshotFailures, failures, 0, u64::from(u32::MAX), true)? as u32)
        } else {
            None
        };
        with_engine(engine, |e| {
            e.engine.adopt(snapshot, budget);
            if let Some(n) = failures {
                e.engine.adopt_failures(n);
            }
            Ok(shared_code(e.engine.breaker_snapshot().map(|s| s.state)))
        })
    })
}
