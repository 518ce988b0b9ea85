//! The client face's exports: numbers in, numbers out. The engines and calls live here, in two slabs, and
//! JS holds their handles (`pkg-template/client/engine.js` keeps each in a private field of a `RetryEngine`
//! or `RetryCall`). Nothing here takes or makes a JS value and nothing here imports from JS, so no JS code
//! can run during a call: no exception can unwind through these frames, no call can re-enter, and the
//! module needs no JS glue beyond instantiation.
//!
//! Every export returns an `f64`: a result (≥ 0), or a failure `-(1 + kind + ERROR_KINDS.len() · field)`
//! ([`crate::vocab::ERROR_KINDS`], [`crate::vocab::BOUNDARY_FIELDS`]), whose offending value and bound
//! [`error_detail`] gives; JS turns it into the typed `RangeError`/`TypeError` with `code` and `field`.
//! Randomness is JS's (a seed, [`engine_seed`]) like time (`now_ms`): the client module imports nothing.

use core::cell::RefCell;

use wasm_bindgen::prelude::wasm_bindgen;

pub use super::fail::error_detail;
// The engine's exports that live beside this file, under the paths they always had.
pub use super::ends::{call_finish, status_answer, task_end, task_result_end};
use super::fail::{run, Fail};
use super::packed::{code, put_admission, put_classification, put_decision, put_step, unpack_outcome, unpack_safety};
pub use super::policy::{engine_new, engine_policy};
pub use super::shared::{engine_adopt, engine_probe_due, engine_snapshot};
use super::slab::{with_slab, Slab};
use crate::input::MAX_DURATION_MS;
use crate::retry::{safety, CallDriver, CallOptions, CallState, Engine, Revision, SplitMix64, StatusDriver, ToolFacts};
pub use crate::vocab::{ErrorField as Field, ErrorKind as FailKind};
use crate::vocab::{
    TOOL_DECLARES_ID, TOOL_DESTRUCTIVE, TOOL_DESTRUCTIVE_GIVEN, TOOL_IDEMPOTENT, TOOL_IDEMPOTENT_GIVEN, TOOL_READ_ONLY,
    TOOL_READ_ONLY_GIVEN, TOOL_TRUSTED,
};

pub(super) struct EngineSlot {
    pub(super) engine: Engine,
    pub(super) rng: Option<SplitMix64>,
    pub(super) revision: Option<Revision>,
}

/// A call: its engine state, and its driver once `next` was first asked (`src/wasm/drive.rs`).
pub(super) struct CallSlot {
    pub(super) state: CallState,
    pub(super) driver: Option<CallDriver>,
    /// The status driver, once `statusNext` was first asked about this (status-look) call.
    pub(super) status: Option<StatusDriver>,
}

thread_local! {
    static ENGINES: RefCell<Slab<EngineSlot>> = const { RefCell::new(Slab::new()) };
    static CALLS: RefCell<Slab<CallSlot>> = const { RefCell::new(Slab::new()) };
}

/// A new engine's slot: its handle.
pub(super) fn engine_insert(slot: EngineSlot) -> Result<f64, Fail> {
    with_slab(&ENGINES, Field::This, |s| s.insert(slot).map(f64::from))
}

/// Runs `f` on the engine `handle`.
pub(super) fn with_engine<R>(handle: f64, f: impl FnOnce(&mut EngineSlot) -> Result<R, Fail>) -> Result<R, Fail> {
    with_slab(&ENGINES, Field::This, |s| f(s.get(handle, Field::This)?))
}

/// Runs `f` on the call `handle` (named `field` in a failure).
pub(super) fn with_call<R>(
    handle: f64,
    field: Field,
    f: impl FnOnce(&mut CallState) -> Result<R, Fail>,
) -> Result<R, Fail> {
    with_slab(&CALLS, field, |s| f(&mut s.get(handle, field)?.state))
}

/// Runs `f` on the call `handle` with its driver.
pub(super) fn with_call_slot<R>(
    handle: f64,
    field: Field,
    f: impl FnOnce(&mut CallSlot) -> Result<R, Fail>,
) -> Result<R, Fail> {
    with_slab(&CALLS, field, |s| f(s.get(handle, field)?))
}

pub(super) fn time(now_ms: f64) -> Result<u64, Fail> {
    Fail::number(Field::NowMs, now_ms, 0, 1 << 53, false)
}

/// A revision setting from its code: `REVISIONS`' index, or their count for "unknown" (`None`).
pub(super) fn revision_setting(code_: f64) -> Result<Option<Revision>, Fail> {
    if code_ == Revision::ALL.len() as f64 {
        Ok(None)
    } else {
        code(&Revision::ALL, code_, Field::None).map(Some)
    }
}

/// Frees an engine.
#[wasm_bindgen(js_name = engineFree)]
pub fn engine_free(engine: f64) -> f64 {
    run(|| with_slab(&ENGINES, Field::This, |s| s.remove(engine, Field::This).map(|()| 0.0)))
}

/// Seeds the engine's jitter generator (a whole number below 2^53: `options.seed`, or bits JS drew).
#[wasm_bindgen(js_name = engineSeed)]
pub fn engine_seed(engine: f64, seed: f64) -> f64 {
    run(|| {
        let seed = Fail::number(Field::Seed, seed, 0, 1 << 53, true)?;
        with_engine(engine, |e| {
            e.rng = Some(SplitMix64::new(seed));
            Ok(0.0)
        })
    })
}

/// Sets the engine's revision (code; the count of revisions for "unknown").
#[wasm_bindgen(js_name = engineSetRevision)]
pub fn engine_set_revision(engine: f64, revision: f64) -> f64 {
    run(|| {
        let r = revision_setting(revision)?;
        with_engine(engine, |e| {
            e.revision = r;
            Ok(revision)
        })
    })
}

/// Says whether the engine's server sits behind a proxy that may retry a POST on another replica (1) or not
/// (0): `Engine::set_behind_retrying_proxy`.
#[wasm_bindgen(js_name = engineSetBehindRetryingProxy)]
pub fn engine_set_behind_retrying_proxy(engine: f64, on: f64) -> f64 {
    run(|| {
        let on = Fail::number(Field::BehindRetryingProxy, on, 0, 1, true)? == 1;
        with_engine(engine, |e| {
            e.engine.set_behind_retrying_proxy(on);
            Ok(0.0)
        })
    })
}

/// The engine's revision code (the count of revisions for "unknown").
#[wasm_bindgen(js_name = engineRevision)]
pub fn engine_revision(engine: f64) -> f64 {
    run(|| with_engine(engine, |e| Ok(e.revision.map_or(Revision::ALL.len(), |r| r as usize) as f64)))
}

/// The revision code a date `YYYYMMDD` behaves as.
#[wasm_bindgen(js_name = revisionOfDate)]
pub fn revision_of_date(yyyymmdd: f64) -> f64 {
    run(|| {
        let n = Fail::number(Field::None, yyyymmdd, 0, 99_999_999, true)?;
        Ok(Revision::from_date(u32::try_from(n).unwrap_or(u32::MAX)) as u32 as f64)
    })
}

/// The budget's tokens in thousandths + 1, or 0 without a budget.
#[wasm_bindgen(js_name = engineBudget)]
pub fn engine_budget(engine: f64) -> f64 {
    run(|| with_engine(engine, |e| Ok(e.engine.budget_milli().map_or(0.0, |m| m as f64 + 1.0))))
}

/// The breaker's state code (`BREAKER_STATES`) + 1, or 0 without a breaker.
#[wasm_bindgen(js_name = engineBreaker)]
pub fn engine_breaker(engine: f64) -> f64 {
    use crate::retry::BreakerState;
    run(|| {
        with_engine(engine, |e| {
            Ok(match e.engine.breaker_state() {
                None => 0.0,
                Some(BreakerState::Closed) => 1.0,
                Some(BreakerState::Open { .. }) => 2.0,
                Some(BreakerState::HalfOpen { .. }) => 3.0,
            })
        })
    })
}

/// Starts a call at `now_ms` (`answers_input`: 0 when the caller cannot answer an `input_required`
/// result). Returns the call's handle.
#[wasm_bindgen(js_name = callBegin)]
pub fn call_begin(engine: f64, now_ms: f64, answers_input: f64) -> f64 {
    run(|| {
        let now = time(now_ms)?;
        let options = CallOptions { answers_input: answers_input != 0.0 };
        let state = with_engine(engine, |e| Ok(e.engine.begin_with(now, options)))?;
        with_slab(&CALLS, Field::Call, |s| s.insert(CallSlot { state, driver: None, status: None }).map(f64::from))
    })
}

/// Frees a call.
#[wasm_bindgen(js_name = callFree)]
pub fn call_free(call: f64) -> f64 {
    run(|| with_slab(&CALLS, Field::This, |s| s.remove(call, Field::This).map(|()| 0.0)))
}

/// A call's field: 0 attempts, 1 deadline, 2 whether an attempt may have been delivered unanswered, 3 polls.
#[wasm_bindgen(js_name = callField)]
pub fn call_field(call: f64, which: f64) -> f64 {
    run(|| {
        with_call(call, Field::This, |c| {
            Ok(if which == 0.0 {
                f64::from(c.attempts)
            } else if which == 1.0 {
                c.deadline_ms as f64
            } else if which == 3.0 {
                f64::from(c.polls)
            } else {
                f64::from(u8::from(c.maybe_delivered))
            })
        })
    })
}

/// Asks to send the next attempt of `call` at `now_ms`: its admission into the out slots.
#[wasm_bindgen]
pub fn admit(engine: f64, call: f64, now_ms: f64, has_room: f64, room: f64) -> f64 {
    run(|| {
        let now = time(now_ms)?;
        let room = subrequest_room(has_room, room)?;
        with_engine(engine, |e| {
            let random = e.rng.get_or_insert_with(|| SplitMix64::new(0)).next_u64();
            with_call(call, Field::Call, |c| {
                put_admission(&e.engine.admit_with(c, now, random, room));
                Ok(0.0)
            })
        })
    })
}

/// The outgoing requests a call may still make (`has_room` 1), a whole number; else they are not counted.
pub(super) fn subrequest_room(has_room: f64, room: f64) -> Result<Option<u32>, Fail> {
    if has_room != 1.0 {
        return Ok(None);
    }
    Fail::number(Field::Subrequests, room, 0, MAX_SUBREQUESTS, true).map(|r| Some(u32::try_from(r).unwrap_or(u32::MAX)))
}

/// The most outgoing requests one invocation may be said to have left (a million: far above any platform's).
const MAX_SUBREQUESTS: u64 = 1_000_000;

/// Records how an attempt of `call` ended (kind code + four numbers) and decides: the step into the out slots.
#[wasm_bindgen]
#[allow(clippy::too_many_arguments)]
pub fn record(engine: f64, call: f64, kind: f64, a: f64, b: f64, c: f64, d: f64, safety: f64, now_ms: f64) -> f64 {
    run(|| {
        let outcome = unpack_outcome(kind, a, b, c, d)?;
        let safety = unpack_safety(safety)?;
        let now = time(now_ms)?;
        with_engine(engine, |e| {
            // JS seeds before the first record; an engine somehow unseeded draws from a fixed seed rather
            // than failing a call over jitter.
            let random = e.rng.get_or_insert_with(|| SplitMix64::new(0)).next_u64();
            let revision = e.revision;
            with_call(call, Field::Call, |c| {
                put_step(&e.engine.record(c, &outcome, safety, revision, now, random));
                Ok(0.0)
            })
        })
    })
}

/// The operation `call` waits on is still running: when to look again (`hint_ms`: the server's interval,
/// used when `has_hint` is 1). The decision into the out slots: a wait, or a `pending` stop.
#[wasm_bindgen]
#[allow(clippy::too_many_arguments)]
pub fn poll(engine: f64, call: f64, has_hint: f64, hint_ms: f64, now_ms: f64, has_room: f64, room: f64) -> f64 {
    run(|| {
        let now = time(now_ms)?;
        let room = subrequest_room(has_room, room)?;
        let hint =
            if has_hint == 1.0 { Some(Fail::number(Field::HintMs, hint_ms, 0, MAX_DURATION_MS, false)?) } else { None };
        with_engine(engine, |e| {
            let random = e.rng.get_or_insert_with(|| SplitMix64::new(0)).next_u64();
            with_call(call, Field::Call, |c| {
                put_decision(&e.engine.poll_within(c, hint, now, random, room));
                Ok(0.0)
            })
        })
    })
}

/// `call` was told to answer an input request and the caller could not (`handler_missing`: 1 when it has no
/// handler for one of the requests). The decision into the out slots: always a stop.
#[wasm_bindgen(js_name = inputUnanswered)]
pub fn input_unanswered(engine: f64, call: f64, handler_missing: f64) -> f64 {
    run(|| {
        with_engine(engine, |e| {
            with_call(call, Field::Call, |c| {
                put_decision(&e.engine.input_unanswered(c, handler_missing == 1.0));
                Ok(0.0)
            })
        })
    })
}

/// A `tools/list` failed with an outcome (kind code + four numbers): whether to recover and list again
/// ([`Engine::list_failed`]). The decision into the out slots: a retry to re-initialize or renegotiate, or a stop.
#[wasm_bindgen(js_name = listFailed)]
#[allow(clippy::too_many_arguments)]
pub fn list_failed(engine: f64, kind: f64, a: f64, b: f64, c: f64, d: f64, now_ms: f64) -> f64 {
    run(|| {
        let outcome = unpack_outcome(kind, a, b, c, d)?;
        let now = time(now_ms)?;
        with_engine(engine, |e| {
            let random = e.rng.get_or_insert_with(|| SplitMix64::new(0)).next_u64();
            let revision = e.revision;
            {
                put_decision(&e.engine.list_failed(&outcome, revision, now, random));
                Ok(0.0)
            }
        })
    })
}

/// Classifies an outcome under the engine's revision (changes nothing): the classification into the out slots.
#[wasm_bindgen]
pub fn classify(engine: f64, kind: f64, a: f64, b: f64, c: f64, d: f64) -> f64 {
    run(|| {
        let outcome = unpack_outcome(kind, a, b, c, d)?;
        with_engine(engine, |e| {
            put_classification(&e.engine.classify(&outcome, e.revision));
            Ok(0.0)
        })
    })
}

/// The safety code of a tool from its facts (bits: 1 trusted, 2/4 `readOnlyHint` given/true, 8/16
/// `destructiveHint`, 32/64 `idempotentHint`, 128 the schema declares the operation-id argument) and the
/// app's override (a safety code + 1; 0: none).
#[wasm_bindgen(js_name = safetyOf)]
pub fn safety_of(flags: f64, override_: f64) -> f64 {
    run(|| {
        let f = if flags.fract() == 0.0 && (0.0..256.0).contains(&flags) { flags as u32 } else { 0 };
        let hint = |given: u32, value: u32| (f & given != 0).then_some(f & value != 0);
        let facts = ToolFacts {
            read_only_hint: hint(TOOL_READ_ONLY_GIVEN, TOOL_READ_ONLY),
            destructive_hint: hint(TOOL_DESTRUCTIVE_GIVEN, TOOL_DESTRUCTIVE),
            idempotent_hint: hint(TOOL_IDEMPOTENT_GIVEN, TOOL_IDEMPOTENT),
            declares_operation_id: f & TOOL_DECLARES_ID != 0,
        };
        let o = if override_ == 0.0 { None } else { Some(unpack_safety(override_ - 1.0)?) };
        Ok(safety(&facts, f & TOOL_TRUSTED != 0, o) as u32 as f64)
    })
}
