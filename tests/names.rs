//! The generated JS tables, readers and TS types (`pkg-template/generated/`) are what `src/vocab/` and
//! `src/seam/` render now: a Rust rename without `cargo run --example names`, or a hand edit of a generated
//! file, fails here. (A copy of the crate from crates.io has no npm layer: there is nothing to compare.)

use mcp_retry_policy::vocab;

#[test]
fn generated_files_are_current() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/pkg-template/generated/");
    if !std::path::Path::new(dir).is_dir() {
        eprintln!("skipped: no pkg-template/generated/ (the npm layer is not in this copy of the crate)");
        return;
    }
    for (name, text) in vocab::generated_files() {
        let current = std::fs::read_to_string(format!("{dir}{name}")).unwrap_or_default();
        assert!(
            current == text,
            "pkg-template/generated/{name} is stale or edited by hand: run `cargo run --example names`"
        );
    }
}

#[test]
fn every_ledger_reply_carries_a_status_the_client_core_reads() {
    use mcp_retry_policy::ledger::reply::Reply;
    use mcp_retry_policy::retry::LedgerStatus;
    for r in Reply::ALL {
        assert!(LedgerStatus::ALL.iter().any(|s| s.as_str() == r.status()), "{r:?}: {}", r.status());
    }
}
