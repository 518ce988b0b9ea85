//! The boundary tests of `tests/boundary.rs`, configured to run in a browser: `wasm-pack test --headless
//! --chrome` (the design card's command) runs these in headless Chrome through chromedriver (`scripts/test.sh`
//! runs exactly that). The cases are in `tests/boundary/cases.rs`.
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

include!("boundary/cases.rs");
