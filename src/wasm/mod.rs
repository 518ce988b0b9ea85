//! The binding room: the only place that knows JavaScript. It converts JS values to the core's types and
//! back, turns core errors into `RangeError`/`TypeError` with a stable `code` and `field`, and draws
//! randomness (inside calls only: Workers refuse it at module load). It has no policy of its own.
//!
//! Rules that keep the module alive for the page's lifetime:
//! - nothing here panics (the crate denies `unwrap`/`expect`/`panic`/indexing);
//! - no JS exception ever unwinds through wasm frames (that would skip the frames' epilogues: the shadow
//!   stack pointer is not restored, heap and externref slots the frames held leak, and after a few thousand
//!   such errors every later call traps). So every import used here either catches (`Reflect.*`,
//!   `Array.isArray`, `crypto.getRandomValues`) or cannot throw (`typeof`, a string primitive's `length`,
//!   constructors of fresh objects), and getters that throw, proxies (revoked ones too) and cyclic objects
//!   give an error value;
//! - wasm-bindgen's own throws (a freed or forged `this`, a non-string where `&str` is taken, freeing an
//!   object in use) are kept out of reach: no export takes `&str`, and the JS layer
//!   (`pkg-template/guard.js`, with [`brand`]) checks every object, and that every number argument is a
//!   number (the glue would coerce `null`, `'0x10'` or a `Date`), before a call enters wasm;
//! - strings are measured before they are copied into wasm memory, so no input makes the module allocate
//!   more than a documented bound (names: [`read::MAX_NAME_LEN`]; fingerprints:
//!   [`crate::ledger::MAX_TEXT_BYTES`]);
//! - exported methods take `&self` and borrow their state with `try_borrow_mut` only *after* all JS
//!   input was read, so a re-entrant getter meets an error, not a borrow panic.

mod brand;
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

pub use brand::adopt;
#[cfg(feature = "client")]
pub use engine::{new_operation_id, revision_for, RetryCall, RetryEngine};
#[cfg(feature = "server")]
pub use ledger::{fingerprint_canonical, fingerprint_json, is_valid_operation_id, max_fingerprint_bytes, LedgerRules};

/// The result of an exported function: a JS error value on failure.
type JsResult<T> = Result<T, wasm_bindgen::JsValue>;
