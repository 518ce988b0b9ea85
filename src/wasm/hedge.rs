//! The hedged-read exports (`src/retry/hedge.rs`): numbers in, numbers out, like the rest of the client face.
//! Kept apart from `engineNew` so that its sixteen policy values and the field codes after them stay as they
//! are: hedging is set on a live engine with [`engine_hedging`] (`RetryEngine`'s constructor calls it).

use wasm_bindgen::prelude::wasm_bindgen;

use super::client::{time, with_call, with_engine, FailKind, Field};
use super::fail::{run, Fail};
use super::packed::unpack_safety;
use crate::input::MAX_DURATION_MS;
use crate::retry::hedge::{HedgeConfig, HedgeField, HedgeOptions, MAX_HEDGES};
use crate::vocab::HEDGE_SCALE;

/// Sets the engine's hedging: `hedge_after_ms` when bit 1 of `present` is set, `max_hedges` when bit 2 is
/// (neither: off). Returns 1 when hedging is on, 0 when off.
#[wasm_bindgen(js_name = engineHedging)]
pub fn engine_hedging(engine: f64, present: f64, hedge_after_ms: f64, max_hedges: f64) -> f64 {
    run(|| {
        let bits = if present == 1.0 || present == 2.0 || present == 3.0 { present as u32 } else { 0 };
        let after = match bits & 1 {
            0 => None,
            _ => Some(Fail::number(Field::HedgeAfterMs, hedge_after_ms, 0, MAX_DURATION_MS, true)?),
        };
        let max = match bits & 2 {
            0 => None,
            _ => Some(Fail::number(Field::MaxHedges, max_hedges, 0, u64::from(MAX_HEDGES), true)?),
        };
        let options =
            HedgeOptions { hedge_after_ms: after, max_hedges: max.map(|n| u32::try_from(n).unwrap_or(MAX_HEDGES)) };
        // The core refuses zero (and anything past its bounds), naming the field.
        let config = HedgeConfig::new(&options).map_err(|e| {
            let field = match e.field {
                HedgeField::HedgeAfterMs => Field::HedgeAfterMs,
                HedgeField::MaxHedges => Field::MaxHedges,
            };
            let (kind, bound) = if e.value < e.min { (FailKind::TooSmall, e.min) } else { (FailKind::TooLarge, e.max) };
            Fail::new(kind, field, e.value as f64).bound(bound as f64)
        })?;
        with_engine(engine, |e| {
            e.engine.set_hedging(config);
            Ok(f64::from(u8::from(config.is_some())))
        })
    })
}

/// Asks to send a hedge of `call`'s attempt in flight (`safety` its code) at `now_ms`:
/// `timeout_ms · HEDGE_SCALE` for a go-ahead, `1 + code` (`HEDGE_REFUSALS`) for a refusal.
#[wasm_bindgen]
pub fn hedge(engine: f64, call: f64, safety: f64, now_ms: f64) -> f64 {
    run(|| {
        let safety = unpack_safety(safety)?;
        let now = time(now_ms)?;
        with_engine(engine, |e| {
            with_call(call, Field::Call, |c| {
                Ok(match e.engine.hedge(c, safety, now) {
                    Ok(a) => a.timeout_ms as f64 * f64::from(HEDGE_SCALE),
                    Err(r) => f64::from(r as u8) + 1.0,
                })
            })
        })
    })
}

/// One hedge of `call` ended: `won` 1 when its answer is the call's, else it lost or was cancelled.
#[wasm_bindgen(js_name = hedgeEnded)]
pub fn hedge_ended(engine: f64, call: f64, won: f64) -> f64 {
    run(|| {
        with_engine(engine, |e| {
            with_call(call, Field::Call, |c| {
                e.engine.hedge_ended(c, won == 1.0);
                Ok(0.0)
            })
        })
    })
}

/// The engine's hedging: `which` 0 hedges sent, 1 hedges won, 2 requests in flight, 3 hedges in flight,
/// 4 `hedge_after_ms` and 5 `max_hedges` (0 when off).
#[wasm_bindgen(js_name = engineHedges)]
pub fn engine_hedges(engine: f64, which: f64) -> f64 {
    run(|| {
        with_engine(engine, |e| {
            let (sent, won) = e.engine.hedge_counts();
            let (requests, hedges) = e.engine.in_flight();
            Ok(if which == 0.0 {
                sent as f64
            } else if which == 1.0 {
                won as f64
            } else if which == 2.0 {
                f64::from(requests)
            } else if which == 3.0 {
                f64::from(hedges)
            } else if which == 4.0 {
                e.engine.hedging().map_or(0.0, |c| c.after_ms as f64)
            } else {
                e.engine.hedging().map_or(0.0, |c| f64::from(c.max_hedges))
            })
        })
    })
}
