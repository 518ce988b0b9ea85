//! Reading JS values defensively: every property read catches, every type is checked, unknown keys are
//! reported by name, and no JS exception can cross a wasm frame: every import used here either catches
//! (`reflect.js`, `Array.isArray`, `Reflect.set` on fresh objects) or cannot throw (`typeof`, a string primitive's
//! `length`).

use js_sys::{JsString, Object, Reflect};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use super::error::{range_error, type_error};
use super::JsResult;
use crate::input::{check_number, InputError, InputErrorKind};

#[wasm_bindgen]
extern "C" {
    /// `Array.isArray`, catching: it throws on a revoked Proxy (js-sys's binding does not catch). Its
    /// result is a `bool`, so a catch leaks nothing (see `reflect.js` for the imports that would).
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array_catching(value: &JsValue) -> Result<bool, JsValue>;
}

#[wasm_bindgen(module = "/src/wasm/reflect.js")]
extern "C" {
    /// `Reflect.get`, never throwing: `true` when it returned, `false` when it threw; then [`taken`].
    #[wasm_bindgen(js_name = get)]
    fn reflect_get(object: &JsValue, key: &JsValue) -> bool;
    /// `Reflect.ownKeys`, never throwing, like [`reflect_get`].
    #[wasm_bindgen(js_name = ownKeys)]
    fn reflect_own_keys(object: &JsValue) -> bool;
    /// The value (or what was thrown) of the last `get`/`ownKeys`.
    fn taken() -> JsValue;
}

/// `Reflect.get(object, key)`: the value, or what was thrown (a getter, a proxy trap, a non-object).
pub fn get(object: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    if reflect_get(object, &JsValue::from_str(key)) {
        Ok(taken())
    } else {
        Err(taken())
    }
}

/// `Reflect.ownKeys(object)`, as [`get`].
fn own_keys(object: &JsValue) -> Result<js_sys::Array, JsValue> {
    if reflect_own_keys(object) {
        Ok(taken().unchecked_into())
    } else {
        Err(taken())
    }
}

/// The longest string an option, a name or a code may be (UTF-16 code units). Longer strings are refused
/// before they are copied into wasm memory, so no caller can make the module allocate for them.
pub const MAX_NAME_LEN: u32 = 1024;

/// Whether `value` is an array; `Err` for a revoked Proxy (which throws on every operation).
pub fn is_array(value: &JsValue) -> Result<bool, ()> {
    if !value.is_object() {
        return Ok(false);
    }
    is_array_catching(value).map_err(|_| ())
}

/// The length of a string primitive in UTF-16 code units (`None` for anything else). Reading `length` of
/// a string primitive cannot throw and copies nothing.
pub fn string_len(value: &JsValue) -> Option<u32> {
    value.is_string().then(|| value.unchecked_ref::<JsString>().length())
}

/// A string primitive of at most `max` UTF-16 code units, copied into wasm; `Ok(None)` for anything that
/// is not a string; `Err(length)` for a longer string (not copied).
pub fn bounded_string(value: &JsValue, max: u32) -> Result<Option<String>, u32> {
    match string_len(value) {
        None => Ok(None),
        Some(len) if len > max => Err(len),
        Some(_) => Ok(value.as_string()),
    }
}

/// `field` is a string longer than `max`.
pub fn too_long(field: &str, len: u32, max: u32) -> JsValue {
    range_error("too_long", field, &format!("{field} must be at most {max} characters long, got {len}"))
}

/// A string of at most [`MAX_NAME_LEN`] characters, or `None` for a value that is not a string.
pub fn name_string(field: &str, value: &JsValue) -> JsResult<Option<String>> {
    bounded_string(value, MAX_NAME_LEN).map_err(|len| too_long(field, len, MAX_NAME_LEN))
}

/// `typeof value`, with `null`, arrays and revoked proxies named as such.
pub fn type_name(value: &JsValue) -> String {
    if value.is_null() {
        return "null".into();
    }
    match is_array(value) {
        Ok(true) => "array".into(),
        Err(()) => "a revoked Proxy".into(),
        Ok(false) => value.js_typeof().as_string().unwrap_or_else(|| "unknown".into()),
    }
}

fn wrong_type(field: &str, expected: &'static str, got: &JsValue) -> JsValue {
    InputError { field: field.into(), kind: InputErrorKind::WrongType { expected, got: type_name(got) } }.into()
}

/// `field` is a revoked Proxy: nothing can be read from it.
pub fn revoked(field: &str) -> JsValue {
    type_error("unreadable", field, &format!("{field} could not be read: it is a revoked Proxy"))
}

/// `value` is a plain object or the like (not an array, not a revoked Proxy), else the typed error naming
/// `field`.
pub fn check_object(value: &JsValue, field: &str, expected: &'static str) -> JsResult<()> {
    if !value.is_object() {
        return Err(wrong_type(field, expected, value));
    }
    match is_array(value) {
        Ok(false) => Ok(()),
        Ok(true) => Err(wrong_type(field, expected, value)),
        Err(()) => Err(revoked(field)),
    }
}

/// A plain JS object being read field by field. `finish` rejects keys that were never asked for.
pub struct Fields<'a> {
    object: &'a JsValue,
    path: &'a str,
    known: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    /// Starts reading `value` as an object named `path` (`""` at the top). `undefined` reads as empty.
    pub fn new(value: &'a JsValue, path: &'a str, what: &'static str) -> JsResult<Option<Fields<'a>>> {
        if value.is_undefined() {
            return Ok(None);
        }
        check_object(value, if path.is_empty() { what } else { path }, "an object")?;
        Ok(Some(Fields { object: value, path, known: Vec::new() }))
    }

    /// The dotted name of `key` inside this object.
    pub fn name(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The raw value of `key` (undefined when absent).
    pub fn get(&mut self, key: &'static str) -> JsResult<JsValue> {
        self.known.push(key);
        get(self.object, key).map_err(|e| unreadable(&self.name(key), &e))
    }

    /// A number, or `None` when absent. Any other type is a `TypeError`; range checks are the caller's.
    pub fn number(&mut self, key: &'static str) -> JsResult<Option<f64>> {
        let v = self.get(key)?;
        if v.is_undefined() {
            return Ok(None);
        }
        v.as_f64().map(Some).ok_or_else(|| wrong_type(&self.name(key), "a number", &v))
    }

    /// A string, or `None` when absent.
    pub fn string(&mut self, key: &'static str) -> JsResult<Option<String>> {
        let v = self.get(key)?;
        if v.is_undefined() {
            return Ok(None);
        }
        name_string(&self.name(key), &v)?.map(Some).ok_or_else(|| wrong_type(&self.name(key), "a string", &v))
    }

    /// Rejects any own string key that was not read.
    pub fn finish(self) -> JsResult<()> {
        let keys = own_keys(self.object).map_err(|e| unreadable(&self.name("*"), &e))?;
        for key in keys.iter() {
            // Symbols are skipped; a key too long to be one we know is unknown (named by its start only).
            let k = match bounded_string(&key, MAX_NAME_LEN) {
                Ok(Some(k)) => k,
                Ok(None) => continue,
                Err(_) => return Err(InputError { field: self.name("…"), kind: InputErrorKind::UnknownField }.into()),
            };
            if !self.known.iter().any(|known| *known == k) {
                return Err(InputError { field: self.name(&k), kind: InputErrorKind::UnknownField }.into());
            }
        }
        Ok(())
    }
}

/// A getter or proxy trap threw while we read `field`. The thrown value's `message` is read with a catching
/// `Reflect.get` (it may be a hostile object too) and quoted only if it is a short string.
fn unreadable(field: &str, thrown: &JsValue) -> JsValue {
    let message = if thrown.is_object() { get(thrown, "message").ok() } else { None };
    let detail = match message.as_ref().map(|m| bounded_string(m, 200)) {
        Some(Ok(Some(m))) => m,
        Some(Err(_)) => "an error with a long message".into(),
        _ => type_name(thrown),
    };
    type_error("unreadable", field, &format!("{field} could not be read: {detail}"))
}

/// A time in milliseconds from JS (`Date.now()`, `performance.now()`): finite, not negative, at most 2^53.
pub fn time_ms(field: &str, value: f64) -> JsResult<u64> {
    check_number(field, value, 0, 1 << 53, false).map_err(Into::into)
}

/// Sets a data property on a fresh plain object (which cannot fail; if it did, the field is just absent).
pub fn set(o: &Object, key: &str, value: JsValue) {
    let _ = Reflect::set(o, &key.into(), &value);
}

/// A whole number of milliseconds (or tokens, versions) as a JS number: every value the core produces
/// here is at most a day's worth of milliseconds or a counter, exact in an `f64`.
pub fn ms(v: u64) -> JsValue {
    JsValue::from_f64(v as f64)
}
