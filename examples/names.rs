//! A developer tool of the repository, not an example for users: renders the boundary's names
//! (`src/vocab/`) as `pkg-template/generated/names.js`, `names.d.ts` and `outcome.js`, and its seam
//! (`src/seam/`: the out slots and their readers) as `seam.js` and `seam.d.ts` — the npm layer's generated
//! files.
//!
//! `cargo run --example names` writes them; `cargo run --example names -- --check` only compares and fails,
//! naming the file, when they differ from what the Rust definitions render (`scripts/build.sh` runs the
//! first, `tests/names.rs` checks the same). It is an example so that `cargo install` never installs it.

use std::path::Path;
use std::process::ExitCode;

use mcp_retry_policy::vocab;

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join("pkg-template").is_dir() {
        eprintln!("no pkg-template/ here: the names are generated in the repository, not in a copy of the crate");
        return ExitCode::FAILURE;
    }
    let dir = root.join("pkg-template/generated");
    let mut ok = true;
    for (name, text) in vocab::generated_files() {
        let path = dir.join(name);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == text {
            continue;
        }
        if check {
            eprintln!(
                "{} differs from what src/vocab/ and src/seam/ render: run `cargo run --example names` (and do not edit it by hand)",
                path.display()
            );
            ok = false;
        } else if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, text)) {
            eprintln!("cannot write {}: {e}", path.display());
            ok = false;
        } else {
            println!("wrote {}", path.display());
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
