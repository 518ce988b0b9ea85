//! `RetryEngine` and `RetryCall`: the core [`Engine`] for JS callers that own their own loop.

use core::cell::RefCell;

use wasm_bindgen::prelude::*;

use super::error::{plain_error, range_error};
use super::policy::{read_options, to_js};
use super::read::{name_string, time_ms, Fields};
use super::{brand, random, JsResult};
use crate::retry::policy::{check_number, Quoted};
use crate::retry::{
    classify_under, safety, CallOptions, CallState, Engine, Policy, Revision, Safety, SplitMix64, ToolFacts,
};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Retry policy options; every field optional. See the README for defaults and why. */
export interface PolicyOptions {
  maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number;
  jitter?: "full" | "equal" | "decorrelated" | "none";
  attemptTimeoutMs?: number; totalTimeoutMs?: number; maxRetryAfterMs?: number;
  budget?: false | { capacity?: number; retryCost?: number; timeoutCost?: number; successRefill?: number };
  breaker?: false | { consecutiveFailures?: number; failureRatio?: number; minimumCalls?: number; windowMs?: number; openMs?: number };
}
/** The validated policy (sections are `false` when switched off). */
export type Policy = Required<Omit<PolicyOptions, "budget" | "breaker">> & {
  budget: false | { capacity: number; retryCost: number; timeoutCost: number; successRefill: number };
  breaker: false | { consecutiveFailures: number; failureRatio: number; minimumCalls: number; windowMs: number; openMs: number };
};
/** Engine options: `seed` makes jitter repeatable; `revision` is the server's MCP revision (default `"unknown"`: each
 * outcome gets its most conservative reading across revisions until a negotiated version is set). */
export interface EngineOptions { seed?: number; revision?: RevisionSetting }
// The closed sets are generated from the Rust definitions (src/vocab.rs → generated/names.d.ts).
import type {
  Revision, Safety, Delivery, Recover, FinalStatus, Reason, Cause, Verdict, ResultType, Sent, LedgerStatus, BreakerStateName,
  UNKNOWN_REVISION,
} from "./generated/names.js";
export type { Revision, Safety, Delivery, Recover, FinalStatus, Reason, Cause, Verdict, ResultType, Sent, LedgerStatus } from "./generated/names.js";
/** A revision, or `"unknown"` when the negotiated version is not visible (stdio, a hidden transport). */
export type RevisionSetting = Revision | typeof UNKNOWN_REVISION;
/** How one attempt ended, as the caller observed it. */
export type AttemptOutcome =
  | { kind: "result"; isError?: boolean; resultType?: ResultType }
  | { kind: "jsonrpc_error"; code: number }
  | { kind: "http"; status: number; retryAfterMs?: number; hadSession?: boolean; jsonrpcCode?: number }
  | { kind: "network"; sent: Sent }
  | { kind: "timeout" }
  | { kind: "stream_broken"; eventIdSeen?: boolean; retryMs?: number }
  | { kind: "aborted"; sent: Sent }
  | { kind: "ledger"; status: LedgerStatus; retryAfterMs?: number };
export interface Classification {
  verdict: Verdict; delivery: Delivery; recover?: Recover; retryAfterMs?: number; cause: Cause;
}
export type Decision =
  | { action: "retry"; delayMs: number; recover?: Recover; reason: Reason }
  | { action: "stop"; status: FinalStatus; reason: Reason };
export interface BreakerTransition { from: BreakerStateName; to: BreakerStateName }
export interface Step { classification: Classification; decision: Decision; breaker?: BreakerTransition }
export type Admission =
  | { admitted: true; attempt: number; timeoutMs: number; breaker?: BreakerTransition }
  | { admitted: false; decision: Decision & { action: "stop" } };
/** What the caller says about one call when it begins. */
export interface BeginOptions { /** Whether the caller can answer an `input_required` result (default true). */ answersInput?: boolean }
/** What the app says about a tool's safety. */
export interface SafetyOptions { trusted?: boolean; override?: Safety; operationIdArgument?: string }
/** The parts of an MCP `Tool` the engine reads. */
export interface ToolLike {
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; [k: string]: unknown };
  inputSchema?: { properties?: Record<string, unknown>; [k: string]: unknown };
  [k: string]: unknown;
}
"#;

/// Per-server retry engine: policy, retry budget and circuit breaker.
#[wasm_bindgen]
pub struct RetryEngine {
    inner: RefCell<State>,
}

struct State {
    engine: Engine,
    rng: Option<SplitMix64>,
    revision: Option<Revision>,
}

/// One call's state across its attempts. Created by `RetryEngine.begin`.
#[wasm_bindgen]
pub struct RetryCall {
    state: RefCell<CallState>,
}

impl State {
    /// 64 random bits for jitter from the seeded generator, seeded with `fresh_seed` on first use (drawn by
    /// [`RetryEngine::seed_if_needed`] before the state was borrowed: no JS runs while it is).
    fn next_random(&mut self, fresh_seed: Option<u64>) -> JsResult<u64> {
        if self.rng.is_none() {
            self.rng = fresh_seed.map(SplitMix64::new);
        }
        self.rng
            .as_mut()
            .map(SplitMix64::next_u64)
            .ok_or_else(|| plain_error("no_randomness", "", "no random seed was drawn for this engine's jitter"))
    }
}

fn busy() -> JsValue {
    plain_error("reentrant_call", "", "the engine was called again from inside one of its own calls")
}

fn read_revision(field: &str, value: &str) -> JsResult<Option<Revision>> {
    if value == UNKNOWN_REVISION {
        return Ok(None);
    }
    value.parse().map(Some).map_err(|()| {
        range_error(
            "invalid_value",
            field,
            &format!("{field} must be one of 2025-06-18, 2025-11-25, 2026-07-28, unknown, got {}", Quoted(value)),
        )
    })
}

/// The JS name of "no revision known".
const UNKNOWN_REVISION: &str = "unknown";

fn revision_name(r: Option<Revision>) -> String {
    r.map_or(UNKNOWN_REVISION, Revision::as_str).to_owned()
}

fn read_safety(value: &JsValue) -> JsResult<Safety> {
    let Some(s) = name_string("safety", value)? else {
        return Err(super::error::type_error("invalid_type", "safety", "safety must be a string"));
    };
    s.parse().map_err(|()| {
        range_error(
            "invalid_value",
            "safety",
            &format!("safety must be one of read_only, idempotent, keyed, unsafe, got {}", Quoted(&s)),
        )
    })
}

impl RetryEngine {
    /// A seed from `getrandom` if the jitter generator has none yet. Drawn before the state is borrowed, so
    /// that no JS (an import) runs while a borrow is held: if a JS exception ever unwound through wasm
    /// frames (a stack overflow inside the call), a borrow left held would lock this engine for good.
    fn seed_if_needed(&self) -> JsResult<Option<u64>> {
        if self.inner.try_borrow().map_err(|_| busy())?.rng.is_none() {
            Ok(Some(random::seed()?))
        } else {
            Ok(None)
        }
    }
}

#[wasm_bindgen]
impl RetryEngine {
    /// Validates `policy` (throws `RangeError`/`TypeError` with `code` and `field`) and builds an engine
    /// with a full budget and a closed breaker. Draws no randomness: safe at module scope in Workers.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "PolicyOptions | undefined")] policy: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EngineOptions | undefined")] options: JsValue,
    ) -> JsResult<RetryEngine> {
        let policy = Policy::from_options(&read_options(&policy)?)?;
        let (mut seed, mut revision) = (None, None);
        if let Some(mut f) = Fields::new(&options, "options", "options")? {
            if let Some(s) = f.number("seed")? {
                seed = Some(check_number("options.seed", s, 0, 1 << 53, true)?);
            }
            if let Some(r) = f.string("revision")? {
                revision = read_revision("options.revision", &r)?;
            }
            f.finish()?;
        }
        let engine = RetryEngine {
            inner: RefCell::new(State { engine: Engine::new(policy), rng: seed.map(SplitMix64::new), revision }),
        };
        brand::constructed(brand::ENGINE); // the last step: no JS runs between here and the glue's store
        Ok(engine)
    }

    /// The validated policy.
    #[wasm_bindgen(getter, unchecked_return_type = "Policy")]
    pub fn policy(&self) -> JsResult<JsValue> {
        let policy = *self.inner.try_borrow().map_err(|_| busy())?.engine.policy();
        Ok(to_js(&policy))
    }

    /// The MCP revision the server speaks.
    #[wasm_bindgen(getter, unchecked_return_type = "RevisionSetting")]
    pub fn revision(&self) -> JsResult<String> {
        Ok(revision_name(self.inner.try_borrow().map_err(|_| busy())?.revision))
    }

    /// Sets the revision from a negotiated `protocolVersion` (any `YYYY-MM-DD`; dates between known
    /// revisions behave like the older one). Returns the revision used.
    #[wasm_bindgen(js_name = setProtocolVersion, unchecked_return_type = "Revision")]
    pub fn set_protocol_version(&self, protocol_version: JsValue) -> JsResult<String> {
        let v = name_string("protocolVersion", &protocol_version)?.ok_or_else(|| {
            super::error::type_error("invalid_type", "protocolVersion", "protocolVersion must be a string")
        })?;
        let r = Revision::from_protocol_version(&v).ok_or_else(|| {
            range_error(
                "invalid_value",
                "protocolVersion",
                &format!("protocolVersion must be a YYYY-MM-DD date, got {}", Quoted(&v)),
            )
        })?;
        self.inner.try_borrow_mut().map_err(|_| busy())?.revision = Some(r);
        Ok(r.as_str().to_owned())
    }

    /// The safety of `tool` (an MCP `Tool`, or anything with `annotations` and `inputSchema`): the
    /// override if given; else, for a trusted server, from its annotations and whether its input schema
    /// declares the operation-id argument; else `"unsafe"`.
    #[wasm_bindgen(unchecked_return_type = "Safety")]
    pub fn safety(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ToolLike")] tool: JsValue,
        #[wasm_bindgen(unchecked_param_type = "SafetyOptions | undefined")] options: JsValue,
    ) -> JsResult<String> {
        let (mut trusted, mut override_, mut arg) = (false, None, "operation_id".to_owned());
        if let Some(mut f) = Fields::new(&options, "options", "options")? {
            trusted = f.boolean("trusted")?.unwrap_or(false);
            if let Some(o) = f.get("override").map(|v| (!v.is_undefined()).then_some(v))? {
                override_ = Some(read_safety(&o)?);
            }
            if let Some(a) = f.string("operationIdArgument")? {
                arg = a;
            }
            f.finish()?;
        }
        let mut facts = ToolFacts::default();
        // Only the fields we use are read; a Tool has many more, so unknown keys are fine here.
        if let Some(mut t) = Fields::new(&tool, "tool", "tool")? {
            if let Some(mut a) = Fields::new(&t.get("annotations")?, "tool.annotations", "tool.annotations")? {
                facts.read_only_hint = lenient_bool(a.get("readOnlyHint")?);
                facts.destructive_hint = lenient_bool(a.get("destructiveHint")?);
                facts.idempotent_hint = lenient_bool(a.get("idempotentHint")?);
            }
            if let Some(mut schema) = Fields::new(&t.get("inputSchema")?, "tool.inputSchema", "tool.inputSchema")? {
                let props = schema.get("properties")?;
                if props.is_object() {
                    facts.declares_operation_id = super::read::has(&props, &arg).map_err(|_| {
                        super::error::type_error(
                            "unreadable",
                            "tool.inputSchema.properties",
                            "tool.inputSchema.properties could not be read",
                        )
                    })?;
                }
            }
        }
        Ok(safety(&facts, trusted, override_).as_str().to_owned())
    }

    /// Starts a call at `nowMs`. `options.answersInput: false` says the caller cannot answer an
    /// `input_required` result: the engine then stops the call there (`input_required_unhandled`).
    pub fn begin(
        &self,
        #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
        #[wasm_bindgen(unchecked_optional_param_type = "BeginOptions")] options: Option<JsValue>,
    ) -> JsResult<RetryCall> {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let now = time_ms("nowMs", now_ms)?;
        let mut call_options = CallOptions::default();
        if let Some(mut f) = Fields::new(&options, "options", "options")? {
            if let Some(answers) = f.boolean("answersInput")? {
                call_options.answers_input = answers;
            }
            f.finish()?;
        }
        let st = self.inner.try_borrow().map_err(|_| busy())?;
        let call = RetryCall { state: RefCell::new(st.engine.begin_with(now, call_options)) };
        brand::constructed(brand::CALL);
        Ok(call)
    }

    /// Records how an attempt of `call` ended and decides what comes next, on the one protocol (`packed.rs`):
    /// the outcome as a kind code and four numbers, the safety as a code, the step back as one packed number.
    /// `client/engine.js` wraps it as `record(call, outcome, safety, nowMs)`.
    #[wasm_bindgen(js_name = recordPacked)]
    #[allow(clippy::too_many_arguments)]
    pub fn record_packed(
        &self,
        call: &RetryCall,
        kind: u32,
        a: f64,
        b: f64,
        c: f64,
        d: f64,
        safety: u32,
        #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    ) -> JsResult<f64> {
        let outcome = super::packed::unpack_outcome(kind, a, b, c, d)?;
        let safety = super::packed::unpack_safety(safety)?;
        let now = time_ms("nowMs", now_ms)?;
        let seed = self.seed_if_needed()?;
        let mut st = self.inner.try_borrow_mut().map_err(|_| busy())?;
        let mut c = call.state.try_borrow_mut().map_err(|_| busy())?;
        let random = st.next_random(seed)?;
        let revision = st.revision;
        Ok(super::packed::pack_step(&st.engine.record(&mut c, &outcome, safety, revision, now, random)))
    }

    /// Classifies one attempt's outcome under the engine's revision (changes nothing): the classification
    /// bits of a packed step, and its `Retry-After` as the value. `client/engine.js` wraps it as `classify`.
    #[wasm_bindgen(js_name = classifyPacked)]
    pub fn classify_packed(&self, kind: u32, a: f64, b: f64, c: f64, d: f64) -> JsResult<f64> {
        let outcome = super::packed::unpack_outcome(kind, a, b, c, d)?;
        let revision = self.inner.try_borrow().map_err(|_| busy())?.revision;
        Ok(super::packed::pack_classification(&classify_under(&outcome, revision)))
    }

    /// Asks to send the next attempt of `call` at `nowMs`: one packed number (see `packed.rs`): admitted with
    /// the attempt's timeout, or the stop (breaker open, deadline passed, attempts used up).
    #[wasm_bindgen(js_name = admitPacked)]
    pub fn admit_packed(&self, call: &RetryCall, #[wasm_bindgen(js_name = nowMs)] now_ms: f64) -> JsResult<f64> {
        let now = time_ms("nowMs", now_ms)?;
        let mut st = self.inner.try_borrow_mut().map_err(|_| busy())?;
        let mut c = call.state.try_borrow_mut().map_err(|_| busy())?;
        Ok(super::packed::pack_admission(&st.engine.admit(&mut c, now)))
    }

    /// The names behind the packed codes.
    #[wasm_bindgen(js_name = codeTables)]
    pub fn code_tables() -> JsValue {
        super::packed::code_tables()
    }

    /// The retry budget's tokens left, or `undefined` without a budget.
    #[wasm_bindgen(getter, js_name = budgetTokens)]
    pub fn budget_tokens(&self) -> JsResult<Option<f64>> {
        Ok(self.inner.try_borrow().map_err(|_| busy())?.engine.budget_milli().map(|m| m as f64 / 1000.0))
    }

    /// The breaker's state (`closed`, `open`, `half_open`), or `undefined` without a breaker.
    #[wasm_bindgen(getter, js_name = breakerState)]
    pub fn breaker_state(&self) -> JsResult<Option<String>> {
        Ok(self.inner.try_borrow().map_err(|_| busy())?.engine.breaker_state().map(|s| s.as_str().to_owned()))
    }
}

/// Annotation hints of the wrong type count as absent (the spec's default), not as an error: they come
/// from a server, not from the app.
fn lenient_bool(v: JsValue) -> Option<bool> {
    v.as_bool()
}

#[wasm_bindgen]
impl RetryCall {
    /// Attempts so far that count toward `maxAttempts`.
    #[wasm_bindgen(getter)]
    pub fn attempts(&self) -> JsResult<u32> {
        Ok(self.state.try_borrow().map_err(|_| busy())?.attempts)
    }

    /// When the call must be over (ms, same clock as `nowMs`).
    #[wasm_bindgen(getter, js_name = deadlineMs)]
    pub fn deadline_ms(&self) -> JsResult<f64> {
        Ok(self.state.try_borrow().map_err(|_| busy())?.deadline_ms as f64)
    }

    /// Whether any attempt so far may have been delivered without an answer from the tool.
    #[wasm_bindgen(getter, js_name = maybeDelivered)]
    pub fn maybe_delivered(&self) -> JsResult<bool> {
        Ok(self.state.try_borrow().map_err(|_| busy())?.maybe_delivered)
    }
}

/// A fresh operation id (UUID v4 from secure randomness). Call it once per intended write, persist it
/// before the first send, and reuse it on every retry.
#[wasm_bindgen(js_name = newOperationId)]
pub fn new_operation_id() -> JsResult<String> {
    random::operation_id()
}

/// The revision a negotiated `protocolVersion` behaves as, or throws for a string that is not a date.
/// Takes any value (not `&str`: wasm-bindgen's glue would call a non-string's `length` and `slice`, and
/// copy whatever they claim into wasm memory) and refuses a non-string with a `TypeError`.
#[wasm_bindgen(js_name = revisionFor, unchecked_return_type = "Revision")]
pub fn revision_for(#[wasm_bindgen(unchecked_param_type = "string")] protocol_version: JsValue) -> JsResult<String> {
    let v = name_string("protocolVersion", &protocol_version)?.ok_or_else(|| {
        super::error::type_error("invalid_type", "protocolVersion", "protocolVersion must be a string")
    })?;
    Revision::from_protocol_version(&v).map(|r| r.as_str().to_owned()).ok_or_else(|| {
        range_error(
            "invalid_value",
            "protocolVersion",
            &format!("protocolVersion must be a YYYY-MM-DD date, got {}", Quoted(&v)),
        )
    })
}
