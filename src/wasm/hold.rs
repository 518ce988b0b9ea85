//! A claim's hold for JS (the core's [`crate::ledger::hold`] driver), numbers only like the other rules: the
//! hold's state crosses as [`HOLD_WORDS`] numbers in the hold slots (`ledgerHoldSlots()` gives their address;
//! the JS `ClaimHold` keeps them between steps and writes them back before each), the step's answer in the
//! server's out slots. A state no hold packs is refused by name (`hold`), never stepped.

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use wasm_bindgen::prelude::*;

use super::fail::{run, Fail, FailKind, Field};
use super::ledger::{code_of, now, record, valid_config};
use super::out::put_ledger as put;
use crate::ledger::{Hold, HoldEvent, HoldStep, HoldTell, HOLD_WORDS};
use crate::seam::LedgerOut;

static HOLD: [AtomicU64; HOLD_WORDS] = [const { AtomicU64::new(0) }; HOLD_WORDS];

/// The byte address of the hold slots in the module's memory (`HOLD_WORDS` `f64`s).
#[wasm_bindgen(js_name = ledgerHoldSlots)]
pub fn ledger_hold_slots() -> f64 {
    HOLD.as_ptr() as usize as f64
}

fn mono(mono_ms: f64) -> Result<u64, Fail> {
    Fail::number(Field::MonoMs, mono_ms, 0, 1 << 53, false)
}

/// The hold the slots hold, or a failure of `hold` for numbers no hold packs.
fn load() -> Result<Hold, Fail> {
    let mut w = [0u64; HOLD_WORDS];
    for (out, slot) in w.iter_mut().zip(&HOLD) {
        let v = f64::from_bits(slot.load(Relaxed));
        if !(v >= 0.0 && v.fract() == 0.0) {
            return Err(Fail::new(FailKind::InvalidValue, Field::Hold, v));
        }
        *out = v as u64; // saturating: the largest words are "never"
    }
    Hold::unpack(w).ok_or(Fail::new(FailKind::InvalidValue, Field::Hold, f64::NAN))
}

/// Writes the hold back into the slots and its reading into the out slots.
fn store(h: &mut Hold, step: &HoldStep) -> f64 {
    let tell = h.tell(); // marks what it told: before the state is packed
    for (slot, v) in HOLD.iter().zip(h.pack()) {
        slot.store((v as f64).to_bits(), Relaxed);
    }
    let (version, lease, expected) = match step {
        HoldStep::Renew(r) | HoldStep::Commit(r) | HoldStep::ReadBack(r) => {
            (r.version as f64, r.lease_until_ms as f64, r.expected as f64)
        }
        HoldStep::Wait | HoldStep::Refused | HoldStep::Done => (f64::NAN, f64::NAN, f64::NAN),
    };
    put(LedgerOut::Version, version);
    put(LedgerOut::LeaseUntilMs, lease);
    put(LedgerOut::Expected, expected);
    put(LedgerOut::Timeout, h.timeout().map_or(f64::NAN, |t| t as f64));
    put(LedgerOut::Standing, f64::from(h.standing().code()));
    put(LedgerOut::Tell, tell.map_or(f64::NAN, |t| f64::from(t.code())));
    put(LedgerOut::LeftMs, if let Some(HoldTell::Late { left_ms }) = tell { left_ms as f64 } else { 0.0 });
    let (v, until) = h.claim();
    put(LedgerOut::ClaimVersion, v as f64);
    put(LedgerOut::ClaimLeaseUntilMs, until as f64);
    f64::from(step.code())
}

/// Begins the hold of the claim (`state` … `version`, as `ledgerRenew` takes it), just written at `now_ms` =
/// `mono_ms` on the monotonic clock: the hold's state into the hold slots, its reading into the out slots.
/// Returns the `HOLD_STEPS` code of `wait`.
#[wasm_bindgen(js_name = ledgerHoldStart)]
#[allow(clippy::too_many_arguments)]
pub fn ledger_hold_start(
    state: f64,
    lease_until_ms: f64,
    created_ms: f64,
    expires_ms: f64,
    version: f64,
    now_ms: f64,
    mono_ms: f64,
    ttl_ms: f64,
    lease_ms: f64,
) -> f64 {
    run(|| {
        let claimed = record(state, lease_until_ms, created_ms, expires_ms, version)?;
        let cfg = valid_config(ttl_ms, lease_ms)?;
        let mut h = Hold::new(&claimed, &cfg, now(now_ms)?, mono(mono_ms)?);
        Ok(store(&mut h, &HoldStep::Wait))
    })
}

/// One step of the hold in the hold slots: `event` a `HOLD_EVENTS` code, `arg` what it carries (a
/// `HOLD_ANSWERS` code for `renewed` and `committed`; 1 for a `read_back` that found the write), at `now_ms`
/// (the ledger's clock) and `mono_ms` (the monotonic one). Returns the next step's `HOLD_STEPS` code; the out
/// slots hold its write (`version`, `leaseUntilMs`, `expected`), the next wake-up (`timeout`), the claim's
/// `standing`, what operators hear (`tell`, `leftMs`) and the claim as last written.
#[wasm_bindgen(js_name = ledgerHold)]
pub fn ledger_hold(event: f64, arg: f64, now_ms: f64, mono_ms: f64) -> f64 {
    run(|| {
        let bad = Fail::new(FailKind::InvalidValue, Field::LookEvent, event);
        let code = code_of(event).and_then(|c| u32::try_from(c).ok()).ok_or(bad)?;
        let a = code_of(arg).and_then(|c| u32::try_from(c).ok()).unwrap_or(u32::MAX);
        let e = HoldEvent::from_code(code, a).ok_or(Fail::new(FailKind::InvalidValue, Field::LookEvent, arg))?;
        let (now, mono) = (now(now_ms)?, mono(mono_ms)?);
        let mut h = load()?;
        let step = h.step(e, now, mono);
        Ok(store(&mut h, &step))
    })
}
