//! Renders the boundary's names (`src/vocab.rs`) as `pkg-template/generated/names.js` and `names.d.ts`, and
//! its seam (`src/seam.rs`: the out slots and their readers) as `seam.js` and `seam.d.ts`.
//!
//! `cargo run --bin names` writes them; `cargo run --bin names -- --check` (run by `scripts/build.sh`) only
//! compares and fails, naming the file, when they differ from what the Rust definitions render.

use std::path::Path;
use std::process::ExitCode;

use mcp_retry_policy::vocab;

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("pkg-template/generated");
    let mut ok = true;
    for (name, text) in vocab::generated_files() {
        let path = dir.join(name);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == text {
            continue;
        }
        if check {
            eprintln!(
                "{} differs from what src/vocab.rs and src/seam.rs render: run `cargo run --bin names` (and do not edit it by hand)",
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
