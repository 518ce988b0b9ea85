//! The architecture's floors, checked on the source: the cores (`src/retry/`, `src/ledger/`) import no
//! binding, no JS or web API, no runtime, read no clock, draw no randomness, touch no file or socket, and do
//! not import the bindings' input checks (`src/input.rs`); neither core imports the other; and neither face's
//! binding imports the other face's. A line that breaks one fails this test with its file and line.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::fs;
use std::path::{Path, PathBuf};

/// What a core file must not name (code, not comments).
const NOT_IN_A_CORE: &[(&str, &str)] = &[
    ("wasm_bindgen", "a binding (wasm-bindgen) — only src/wasm/ may"),
    ("js_sys", "a JS API (js-sys)"),
    ("web_sys", "a web API (web-sys)"),
    ("getrandom", "randomness (random bits are an argument)"),
    ("rand::", "randomness (random bits are an argument)"),
    ("std::time", "a clock (time is an argument)"),
    ("Instant::", "a clock (time is an argument)"),
    ("SystemTime", "a clock (time is an argument)"),
    ("std::fs", "the file system"),
    ("std::net", "the network"),
    ("std::thread", "threads"),
    ("std::env", "the environment"),
    ("tokio", "a runtime"),
    ("rmcp", "an SDK (the rmcp face lives outside the cores)"),
    ("crate::input", "the bindings' input checks (src/input.rs)"),
    ("crate::wasm", "a binding"),
];

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The file's lines without comments (`//` to the end of the line; doc comments included), up to its
/// `#[cfg(test)]` module (a core's own tests may compare it with the other core).
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(path).unwrap();
    text.lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .enumerate()
        .map(|(i, line)| (i + 1, line.split("//").next().unwrap_or("").to_string()))
        .filter(|(_, code)| !code.trim().is_empty())
        .collect()
}

fn violations(dir: &str, forbidden: &[(&str, &str)]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for path in rust_files(&root.join(dir)) {
        for (n, code) in code_lines(&path) {
            for (needle, what) in forbidden {
                if code.contains(needle) {
                    found.push(format!("{}:{n}: `{needle}` is {what}", path.strip_prefix(root).unwrap().display()));
                }
            }
        }
    }
    found
}

#[test]
fn the_cores_are_pure() {
    for core in ["src/retry", "src/ledger"] {
        let found = violations(core, NOT_IN_A_CORE);
        assert!(found.is_empty(), "{core} must stay pure:\n{}", found.join("\n"));
    }
}

#[test]
fn neither_core_imports_the_other() {
    let found = violations("src/retry", &[("crate::ledger", "the server core")]);
    assert!(found.is_empty(), "{}", found.join("\n"));
    let found = violations("src/ledger", &[("crate::retry", "the client core")]);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn neither_binding_imports_the_other_face() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let check = |file: &str, needles: &[&str]| {
        for (n, code) in code_lines(&root.join(file)) {
            for needle in needles {
                assert!(!code.contains(needle), "{file}:{n}: the {file} binding names `{needle}`, the other face's");
            }
        }
    };
    check("src/wasm/client.rs", &["crate::ledger", "super::ledger"]);
    check("src/wasm/ledger.rs", &["crate::retry", "super::client", "super::packed"]);
}

#[test]
fn the_checker_sees_a_violation() {
    // The scan itself: a line naming a clock is found, a comment naming one is not.
    let dir = std::env::temp_dir().join(format!("arch-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("x.rs"),
        "// std::time in a comment\nlet t = std::time::Instant::now();\n#[cfg(test)]\nmod tests { use std::time; }\n",
    )
    .unwrap();
    let lines = code_lines(&dir.join("x.rs"));
    assert_eq!(lines.len(), 1, "the comment and the test module are not scanned");
    assert!(lines[0].1.contains("std::time"));
    fs::remove_dir_all(&dir).unwrap();
}
