//! The binding room: the only place that knows JavaScript. It has no policy of its own.
//!
//! The client face ([`client`]) speaks numbers only: its exports take and return `f64`s, hold engines and
//! calls in slabs behind handles, and import nothing from JS, so no JS runs inside them. The server face
//! ([`ledger`]) reads JS values and turns core errors into `RangeError`/`TypeError` with a stable `code`
//! and `field`.
//!
//! Rules that keep the server face's module alive for the page's lifetime:
//! - nothing here panics (the crate denies `unwrap`/`expect`/`panic`/indexing);
//! - no JS exception ever unwinds through wasm frames (that would skip the frames' epilogues: the shadow
//!   stack pointer is not restored, heap and externref slots the frames held leak, and after a few thousand
//!   such errors every later call traps). So every import used here either catches (`Reflect.*`,
//!   `Array.isArray`) or cannot throw (`typeof`, a string primitive's `length`,
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

#[cfg(feature = "server")]
mod brand;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
mod error;
#[cfg(feature = "server")]
mod ledger;
#[cfg(feature = "client")]
mod packed;
#[cfg(feature = "server")]
mod read;

#[cfg(feature = "server")]
pub use brand::adopt;
#[cfg(feature = "server")]
pub use ledger::{fingerprint_canonical, fingerprint_json, is_valid_operation_id, max_fingerprint_bytes, LedgerRules};

/// The result of an exported function: a JS error value on failure.
#[cfg(feature = "server")]
type JsResult<T> = Result<T, wasm_bindgen::JsValue>;
