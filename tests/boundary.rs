//! The wasm boundary, exercised from inside wasm with real JS values: in Node and in headless Chromium
//! (`scripts/test.sh` runs this file under both). Every JS value we can think of — undefined, null,
//! strings, NaN, huge numbers, arrays, functions, symbols, throwing getters, throwing proxies, cyclic and
//! re-entrant objects — must give a typed error or a result, never a panic; and the module must still
//! work afterwards.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use js_sys::{Array, Object, Reflect};
use mcp_retry_policy::retry::{FinalStatus, Reason, Safety};
use mcp_retry_policy::vocab::{
    ADMIT_ADMITTED, ADMIT_REASON, C_B_PRESENT, C_D_PRESENT, KIND_HTTP, KIND_JSONRPC_ERROR, KIND_LEDGER, KIND_NETWORK,
    KIND_RESULT, KIND_STREAM_BROKEN, KIND_TIMEOUT, STEP_REASON, STEP_RETRY_AFTER, STEP_STOP, VALUE_SCALE,
};
use mcp_retry_policy::wasm::{new_operation_id, revision_for, RetryEngine};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn js(src: &str) -> JsValue {
    js_sys::eval(&format!("({src})")).unwrap()
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &key.into()).unwrap()
}

fn code_of(e: &JsValue) -> (String, String, String) {
    let kind = if e.is_instance_of::<js_sys::RangeError>() {
        "RangeError"
    } else if e.is_instance_of::<js_sys::TypeError>() {
        "TypeError"
    } else if e.is_instance_of::<js_sys::Error>() {
        "Error"
    } else {
        "not an Error"
    };
    (kind.into(), get(e, "code").as_string().unwrap_or_default(), get(e, "field").as_string().unwrap_or_default())
}

fn policy_err(src: &str) -> (String, String, String) {
    match RetryEngine::new(js(src), JsValue::UNDEFINED) {
        Ok(_) => ("accepted".into(), String::new(), String::new()),
        Err(e) => code_of(&e),
    }
}

fn weird_values() -> Vec<JsValue> {
    [
        "undefined",
        "null",
        "NaN",
        "Infinity",
        "-Infinity",
        "-0",
        "-1",
        "1e308",
        "2**53 + 2",
        "0.5",
        "''",
        "'3'",
        "'NaN'",
        "true",
        "false",
        "[]",
        "[1,2]",
        "{}",
        "() => 1",
        "Symbol('s')",
        "10n",
        "new Date(0)",
        "new Number(3)",
        "Object.create(null)",
        "{ get x() { throw new Error('boom') } }",
        "new Proxy({}, { get() { throw new Error('trap') }, ownKeys() { throw 42 } })",
        "(() => { const o = {}; o.self = o; return o })()",
        "(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy })()",
        "'x'.repeat(5000)",
        "new Proxy({}, { get() { throw new Proxy(new Error('m'), { get() { throw 1 } }) }, ownKeys() { throw Object.defineProperty(new Error(), 'message', { get() { throw 2 } }) } })",
        "{ get kind() { throw { message: 'm'.repeat(100000) } } }",
    ]
    .iter()
    .map(|s| js(s))
    .collect()
}

/// Every value we throw at the boundary is a result or an Error with a string code, never a trap.
fn assert_error_or_ok(r: Result<impl Sized, JsValue>, what: &str) {
    if let Err(e) = r {
        let (kind, code, _) = code_of(&e);
        assert_ne!(kind, "not an Error", "{what}");
        assert!(!code.is_empty(), "{what}: error without a code");
    }
}

#[wasm_bindgen_test]
fn bad_policy_values_are_typed_and_named() {
    let cases = [
        ("{ maxAttempts: NaN }", "RangeError", "not_finite", "maxAttempts"),
        ("{ maxAttempts: 0 }", "RangeError", "too_small", "maxAttempts"),
        ("{ maxAttempts: 1.5 }", "RangeError", "not_integer", "maxAttempts"),
        ("{ maxAttempts: 1e9 }", "RangeError", "too_large", "maxAttempts"),
        ("{ maxAttempts: '3' }", "TypeError", "invalid_type", "maxAttempts"),
        ("{ maxAttempts: null }", "TypeError", "invalid_type", "maxAttempts"),
        ("{ baseDelayMs: -5 }", "RangeError", "negative", "baseDelayMs"),
        ("{ baseDelayMs: 10, maxDelayMs: 5 }", "RangeError", "base_exceeds_cap", "baseDelayMs"),
        ("{ totalTimeoutMs: Infinity }", "RangeError", "not_finite", "totalTimeoutMs"),
        ("{ jitter: 'random' }", "RangeError", "invalid_value", "jitter"),
        ("{ jitter: 1 }", "TypeError", "invalid_type", "jitter"),
        ("{ budget: 'no' }", "TypeError", "invalid_type", "budget"),
        ("{ budget: { capacity: -1 } }", "RangeError", "negative", "budget.capacity"),
        ("{ budget: { capacityy: 1 } }", "TypeError", "unknown_option", "budget.capacityy"),
        ("{ breaker: { failureRatio: 2 } }", "RangeError", "too_large", "breaker.failureRatio"),
        ("{ breaker: { openMs: 0 } }", "RangeError", "too_small", "breaker.openMs"),
        ("{ retries: 3 }", "TypeError", "unknown_option", "retries"),
        ("{ get maxAttempts() { throw new Error('boom') } }", "TypeError", "unreadable", "maxAttempts"),
        ("new Proxy({}, { ownKeys() { throw new Error('trap') } })", "TypeError", "unreadable", "*"),
        ("(() => { const o = {}; o.budget = o; return o })()", "TypeError", "unknown_option", "budget.budget"),
        ("'fast'", "TypeError", "invalid_type", "policy"),
        ("[1]", "TypeError", "invalid_type", "policy"),
    ];
    for (src, kind, code, field) in cases {
        assert_eq!(policy_err(src), (kind.into(), code.into(), field.into()), "{src}");
    }
    assert_eq!(policy_err("undefined").0, "accepted");
    assert_eq!(policy_err("{ budget: false, breaker: true, jitter: 'none' }").0, "accepted");
}

#[wasm_bindgen_test]
fn every_weird_value_in_every_slot_is_an_error_or_a_result() {
    let fields = ["maxAttempts", "baseDelayMs", "jitter", "budget", "breaker", "totalTimeoutMs"];
    for v in weird_values() {
        assert_error_or_ok(RetryEngine::new(v.clone(), JsValue::UNDEFINED), "policy");
        assert_error_or_ok(RetryEngine::new(JsValue::UNDEFINED, v.clone()), "options");
        for f in fields {
            let o = Object::new();
            Reflect::set(&o, &f.into(), &v).unwrap();
            assert_error_or_ok(RetryEngine::new(o.into(), JsValue::UNDEFINED), f);
        }
        let engine = RetryEngine::new(JsValue::UNDEFINED, js("{ seed: 1 }")).unwrap();
        assert_error_or_ok(engine.safety(v.clone(), v.clone()), "safety");
        assert_error_or_ok(engine.set_protocol_version(v.clone()), "setProtocolVersion");
        let call = engine.begin(1000.0, None).unwrap();
        assert_error_or_ok(engine.begin(1000.0, Some(v.clone())), "begin options");
        let answers = Object::new();
        Reflect::set(&answers, &"answersInput".into(), &v).unwrap();
        assert_error_or_ok(engine.begin(1000.0, Some(answers.into())), "begin options.answersInput");
        if let Some(n) = v.as_f64() {
            assert_error_or_ok(engine.begin(n, None), "begin");
            assert_error_or_ok(engine.admit_packed(&call, n), "admit");
            for kind in 0..9 {
                assert_error_or_ok(engine.classify_packed(kind, n, n, n, n), "classify");
                assert_error_or_ok(engine.record_packed(&call, kind, n, n, n, n, 3, 1000.0), "record");
                assert_error_or_ok(engine.record_packed(&call, kind, 503.0, n, 7.0, n, 3, 1000.0), "record flags");
            }
        }
    }
    // Still alive and still right.
    let engine = RetryEngine::new(JsValue::UNDEFINED, js("{ seed: 9 }")).unwrap();
    let call = engine.begin(0.0, None).unwrap();
    engine.admit_packed(&call, 0.0).unwrap();
    let step = engine.record_packed(&call, KIND_TIMEOUT, 0.0, 0.0, 0.0, 0.0, SAFETY_UNSAFE, 5.0).unwrap();
    assert_eq!(stop_status(step), Some(FinalStatus::Unknown));
}

const SAFETY_UNSAFE: u32 = Safety::Unsafe as u32;
const SAFETY_READ_ONLY: u32 = Safety::ReadOnly as u32;

fn meta(packed: f64) -> u32 {
    (packed % f64::from(VALUE_SCALE)) as u32
}

/// The status of a packed step's stop, or `None` for a retry.
fn stop_status(packed: f64) -> Option<FinalStatus> {
    let stop = STEP_STOP.get(meta(packed));
    stop.checked_sub(1).map(|s| FinalStatus::ALL[s as usize])
}

fn reason(packed: f64) -> &'static str {
    Reason::ALL[STEP_REASON.get(meta(packed)) as usize].as_str()
}

#[wasm_bindgen_test]
fn bad_times_and_outcomes_are_named() {
    let engine = RetryEngine::new(JsValue::UNDEFINED, JsValue::UNDEFINED).unwrap();
    for (now, code) in
        [(f64::NAN, "not_finite"), (-1.0, "negative"), (f64::INFINITY, "not_finite"), (1e300, "too_large")]
    {
        let e = engine.begin(now, None).err().expect("rejected");
        assert_eq!(code_of(&e), ("RangeError".into(), code.into(), "nowMs".into()));
    }
    // The one protocol: a kind code and four numbers (src/vocab.rs); the core names the field it refuses.
    let present = f64::from(C_B_PRESENT);
    let cases = [
        ((KIND_HTTP, 42.0, 0.0, 0.0, 0.0), "RangeError", "too_small", "outcome.status"),
        ((KIND_HTTP, 503.5, 0.0, 0.0, 0.0), "RangeError", "not_integer", "outcome.status"),
        ((KIND_HTTP, 503.0, -1.0, present, 0.0), "RangeError", "negative", "outcome.retryAfterMs"),
        ((KIND_HTTP, 503.0, f64::NAN, present, 0.0), "RangeError", "not_finite", "outcome.retryAfterMs"),
        ((KIND_HTTP, 503.0, 0.0, f64::from(C_D_PRESENT), 1.5), "RangeError", "not_integer", "outcome.jsonrpcCode"),
        ((KIND_JSONRPC_ERROR, 1.5, 0.0, 0.0, 0.0), "RangeError", "not_integer", "outcome.code"),
        ((KIND_NETWORK, 2.0, 0.0, 0.0, 0.0), "RangeError", "invalid_value", "outcome.sent"),
        ((KIND_LEDGER, 0.5, 0.0, 0.0, 0.0), "RangeError", "invalid_value", "outcome.status"),
        ((KIND_RESULT, 0.0, 3.0, 0.0, 0.0), "RangeError", "invalid_value", "outcome.resultType"),
        ((KIND_STREAM_BROKEN, 1.0, 1e300, present, 0.0), "RangeError", "too_large", "outcome.retryMs"),
        ((99, 0.0, 0.0, 0.0, 0.0), "RangeError", "invalid_value", "kind"),
    ];
    let call = engine.begin(0.0, None).unwrap();
    for ((k, a, b, c, d), kind, code, field) in cases {
        let e = engine.classify_packed(k, a, b, c, d).err().unwrap_or_else(|| panic!("{field} accepted"));
        assert_eq!(code_of(&e), (kind.into(), code.into(), field.into()), "{field}");
        let e = engine.record_packed(&call, k, a, b, c, d, SAFETY_UNSAFE, 0.0).err().unwrap();
        assert_eq!(code_of(&e), (kind.into(), code.into(), field.into()), "{field}");
    }
    let e = engine.record_packed(&call, KIND_TIMEOUT, 0.0, 0.0, 0.0, 0.0, 4, 0.0).err().unwrap();
    assert_eq!(code_of(&e), ("RangeError".into(), "invalid_value".into(), "safety".into()));
    // The core's Retry-After is the value of a packed classification.
    let ra = engine.classify_packed(KIND_LEDGER, 0.0, 250.0, present, 0.0).unwrap();
    assert_eq!(STEP_RETRY_AFTER.get(meta(ra)), 1);
    assert_eq!(((ra - f64::from(meta(ra))) / f64::from(VALUE_SCALE)) as u64, 250);
    let none = engine.classify_packed(KIND_LEDGER, 2.0, 250.0, present, 0.0).unwrap(); // conflict: no wait
    assert_eq!(STEP_RETRY_AFTER.get(meta(none)), 0);
}

#[wasm_bindgen_test]
fn a_reentrant_getter_meets_no_panic() {
    // The options' `answersInput` getter calls back into the same engine while the outer begin runs.
    let engine: JsValue = RetryEngine::new(js("{ maxAttempts: 5 }"), js("{ seed: 3 }")).unwrap().into();
    let global = js_sys::global();
    Reflect::set(&global, &"__mrpEngine".into(), &engine).unwrap();
    let result = js(r#"(() => {
        const e = globalThis.__mrpEngine;
        let inner;
        const options = { get answersInput() { const c = e.begin(0); e.admitPacked(c, 0); inner = e.recordPacked(c, 4, 0, 0, 0, 0, 0, 1); return false; } };
        const outer = e.begin(2, options);
        return { inner, attempts: outer.attempts };
    })()"#);
    let inner = get(&result, "inner").as_f64().unwrap();
    assert_eq!(stop_status(inner), None, "the inner record retried");
    assert_eq!(get(&result, "attempts").as_f64(), Some(0.0));
    let _ = Reflect::delete_property(global.unchecked_ref::<Object>(), &"__mrpEngine".into());
}

#[wasm_bindgen_test]
fn the_engine_runs_a_call_through_js_values() {
    let engine = RetryEngine::new(
        js("{ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000, budget: false }"),
        js("{ seed: 5 }"),
    )
    .unwrap();
    let tool = js("{ name: 'create_ticket', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: { operation_id: { type: 'string' } } } }");
    assert_eq!(engine.safety(tool.clone(), js("{ trusted: false }")).unwrap(), "unsafe");
    assert_eq!(engine.safety(tool.clone(), js("{ trusted: true }")).unwrap(), "read_only");
    let keyed = js("{ annotations: { readOnlyHint: 'yes' }, inputSchema: { properties: { op: {} } } }");
    assert_eq!(engine.safety(keyed.clone(), js("{ trusted: true, operationIdArgument: 'op' }")).unwrap(), "keyed");
    assert_eq!(engine.safety(keyed, js("{ override: 'idempotent' }")).unwrap(), "idempotent");

    let call = engine.begin(0.0, None).unwrap();
    let mut now = 0.0;
    let mut actions = Vec::new();
    loop {
        let adm = engine.admit_packed(&call, now).unwrap();
        if ADMIT_ADMITTED.get(meta(adm)) == 0 {
            actions.push(format!("refused:{}", Reason::ALL[ADMIT_REASON.get(meta(adm)) as usize].as_str()));
            break;
        }
        let step = engine
            .record_packed(&call, KIND_HTTP, 503.0, 250.0, f64::from(C_B_PRESENT), 0.0, SAFETY_UNSAFE, now)
            .unwrap();
        if let Some(status) = stop_status(step) {
            actions.push(format!("stop:{}:{}", status.as_str(), reason(step)));
            break;
        }
        let delay = (step - f64::from(meta(step))) / f64::from(VALUE_SCALE);
        assert!((250.0..=1000.0).contains(&delay), "Retry-After is a floor: {delay}");
        now += delay;
        actions.push("retry".into());
    }
    assert_eq!(actions, ["retry", "retry", "stop:failed:max_attempts"]);
    assert_eq!(engine.budget_tokens().unwrap(), None);
    assert_eq!(engine.breaker_state().unwrap().as_deref(), Some("closed"));
    let policy = engine.policy().unwrap();
    assert_eq!(get(&policy, "budget"), JsValue::FALSE);
    assert_eq!(get(&policy, "maxAttempts").as_f64(), Some(3.0));
}

#[wasm_bindgen_test]
fn operation_ids_and_revisions() {
    let ids: Vec<String> = (0..200).map(|_| new_operation_id().unwrap()).collect();
    let arr: Array = ids.iter().map(|s| JsValue::from_str(s)).collect();
    let unique = js_sys::Set::new(&arr);
    assert_eq!(unique.size(), 200);
    assert!(ids.iter().all(|id| id.len() == 36 && id.as_bytes()[14] == b'4'));
    assert_eq!(revision_for("2025-11-25".into()).unwrap(), "2025-11-25");
    assert_eq!(code_of(&revision_for("yesterday".into()).err().unwrap()).1, "invalid_value");
}

#[wasm_bindgen_test]
fn ledger_rules_and_fingerprints_take_any_value() {
    use mcp_retry_policy::wasm::{fingerprint_canonical, fingerprint_json, is_valid_operation_id, LedgerRules};
    for v in weird_values() {
        assert_error_or_ok(LedgerRules::new(v.clone()), "LedgerRules options");
        let rules = LedgerRules::new(JsValue::UNDEFINED).unwrap();
        assert_error_or_ok(rules.admit(v.clone(), "fp".into(), 0.0), "admit record");
        assert_error_or_ok(rules.admit(JsValue::UNDEFINED, v.clone(), 0.0), "admit fingerprint");
        assert_error_or_ok(rules.claim(v.clone(), "fp".into(), 0.0), "claim");
        assert_error_or_ok(rules.finish(v.clone(), "succeeded".into(), 0.0), "finish");
        assert_error_or_ok(fingerprint_json(v.clone()), "fingerprintJson");
        assert_error_or_ok(fingerprint_canonical(v.clone()), "fingerprintCanonical");
        assert!(!is_valid_operation_id(v.clone()) || v.as_string().is_some());
    }
    let rules = LedgerRules::new(js("{ ttlMs: 10000, leaseMs: 1000 }")).unwrap();
    let claim = rules.claim(JsValue::UNDEFINED, "fp".into(), 5.0).unwrap();
    assert_eq!(
        get(&rules.admit(claim.clone(), "fp".into(), 6.0).unwrap(), "action").as_string().as_deref(),
        Some("in_progress")
    );
    assert_eq!(
        get(&rules.admit(claim.clone(), "other".into(), 6.0).unwrap(), "action").as_string().as_deref(),
        Some("conflict")
    );
    let done = rules.finish(claim, "succeeded".into(), 7.0).unwrap();
    assert_eq!(
        get(&rules.admit(done.clone(), "fp".into(), 8.0).unwrap(), "action").as_string().as_deref(),
        Some("replay")
    );
    let e = rules.finish(done, "pending".into(), 9.0).err().unwrap();
    assert_eq!(code_of(&e), ("RangeError".into(), "invalid_value".into(), "state".into()));
    for (src, code, field) in [
        ("{ ttlMs: -1 }", "negative", "ttlMs"),
        ("{ leaseMs: NaN }", "not_finite", "leaseMs"),
        ("{ lease: 1 }", "unknown_option", "lease"),
    ] {
        let e = LedgerRules::new(js(src)).err().unwrap();
        assert_eq!((code_of(&e).1, code_of(&e).2), (code.into(), field.into()), "{src}");
    }
    assert_eq!(
        fingerprint_json(r#"{"b":1,"a":"x"}"#.into()).unwrap(),
        fingerprint_json(r#"{"a":"x","b":1}"#.into()).unwrap()
    );
    assert_ne!(
        fingerprint_json(r#"{"b":1,"a":"x"}"#.into()).unwrap(),
        fingerprint_json(r#"{"a":"y","b":1}"#.into()).unwrap()
    );
    assert_eq!(code_of(&fingerprint_json(r#"{"a":1,"a":2}"#.into()).err().unwrap()).1, "duplicate_key");
    assert_eq!(code_of(&fingerprint_json("[".repeat(300).into()).err().unwrap()).1, "too_deep");
}

/// A JS exception that unwinds through wasm frames leaks the frames' shadow stack (and what they held):
/// after a few thousand, every call traps. These are the values that used to throw through wasm (a
/// revoked Proxy in `Array.isArray`; a hostile thrown value's `message` getter; a non-string where `&str`
/// was taken) — called directly on the Rust exports, without the JS layer's guards — 20 000 times each,
/// then a good call.
#[wasm_bindgen_test]
fn hostile_values_never_unwind_through_wasm() {
    use mcp_retry_policy::wasm::{fingerprint_canonical, fingerprint_json, LedgerRules};
    let revoked = js("(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy })()");
    let hostile_throw = js("new Proxy({}, { get() { throw new Proxy(new Error('m'), { get() { throw 1 } }) } })");
    let not_a_string = js("({ length: 100000, slice() { throw new TypeError('no') } })");
    let engine = RetryEngine::new(JsValue::UNDEFINED, js("{ seed: 4 }")).unwrap();
    let rules = LedgerRules::new(JsValue::UNDEFINED).unwrap();
    let call = engine.begin(0.0, None).unwrap();
    let expect = |r: Result<JsValue, JsValue>, what: &str, code: &str, field: &str| {
        let e = r.err().unwrap_or_else(|| panic!("{what} accepted"));
        let (_, c, f) = code_of(&e);
        assert_eq!((c.as_str(), f.as_str()), (code, field), "{what}");
    };
    for _ in 0..20_000 {
        expect(
            RetryEngine::new(revoked.clone(), JsValue::UNDEFINED).map(JsValue::from),
            "policy",
            "unreadable",
            "policy",
        );
        expect(
            RetryEngine::new(js("{ budget: 1 }"), revoked.clone()).map(JsValue::from),
            "options",
            "invalid_type",
            "budget",
        );
        expect(engine.begin(0.0, Some(revoked.clone())).map(JsValue::from), "begin", "unreadable", "options");
        expect(
            engine.begin(0.0, Some(hostile_throw.clone())).map(JsValue::from),
            "begin",
            "unreadable",
            "options.answersInput",
        );
        expect(engine.safety(revoked.clone(), JsValue::UNDEFINED).map(JsValue::from), "safety", "unreadable", "tool");
        expect(revision_for(not_a_string.clone()).map(JsValue::from), "revisionFor", "invalid_type", "protocolVersion");
        expect(rules.admit(revoked.clone(), "fp".into(), 0.0), "admit", "unreadable", "record");
        expect(LedgerRules::new(revoked.clone()).map(JsValue::from), "LedgerRules", "unreadable", "options");
        expect(fingerprint_json(revoked.clone()).map(JsValue::from), "fingerprintJson", "invalid_type", "value");
        expect(
            fingerprint_canonical(revoked.clone()).map(JsValue::from),
            "fingerprintCanonical",
            "invalid_type",
            "value",
        );
    }
    let tool = js("{ annotations: { readOnlyHint: true } }");
    assert_eq!(engine.safety(tool, js("{ trusted: true }")).unwrap(), "read_only");
    engine.admit_packed(&call, 1.0).unwrap();
    let step = engine.record_packed(&call, KIND_TIMEOUT, 0.0, 0.0, 0.0, 0.0, SAFETY_READ_ONLY, 2.0).unwrap();
    assert_eq!(stop_status(step), None, "a retry");
    assert!(get(&rules.claim(JsValue::NULL, "fp".into(), 1.0).unwrap(), "version").as_f64().is_some());
}

#[wasm_bindgen_test]
fn long_strings_are_refused_before_they_are_copied() {
    let engine = RetryEngine::new(JsValue::UNDEFINED, JsValue::UNDEFINED).unwrap();
    let long = js("'a'.repeat(1025)");
    let e = engine.set_protocol_version(long.clone()).err().unwrap();
    assert_eq!(code_of(&e), ("RangeError".into(), "too_long".into(), "protocolVersion".into()));
    let e = revision_for(long).err().unwrap();
    assert_eq!(code_of(&e), ("RangeError".into(), "too_long".into(), "protocolVersion".into()));
    // A key too long to be one we know is an unknown option.
    let e = engine.begin(0.0, Some(js("({ ['k'.repeat(5000)]: 1 })"))).err().unwrap();
    assert_eq!(code_of(&e).1, "unknown_option");
    use mcp_retry_policy::wasm::{fingerprint_json, is_valid_operation_id, max_fingerprint_bytes};
    assert!(!is_valid_operation_id(js("'a'.repeat(129)")));
    assert!(is_valid_operation_id(js("'a'.repeat(128)")));
    let max = max_fingerprint_bytes();
    assert_eq!(max, 16.0 * 1024.0 * 1024.0);
    let e = fingerprint_json(js(&format!("'\"' + 'a'.repeat({}) + '\"'", max - 1.0))).err().unwrap();
    assert_eq!(code_of(&e), ("RangeError".into(), "too_large".into(), "value".into()));
    // At the limit it works; a non-ASCII text within the limit in code units but over it in bytes does not.
    assert_eq!(fingerprint_json(js(&format!("'\"' + 'a'.repeat({}) + '\"'", max - 2.0))).unwrap().len(), 64);
    let e = fingerprint_json(js(&format!("'\"' + 'é'.repeat({}) + '\"'", max / 2.0))).err().unwrap();
    assert_eq!(code_of(&e).1, "too_large");
}
