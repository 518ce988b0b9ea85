//! Which JS objects are ours. The JS layer (`pkg-template/guard.js`) keeps every live `LedgerRules` in a private `WeakMap` and checks it before any call enters wasm, so a
//! freed, cloned, forged or foreign object never reaches wasm-bindgen's pointer handling (which would
//! throw through wasm frames, or worse, dereference a pointer it was handed).
//!
//! An object is registered when wasm-bindgen's glue stores its pointer (`this.__wbg_ptr = ptr`, which
//! runs the guard's setter). To tell that store from a caller's forgery, each constructor here leaves a
//! one-shot token naming its class as its very last step, and the setter takes it through [`adopt`]:
//! between a constructor's return and the glue's store no other JS runs.

use core::sync::atomic::{AtomicU32, Ordering};

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

/// The class a constructor just made (0: none).
static PENDING: AtomicU32 = AtomicU32::new(0);

/// The class tag of `LedgerRules` (the number `pkg-template/server/rules.js` gives `guardClass`; 1 and 2
/// were the client's classes before its exports became numbers only).
pub const RULES: u32 = 3;

/// Called by a constructor right before it returns the new object.
pub fn constructed(tag: u32) {
    PENDING.store(tag, Ordering::Relaxed);
}

/// Takes the token: whether the object whose pointer the glue is storing right now was just made by a
/// constructor of class `tag`. Internal to the package's JS layer.
/// Takes any value (a `u32` parameter would be coerced by the glue, running a hostile `valueOf`).
#[wasm_bindgen(js_name = __adopt)]
pub fn adopt(tag: JsValue) -> bool {
    let pending = PENDING.swap(0, Ordering::Relaxed);
    pending != 0 && tag.as_f64() == Some(f64::from(pending))
}
