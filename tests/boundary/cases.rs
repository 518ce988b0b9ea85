// The boundary tests' cases, shared by tests/boundary.rs (run in Node, and in Chromium with
// WASM_BINDGEN_USE_BROWSER=1) and tests/browser.rs (configured to run in a browser: what
// `wasm-pack test --headless --chrome` runs). Included, not a test target of its own.

use js_sys::Reflect;
use mcp_retry_policy::retry::{
    Cause, FinalStatus, HappenedKind, NextKind, OperationStatus, Reason, ResultType, Revision, Safety, StatusHeard, StatusNextKind,
    TaskStatus,
};
use mcp_retry_policy::seam::{LedgerOut, Out};
use mcp_retry_policy::vocab::{
    BOUNDARY_FIELDS, C_B_PRESENT, C_D_PRESENT, ERROR_KINDS, KIND_HTTP, KIND_JSONRPC_ERROR, KIND_LEDGER, KIND_NETWORK,
    KIND_RESULT, KIND_STREAM_BROKEN, KIND_TIMEOUT, POLICY_VALUES, TOOL_DECLARES_ID, TOOL_READ_ONLY,
    TOOL_READ_ONLY_GIVEN, TOOL_TRUSTED,
};
use mcp_retry_policy::wasm::out::{get as slot, get_ledger as ledger_slot};
use mcp_retry_policy::wasm::client as c;
use mcp_retry_policy::wasm::drive as dr;
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

const UNKNOWN: f64 = Revision::ALL.len() as f64;

/// `(kind, field)` of a failure code, or `None` for a result.
fn failure(r: f64) -> Option<(&'static str, &'static str)> {
    if r >= 0.0 {
        return None;
    }
    let n = (-1.0 - r) as usize;
    Some((ERROR_KINDS[n % ERROR_KINDS.len()], BOUNDARY_FIELDS[n / ERROR_KINDS.len()]))
}

/// A new engine from `(field index, value)` pairs (sections tuned when one of their fields is given).
fn engine(values: &[(usize, f64)], seed: f64) -> f64 {
    let mut v = [0.0; 17];
    let mut present = 0u32;
    let (mut budget, mut breaker) = (1.0, 1.0);
    for &(i, x) in values {
        v[i] = x;
        present |= 1 << i;
        if (7..=11).contains(&i) {
            budget = 2.0;
        }
        if (12..=16).contains(&i) {
            breaker = 2.0;
        }
    }
    let h = c::engine_new(
        f64::from(present),
        budget,
        breaker,
        UNKNOWN,
        v[0],
        v[1],
        v[2],
        v[3],
        v[4],
        v[5],
        v[6],
        v[7],
        v[8],
        v[9],
        v[10],
        v[11],
        v[12],
        v[13],
        v[14],
        v[15],
        v[16],
    );
    if h > 0.0 {
        assert_eq!(c::engine_seed(h, seed), 0.0);
    }
    h
}

fn field(name: &str) -> usize {
    BOUNDARY_FIELDS.iter().position(|f| *f == name).unwrap()
}

#[wasm_bindgen_test]
fn bad_policy_values_are_refused_by_name() {
    let cases = [
        ("maxAttempts", f64::NAN, "not_finite"),
        ("maxAttempts", 0.0, "too_small"),
        ("maxAttempts", 1.5, "not_integer"),
        ("maxAttempts", 1e9, "too_large"),
        ("baseDelayMs", -5.0, "negative"),
        ("totalTimeoutMs", f64::INFINITY, "not_finite"),
        ("jitter", 4.0, "invalid_value"),
        ("jitter", 0.5, "invalid_value"),
        ("budget.capacity", -1.0, "negative"),
        ("budget.refillPerSecond", f64::NAN, "not_finite"),
        ("budget.refillPerSecond", -1.0, "negative"),
        ("budget.refillPerSecond", 1e12, "too_large"),
        ("breaker.failureRatio", 2.0, "too_large"),
        ("breaker.failureRatio", 0.0001, "too_small"),
        ("breaker.openMs", 0.0, "too_small"),
        ("breaker.minimumCalls", -0.5, "negative"),
    ];
    for (name, v, kind) in cases {
        let r = engine(&[(field(name), v)], 1.0);
        assert_eq!(failure(r), Some((kind, name)), "{name} = {v}");
        assert_eq!(c::error_detail(0.0).to_bits(), v.to_bits(), "the offending value: {name}");
    }
    assert_eq!(failure(engine(&[(1, 10.0), (2, 5.0)], 1.0)), Some(("base_exceeds_cap", "baseDelayMs")));
    assert_eq!((c::error_detail(0.0), c::error_detail(1.0)), (10.0, 5.0));
    assert_eq!(failure(engine(&[(0, 1e9)], 1.0)).map(|_| c::error_detail(1.0)), Some(100.0), "the bound");
    let h = engine(&[], 1.0);
    assert!(h > 0.0);
    assert_eq!(failure(c::engine_seed(h, -1.0)), Some(("negative", "options.seed")));
    assert_eq!(failure(c::engine_seed(h, 0.5)), Some(("not_integer", "options.seed")));
    assert_eq!(c::engine_free(h), 0.0);
}

/// Every number we can think of, including handles that are not live.
fn weird_numbers() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        3.0,
        7.0,
        99.0,
        503.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e308,
        9_007_199_254_740_993.0,
        4_294_967_297.0,
        4_294_967_295.0,
        1_048_576.0,
        1_048_578.0,
        f64::MIN_POSITIVE,
        -1e-300,
    ]
}

#[wasm_bindgen_test]
fn every_weird_number_in_every_slot_is_a_failure_or_a_result() {
    let h = engine(&[], 9.0);
    let call = c::call_begin(h, 1000.0, 1.0);
    assert!(call > 0.0);
    let shared = engine(&[], 1.0);
    assert!(shared > 0.0);
    let mut failures = 0;
    let mut count = |r: f64| {
        assert!(!r.is_nan(), "a result is a number");
        if let Some((kind, field)) = failure(r) {
            assert!(!kind.is_empty() && (field.is_empty() || BOUNDARY_FIELDS.contains(&field)));
            failures += 1;
        }
    };
    let weird = weird_numbers();
    for &n in &weird {
        for i in 0..POLICY_VALUES {
            let made = engine(&[(i, n)], 1.0);
            count(made);
            if made > 0.0 {
                c::engine_free(made);
            }
        }
        count(c::engine_revision(n));
        count(c::engine_set_revision(h, n));
        c::engine_set_revision(h, UNKNOWN);
        count(c::revision_of_date(n));
        count(c::engine_policy(n));
        count(c::engine_budget(n));
        count(c::engine_breaker(n));
        count(c::call_field(n, 0.0));
        count(c::call_field(call, n));
        // The shared breaker's exports (issue 20 §4), on an engine of their own (adopting may open it).
        count(c::engine_snapshot(n));
        count(c::engine_probe_due(shared, n));
        count(c::engine_probe_due(n, 0.0));
        count(c::engine_adopt(shared, 1.0, n, n, 1.0, n, 1.0, n, 1.0, n));
        count(c::engine_adopt(shared, 1.0, 1.0, n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
        count(c::engine_adopt(shared, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, n));
        count(c::engine_adopt(shared, n, n, n, n, n, n, n, n, n));
        count(c::engine_adopt(n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
        count(c::safety_of(n, n));
        count(c::error_detail(n));
        let begun = c::call_begin(h, n, n);
        count(begun);
        if begun > 0.0 {
            c::call_free(begun);
        }
        count(c::admit(h, call, n, 0.0, 0.0));
        count(c::admit(n, call, 0.0, 0.0, 0.0));
        count(c::admit(h, n, 0.0, 0.0, 0.0));
        count(c::admit(h, call, 0.0, 1.0, n));
        count(c::poll(h, call, 0.0, 0.0, 0.0, 1.0, n));
        count(c::poll(h, call, 1.0, n, 0.0, 0.0, 0.0));
        count(c::status_answer(n, n, n));
        count(c::status_answer(n, 3.0, 0.0));
        count(c::status_answer(6.0, n, 0.0));
        count(c::status_answer(6.0, 3.0, n));
        count(c::task_end(n));
        count(c::task_result_end(n, n));
        count(c::list_failed(n, f64::from(KIND_TIMEOUT), 0.0, 0.0, 0.0, 0.0, 0.0));
        count(c::list_failed(h, f64::from(KIND_HTTP), 404.0, 0.0, 1.0, 0.0, n));
        for kind in 0..9 {
            let k = f64::from(kind);
            count(c::classify(h, k, n, n, n, n));
            count(c::classify(n, k, 0.0, 0.0, 0.0, 0.0));
            count(c::record(h, call, k, n, n, n, n, 3.0, 1000.0));
            count(c::record(h, call, k, 503.0, n, 7.0, n, n, 1000.0));
            count(c::record(n, call, k, 0.0, 0.0, 0.0, 0.0, 0.0, 1000.0));
            count(c::list_failed(h, k, n, n, n, n, 1000.0));
        }
        // The call driver: every happening, with the weird number in each of its slots.
        for happened in 0..=HappenedKind::ALL.len() {
            let hp = happened as f64;
            count(dr::next(h, call, hp, f64::from(KIND_TIMEOUT), n, n, n, n, SAFETY_UNSAFE, 1000.0, 0.0, 0.0));
            count(dr::next(h, call, hp, n, 0.0, 0.0, 0.0, 0.0, n, n, 1.0, n));
            count(dr::next(h, call, hp, 0.0, 1.0, 0.0, 0.0, 0.0, SAFETY_UNSAFE, 1000.0, n, 0.0));
        }
        count(dr::next(n, call, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
        count(dr::next(h, n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
        count(dr::next(h, call, n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
        // The status driver: every happening, with the weird number in each of its slots.
        for heard in 0..=StatusHeard::ALL.len() {
            let hd = heard as f64;
            count(dr::status_next(h, call, hd, n, n, n, n, n, n, n, n, n));
            count(dr::status_next(h, call, hd, 0.0, 1.0, n, 1.0, 0.0, 30_000.0, 1000.0, 1.0, n));
            count(dr::status_next(h, call, hd, 2.0, 0.0, 0.0, 6.0, 0.0, n, 1000.0, 0.0, 0.0));
        }
        count(dr::status_next(n, call, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0));
        count(dr::status_next(h, n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0));
        if n != h && n != call {
            count(c::engine_free(n));
            count(c::call_free(n));
        }
    }
    assert!(failures > 1000, "{failures} failures");
    // Still alive and still right.
    let h2 = engine(&[], 9.0);
    let call2 = c::call_begin(h2, 0.0, 1.0);
    c::admit(h2, call2, 0.0, 0.0, 0.0);
    let step = c::record(h2, call2, f64::from(KIND_TIMEOUT), 0.0, 0.0, 0.0, 0.0, SAFETY_UNSAFE, 5.0);
    assert_eq!(stop_status(step), Some(FinalStatus::Unknown));
    // Freed handles are refused by name, and a slot reused later does not revive an old handle.
    assert_eq!(c::call_free(call2), 0.0);
    assert_eq!(failure(c::call_field(call2, 0.0)), Some(("freed", "this")));
    assert_eq!(failure(c::admit(h2, call2, 0.0, 0.0, 0.0)), Some(("freed", "call")));
    let reused = c::call_begin(h2, 0.0, 1.0);
    assert_ne!(reused, call2);
    assert_eq!(failure(c::call_free(call2)), Some(("freed", "this")));
    assert_eq!(c::engine_free(h2), 0.0);
    assert_eq!(failure(c::admit(h2, reused, 0.0, 0.0, 0.0)), Some(("freed", "this")));
    assert_eq!(failure(c::engine_free(h2)), Some(("freed", "this")));
}

const SAFETY_UNSAFE: f64 = Safety::Unsafe as u32 as f64;

/// The status of the stop in the out slots after an export answered `r`, or `None` for a retry.
fn stop_status(r: f64) -> Option<FinalStatus> {
    assert!(r >= 0.0, "{:?}", failure(r));
    let stop = slot(Out::Stop);
    (!stop.is_nan()).then(|| FinalStatus::ALL[stop as usize])
}

fn reason() -> &'static str {
    Reason::ALL[slot(Out::Reason) as usize].as_str()
}

#[wasm_bindgen_test]
fn bad_times_and_outcomes_are_named() {
    let h = engine(&[], 1.0);
    for (now, kind) in
        [(f64::NAN, "not_finite"), (-1.0, "negative"), (f64::INFINITY, "not_finite"), (1e300, "too_large")]
    {
        assert_eq!(failure(c::call_begin(h, now, 1.0)), Some((kind, "nowMs")));
    }
    // The one protocol: a kind code and four numbers (src/vocab/); the core names the field it refuses.
    let present = f64::from(C_B_PRESENT);
    let k = |kind: u32| f64::from(kind);
    let cases = [
        ((k(KIND_HTTP), 42.0, 0.0, 0.0, 0.0), "too_small", "outcome.status"),
        ((k(KIND_HTTP), 503.5, 0.0, 0.0, 0.0), "not_integer", "outcome.status"),
        ((k(KIND_HTTP), 503.0, -1.0, present, 0.0), "negative", "outcome.retryAfterMs"),
        ((k(KIND_HTTP), 503.0, f64::NAN, present, 0.0), "not_finite", "outcome.retryAfterMs"),
        ((k(KIND_HTTP), 503.0, 0.0, f64::from(C_D_PRESENT), 1.5), "not_integer", "outcome.jsonrpcCode"),
        ((k(KIND_JSONRPC_ERROR), 1.5, 0.0, 0.0, 0.0), "not_integer", "outcome.code"),
        ((k(KIND_JSONRPC_ERROR), 1e300, 0.0, 0.0, 0.0), "not_integer", "outcome.code"),
        ((k(KIND_NETWORK), 2.0, 0.0, 0.0, 0.0), "invalid_value", "kind"),
        ((k(KIND_LEDGER), 0.5, 0.0, 0.0, 0.0), "invalid_value", "kind"),
        ((k(KIND_RESULT), 0.0, 3.0, 0.0, 0.0), "invalid_value", "kind"),
        ((k(KIND_STREAM_BROKEN), 1.0, 1e300, present, 0.0), "too_large", "outcome.retryMs"),
        ((99.0, 0.0, 0.0, 0.0, 0.0), "invalid_value", "kind"),
        ((0.5, 0.0, 0.0, 0.0, 0.0), "invalid_value", "kind"),
    ];
    let call = c::call_begin(h, 0.0, 1.0);
    for ((kind, a, b, cc, d), err, field) in cases {
        assert_eq!(failure(c::classify(h, kind, a, b, cc, d)), Some((err, field)), "classify {field}");
        assert_eq!(failure(c::record(h, call, kind, a, b, cc, d, SAFETY_UNSAFE, 0.0)), Some((err, field)), "{field}");
    }
    assert_eq!(
        failure(c::record(h, call, k(KIND_TIMEOUT), 0.0, 0.0, 0.0, 0.0, 4.0, 0.0)),
        Some(("invalid_value", "safety"))
    );
    // The core's Retry-After is in the classification's slot (NaN: none).
    assert_eq!(c::classify(h, k(KIND_LEDGER), 0.0, 250.0, present, 0.0), 0.0);
    assert_eq!(slot(Out::RetryAfterMs), 250.0);
    assert_eq!(c::classify(h, k(KIND_LEDGER), 2.0, 250.0, present, 0.0), 0.0); // conflict: no wait
    assert!(slot(Out::RetryAfterMs).is_nan());
}

#[wasm_bindgen_test]
fn the_call_driver_runs_a_call_through_the_numeric_exports() {
    let h = engine(&[(0, 3.0), (1, 100.0), (2, 1000.0)], 5.0);
    let call = c::call_begin(h, 0.0, 1.0);
    let code = |k: HappenedKind| HappenedKind::ALL.iter().position(|x| *x == k).unwrap() as f64;
    let next = || NextKind::ALL[slot(Out::Next) as usize];
    let http503 = |call, now| {
        let sent = code(HappenedKind::Sent);
        dr::next(h, call, sent, f64::from(KIND_HTTP), 503.0, 250.0, f64::from(C_B_PRESENT), 0.0, SAFETY_UNSAFE, now, 0.0, 0.0)
    };
    let mut now = 0.0;
    let mut seen = Vec::new();
    assert_eq!(dr::next(h, call, code(HappenedKind::Start), 0.0, 0.0, 0.0, 0.0, 0.0, SAFETY_UNSAFE, now, 0.0, 0.0), 0.0);
    loop {
        match next() {
            NextKind::Send => {
                seen.push(format!("send:{}", slot(Out::Attempt)));
                assert_eq!(http503(call, now), 0.0);
                assert_eq!(slot(Out::Stepped), 1.0, "the attempt's step is in the slots");
                assert_eq!(Cause::ALL[slot(Out::Cause) as usize], Cause::HttpServiceUnavailableRetryAfter);
            }
            NextKind::Wait => {
                let delay = slot(Out::DelayMs);
                assert!((250.0..=1000.0).contains(&delay), "Retry-After is a floor: {delay}");
                assert_eq!(slot(Out::Held), 0.0, "a backoff, not a hold");
                seen.push("wait".into());
                now += delay;
                let waited = code(HappenedKind::Waited);
                assert_eq!(dr::next(h, call, waited, 0.0, 0.0, 0.0, 0.0, 0.0, SAFETY_UNSAFE, now, 0.0, 0.0), 0.0);
            }
            NextKind::GatherInput => panic!("no input was asked for"),
            k @ (NextKind::PollTask | NextKind::LookAtTask | NextKind::FetchTaskResult | NextKind::CancelTask) => {
                panic!("no task was created: {k:?}")
            }
            NextKind::Done => {
                seen.push(format!("done:{}:{}", stop_status(0.0).map_or("retry", FinalStatus::as_str), reason()));
                break;
            }
        }
    }
    assert_eq!(seen, ["send:1", "wait", "send:2", "wait", "send:3", "done:failed:max_attempts"]);
    // After the end, the same end, whatever is fed; a `sent` out of order is never a send.
    assert_eq!(http503(call, now), 0.0);
    assert_eq!((next(), slot(Out::Stepped)), (NextKind::Done, 0.0));
    // Out of order on a new call: a `sent` before any send ends it, and `unknown` (it may have been delivered).
    let other = c::call_begin(h, now, 1.0);
    assert_eq!(http503(other, now), 0.0);
    assert_eq!((next(), stop_status(0.0)), (NextKind::Done, Some(FinalStatus::Unknown)));
    // What `happened` carries is refused by name.
    let unanswered = code(HappenedKind::InputUnanswered);
    let beyond = HappenedKind::ALL.len() as f64;
    assert_eq!(failure(dr::next(h, other, beyond, 0.0, 0.0, 0.0, 0.0, 0.0, SAFETY_UNSAFE, now, 0.0, 0.0)), Some(("invalid_value", "happened")));
    assert_eq!(failure(dr::next(h, other, unanswered, 0.0, 2.0, 0.0, 0.0, 0.0, SAFETY_UNSAFE, now, 0.0, 0.0)), Some(("invalid_value", "happened")));
    assert_eq!(failure(dr::next(h, other, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0, now, 0.0, 0.0)), Some(("invalid_value", "safety")));
}

#[wasm_bindgen_test]
fn the_call_driver_follows_a_created_task_through_the_numeric_exports() {
    let h = engine(&[(0, 3.0)], 9.0);
    let call = c::call_begin(h, 0.0, 1.0);
    let code = |k: HappenedKind| HappenedKind::ALL.iter().position(|x| *x == k).unwrap() as f64;
    let status = |s: TaskStatus| f64::from(s as u8);
    let next = || NextKind::ALL[slot(Out::Next) as usize];
    let step = |happened: HappenedKind, kind: f64, a: f64, b: f64, c: f64, now: f64| {
        assert_eq!(dr::next(h, call, code(happened), kind, a, b, c, 0.0, SAFETY_UNSAFE, now, 0.0, 0.0), 0.0);
        next()
    };
    assert_eq!(step(HappenedKind::Start, 0.0, 0.0, 0.0, 0.0, 0.0), NextKind::Send);
    let task = ResultType::ALL.iter().position(|t| *t == ResultType::Task).unwrap() as f64;
    assert_eq!(step(HappenedKind::Sent, f64::from(KIND_RESULT), 0.0, task, 0.0, 10.0), NextKind::Done);
    assert_eq!((stop_status(0.0), reason()), (Some(FinalStatus::Pending), "task_pending"));
    // Followed: a working task with a 700 ms interval is looked at after that wait, never sent again.
    assert_eq!(step(HappenedKind::TaskCreated, 0.0, status(TaskStatus::Working), 1.0, 700.0, 20.0), NextKind::PollTask);
    let delay = slot(Out::DelayMs);
    assert!((700.0..=770.0).contains(&delay), "the interval, jittered: {delay}");
    assert_eq!(TaskStatus::ALL[slot(Out::TaskStatus) as usize], TaskStatus::Working);
    assert_eq!(step(HappenedKind::Waited, 0.0, 0.0, 0.0, 0.0, 20.0 + delay), NextKind::LookAtTask);
    assert!(slot(Out::TimeoutMs) >= 1.0);
    assert_eq!(step(HappenedKind::TaskLooked, 0.0, status(TaskStatus::Completed), 0.0, 0.0, 900.0), NextKind::FetchTaskResult);
    assert_eq!(step(HappenedKind::TaskResult, f64::from(KIND_RESULT), 0.0, 0.0, 0.0, 950.0), NextKind::Done);
    assert_eq!((stop_status(0.0), reason()), (Some(FinalStatus::Succeeded), "succeeded"));
    // A task's view is refused by name: a status past the table, an interval that is not a duration.
    let other = c::call_begin(h, 0.0, 1.0);
    let looked = code(HappenedKind::TaskLooked);
    for (a, b, c) in [(9.0, 0.0, 0.0), (0.0, 1.0, -1.0), (0.0, 1.0, f64::NAN), (0.0, 1.0, 1e300), (0.0, 3.0, 0.0)] {
        let answer = dr::next(h, other, looked, 0.0, a, b, c, 0.0, SAFETY_UNSAFE, 0.0, 0.0, 0.0);
        assert_eq!(failure(answer).map(|f| f.1), Some("happened"), "{a} {b} {c}");
    }
}

#[wasm_bindgen_test]
fn the_status_driver_closes_an_open_end_through_the_numeric_exports() {
    let h = engine(&[], 3.0);
    let look = c::call_begin(h, 0.0, 0.0);
    let heard = |k: StatusHeard| StatusHeard::ALL.iter().position(|x| *x == k).unwrap() as f64;
    let answer = |s: OperationStatus| OperationStatus::ALL.iter().position(|x| *x == s).unwrap() as f64;
    let next = || StatusNextKind::ALL[slot(Out::ResolveNext) as usize];
    let unknown = FinalStatus::ALL.iter().position(|x| *x == FinalStatus::Unknown).unwrap() as f64;
    let max_attempts = Reason::ALL.iter().position(|x| *x == Reason::MaxAttempts).unwrap() as f64;
    let step = |k, a: f64, has: f64, hint: f64, now: f64| {
        let r = dr::status_next(h, look, heard(k), a, has, hint, unknown, max_attempts, 30_000.0, now, 0.0, 0.0);
        assert_eq!(r, 0.0, "{:?}", failure(r));
        next()
    };
    assert_eq!(step(StatusHeard::Start, 0.0, 0.0, 0.0, 0.0), StatusNextKind::Ask);
    assert_eq!(step(StatusHeard::Answered, answer(OperationStatus::InProgress), 1.0, 400.0, 5.0), StatusNextKind::Wait);
    let delay = slot(Out::DelayMs);
    assert!((400.0..=440.0).contains(&delay), "the ledger's hint, jittered: {delay}");
    assert_eq!(step(StatusHeard::Waited, 0.0, 0.0, 0.0, 5.0 + delay), StatusNextKind::Ask);
    assert_eq!(step(StatusHeard::Answered, answer(OperationStatus::NotDone), 0.0, 0.0, 600.0), StatusNextKind::Done);
    assert_eq!((stop_status(0.0), reason()), (Some(FinalStatus::Failed), "resolved_by_status"));
    // No usable answer: nothing learned.
    let other = c::call_begin(h, 0.0, 0.0);
    let none = OperationStatus::ALL.len() as f64;
    for (k, a) in [(StatusHeard::Start, 0.0), (StatusHeard::Answered, none)] {
        assert_eq!(dr::status_next(h, other, heard(k), a, 0.0, 0.0, unknown, max_attempts, 30_000.0, 1.0, 0.0, 0.0), 0.0);
    }
    assert_eq!(next(), StatusNextKind::Unchanged);
    // What a step carries is refused by name.
    let third = c::call_begin(h, 0.0, 0.0);
    let bad = |heard_: f64, a: f64, has: f64, hint: f64, deadline: f64| {
        failure(dr::status_next(h, third, heard_, a, has, hint, unknown, max_attempts, deadline, 1.0, 0.0, 0.0)).map(|f| f.1)
    };
    assert_eq!(bad(StatusHeard::ALL.len() as f64, 0.0, 0.0, 0.0, 1.0), Some("happened"));
    assert_eq!(bad(heard(StatusHeard::Answered), none + 1.0, 0.0, 0.0, 1.0), Some("answer"));
    assert_eq!(bad(heard(StatusHeard::Answered), 0.0, 1.0, -5.0, 1.0), Some("options.hintMs"));
    assert_eq!(bad(heard(StatusHeard::Start), 0.0, 0.0, 0.0, f64::NAN), Some("options.deadlineMs"));
}

#[wasm_bindgen_test]
fn the_engine_runs_a_call_through_the_numeric_exports() {
    let h = engine(&[(0, 3.0), (1, 100.0), (2, 1000.0)], 5.0);
    let unsafe_ = Safety::Unsafe as u32 as f64;
    let read_only = Safety::ReadOnly as u32 as f64;
    let keyed = Safety::Keyed as u32 as f64;
    let ro = f64::from(TOOL_READ_ONLY_GIVEN | TOOL_READ_ONLY);
    assert_eq!(c::safety_of(ro, 0.0), unsafe_, "untrusted");
    assert_eq!(c::safety_of(ro + f64::from(TOOL_TRUSTED), 0.0), read_only);
    assert_eq!(c::safety_of(f64::from(TOOL_TRUSTED | TOOL_DECLARES_ID), 0.0), keyed);
    assert_eq!(c::safety_of(0.0, keyed + 1.0), keyed, "the override wins");
    assert_eq!(failure(c::safety_of(0.0, 9.0)), Some(("invalid_value", "safety")));
    let r = c::revision_of_date(20_251_125.0);
    assert_eq!(Revision::ALL[r as usize], Revision::V2025_11_25);
    assert_eq!(c::engine_set_revision(h, r), r);
    assert_eq!(c::engine_revision(h), r);

    let call = c::call_begin(h, 0.0, 1.0);
    let mut now = 0.0;
    let mut actions = Vec::new();
    loop {
        assert_eq!(c::admit(h, call, now, 0.0, 0.0), 0.0);
        if slot(Out::Admitted) == 0.0 {
            actions.push(format!("refused:{}", reason()));
            break;
        }
        let step = c::record(h, call, f64::from(KIND_HTTP), 503.0, 250.0, f64::from(C_B_PRESENT), 0.0, unsafe_, now);
        if let Some(status) = stop_status(step) {
            actions.push(format!("stop:{}:{}", status.as_str(), reason()));
            break;
        }
        let delay = slot(Out::DelayMs);
        assert!((250.0..=1000.0).contains(&delay), "Retry-After is a floor: {delay}");
        now += delay;
        actions.push("retry".into());
    }
    assert_eq!(actions, ["retry", "retry", "stop:failed:max_attempts"]);
    assert_eq!(c::call_field(call, 0.0), 3.0);
    assert_eq!(c::engine_breaker(h), 1.0, "closed (+1)");
    assert_eq!(c::engine_policy(h), 0.0, "the policy in one crossing");
    assert_eq!((slot(Out::MaxAttempts), slot(Out::BaseDelayMs), slot(Out::MaxDelayMs)), (3.0, 100.0, 1000.0));
    assert_eq!(slot(Out::BudgetOn), 1.0, "the budget is on");
}

#[wasm_bindgen_test]
fn ledger_rules_take_any_number_and_fingerprints_any_value() {
    use mcp_retry_policy::ledger::{Look, LookMode};
    use mcp_retry_policy::wasm::{
        error_detail, fingerprint_canonical, fingerprint_json, is_valid_operation_id, ledger_admit, ledger_claim,
        ledger_config, ledger_finish, ledger_look, ledger_lookup, ledger_release,
    };
    // Every weird number in every slot: a result (≥ 0) or a failure code (< 0), never a trap.
    let mut seen = 0;
    let mut count = |r: f64| {
        assert!(!r.is_nan(), "a NaN answer");
        seen += 1;
    };
    for n in weird_numbers() {
        let rec = [1.0, 0.0, 100.0, 0.0, 1000.0, 1.0];
        for slot in 0..6 {
            let mut a = rec;
            a[slot] = n;
            count(ledger_admit(a[0], a[1], a[2], a[3], a[4], a[5], 1.0, 50.0));
            count(ledger_lookup(a[0], a[1], a[2], a[3], a[4], a[5], 50.0));
            count(ledger_claim(a[0], a[1], a[2], a[3], a[4], a[5], 50.0, 10_000.0, 1000.0));
            count(ledger_finish(a[1], a[2], a[3], a[4], a[5], 1.0, 50.0, 10_000.0, 1000.0));
            count(ledger_release(a[1], a[2], a[3], a[4], a[5], 50.0, 10_000.0, 1000.0));
        }
        count(ledger_admit(1.0, 0.0, 100.0, 0.0, 1000.0, 1.0, n, n));
        count(ledger_claim(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, n, 1000.0));
        count(ledger_claim(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 10_000.0, n));
        count(ledger_finish(0.0, 100.0, 0.0, 1000.0, 1.0, n, 50.0, 10_000.0, 1000.0));
        count(ledger_config(n, n));
        // A look: every weird number in each of its twelve slots (a claim look's first code: LOOK_STARTS[0]).
        let start = f64::from(Look::new(LookMode::Claim).code());
        let args = [start, 0.0, 1.0, 1.0, 0.0, 100.0, 0.0, 1000.0, 1.0, 50.0, 10_000.0, 1000.0];
        for slot in 0..12 {
            let mut a = args;
            a[slot] = n;
            count(ledger_look(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]));
        }
        // This one reads back a number (NaN when the offending value was NaN): any number is an answer.
        let _ = error_detail(n);
    }
    assert_eq!(seen, weird_numbers().len() * 47, "every call answered a number");
    // A look through the numbers: a fresh key is claimed (write_claim, an insert), then executed.
    let look = f64::from(Look::new(LookMode::Claim).code());
    assert_eq!(ledger_look(look, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 10_000.0, 1000.0), 4.0, "write_claim");
    assert!(ledger_slot(LedgerOut::Expected).is_nan(), "an insert");
    assert_eq!(ledger_slot(LedgerOut::Version), 1.0);
    let next = ledger_slot(LedgerOut::Look);
    assert_eq!(ledger_look(next, 3.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 6.0, 10_000.0, 1000.0), 5.0, "done");
    assert_eq!(ledger_slot(LedgerOut::End), 0.0, "execute");
    // A status look never claims: the same fresh key is not_found.
    let status = f64::from(Look::new(LookMode::Status).code());
    assert_eq!(ledger_look(status, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 10_000.0, 1000.0), 5.0, "done");
    assert_eq!(ledger_slot(LedgerOut::End), 5.0, "not_found");
    for v in weird_values() {
        assert_error_or_ok(fingerprint_json(v.clone()), "fingerprintJson");
        assert_error_or_ok(fingerprint_canonical(v.clone()), "fingerprintCanonical");
        assert!(!is_valid_operation_id(v.clone()) || v.as_string().is_some());
    }
    // The rules themselves, through the numbers: claim, in progress, conflict, finish, replay.
    let pending = ledger_claim(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 10_000.0, 1000.0);
    assert_eq!(pending, 0.0, "pending (RECORD_STATES[0])");
    let made = || {
        [LedgerOut::LeaseUntilMs, LedgerOut::CreatedMs, LedgerOut::ExpiresMs, LedgerOut::Version].map(ledger_slot)
    };
    let claim = made();
    assert_eq!(claim, [1005.0, 5.0, 10_005.0, 1.0], "lease, created, expires, version");
    let admit =
        |state: f64, r: [f64; 4], same: f64, now: f64| ledger_admit(1.0, state, r[0], r[1], r[2], r[3], same, now);
    assert_eq!(admit(0.0, claim, 1.0, 6.0), 1.0, "in_progress (1)");
    assert_eq!(ledger_slot(LedgerOut::RetryAfterMs), 999.0, "retry after 999 ms");
    assert_eq!(admit(0.0, claim, 0.0, 6.0), 3.0, "conflict");
    let done = ledger_finish(0.0, claim[0], claim[1], claim[2], claim[3], 1.0, 7.0, 10_000.0, 1000.0);
    assert_eq!(done, 1.0, "succeeded");
    let done = made();
    assert_eq!(admit(1.0, done, 1.0, 8.0), 2.0, "replay");
    assert_eq!(
        ledger_release(1.0, done[0], done[1], done[2], done[3], 9.0, 10_000.0, 1000.0),
        1.0,
        "refused"
    );
    assert_eq!(ledger_slot(LedgerOut::Code), 0.0, "resolved (RELEASE_REFUSALS[0])");
    // Refusals by name: a finish to pending, a TTL below the lease, a fractional version.
    assert_eq!(
        failure(ledger_finish(0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 9.0, 10_000.0, 1000.0)),
        Some(("invalid_value", "state"))
    );
    assert_eq!(ledger_config(10.0, 1000.0), 1.0, "ttl_below_lease");
    assert_eq!(failure(ledger_config(-1.0, 1000.0)), Some(("negative", "ttlMs")));
    assert_eq!(failure(ledger_config(10_000.0, f64::NAN)), Some(("not_finite", "leaseMs")));
    assert_eq!(failure(ledger_lookup(1.0, 0.0, 1.0, 1.0, 1.0, 1.5, 9.0)), Some(("not_integer", "record.version")));
    assert_eq!(failure(ledger_lookup(1.0, 9.0, 1.0, 1.0, 1.0, 1.0, 9.0)), Some(("invalid_value", "record.state")));
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
/// revoked Proxy; a non-string where a string is read) — called directly on the Rust exports, without the
/// JS layer — 20 000 times each, then a good call.
#[wasm_bindgen_test]
fn hostile_values_never_unwind_through_wasm() {
    use mcp_retry_policy::wasm::{fingerprint_canonical, fingerprint_json, is_valid_operation_id, ledger_claim};
    let revoked = js("(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy })()");
    let expect = |r: Result<String, JsValue>, what: &str, code: &str, field: &str| {
        let e = r.err().unwrap_or_else(|| panic!("{what} accepted"));
        let (_, c, f) = code_of(&e);
        assert_eq!((c.as_str(), f.as_str()), (code, field), "{what}");
    };
    for _ in 0..20_000 {
        expect(fingerprint_json(revoked.clone()), "fingerprintJson", "invalid_type", "value");
        expect(fingerprint_canonical(revoked.clone()), "fingerprintCanonical", "invalid_type", "value");
        assert!(!is_valid_operation_id(revoked.clone()));
    }
    assert_eq!(ledger_claim(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 10_000.0, 1000.0), 0.0);
}

#[wasm_bindgen_test]
fn long_strings_are_refused_before_they_are_copied() {
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

#[wasm_bindgen_test]
fn the_end_tables_answer_through_the_numeric_exports() {
    use mcp_retry_policy::retry::{OperationStatus, TaskStatus};
    let none = FinalStatus::ALL.len() as f64;
    let answer = |a: OperationStatus| f64::from(a as u32);
    let unknown = f64::from(FinalStatus::Unknown as u32);
    let unsafe_after = f64::from(Reason::UnsafeAfterUnknown as u32);
    for (a, status, why) in [
        (OperationStatus::Succeeded, FinalStatus::Succeeded, "resolved_by_status"),
        (OperationStatus::Failed, FinalStatus::ToolError, "resolved_by_status"),
        (OperationStatus::NotDone, FinalStatus::Failed, "resolved_by_status"),
        (OperationStatus::InProgress, FinalStatus::Pending, "status_in_progress"),
        (OperationStatus::NotFound, FinalStatus::Unknown, "status_not_found"),
        (OperationStatus::Unknown, FinalStatus::Unknown, "status_unknown"),
    ] {
        let p = c::status_answer(answer(a), unknown, unsafe_after);
        assert_eq!((stop_status(p), reason()), (Some(status), why), "{a:?}");
    }
    let no_answer = OperationStatus::ALL.len() as f64;
    let kept = c::status_answer(no_answer, unknown, unsafe_after);
    assert_eq!((stop_status(kept), reason()), (Some(FinalStatus::Unknown), "unsafe_after_unknown"));
    let not_asked = c::status_answer(no_answer, none, 0.0);
    assert_eq!((stop_status(not_asked), reason()), (Some(FinalStatus::Unknown), "status_not_asked"));
    assert_eq!(failure(c::status_answer(7.0, none, 0.0)), Some(("invalid_value", "answer")));
    assert_eq!(failure(c::status_answer(0.0, 9.0, 0.0)), Some(("invalid_value", "before")));
    assert_eq!(failure(c::status_answer(0.0, unknown, 99.0)), Some(("invalid_value", "before")));
    let cancelled = c::task_end(f64::from(TaskStatus::Cancelled as u32));
    assert_eq!((stop_status(cancelled), reason()), (Some(FinalStatus::Unknown), "task_cancelled"));
    let working = c::task_end(f64::from(TaskStatus::Working as u32));
    assert_eq!((stop_status(working), reason()), (None, "still_running"));
    assert_eq!(failure(c::task_end(5.0)), Some(("invalid_value", "task.status")));
    // A task result the engine would retry: open, never the task's `completed`.
    let in_progress = f64::from(Cause::LedgerInProgress as u32);
    let retried = f64::from(Reason::Throttled as u32);
    let open = c::task_result_end(in_progress, retried);
    assert_eq!((stop_status(open), reason()), (Some(FinalStatus::Pending), "status_in_progress"));
    assert_eq!(failure(c::task_result_end(1e9, retried)), Some(("invalid_value", "step.classification.cause")));
    assert_eq!(failure(c::task_result_end(in_progress, -1.0)), Some(("invalid_value", "step.decision.reason")));
    let h = engine(&[], 3.0);
    c::engine_set_revision(h, f64::from(Revision::V2025_11_25 as u32));
    let lost = c::list_failed(h, f64::from(KIND_HTTP), 404.0, 0.0, f64::from(mcp_retry_policy::vocab::C_HAD_SESSION), 0.0, 0.0);
    assert_eq!((stop_status(lost), reason()), (None, "recover"));
    let timeout = c::list_failed(h, f64::from(KIND_TIMEOUT), 0.0, 0.0, 0.0, 0.0, 0.0);
    assert_eq!(stop_status(timeout), Some(FinalStatus::Unknown), "a transient failure of the list is not followed");
    assert_eq!(c::engine_free(h), 0.0);
}

#[wasm_bindgen_test]
fn hedge_exports_take_any_number_and_refuse_by_name() {
    use mcp_retry_policy::retry::HedgeRefusal;
    use mcp_retry_policy::wasm::hedge as hg;
    let h = engine(&[], 5.0);
    // Bad settings are named; a refused setting leaves hedging as it was (off).
    for (present, after, max, want) in [
        (1.0, 0.0, 0.0, ("too_small", "hedgeAfterMs")),
        (1.0, f64::NAN, 0.0, ("not_finite", "hedgeAfterMs")),
        (1.0, 2.5, 0.0, ("not_integer", "hedgeAfterMs")),
        (1.0, 86_400_001.0, 0.0, ("too_large", "hedgeAfterMs")),
        (3.0, 10.0, 0.0, ("too_small", "maxHedges")),
        (2.0, 0.0, 11.0, ("too_large", "maxHedges")),
        (3.0, 10.0, -1.0, ("negative", "maxHedges")),
    ] {
        assert_eq!(failure(hg::engine_hedging(h, present, after, max)), Some(want), "{present} {after} {max}");
        assert_eq!(hg::engine_hedges(h), 0.0);
        assert!(slot(Out::HedgeAfterMs).is_nan(), "off");
    }
    assert_eq!(hg::engine_hedging(h, 1.0, 100.0, 0.0), 1.0);
    let call = c::call_begin(h, 1000.0, 1.0);
    let read_only = Safety::ALL.iter().position(|s| *s == Safety::ReadOnly).unwrap() as f64;
    assert_eq!(hg::hedge(h, call, read_only, 1100.0, 0.0, 0.0), 0.0);
    assert_eq!(slot(Out::Refusal), 2.0, "not_in_flight: nothing admitted yet");
    assert_eq!(c::admit(h, call, 1000.0, 0.0, 0.0), 0.0);
    assert_eq!(slot(Out::Admitted), 1.0);
    assert_eq!(hg::hedge(h, call, read_only, 1100.0, 0.0, 0.0), 0.0);
    assert!(slot(Out::Refusal).is_nan());
    assert_eq!(slot(Out::TimeoutMs), 60_000.0);
    assert_eq!(hg::hedge_ended(h, call, 1.0), 0.0);
    assert_eq!(hg::engine_hedges(h), 0.0);
    assert_eq!((slot(Out::HedgesSent), slot(Out::HedgesWon)), (1.0, 1.0));
    // Counted subrequests: the room given at the admission (or at the hedge) must pay for a hedge.
    let sub = HedgeRefusal::ALL.iter().position(|r| *r == HedgeRefusal::SubrequestBudget).unwrap() as f64;
    let counted = c::call_begin(h, 1000.0, 1.0);
    assert_eq!(c::admit(h, counted, 1000.0, 1.0, 2.0), 0.0);
    assert_eq!(hg::hedge(h, counted, read_only, 1100.0, 0.0, 0.0), 0.0);
    assert_eq!(slot(Out::Refusal), sub, "room 2: the attempt takes 1, a hedge needs 2");
    assert_eq!(hg::hedge(h, counted, read_only, 1100.0, 1.0, 9.0), 0.0);
    assert_eq!(slot(Out::Refusal), sub, "the smaller of the two binds");
    assert!(c::call_free(counted) >= 0.0);
    // Which failed copy stands: a network failure that may have been sent, then one refused at connect.
    let network = f64::from(KIND_NETWORK);
    let (no, maybe) = (0.0, 1.0);
    assert_eq!(hg::hedge_copy_stands(3.0, network, maybe, 0.0, 0.0, 0.0, network, no, 0.0, 0.0, 0.0), 0.0);
    assert_eq!(hg::hedge_copy_stands(3.0, network, no, 0.0, 0.0, 0.0, network, maybe, 0.0, 0.0, 0.0), 1.0);
    // Every weird number in every slot: a result or a named failure, never a trap.
    let weird = weird_numbers();
    for &x in &weird {
        for r in [
            hg::engine_hedging(x, 1.0, 10.0, 1.0),
            hg::engine_hedging(h, x, 10.0, 1.0),
            hg::engine_hedging(h, 3.0, x, 1.0),
            hg::engine_hedging(h, 3.0, 10.0, x),
            hg::hedge(x, call, read_only, 1100.0, 0.0, 0.0),
            hg::hedge(h, x, read_only, 1100.0, 0.0, 0.0),
            hg::hedge(h, call, x, 1100.0, 0.0, 0.0),
            hg::hedge(h, call, read_only, x, 0.0, 0.0),
            hg::hedge(h, call, read_only, 1100.0, x, 5.0),
            hg::hedge(h, call, read_only, 1100.0, 1.0, x),
            hg::hedge_copy_stands(x, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
            hg::hedge_copy_stands(3.0, x, x, x, x, x, 0.0, 0.0, 0.0, 0.0, 0.0),
            hg::hedge_copy_stands(3.0, 0.0, 0.0, 0.0, 0.0, 0.0, x, x, x, x, x),
            hg::hedge_ended(x, call, 1.0),
            hg::hedge_ended(h, x, 1.0),
            hg::hedge_ended(h, call, x),
            hg::engine_hedges(x),
        ] {
            assert!(!r.is_nan());
            if let Some((kind, field)) = failure(r) {
                assert!(!kind.is_empty() && (field.is_empty() || BOUNDARY_FIELDS.contains(&field)));
            }
        }
    }
    assert!(c::call_free(call) >= 0.0);
    assert!(c::engine_free(h) >= 0.0);
}

#[wasm_bindgen_test]
fn the_decoder_reads_each_key_where_the_description_puts_it() {
    use mcp_retry_policy::vocab::{InRead, OUTCOME_KINDS};
    // The JS encoder is generated from OUTCOME_KINDS (generated/outcome.js); the Rust decoder is written by
    // hand. A bad value in the slot the description gives a key must be refused naming that key (a code names
    // `kind`): a decoder reading another slot, or a description moved without it, goes red here.
    let h = engine(&[], 1.0);
    let mut checked = 0;
    for (code, k) in OUTCOME_KINDS.iter().enumerate() {
        for i in k.inputs {
            let bad = match i.read {
                InRead::Bool => continue,
                InRead::Number => f64::NAN,
                InRead::Code { .. } => 99.0,
            };
            let mut x = [0.0f64; 4];
            for j in k.inputs {
                if j.read == InRead::Number && j.required.is_some() {
                    x[j.slot.index() as usize] = if k.name == "http" { 503.0 } else { -32_000.0 };
                }
            }
            x[i.slot.index() as usize] = bad;
            if i.required.is_none() && i.read == InRead::Number {
                x[2] = f64::from(x[2] as u32 | i.slot.bit());
            }
            let field = match i.read {
                InRead::Number => format!("outcome.{}", i.key),
                _ => "kind".to_owned(),
            };
            let r = c::classify(h, code as f64, x[0], x[1], x[2], x[3]);
            assert_eq!(failure(r).map(|(_, f)| f.to_owned()), Some(field), "{}.{}", k.name, i.key);
            checked += 1;
        }
    }
    assert_eq!(checked, 11, "every number and code key of every kind");
    assert_eq!(c::engine_free(h), 0.0);
}
