//! The out slots of both faces ([`crate::seam`]): a fixed array of `f64`s in the module's memory, written by
//! the exports and read in place by JS (`outSlots()` / `ledgerSlots()` give its address; the generated
//! `pkg-template/generated/seam.js` knows what lies where). The slots are atomics only so that safe Rust can
//! write a `static` (wasm32 without threads lowers them to plain loads and stores); nothing here can panic.

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use wasm_bindgen::prelude::wasm_bindgen;

#[cfg(feature = "server")]
use crate::seam::LedgerOut;
#[cfg(feature = "client")]
use crate::seam::Out;

#[cfg(feature = "client")]
static CLIENT: [AtomicU64; Out::ALL.len()] = [const { AtomicU64::new(0) }; Out::ALL.len()];

#[cfg(feature = "server")]
static LEDGER: [AtomicU64; LedgerOut::ALL.len()] = [const { AtomicU64::new(0) }; LedgerOut::ALL.len()];

/// Writes `v` into the client slot `slot`.
#[cfg(feature = "client")]
pub fn put(slot: Out, v: f64) {
    if let Some(a) = CLIENT.get(slot as usize) {
        a.store(v.to_bits(), Relaxed);
    }
}

/// Writes `v` into the server slot `slot`.
#[cfg(feature = "server")]
pub fn put_ledger(slot: LedgerOut, v: f64) {
    if let Some(a) = LEDGER.get(slot as usize) {
        a.store(v.to_bits(), Relaxed);
    }
}

/// The byte address of the client face's out slots in the module's memory (`Out::ALL.len()` `f64`s).
#[cfg(feature = "client")]
#[wasm_bindgen(js_name = outSlots)]
pub fn out_slots() -> f64 {
    CLIENT.as_ptr() as usize as f64
}

/// The byte address of the server face's out slots in the module's memory (`LedgerOut::ALL.len()` `f64`s).
#[cfg(feature = "server")]
#[wasm_bindgen(js_name = ledgerSlots)]
pub fn ledger_slots() -> f64 {
    LEDGER.as_ptr() as usize as f64
}

/// What the client slot `slot` holds (`NaN` for none): the answer of the last export, for Rust callers and tests.
#[cfg(feature = "client")]
pub fn get(slot: Out) -> f64 {
    CLIENT.get(slot as usize).map_or(f64::NAN, |a| f64::from_bits(a.load(Relaxed)))
}

/// What the server slot `slot` holds: the answer of the last rule, for Rust callers and tests.
#[cfg(feature = "server")]
pub fn get_ledger(slot: LedgerOut) -> f64 {
    LEDGER.get(slot as usize).map_or(f64::NAN, |a| f64::from_bits(a.load(Relaxed)))
}
