//! A bounded, deterministic fuzz of what reads untrusted input natively: the JSON parser, the RFC 8785
//! canonicalizer and the fingerprint (src/ledger), and the number checks the wasm boundary reader relies on
//! (src/retry/policy/). cargo-fuzz needs nightly; this is stable Rust with a seeded PRNG, so a failure
//! reproduces from its seed and case number.
//!
//! `cargo test --test fuzz_json` runs `FUZZ_CASES` cases per target (default 20 000: seconds in a debug
//! build); `scripts/fuzz.sh` runs many more in release. Each target prints how many executions it ran.
//!
//! Properties: nothing panics; every error has a stable code; an accepted text's canonical form equals an
//! independent reference serialization of the generated value; canonicalization is idempotent; the
//! fingerprint ignores key order, whitespace, escapes and number spelling, and is SHA-256 of the canonical
//! text; depth and size limits are typed errors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use mcp_retry_policy::input::check_number;
use mcp_retry_policy::ledger::canonical::{canonicalize, es_number};
use mcp_retry_policy::ledger::fingerprint::{
    fingerprint, fingerprint_of_canonical, fingerprint_of_js_json, sha256_hex,
};
use mcp_retry_policy::ledger::json::{parse, JsonError, MAX_DEPTH, MAX_TEXT_BYTES};
use mcp_retry_policy::retry::{Jitter, Policy, PolicyOptions};

fn cases() -> u64 {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000)
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_f00d)
}

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

fn pick_str<'a>(r: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs[r.below(xs.len())]
}

/// A generated JSON value (object keys unique).
#[derive(Clone, Debug)]
enum V {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<V>),
    Obj(Vec<(String, V)>),
}

const CHARS: &[char] = &[
    'a',
    'b',
    'z',
    'A',
    '0',
    ' ',
    '"',
    '\\',
    '/',
    '\u{0}',
    '\u{1}',
    '\u{8}',
    '\t',
    '\n',
    '\u{c}',
    '\r',
    '\u{1f}',
    '\u{7f}',
    'é',
    'ß',
    '€',
    '\u{2028}',
    '\u{fffd}',
    '\u{ffff}',
    '😀',
    '𝄞',
    '\u{10ffff}',
    '中',
];

fn gen_string(r: &mut Rng) -> String {
    (0..r.below(8)).map(|_| *r.pick(CHARS)).collect()
}

fn gen_number(r: &mut Rng) -> f64 {
    match r.below(6) {
        0 => *r.pick(&[0.0, -0.0, 1.0, -1.0, 0.5, 1e21, 1e-7, 5e-324, f64::MAX, f64::MIN_POSITIVE, 9007199254740993.0]),
        1 => (r.next() % 2000) as f64 - 1000.0,
        2 => (r.next() as f64) / 7.0,
        3 => f64::from_bits(r.next() % 0x7ff0_0000_0000_0000), // any finite positive double
        4 => -f64::from_bits(r.next() % 0x7ff0_0000_0000_0000),
        _ => ((r.next() % 100_000) as f64) * 10f64.powi(r.below(40) as i32 - 20),
    }
}

fn gen_value(r: &mut Rng, depth: usize) -> V {
    let leaf = depth >= 6 || r.chance(45);
    if leaf {
        return match r.below(4) {
            0 => V::Null,
            1 => V::Bool(r.chance(50)),
            2 => V::Num(gen_number(r)),
            _ => V::Str(gen_string(r)),
        };
    }
    if r.chance(50) {
        V::Arr((0..r.below(5)).map(|_| gen_value(r, depth + 1)).collect())
    } else {
        let mut members: Vec<(String, V)> = Vec::new();
        for _ in 0..r.below(6) {
            let k = gen_string(r);
            if !members.iter().any(|(m, _)| *m == k) {
                members.push((k, gen_value(r, depth + 1)));
            }
        }
        V::Obj(members)
    }
}

fn ws(r: &mut Rng, out: &mut String) {
    if r.chance(20) {
        for _ in 0..r.below(3) {
            out.push(*r.pick(&[' ', '\t', '\n', '\r']));
        }
    }
}

/// One of the many JSON texts of `s`: characters raw or `\u`-escaped (astral ones as surrogate pairs).
fn write_str(r: &mut Rng, s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let must = c == '"' || c == '\\' || (c as u32) < 0x20;
        if must || r.chance(15) {
            if r.chance(50) && matches!(c, '"' | '\\' | '/' | '\u{8}' | '\t' | '\n' | '\u{c}' | '\r') {
                out.push_str(match c {
                    '"' => "\\\"",
                    '\\' => "\\\\",
                    '/' => "\\/",
                    '\u{8}' => "\\b",
                    '\t' => "\\t",
                    '\n' => "\\n",
                    '\u{c}' => "\\f",
                    _ => "\\r",
                });
            } else {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&if r.chance(50) { format!("\\u{u:04x}") } else { format!("\\u{u:04X}") });
                }
            }
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

/// One of the many spellings of a double that parse back to it.
fn write_num(r: &mut Rng, v: f64, out: &mut String) {
    let s = match r.below(3) {
        0 => format!("{v}"),
        1 => format!("{v:e}"),
        _ => format!("{v:E}").replace("E", if r.chance(50) { "e+" } else { "E" }).replace("+-", "-"),
    };
    out.push_str(&s);
}

/// A JSON text of `v`, with random key order, whitespace, escapes and number spellings.
fn write(r: &mut Rng, v: &V, out: &mut String) {
    ws(r, out);
    match v {
        V::Null => out.push_str("null"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Num(n) => write_num(r, *n, out),
        V::Str(s) => write_str(r, s, out),
        V::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(r, item, out);
            }
            ws(r, out);
            out.push(']');
        }
        V::Obj(members) => {
            let mut order: Vec<usize> = (0..members.len()).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, r.below(i + 1));
            }
            out.push('{');
            for (n, &i) in order.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                ws(r, out);
                write_str(r, &members[i].0, out);
                ws(r, out);
                out.push(':');
                write(r, &members[i].1, out);
            }
            ws(r, out);
            out.push('}');
        }
    }
    ws(r, out);
}

/// The reference: RFC 8785 written independently of src/ledger (numbers aside: `es_number` is checked
/// against the RFC's Appendix B in tests/fingerprint.rs).
fn reference(v: &V, out: &mut String) {
    match v {
        V::Null => out.push_str("null"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Num(n) => out.push_str(&es_number(*n)),
        V::Str(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\u{8}' => out.push_str("\\b"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    '\u{c}' => out.push_str("\\f"),
                    '\r' => out.push_str("\\r"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        V::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                reference(item, out);
            }
            out.push(']');
        }
        V::Obj(members) => {
            let mut sorted: Vec<&(String, V)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16())); // RFC 8785 §3.2.3
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                reference(&V::Str(k.clone()), out);
                out.push(':');
                reference(v, out);
            }
            out.push('}');
        }
    }
}

const CODES: &[&str] =
    &["invalid_json", "too_deep", "lone_surrogate", "duplicate_key", "number_out_of_range", "too_large"];

/// Whatever `text` is: no panic, a known code on error, and the canonical properties on success.
fn check_any(text: &str) {
    match canonicalize(text) {
        Err(e) => {
            assert!(CODES.contains(&e.code()), "{e:?}");
            assert!(!e.to_string().is_empty());
            assert_eq!(fingerprint(text).map_err(|e| e.code()), Err(e.code()), "{text:?}");
        }
        Ok(c) => {
            assert_eq!(canonicalize(&c).as_deref(), Ok(c.as_str()), "idempotent: {text:?}");
            let fp = fingerprint(text).unwrap();
            assert_eq!(fp, sha256_hex(c.as_bytes()));
            assert_eq!(fingerprint_of_js_json(&c).unwrap(), fp, "canonical numbers are ES numbers: {c}");
            assert_eq!(fingerprint_of_canonical(&c).unwrap(), fp, "the canonical text hashed as it is: {c}");
        }
    }
}

#[test]
fn fuzz_generated_values_match_the_reference() {
    let n = cases();
    let mut r = Rng(seed());
    for case in 0..n {
        let v = gen_value(&mut r, 0);
        let (mut a, mut b, mut want) = (String::new(), String::new(), String::new());
        write(&mut r, &v, &mut a);
        write(&mut r, &v, &mut b);
        reference(&v, &mut want);
        assert_eq!(canonicalize(&a).as_deref(), Ok(want.as_str()), "case {case}: {a}");
        assert_eq!(fingerprint(&a), fingerprint(&b), "case {case}: {a} vs {b}");
        assert_eq!(fingerprint(&a).unwrap(), sha256_hex(want.as_bytes()));
        check_any(&a);
    }
    println!("fuzz_json: {n} generated values (2 spellings each) matched the reference");
}

#[test]
fn fuzz_mutated_and_random_texts_never_panic() {
    let n = cases();
    let mut r = Rng(seed() ^ 1);
    let nines = "9".repeat(400);
    let bytes: Vec<&str> = vec![
        "\"",
        "\\",
        "\\u",
        "\\ud800",
        "\\udc00",
        "\\u00",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "-",
        "0",
        "1e",
        "1e400",
        ".",
        "e+",
        "null",
        "tru",
        " ",
        "\u{0}",
        "\u{1}",
        "é",
        "😀",
        "\"a\":1,\"a\":2",
        &nines,
    ];
    for case in 0..n {
        let text = if r.chance(70) {
            let mut t = String::new();
            let v = gen_value(&mut r, 0);
            write(&mut r, &v, &mut t);
            for _ in 0..1 + r.below(3) {
                // Mutate at a char boundary: insert, delete or replace a piece.
                let cuts: Vec<usize> = t.char_indices().map(|(i, _)| i).chain([t.len()]).collect();
                let at = *r.pick(&cuts);
                match r.below(3) {
                    0 => t.insert_str(at, pick_str(&mut r, &bytes)),
                    1 => {
                        let end = cuts.iter().copied().find(|&c| c > at).unwrap_or(at);
                        t.replace_range(at..end, "");
                    }
                    _ => {
                        let end = cuts.iter().copied().find(|&c| c > at).unwrap_or(at);
                        t.replace_range(at..end, pick_str(&mut r, &bytes));
                    }
                }
            }
            t
        } else {
            (0..r.below(24)).map(|_| *r.pick(&bytes)).collect()
        };
        let _ = case;
        check_any(&text);
    }
    println!("fuzz_json: {n} mutated or random texts, no panic, every error coded");
}

#[test]
fn fuzz_limits_are_typed_errors() {
    let n = (cases() / 100).max(50);
    let mut r = Rng(seed() ^ 2);
    for _ in 0..n {
        let depth = MAX_DEPTH - 5 + r.below(12);
        let (open, close) = if r.chance(50) { ("[", "]") } else { ("{\"k\":", "}") };
        let text = format!("{}0{}", open.repeat(depth), close.repeat(depth));
        match parse(&text) {
            Ok(_) => assert!(depth <= MAX_DEPTH, "{depth}"),
            Err(e) => assert_eq!((e, depth > MAX_DEPTH), (JsonError::TooDeep, true)),
        }
        check_any(&text);
    }
    // Size: at the limit and one byte past it, and a canonical form that grows past it (1e20 → 21 digits).
    // (Hashing 16 MiB in a debug build takes seconds: the fingerprints at the limit are checked in release,
    // in wasm, by tests/js/hostile.test.mjs.)
    let at = format!("\"{}\"", "a".repeat(MAX_TEXT_BYTES - 2));
    assert!(parse(&at).is_ok());
    let past = format!("\"{}\"", "a".repeat(MAX_TEXT_BYTES - 1));
    assert!(matches!(fingerprint(&past), Err(JsonError::TooLarge { .. })));
    assert_eq!(fingerprint(&past).map_err(|e| e.code()), Err("too_large"));
    let grows = format!("[{}1e20]", "1e20,".repeat(MAX_TEXT_BYTES / 5 - 1));
    assert!(grows.len() <= MAX_TEXT_BYTES);
    assert!(matches!(canonicalize(&grows), Err(JsonError::TooLarge { .. })));
    println!("fuzz_json: {n} depth cases, 4 size cases");
}

#[test]
fn fuzz_boundary_numbers() {
    // What the wasm reader does with every number it reads from JS: check_number, then the policy.
    let n = cases();
    let mut r = Rng(seed() ^ 3);
    let interesting = [
        0.0,
        -0.0,
        0.5,
        1.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        9007199254740993.0,
        86_400_000.0,
    ];
    let num = |r: &mut Rng| if r.chance(50) { *r.pick(&interesting) } else { gen_number(r) };
    for _ in 0..n {
        let (v, min, max) = (num(&mut r), r.next() % 10, 1u64 << r.below(54));
        match check_number("f", v, min, max, r.chance(50)) {
            Ok(x) => assert!(v.is_finite() && x >= min.min(max) && x <= max && v >= 0.0, "{v} {min} {max} → {x}"),
            Err(e) => assert!(!e.code().is_empty() && e.field == "f"),
        }
        // The numbers the reader accepted, as the typed options the core validates.
        let int = |r: &mut Rng, min, max| {
            r.chance(50).then(|| num(r)).and_then(|v| check_number("f", v, min, max, false).ok())
        };
        let o = PolicyOptions {
            max_attempts: int(&mut r, 0, u64::from(u32::MAX)).map(|v| u32::try_from(v).unwrap_or(u32::MAX)),
            base_delay_ms: int(&mut r, 0, 1 << 53),
            max_delay_ms: int(&mut r, 0, 1 << 53),
            total_timeout_ms: int(&mut r, 0, 1 << 53),
            attempt_timeout_ms: int(&mut r, 0, 1 << 53),
            max_retry_after_ms: int(&mut r, 0, 1 << 53),
            jitter: r.chance(30).then(|| *r.pick(&Jitter::ALL)),
            ..PolicyOptions::default()
        };
        match Policy::new(&o) {
            Ok(p) => assert!(p.max_attempts >= 1 && p.base_delay_ms <= p.max_delay_ms),
            Err(e) => assert!(!e.to_string().is_empty() && !e.field.as_str().is_empty()),
        }
    }
    println!("fuzz_json: {n} boundary numbers and {n} policies");
}
