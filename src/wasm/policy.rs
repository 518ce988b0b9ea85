//! A client engine's policy across the boundary: `engineNew` reads the policy values, sections and revision
//! into a new engine (each value refused by name when it is out of range), `enginePolicy` hands the engine's
//! policy back in one crossing.

use wasm_bindgen::prelude::wasm_bindgen;

use super::client::{engine_insert, revision_setting, with_engine, EngineSlot, FailKind, Field};
use super::fail::{run, Fail};
use super::out::put;
use super::packed::code;
use crate::retry::policy::{BreakerOptions, BudgetOptions, PolicyErrorKind, PolicyField, Section};
use crate::retry::{Engine, Jitter, Policy, PolicyError, PolicyOptions};
use crate::seam::{Out, POLICY};
use crate::vocab::POLICY_VALUES;

fn section(mode: f64) -> Section<()> {
    if mode == 0.0 {
        Section::Off
    } else if mode == 2.0 {
        Section::On(())
    } else {
        Section::Default
    }
}

/// How policy value `i` (a `BOUNDARY_FIELDS` index) is read from a JS number ([`POLICY`]'s unit): whether it
/// must be whole, and its scale (tokens and the failure ratio are counted in thousandths, rounded; durations
/// in whole ms, fractions dropped).
fn policy_scale(i: usize) -> (bool, f64) {
    POLICY.get(i).map_or((false, 1.0), |(_, unit, _)| (unit.whole(), unit.scale()))
}

/// Policy value `i` as the core's integer: NaN, ±∞, negative and fractional counts refused by name; a value
/// too large for the field saturates and the core names it.
#[inline(never)]
fn policy_int(i: usize, v: f64) -> Result<u64, Fail> {
    let fail = |kind| Fail { kind, field: i as u32, value: v, bound: 0.0 };
    let (integer, scale) = policy_scale(i);
    if !v.is_finite() {
        return Err(fail(FailKind::NotFinite));
    }
    if v < 0.0 {
        return Err(fail(FailKind::Negative));
    }
    if integer && v.fract() != 0.0 {
        return Err(fail(FailKind::NotInteger));
    }
    let scaled = v * scale;
    Ok(if scale == 1.0 { scaled as u64 } else { scaled.round() as u64 })
}

/// The core's policy error, named by its field's code, with the value as given and the bound in JS units.
fn policy_fail(e: PolicyError, given: &[f64; POLICY_VALUES]) -> Fail {
    use PolicyField as F;
    let field = match e.field {
        F::MaxAttempts => Field::MaxAttempts,
        F::BaseDelayMs => Field::BaseDelayMs,
        F::MaxDelayMs => Field::MaxDelayMs,
        F::AttemptTimeoutMs => Field::AttemptTimeoutMs,
        F::TotalTimeoutMs => Field::TotalTimeoutMs,
        F::MaxRetryAfterMs => Field::MaxRetryAfterMs,
        F::BudgetCapacity => Field::BudgetCapacity,
        F::BudgetRetryCost => Field::BudgetRetryCost,
        F::BudgetTimeoutCost => Field::BudgetTimeoutCost,
        F::BudgetSuccessRefill => Field::BudgetSuccessRefill,
        F::BudgetRefillPerSecond => Field::BudgetRefillPerSecond,
        F::BreakerConsecutiveFailures => Field::BreakerConsecutiveFailures,
        F::BreakerFailureRatio => Field::BreakerFailureRatio,
        F::BreakerMinimumCalls => Field::BreakerMinimumCalls,
        F::BreakerWindowMs => Field::BreakerWindowMs,
        F::BreakerOpenMs => Field::BreakerOpenMs,
    };
    let i = field as usize;
    let value = given.get(i).copied().unwrap_or(f64::NAN);
    let scale = policy_scale(i).1;
    let (kind, value, bound) = match e.kind {
        PolicyErrorKind::TooSmall { min, .. } => (FailKind::TooSmall, value, min as f64 / scale),
        PolicyErrorKind::TooLarge { max, .. } => (FailKind::TooLarge, value, max as f64 / scale),
        PolicyErrorKind::BaseExceedsCap { base, cap } => (FailKind::BaseExceedsCap, base as f64, cap as f64),
    };
    Fail { kind, field: i as u32, value, bound }
}

/// A new engine from the policy values (`BOUNDARY_FIELDS` 0–16, each used when its bit in `present` is
/// set; `jitter` as its code), the budget and breaker sections (`0` off, `1` defaults, `2` tuned), and the
/// revision code (`REVISIONS`' index; their count for "unknown"). Returns the engine's handle.
#[wasm_bindgen(js_name = engineNew)]
#[allow(clippy::too_many_arguments)]
pub fn engine_new(
    present: f64,
    budget: f64,
    breaker: f64,
    revision: f64,
    v0: f64,
    v1: f64,
    v2: f64,
    v3: f64,
    v4: f64,
    v5: f64,
    v6: f64,
    v7: f64,
    v8: f64,
    v9: f64,
    v10: f64,
    v11: f64,
    v12: f64,
    v13: f64,
    v14: f64,
    v15: f64,
    v16: f64,
) -> f64 {
    run(|| {
        let bits = if present.fract() == 0.0 && (0.0..131_072.0).contains(&present) { present as u32 } else { 0 };
        let v = [v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15, v16];
        let at = |i: usize| -> Option<f64> {
            (i < POLICY_VALUES && bits & (1u32 << i) != 0).then(|| v.get(i).copied()).flatten()
        };
        let jitter = match at(3) {
            Some(j) => Some(code(&Jitter::ALL, j, Field::None).map_err(|f| Fail { field: 3, ..f })?),
            None => None,
        };
        // Every value read in one loop (one copy of the checks, not sixteen); `jitter` is a code, read above.
        let mut ints = [None; POLICY_VALUES];
        for (i, slot) in ints.iter_mut().enumerate() {
            if i != 3 {
                *slot = at(i).map(|x| policy_int(i, x)).transpose()?;
            }
        }
        let int = |i: usize| -> Result<Option<u64>, Fail> { Ok(ints.get(i).copied().flatten()) };
        let count =
            |i: usize| -> Result<Option<u32>, Fail> { Ok(int(i)?.map(|n| u32::try_from(n).unwrap_or(u32::MAX))) };
        let options = PolicyOptions {
            max_attempts: count(0)?,
            base_delay_ms: int(1)?,
            max_delay_ms: int(2)?,
            jitter,
            attempt_timeout_ms: int(4)?,
            total_timeout_ms: int(5)?,
            max_retry_after_ms: int(6)?,
            budget: match section(budget) {
                Section::On(()) => Section::On(BudgetOptions {
                    capacity_milli: int(7)?,
                    retry_cost_milli: int(8)?,
                    timeout_cost_milli: int(9)?,
                    success_refill_milli: int(10)?,
                    refill_per_second_milli: int(11)?,
                }),
                Section::Off => Section::Off,
                Section::Default => Section::Default,
            },
            breaker: match section(breaker) {
                Section::On(()) => Section::On(BreakerOptions {
                    consecutive_failures: count(12)?,
                    failure_ratio_permille: count(13)?,
                    minimum_calls: count(14)?,
                    window_ms: int(15)?,
                    open_ms: int(16)?,
                }),
                Section::Off => Section::Off,
                Section::Default => Section::Default,
            },
        };
        let policy = Policy::new(&options).map_err(|e| policy_fail(e, &v))?;
        let revision = revision_setting(revision)?;
        let slot = EngineSlot { engine: Engine::new(policy), rng: None, revision };
        engine_insert(slot)
    })
}

/// The engine's policy, in one crossing: every value into its out slot ([`POLICY`]), in JS units (tokens and
/// the failure ratio as numbers, `jitter` as its code), and whether the budget and the breaker are on
/// (`budgetOn`, `breakerOn`; a section's values are its defaults when it is off).
#[wasm_bindgen(js_name = enginePolicy)]
pub fn engine_policy(engine: f64) -> f64 {
    run(|| {
        with_engine(engine, |e| {
            let p = e.engine.policy();
            let (b, k) = (p.budget.unwrap_or_default(), p.breaker.unwrap_or_default());
            let values: [u64; POLICY_VALUES] = [
                p.max_attempts.into(),
                p.base_delay_ms,
                p.max_delay_ms,
                p.jitter as u64,
                p.attempt_timeout_ms,
                p.total_timeout_ms,
                p.max_retry_after_ms,
                b.capacity_milli,
                b.retry_cost_milli,
                b.timeout_cost_milli,
                b.success_refill_milli,
                b.refill_per_second_milli,
                k.consecutive_failures.into(),
                k.failure_ratio_permille.into(),
                k.minimum_calls.into(),
                k.window_ms,
                k.open_ms,
            ];
            for ((_, unit, slot), v) in POLICY.iter().zip(values) {
                put(*slot, v as f64 / unit.scale());
            }
            put(Out::BudgetOn, f64::from(u8::from(p.budget.is_some())));
            put(Out::BreakerOn, f64::from(u8::from(p.breaker.is_some())));
            Ok(0.0)
        })
    })
}
