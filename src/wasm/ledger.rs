//! The ledger's rules for JS (`LedgerRules`) and the fingerprint (`fingerprintJson`). Stores, handlers and
//! I/O live in the JS layer (`pkg-template/server/`).

use js_sys::Object;
use wasm_bindgen::prelude::*;

use super::error::{range_error, type_error};
use super::read::{ms, name_string, set, string_len, time_ms, Fields};
use super::{brand, JsResult};
use crate::input::{check_number, Quoted, MAX_DURATION_MS};
use crate::ledger::{
    admit, claim, fingerprint_of_canonical, fingerprint_of_js_json, finish, lookup, release, valid_operation_id,
    Admission, LedgerConfig, Lookup, Record, RecordState, ReleaseRefusal, MAX_TEXT_BYTES,
};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** `released`: an operator released an unresolved record (`OperationLedger.release`); the next call executes. */
import type { RecordState } from "./generated/names.js";
export type { RecordState } from "./generated/names.js";
/** A ledger record as stores keep it (the recorded result is kept beside it by the JS layer). `expiresMs`
 *  applies to resolved records (succeeded/failed) only: pending and unknown records never expire. */
export interface LedgerRecord {
  state: RecordState; fingerprint: string; leaseUntilMs: number; createdMs: number; expiresMs: number; version: number;
}
export type LedgerAdmission =
  | { action: "execute" } | { action: "replay" } | { action: "conflict" } | { action: "reconcile" }
  | { action: "in_progress"; retryAfterMs: number };
/** What a status lookup finds (read-only): `reconcile` means pending past its lease, or unknown. */
export type LedgerLookup =
  | { status: "not_found" | "not_done" | "succeeded" | "failed" | "reconcile" }
  | { status: "in_progress"; retryAfterMs: number };
/** The core's answer to a release: the released record, or why not. */
export type LedgerReleaseRule =
  | { released: LedgerRecord }
  | { refused: "resolved" | "already_released" }
  | { refused: "lease_live"; retryAfterMs: number };
/** `ttlMs` (default 24 h): how long a resolved record is replayed after its outcome; at least `leaseMs`.
 *  `leaseMs` (default 60 s): how long a claim holds before a repeat is reconciled. */
export interface LedgerRulesOptions { ttlMs?: number; leaseMs?: number }
"#;

/// The ledger's transitions with validated settings.
#[wasm_bindgen]
pub struct LedgerRules {
    config: LedgerConfig,
}

fn record_to_js(r: &Record) -> JsValue {
    let o = Object::new();
    set(&o, "state", r.state.as_str().into());
    set(&o, "fingerprint", r.fingerprint.as_str().into());
    set(&o, "leaseUntilMs", ms(r.lease_until_ms));
    set(&o, "createdMs", ms(r.created_ms));
    set(&o, "expiresMs", ms(r.expires_ms));
    set(&o, "version", ms(r.version));
    o.into()
}

fn read_record(value: &JsValue) -> JsResult<Option<Record>> {
    if value.is_null() {
        return Ok(None);
    }
    let Some(mut f) = Fields::new(value, "record", "record")? else { return Ok(None) };
    let state = f.string("state")?.unwrap_or_default();
    let state: RecordState = state.parse().map_err(|()| {
        range_error(
            "invalid_value",
            "record.state",
            &format!("record.state must be pending, succeeded, failed, unknown or released, got {}", Quoted(&state)),
        )
    })?;
    let fingerprint = f
        .string("fingerprint")?
        .ok_or_else(|| type_error("missing", "record.fingerprint", "record.fingerprint is required"))?;
    let mut time = |key: &'static str| -> JsResult<u64> {
        let v = f
            .number(key)?
            .ok_or_else(|| type_error("missing", &format!("record.{key}"), &format!("record.{key} is required")))?;
        time_ms(&format!("record.{key}"), v)
    };
    let record = Record {
        state,
        fingerprint,
        lease_until_ms: time("leaseUntilMs")?,
        created_ms: time("createdMs")?,
        expires_ms: time("expiresMs")?,
        version: time("version")?,
    };
    // Stores may keep more beside the record (the result, the key): other fields are allowed here.
    Ok(Some(record))
}

fn read_fingerprint(v: &JsValue) -> JsResult<String> {
    name_string("fingerprint", v)?
        .ok_or_else(|| type_error("invalid_type", "fingerprint", "fingerprint must be a string"))
}

#[wasm_bindgen]
impl LedgerRules {
    /// `ttlMs` (default 24 h) and `leaseMs` (default 60 s), validated; a TTL shorter than the lease is a
    /// `RangeError` (`code: "ttl_below_lease"`, `field: "ttlMs"`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "LedgerRulesOptions | undefined")] options: JsValue,
    ) -> JsResult<LedgerRules> {
        let LedgerConfig { mut ttl_ms, mut lease_ms } = LedgerConfig::default();
        if let Some(mut f) = Fields::new(&options, "", "options")? {
            if let Some(v) = f.number("ttlMs")? {
                ttl_ms = check_number("ttlMs", v, 1, 366 * MAX_DURATION_MS, false)?;
            }
            if let Some(v) = f.number("leaseMs")? {
                lease_ms = check_number("leaseMs", v, 1, MAX_DURATION_MS, false)?;
            }
            f.finish()?;
        }
        let config = LedgerConfig::new(ttl_ms, lease_ms).map_err(|e| range_error(e.code(), "ttlMs", &e.to_string()))?;
        let rules = LedgerRules { config };
        brand::constructed(brand::RULES); // the last step: no JS runs between here and the glue's store
        Ok(rules)
    }

    /// What to do with a write of `fingerprint` at `nowMs`, given the stored record (or `undefined`).
    #[wasm_bindgen(unchecked_return_type = "LedgerAdmission")]
    pub fn admit(
        &self,
        #[wasm_bindgen(unchecked_param_type = "LedgerRecord | undefined | null")] stored: JsValue,
        fingerprint: JsValue,
        #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    ) -> JsResult<JsValue> {
        let stored = read_record(&stored)?;
        let fp = read_fingerprint(&fingerprint)?;
        let now = time_ms("nowMs", now_ms)?;
        let a = admit(stored.as_ref(), &fp, now);
        let o = Object::new();
        set(&o, "action", a.as_str().into());
        if let Admission::InProgress { retry_after_ms } = a {
            set(&o, "retryAfterMs", ms(retry_after_ms));
        }
        Ok(o.into())
    }

    /// What a status lookup finds at `nowMs` in the stored record (or `undefined`): `{ status }`, one of
    /// `not_found`, `not_done`, `in_progress` (with `retryAfterMs`), `succeeded`, `failed`, `reconcile`.
    /// Read-only: nothing is claimed.
    #[wasm_bindgen(unchecked_return_type = "LedgerLookup")]
    pub fn lookup(
        &self,
        #[wasm_bindgen(unchecked_param_type = "LedgerRecord | undefined | null")] stored: JsValue,
        #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    ) -> JsResult<JsValue> {
        let stored = read_record(&stored)?;
        let now = time_ms("nowMs", now_ms)?;
        let l = lookup(stored.as_ref(), now);
        let o = Object::new();
        set(&o, "status", l.as_str().into());
        if let Lookup::InProgress { retry_after_ms } = l {
            set(&o, "retryAfterMs", ms(retry_after_ms));
        }
        Ok(o.into())
    }

    /// The pending record that claims a key, replacing `previous` (expired or reconciled) if given.
    #[wasm_bindgen(unchecked_return_type = "LedgerRecord")]
    pub fn claim(
        &self,
        #[wasm_bindgen(unchecked_param_type = "LedgerRecord | undefined | null")] previous: JsValue,
        fingerprint: JsValue,
        #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    ) -> JsResult<JsValue> {
        let previous = read_record(&previous)?;
        let fp = read_fingerprint(&fingerprint)?;
        let now = time_ms("nowMs", now_ms)?;
        Ok(record_to_js(&claim(previous.as_ref(), &fp, now, &self.config)))
    }

    /// The record after the handler finished as `state` (`succeeded`, `failed` or `unknown`).
    #[wasm_bindgen(unchecked_return_type = "LedgerRecord")]
    pub fn finish(
        &self,
        #[wasm_bindgen(unchecked_param_type = "LedgerRecord")] claimed: JsValue,
        #[wasm_bindgen(unchecked_param_type = "RecordState")] state: JsValue,
        #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    ) -> JsResult<JsValue> {
        let claimed = read_record(&claimed)?.ok_or_else(|| type_error("missing", "record", "record is required"))?;
        let s = name_string("state", &state)?.unwrap_or_default();
        let state = match s.parse() {
            Ok(RecordState::Pending | RecordState::Released) | Err(()) => {
                return Err(range_error(
                    "invalid_value",
                    "state",
                    &format!("state must be succeeded, failed or unknown, got {}", Quoted(&s)),
                ))
            }
            Ok(st) => st,
        };
        let now = time_ms("nowMs", now_ms)?;
        Ok(record_to_js(&finish(&claimed, state, now, &self.config)))
    }

    /// An operator's release of an unresolved record at `nowMs`: `{ released: record }`, or
    /// `{ refused: "resolved" | "already_released" }`, or `{ refused: "lease_live", retryAfterMs }`.
    #[wasm_bindgen(unchecked_return_type = "LedgerReleaseRule")]
    pub fn release(
        &self,
        #[wasm_bindgen(unchecked_param_type = "LedgerRecord")] stored: JsValue,
        #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    ) -> JsResult<JsValue> {
        let stored = read_record(&stored)?.ok_or_else(|| type_error("missing", "record", "record is required"))?;
        let now = time_ms("nowMs", now_ms)?;
        let o = Object::new();
        match release(&stored, now, &self.config) {
            Ok(r) => set(&o, "released", record_to_js(&r)),
            Err(refusal) => {
                set(&o, "refused", refusal.code().into());
                if let ReleaseRefusal::LeaseLive { retry_after_ms } = refusal {
                    set(&o, "retryAfterMs", ms(retry_after_ms));
                }
            }
        }
        Ok(o.into())
    }

    /// The settings in force.
    #[wasm_bindgen(getter, js_name = ttlMs)]
    pub fn ttl_ms(&self) -> f64 {
        self.config.ttl_ms as f64
    }

    /// The settings in force.
    #[wasm_bindgen(getter, js_name = leaseMs)]
    pub fn lease_ms(&self) -> f64 {
        self.config.lease_ms as f64
    }
}

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
