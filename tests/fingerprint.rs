//! RFC 8785 (JSON Canonicalization Scheme) against the RFC's own examples, and the fingerprint's promises:
//! key order and whitespace do not change it; any value change does.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use mcp_retry_policy::ledger::canonical::{canonicalize, es_number, utf16_cmp};
use mcp_retry_policy::ledger::fingerprint::{
    fingerprint, fingerprint_of_canonical, fingerprint_of_js_json, sha256_hex,
};
use mcp_retry_policy::ledger::json::{JsonError, MAX_TEXT_BYTES};

/// RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text (checked against V8's JSON.stringify).
const NUMBERS: &[(u64, &str)] = &[
    (0x0000000000000000, "0"),
    (0x8000000000000000, "0"),
    (0x0000000000000001, "5e-324"),
    (0x8000000000000001, "-5e-324"),
    (0x7fefffffffffffff, "1.7976931348623157e+308"),
    (0xffefffffffffffff, "-1.7976931348623157e+308"),
    (0x4340000000000000, "9007199254740992"),
    (0xc340000000000000, "-9007199254740992"),
    (0x4430000000000000, "295147905179352830000"),
    (0x44b52d02c7e14af5, "9.999999999999997e+22"),
    (0x44b52d02c7e14af6, "1e+23"),
    (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
    (0x444b1ae4d6e2ef4e, "999999999999999700000"),
    (0x444b1ae4d6e2ef4f, "999999999999999900000"),
    (0x444b1ae4d6e2ef50, "1e+21"),
    (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
    (0x3eb0c6f7a0b5ed8d, "0.000001"),
    (0x41b3de4355555553, "333333333.3333332"),
    (0x41b3de4355555554, "333333333.33333325"),
    (0x41b3de4355555555, "333333333.3333333"),
    (0x41b3de4355555556, "333333333.3333334"),
    (0x41b3de4355555557, "333333333.33333343"),
    (0xbecbf647612f3696, "-0.0000033333333333333333"),
    (0x43143ff3c1cb0959, "1424953923781206.2"),
];

#[test]
fn number_serialization_appendix_b() {
    for &(bits, want) in NUMBERS {
        let v = f64::from_bits(bits);
        assert_eq!(es_number(v), want, "{bits:016x}");
        // And through the whole pipeline, from a JSON text that writes the number another way.
        assert_eq!(canonicalize(&format!("[{v:e}]")).unwrap(), format!("[{want}]"), "{bits:016x}");
    }
}

#[test]
fn the_main_example_section_3_2_2() {
    let input = r#"{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#;
    let want = r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#;
    assert_eq!(canonicalize(input).unwrap(), want);
}

#[test]
fn property_sorting_section_3_2_3() {
    let input = r#"{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"#;
    let want = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}";
    assert_eq!(canonicalize(input).unwrap(), want);
    // UTF-16 order puts U+1F600 (a surrogate pair, 0xD83D…) before U+FB33; code-point order would not.
    assert_eq!(utf16_cmp("\u{1f600}", "\u{fb33}"), core::cmp::Ordering::Less);
    assert!('\u{1f600}' > '\u{fb33}');
}

#[test]
fn string_escaping() {
    let input = "[\"\\u0000\\u0001\\u001f\\b\\t\\n\\f\\r \\\" \\\\ / \\u007f \\u2028 é\"]";
    assert_eq!(
        canonicalize(input).unwrap(),
        "[\"\\u0000\\u0001\\u001f\\b\\t\\n\\f\\r \\\" \\\\ / \u{7f} \u{2028} é\"]"
    );
}

#[test]
fn key_order_and_whitespace_do_not_change_the_fingerprint_values_do() {
    let a =
        fingerprint(r#"{"title":"Printer on fire","priority":2,"tags":["a","b"],"meta":{"x":1,"y":null}}"#).unwrap();
    let b = fingerprint("{ \"meta\" : { \"y\" : null , \"x\" : 1.0 } ,\n \"tags\":[\"a\",\"b\"], \"priority\":2e0, \"title\":\"Printer on fire\" }").unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 64);
    for changed in [
        r#"{"title":"Printer on fire!","priority":2,"tags":["a","b"],"meta":{"x":1,"y":null}}"#,
        r#"{"title":"Printer on fire","priority":3,"tags":["a","b"],"meta":{"x":1,"y":null}}"#,
        r#"{"title":"Printer on fire","priority":2,"tags":["b","a"],"meta":{"x":1,"y":null}}"#,
        r#"{"title":"Printer on fire","priority":2,"tags":["a","b"],"meta":{"x":1,"y":false}}"#,
        r#"{"title":"Printer on fire","priority":2,"tags":["a","b"],"meta":{"x":1}}"#,
        r#"{"title":"Printer on fire","priority":"2","tags":["a","b"],"meta":{"x":1,"y":null}}"#,
    ] {
        assert_ne!(fingerprint(changed).unwrap(), a, "{changed}");
    }
}

#[test]
fn fingerprint_is_sha256_of_the_canonical_text() {
    let text = r#"{"b":1,"a":[true]}"#;
    assert_eq!(fingerprint(text).unwrap(), sha256_hex(br#"{"a":[true],"b":1}"#));
    // Known answer: SHA-256("") and SHA-256("abc") (FIPS 180-2).
    assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    // Text from JSON.stringify keeps its numbers as written and fingerprints the same.
    assert_eq!(
        fingerprint_of_js_json(r#"{"b":1e+21,"a":0.000001}"#).unwrap(),
        fingerprint(r#"{"a":1E-6,"b":1000000000000000000000}"#).unwrap()
    );
    // Text already canonical (what the package's JS writer produces) is hashed as it is: the RFC's example.
    let canonical = r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#;
    assert_eq!(canonicalize(canonical).as_deref(), Ok(canonical));
    assert_eq!(fingerprint_of_canonical(canonical).unwrap(), sha256_hex(canonical.as_bytes()));
    assert_eq!(fingerprint_of_canonical(canonical), fingerprint(canonical));
}

#[test]
fn canonical_text_past_the_limit_is_too_large() {
    let past = "a".repeat(MAX_TEXT_BYTES + 1);
    assert_eq!(fingerprint_of_canonical(&past), Err(JsonError::TooLarge { bytes: MAX_TEXT_BYTES + 1 }));
    assert_eq!(fingerprint_of_canonical(&past[1..]).map(|h| h.len()), Ok(64));
}

#[test]
fn what_is_refused() {
    assert_eq!(fingerprint(r#"{"a":1,"a":2}"#), Err(JsonError::DuplicateKey("a".into())));
    assert!(matches!(fingerprint("[1e400]"), Err(JsonError::NumberOutOfRange(_))));
    assert!(matches!(fingerprint("\"\\udead\""), Err(JsonError::LoneSurrogate { .. })));
    assert!(matches!(fingerprint("{"), Err(JsonError::Syntax { .. })));
}
