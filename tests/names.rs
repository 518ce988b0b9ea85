//! The generated JS tables and TS unions (`pkg-template/generated/`) are what `src/vocab.rs` renders now:
//! a Rust rename without `cargo run --bin names`, or a hand edit of a generated file, fails here.

use mcp_retry_policy::vocab::{render_dts, render_js};

#[test]
fn generated_names_are_current() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/pkg-template/generated/");
    for (name, text) in [("names.js", render_js()), ("names.d.ts", render_dts())] {
        let current = std::fs::read_to_string(format!("{dir}{name}")).unwrap_or_default();
        assert!(
            current == text,
            "pkg-template/generated/{name} is stale or edited by hand: run `cargo run --bin names`"
        );
    }
}
