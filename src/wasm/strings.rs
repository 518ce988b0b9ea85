//! The server face's string exports: the fingerprint (`fingerprintJson`, `fingerprintCanonical`) and the
//! operation-id form (`isValidOperationId`). Each measures a string primitive's length (which cannot throw)
//! before it copies it; anything but a string is a typed error (or `false`), never read.

use wasm_bindgen::prelude::*;

use super::error::{range_error, type_error};
use super::JsResult;
use crate::ledger::{fingerprint_of_canonical, fingerprint_of_js_json, valid_operation_id, MAX_TEXT_BYTES};

/// The fingerprint (RFC 8785 + SHA-256, hex) of the output of `JSON.stringify`. Use `fingerprint(value)`
/// from the package, which serializes for you and rejects NaN, ±Infinity and cycles.
#[wasm_bindgen(js_name = fingerprintJson)]
pub fn fingerprint_json(text: JsValue) -> JsResult<String> {
    // Measured before it is copied: a UTF-16 code unit is at least one UTF-8 byte.
    let len =
        string_len(&text).ok_or_else(|| type_error("invalid_type", "value", "fingerprintJson needs the JSON text"))?;
    if usize::try_from(len).map_or(true, |len| len > MAX_TEXT_BYTES) {
        return Err(too_large(len));
    }
    let text = text.as_string().unwrap_or_default();
    fingerprint_of_js_json(&text)
        .map_err(|e| range_error(e.code(), "value", &format!("cannot fingerprint this value: {e}")))
}

/// SHA-256 (hex) of the UTF-8 bytes of a text that is already canonical JSON (RFC 8785): what
/// `fingerprint(value)` calls after writing the canonical form in JS. Nothing is parsed; a lone surrogate
/// would be hashed as U+FFFD (the package's writer refuses them first). Longer than `MAX_FINGERPRINT_BYTES`
/// bytes: `RangeError` `too_large`, measured before the text is copied.
#[wasm_bindgen(js_name = fingerprintCanonical)]
pub fn fingerprint_canonical(text: JsValue) -> JsResult<String> {
    let len = string_len(&text)
        .ok_or_else(|| type_error("invalid_type", "value", "fingerprintCanonical needs the canonical JSON text"))?;
    if usize::try_from(len).map_or(true, |len| len > MAX_TEXT_BYTES) {
        return Err(too_large(len));
    }
    let text = text.as_string().unwrap_or_default();
    fingerprint_of_canonical(&text)
        .map_err(|e| range_error(e.code(), "value", &format!("cannot fingerprint this value: {e}")))
}

/// Whether an operation id has the accepted form: 8–128 characters of `A–Z a–z 0–9 - _ . :`.
#[wasm_bindgen(js_name = isValidOperationId)]
pub fn is_valid_operation_id(id: JsValue) -> bool {
    // Measured first: a long string is not an id and is not copied.
    string_len(&id).is_some_and(|len| len <= 128) && id.as_string().is_some_and(|s| valid_operation_id(&s))
}

/// The length of a string primitive in UTF-16 code units (`None` for anything else). Reading `length` of
/// a string primitive cannot throw and copies nothing.
fn string_len(value: &JsValue) -> Option<u32> {
    value.is_string().then(|| value.unchecked_ref::<js_sys::JsString>().length())
}

fn too_large(len: impl core::fmt::Display) -> JsValue {
    range_error(
        "too_large",
        "value",
        &format!("cannot fingerprint this value: its JSON text ({len}) is longer than {MAX_TEXT_BYTES} bytes"),
    )
}

/// The most canonical JSON text a fingerprint takes, in UTF-8 bytes (16 MiB); the package exports it as
/// `MAX_FINGERPRINT_BYTES`.
#[wasm_bindgen(js_name = maxFingerprintBytes)]
pub fn max_fingerprint_bytes() -> f64 {
    MAX_TEXT_BYTES as f64
}
