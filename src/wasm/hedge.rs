//! The hedged-read exports (`src/retry/hedge.rs`): numbers in, numbers out, like the rest of the client face.
//! Kept apart from `engineNew` so that its sixteen policy values and the field codes after them stay as they
//! are: hedging is set on a live engine with [`engine_hedging`] (`RetryEngine`'s constructor calls it).

use wasm_bindgen::prelude::wasm_bindgen;

use super::client::{revision_setting, subrequest_room, time, with_call, with_engine, FailKind, Field};
use super::fail::{run, Fail};
use super::out::put;
use super::packed::{unpack_outcome, unpack_safety};
use crate::input::MAX_DURATION_MS;
use crate::retry::hedge::{copy_stands, HedgeConfig, HedgeField, HedgeOptions, MAX_HEDGES};
use crate::seam::Out;

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

/// Asks to send a hedge of `call`'s attempt in flight (`safety` its code) at `now_ms`, into the out slots:
/// `refusal` `NaN` and the hedge's `timeoutMs` for a go-ahead, else the `HEDGE_REFUSALS` code. `room`: the
/// outgoing requests the call may still make, when `has_room` is 1 (else only what the engine counted since
/// the attempt's admission bounds them).
#[wasm_bindgen]
pub fn hedge(engine: f64, call: f64, safety: f64, now_ms: f64, has_room: f64, room: f64) -> f64 {
    run(|| {
        let safety = unpack_safety(safety)?;
        let now = time(now_ms)?;
        let room = subrequest_room(has_room, room)?;
        with_engine(engine, |e| {
            with_call(call, Field::Call, |c| {
                match e.engine.hedge_within(c, safety, now, room) {
                    Ok(a) => {
                        put(Out::Refusal, f64::NAN);
                        put(Out::TimeoutMs, a.timeout_ms as f64);
                    }
                    Err(r) => {
                        put(Out::Refusal, f64::from(r as u8));
                        put(Out::TimeoutMs, 0.0);
                    }
                }
                Ok(0.0)
            })
        })
    })
}

/// A hedged attempt in which no copy answered: whether the later copy's outcome (`k2`…`d2`) stands for the
/// attempt instead of the one standing so far (`k1`…`d1`), both classified under `revision` (a revision
/// setting code, as `engineRevision` gives): 1 or 0 ([`copy_stands`]).
#[wasm_bindgen(js_name = hedgeCopyStands)]
#[allow(clippy::too_many_arguments)]
pub fn hedge_copy_stands(
    revision: f64,
    k1: f64,
    a1: f64,
    b1: f64,
    c1: f64,
    d1: f64,
    k2: f64,
    a2: f64,
    b2: f64,
    c2: f64,
    d2: f64,
) -> f64 {
    run(|| {
        let revision = revision_setting(revision)?;
        let standing = unpack_outcome(k1, a1, b1, c1, d1)?;
        let later = unpack_outcome(k2, a2, b2, c2, d2)?;
        Ok(f64::from(u8::from(copy_stands(&standing, &later, revision))))
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

/// The engine's hedging, in one crossing, into the out slots: hedges `sent` and `won`, the requests and hedges
/// in flight, and `hedgeAfterMs` and `maxHedges` (`NaN` when hedging is off).
#[wasm_bindgen(js_name = engineHedges)]
pub fn engine_hedges(engine: f64) -> f64 {
    run(|| {
        with_engine(engine, |e| {
            let (sent, won) = e.engine.hedge_counts();
            let (requests, hedges) = e.engine.in_flight();
            put(Out::HedgesSent, sent as f64);
            put(Out::HedgesWon, won as f64);
            put(Out::RequestsInFlight, f64::from(requests));
            put(Out::HedgesInFlight, f64::from(hedges));
            let config = e.engine.hedging();
            put(Out::HedgeAfterMs, config.map_or(f64::NAN, |c| c.after_ms as f64));
            put(Out::MaxHedges, config.map_or(f64::NAN, |c| f64::from(c.max_hedges)));
            Ok(0.0)
        })
    })
}
