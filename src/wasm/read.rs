//! Reading JS values defensively: every property read catches, every type is checked, unknown keys are
//! reported by name.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use super::error::type_error;
use super::JsResult;
use crate::retry::policy::{check_number, PolicyError, PolicyErrorKind};

/// `typeof value`, with `null` and arrays named as such.
pub fn type_name(value: &JsValue) -> String {
    if value.is_null() {
        "null".into()
    } else if Array::is_array(value) {
        "array".into()
    } else {
        value.js_typeof().as_string().unwrap_or_else(|| "unknown".into())
    }
}

fn wrong_type(field: &str, expected: &'static str, got: &JsValue) -> JsValue {
    PolicyError { field: field.into(), kind: PolicyErrorKind::WrongType { expected, got: type_name(got) } }.into()
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
        if !value.is_object() || Array::is_array(value) {
            return Err(wrong_type(if path.is_empty() { what } else { path }, "an object", value));
        }
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
        Reflect::get(self.object, &JsValue::from_str(key)).map_err(|e| unreadable(&self.name(key), &e))
    }

    /// A number, or `None` when absent. Any other type is a `TypeError`; range checks are the caller's.
    pub fn number(&mut self, key: &'static str) -> JsResult<Option<f64>> {
        let v = self.get(key)?;
        if v.is_undefined() {
            return Ok(None);
        }
        v.as_f64().map(Some).ok_or_else(|| wrong_type(&self.name(key), "a number", &v))
    }

    /// A boolean, or `None` when absent.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub fn boolean(&mut self, key: &'static str) -> JsResult<Option<bool>> {
        let v = self.get(key)?;
        if v.is_undefined() {
            return Ok(None);
        }
        v.as_bool().map(Some).ok_or_else(|| wrong_type(&self.name(key), "a boolean", &v))
    }

    /// A string, or `None` when absent.
    pub fn string(&mut self, key: &'static str) -> JsResult<Option<String>> {
        let v = self.get(key)?;
        if v.is_undefined() {
            return Ok(None);
        }
        v.as_string().map(Some).ok_or_else(|| wrong_type(&self.name(key), "a string", &v))
    }

    /// Rejects any own string key that was not read.
    pub fn finish(self) -> JsResult<()> {
        let keys = Reflect::own_keys(self.object).map_err(|e| unreadable(&self.name("*"), &e))?;
        for key in keys.iter() {
            if let Some(k) = key.as_string() {
                if !self.known.iter().any(|known| *known == k) {
                    return Err(PolicyError { field: self.name(&k), kind: PolicyErrorKind::UnknownField }.into());
                }
            }
        }
        Ok(())
    }
}

/// A getter or proxy trap threw while we read `field`.
fn unreadable(field: &str, thrown: &JsValue) -> JsValue {
    let detail =
        thrown.dyn_ref::<js_sys::Error>().and_then(|e| e.message().as_string()).unwrap_or_else(|| type_name(thrown));
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
