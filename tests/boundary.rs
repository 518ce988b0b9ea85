//! The wasm boundary, exercised from inside wasm, in Node (`scripts/test.sh`; the same cases run in Chrome as
//! `tests/browser.rs`, from `tests/boundary/cases.rs`). Both faces' numeric exports take numbers only: every
//! number we can think of (NaN, ±∞, −0, huge, fractional, stale handles) in every slot must give a result or a
//! failure code naming the field, never a panic. The server's string exports take JS values: every JS value we
//! can think of — undefined, null, strings, NaN, arrays, functions, symbols, revoked proxies — must give a typed
//! error or a result. The module must still work afterwards.
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

include!("boundary/cases.rs");
