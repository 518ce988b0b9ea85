//! The binding room: the only place that knows JavaScript. It converts JS values to the core's types and
//! back, turns core errors into `RangeError`/`TypeError` with a stable `code` and `field`, and draws
//! randomness (inside calls only: Workers refuse it at module load). It has no policy of its own.
//!
//! Rules that keep the module alive for the page's lifetime:
//! - nothing here panics (the crate denies `unwrap`/`expect`/`panic`/indexing);
//! - every read of a JS object goes through a catching `Reflect` call, so getters that throw, proxies and
//!   cyclic objects give an error value, never an exception through wasm frames;
//! - exported methods take `&self` and borrow their state with `try_borrow_mut` only *after* all JS
//!   input was read, so a re-entrant getter meets an error, not a borrow panic.

#[cfg(feature = "client")]
mod engine;
mod error;
#[cfg(feature = "server")]
mod ledger;
#[cfg(feature = "client")]
mod outcome;
#[cfg(feature = "client")]
mod packed;
#[cfg(feature = "client")]
mod policy;
#[cfg(feature = "client")]
mod random;
mod read;

#[cfg(feature = "client")]
pub use engine::{new_operation_id, revision_for, RetryCall, RetryEngine};
#[cfg(feature = "server")]
pub use ledger::{fingerprint_json, is_valid_operation_id, LedgerRules};

/// The result of an exported function: a JS error value on failure.
type JsResult<T> = Result<T, wasm_bindgen::JsValue>;
