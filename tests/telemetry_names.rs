//! Every telemetry name is stated once (`src/telemetry_names.rs`): the JS face imports the generated constants
//! and spells none itself; the Rust face's `tracing` fields (identifiers, which no constant can stand for) are
//! read from its sources here. Fails on a name a face writes that is not in the list, a name in the list that
//! its face does not write, or a JS file that spells a name instead of importing it.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic, clippy::arithmetic_side_effects)]

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use mcp_retry_policy::telemetry_names::TELEMETRY_NAMES;

const PREFIXES: [&str; 6] = ["mcp.", "mcp_retry_policy.", "gen_ai.", "error.type", "http.request.", "rpc.response."];

/// Every dotted name with a telemetry prefix in `text` (outside comments), as `tracing` spells a field or a
/// string does.
fn names_in(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let bytes: Vec<char> = code.chars().collect();
        let mut i = 0;
        while i < bytes.len() {
            let before: String = bytes[..i].iter().collect();
            // `histogram.` / `monotonic_counter.` are tracing-opentelemetry's prefixes, not part of the name.
            let start_ok = i == 0
                || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == '.')
                || before.ends_with(" histogram.")
                || before.ends_with(" monotonic_counter.");
            let rest: String = bytes[i..].iter().collect();
            if start_ok {
                if let Some(p) = PREFIXES.iter().find(|p| rest.starts_with(**p)) {
                    let name: String =
                        rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_' || *c == '.').collect();
                    let name = name.trim_end_matches('.').to_owned();
                    if name.len() > p.len() || *p == "error.type" {
                        out.insert(name.clone());
                    }
                    i += name.len().max(1);
                    continue;
                }
            }
            i += 1;
        }
    }
    out
}

fn files(dir: &Path, ext: &str, out: &mut Vec<std::path::PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if !p.ends_with("generated") && !p.ends_with("node_modules") {
                files(&p, ext, out);
            }
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

#[test]
fn the_rust_face_writes_exactly_its_listed_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut written = BTreeSet::new();
    let mut rust = Vec::new();
    files(&root.join("src/rmcp"), "rs", &mut rust);
    assert!(rust.len() > 15, "the Rust face was read");
    for f in rust {
        let text = fs::read_to_string(f).unwrap();
        // Only code: doc comments describe names too, and are read as comments.
        let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        written.extend(names_in(&code));
    }
    let listed: BTreeSet<String> =
        TELEMETRY_NAMES.iter().filter(|t| t.faces.rust()).map(|t| t.name.to_owned()).collect();
    let all: BTreeSet<String> = TELEMETRY_NAMES.iter().map(|t| t.name.to_owned()).collect();
    let unlisted: Vec<_> = written.iter().filter(|n| !all.contains(*n)).collect();
    assert!(unlisted.is_empty(), "the Rust face writes names not in src/telemetry_names.rs: {unlisted:?}");
    let unwritten: Vec<_> = listed.iter().filter(|n| !written.contains(*n)).collect();
    assert!(unwritten.is_empty(), "listed as the Rust face's but not written by it: {unwritten:?}");
    let js_only: Vec<_> = written.iter().filter(|n| !listed.contains(*n)).collect();
    assert!(js_only.is_empty(), "written by the Rust face but listed as the JS face's only: {js_only:?}");
}

#[test]
fn the_js_face_spells_no_name_and_imports_each_of_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("pkg-template");
    let mut js = Vec::new();
    files(&root, "js", &mut js);
    assert!(js.len() > 40, "the package was read");
    let mut imported = BTreeSet::new();
    for f in &js {
        let text = fs::read_to_string(f).unwrap();
        let code: String = text
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                !(t.starts_with("//") || t.starts_with('*') || t.starts_with("/*"))
            })
            .collect::<Vec<_>>()
            .join("\n");
        let spelled: Vec<String> = names_in(&code)
            .into_iter()
            .filter(|n| code.contains(&format!("'{n}'")) || code.contains(&format!("\"{n}\"")))
            .collect();
        assert!(
            spelled.is_empty(),
            "{} spells telemetry names: {spelled:?} (import TEL_… from generated/names.js)",
            f.display()
        );
        for t in &TELEMETRY_NAMES {
            if code.contains(&format!("TEL_{}", t.constant)) {
                imported.insert(t.constant);
            }
        }
    }
    let missing: Vec<_> =
        TELEMETRY_NAMES.iter().filter(|t| t.faces.js() && !imported.contains(t.constant)).map(|t| t.name).collect();
    assert!(missing.is_empty(), "listed as the JS face's but not written by it: {missing:?}");
}

#[test]
fn every_name_is_listed_once() {
    let mut seen = BTreeSet::new();
    for t in &TELEMETRY_NAMES {
        assert!(seen.insert(t.name), "{} listed twice", t.name);
        assert!(PREFIXES.iter().any(|p| t.name.starts_with(p)), "{} has no known prefix", t.name);
    }
}
