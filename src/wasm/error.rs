//! Core errors as JS errors: `RangeError` for a value out of range, `TypeError` for a value of the wrong
//! kind; both carry `code` (stable snake_case) and `field` (the option's JS name).

use js_sys::{Error, RangeError, Reflect, TypeError};
use wasm_bindgen::{JsCast, JsValue};

/// Sets `code` and `field` on a fresh error object. Setting a property on a fresh error cannot fail; if it
/// somehow did, the error still carries its message.
fn tag(err: &Error, code: &str, field: &str) -> JsValue {
    let _ = Reflect::set(err, &"code".into(), &code.into());
    let _ = Reflect::set(err, &"field".into(), &field.into());
    err.clone().into()
}

/// A `RangeError` with `code` and `field`.
pub fn range_error(code: &str, field: &str, message: &str) -> JsValue {
    tag(RangeError::new(message).unchecked_ref(), code, field)
}

/// A `TypeError` with `code` and `field`.
pub fn type_error(code: &str, field: &str, message: &str) -> JsValue {
    tag(TypeError::new(message).unchecked_ref(), code, field)
}
