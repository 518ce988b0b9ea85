//! Every name and every number that crosses the wasm boundary, defined once, here and in the core's enums.
//!
//! JavaScript switches on the core's names (statuses, reasons, causes, recover actions, …), reads the
//! `_meta` keys, and reads the answers of the hot path (their slots and readers: [`crate::seam`]). None of it is spelled by hand on the JS
//! side: `cargo run --example names` renders this module as `pkg-template/generated/names.js` (the tables) and
//! `names.d.ts` (closed TypeScript unions), and `scripts/build.sh` and `cargo test` (`tests/names.rs`) fail
//! when the committed files differ from what these definitions render. A rename here without regenerating,
//! or a hand edit of a generated file, goes red.
//!
//! The codes of an enum are its declaration order (each enum's `ALL`, checked in `decide/`'s tests).

use core::fmt::Write as _;

pub use crate::seam::{ErrorField, BOUNDARY_FIELDS, POLICY_VALUES};

use crate::ledger::reply::Reply;
use crate::ledger::status_tool;
use crate::ledger::{
    Admission, Answer, AnswerKind, Begun, HoldAnswer, HoldEvent, HoldStep, HoldTell, Look, LookEnd, LookEvent,
    LookMode, LookStep, Lookup, Ran, ReconcileVerdict, RecordState, ReleaseRefusal, Standing, Validation, WriteEvent,
    WriteStep,
};
use crate::retry::{
    BreakerState, Cause, Delivery, FinalStatus, FinishNextKind, FinishedKind, HappenedKind, HedgeRefusal, Jitter,
    LedgerStatus, NextKind, OperationStatus, Reason, Recover, ResultType, Revision, Safety, Sent, StatusHeard,
    StatusNextKind, TaskStatus, Verdict,
};

mod lists;
mod render;

use lists::lists;
pub use render::{generated_files, render_dts, render_js, render_outcome_js};

/// The `_meta` key of the server ledger's own answers (in progress, unknown, conflict, rejected, …).
pub const LEDGER_META_KEY: &str = "dev.mcp-retry-policy/ledger";
/// The `_meta` key that tags each attempt's request, so the observed HTTP response can be matched to it.
pub const ATTEMPT_META_KEY: &str = "dev.mcp-retry-policy/attempt";
/// The `_meta` key under which `callTool` attaches the whole call outcome to a non-succeeded result.
pub const OUTCOME_META_KEY: &str = "dev.mcp-retry-policy/outcome";

/// The breaker transitions by code (0: none) as `(from, to)`.
pub const BREAKER_TRANSITIONS: [(&str, &str); 5] =
    [("", ""), ("closed", "open"), ("open", "half_open"), ("half_open", "closed"), ("half_open", "open")];

/// One kind of attempt outcome as JS hands it over: its `kind` name (its code is its index in
/// [`OUTCOME_KINDS`]) and its other keys, each with the input slot it crosses in. On the hot path an outcome is
/// its kind code and four numbers `a, b, c, d`; the JS encoder is driven by these inputs (generated as
/// `OUTCOME_INPUTS`), and `src/wasm/packed.rs` reads the same slots (the boundary test sends a bad value in each
/// described slot and checks the failure names that key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutcomeKind {
    /// The `kind` value.
    pub name: &'static str,
    /// The keys besides `kind`, in the order of their slots.
    pub inputs: &'static [Input],
}

/// One key of an outcome and how it crosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// The key.
    pub key: &'static str,
    /// Its slot.
    pub slot: InSlot,
    /// Its type.
    pub read: InRead,
    /// `Some(what)` when it is required (`what` is said when it is missing; empty: the table's names), `None`
    /// when it may be absent (an absent number is flagged in `c`: [`C_B_PRESENT`], [`C_D_PRESENT`]).
    pub required: Option<&'static str>,
}

/// The input slot a key crosses in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InSlot {
    /// `a`.
    A,
    /// `b` (an optional number there sets [`C_B_PRESENT`]).
    B,
    /// A flag bit of `c`.
    C(u32),
    /// `d` (an optional number there sets [`C_D_PRESENT`]).
    D,
}

impl InSlot {
    /// The slot's position among `a, b, c, d`.
    pub const fn index(self) -> u32 {
        match self {
            InSlot::A => 0,
            InSlot::B => 1,
            InSlot::C(_) => 2,
            InSlot::D => 3,
        }
    }
    /// The bit of `c` this slot sets: its flag, or for an optional number its presence bit.
    pub const fn bit(self) -> u32 {
        match self {
            InSlot::A => 0,
            InSlot::B => C_B_PRESENT,
            InSlot::C(bit) => bit,
            InSlot::D => C_D_PRESENT,
        }
    }
}

/// How a key's value becomes its slot's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InRead {
    /// A boolean: 1 or 0 (absent: 0).
    Bool,
    /// A number, as given (its range is the core's to check).
    Number,
    /// A name of the JS table `js` (TypeScript type `ts`), crossing as its code (absent: 0).
    Code {
        /// The table in `generated/names.js`.
        js: &'static str,
        /// The TypeScript union.
        ts: &'static str,
    },
}

impl InRead {
    const fn ts(self) -> &'static str {
        match self {
            InRead::Bool => "boolean",
            InRead::Number => "number",
            InRead::Code { ts, .. } => ts,
        }
    }
}

const fn key(key: &'static str, slot: InSlot, read: InRead, required: Option<&'static str>) -> Input {
    Input { key, slot, read, required }
}

const SENT_CODE: InRead = InRead::Code { js: "SENT", ts: "Sent" };

/// `kind: "result"`: `isError` (0/1), `resultType` ([`ResultType`] code).
pub const KIND_RESULT: u32 = 0;
/// `kind: "jsonrpc_error"`: `code`, flags ([`C_MISMATCH_CONFIRMED`]).
pub const KIND_JSONRPC_ERROR: u32 = 1;
/// `kind: "http"`: `status`, `retryAfterMs`, flags ([`C_HAD_SESSION`], [`C_B_PRESENT`], [`C_D_PRESENT`],
/// [`C_MISMATCH_CONFIRMED`]),
/// `jsonrpcCode`.
pub const KIND_HTTP: u32 = 2;
/// `kind: "network"`: `sent` ([`Sent`] code).
pub const KIND_NETWORK: u32 = 3;
/// `kind: "timeout"`.
pub const KIND_TIMEOUT: u32 = 4;
/// `kind: "stream_broken"`: `eventIdSeen` (0/1), `retryMs`, flags ([`C_B_PRESENT`]).
pub const KIND_STREAM_BROKEN: u32 = 5;
/// `kind: "aborted"`: `sent` ([`Sent`] code).
pub const KIND_ABORTED: u32 = 6;
/// `kind: "ledger"`: `status` ([`LedgerStatus`] code), `retryAfterMs`, flags ([`C_B_PRESENT`]).
pub const KIND_LEDGER: u32 = 7;
/// `kind: "process_exited"`: `sent` ([`Sent`] code).
pub const KIND_PROCESS_EXITED: u32 = 8;
/// `kind: "process_unresponsive"`.
pub const KIND_PROCESS_UNRESPONSIVE: u32 = 9;
/// `kind: "withheld"`.
pub const KIND_WITHHELD: u32 = 10;

/// Slot `c` of `http`: the request carried an `Mcp-Session-Id`.
pub const C_HAD_SESSION: u32 = 1;
/// Slot `c`: slot `b` (a wait in ms) is present. Absent values are flagged, not given a sentinel, so that
/// every number a caller may pass reaches the core's checks as it was given.
pub const C_B_PRESENT: u32 = 2;
/// Slot `c`: slot `d` (the `jsonrpcCode` of an `http` outcome) is present.
pub const C_D_PRESENT: u32 = 4;
/// Slot `c` of `jsonrpc_error` and `http`: the client confirmed the mismatch a -32020/-32022 names
/// (`mismatchConfirmed`; [`crate::retry::AttemptOutcome::JsonRpcError`]).
pub const C_MISMATCH_CONFIRMED: u32 = 8;

/// Every outcome kind, by code.
pub const OUTCOME_KINDS: [OutcomeKind; 11] = [
    OutcomeKind {
        name: "result",
        inputs: &[
            key("isError", InSlot::A, InRead::Bool, None),
            key("resultType", InSlot::B, InRead::Code { js: "RESULT_TYPES", ts: "ResultType" }, None),
        ],
    },
    OutcomeKind {
        name: "jsonrpc_error",
        inputs: &[
            key("code", InSlot::A, InRead::Number, Some("the JSON-RPC error code")),
            key("mismatchConfirmed", InSlot::C(C_MISMATCH_CONFIRMED), InRead::Bool, None),
        ],
    },
    OutcomeKind {
        name: "http",
        inputs: &[
            key("status", InSlot::A, InRead::Number, Some("the HTTP status")),
            key("retryAfterMs", InSlot::B, InRead::Number, None),
            key("hadSession", InSlot::C(C_HAD_SESSION), InRead::Bool, None),
            key("jsonrpcCode", InSlot::D, InRead::Number, None),
            key("mismatchConfirmed", InSlot::C(C_MISMATCH_CONFIRMED), InRead::Bool, None),
        ],
    },
    OutcomeKind { name: "network", inputs: &[key("sent", InSlot::A, SENT_CODE, Some(""))] },
    OutcomeKind { name: "timeout", inputs: &[] },
    OutcomeKind {
        name: "stream_broken",
        inputs: &[key("eventIdSeen", InSlot::A, InRead::Bool, None), key("retryMs", InSlot::B, InRead::Number, None)],
    },
    OutcomeKind { name: "aborted", inputs: &[key("sent", InSlot::A, SENT_CODE, Some(""))] },
    OutcomeKind {
        name: "ledger",
        inputs: &[
            key("status", InSlot::A, InRead::Code { js: "LEDGER_STATUSES", ts: "LedgerStatus" }, Some("")),
            key("retryAfterMs", InSlot::B, InRead::Number, None),
        ],
    },
    OutcomeKind { name: "process_exited", inputs: &[key("sent", InSlot::A, SENT_CODE, Some(""))] },
    OutcomeKind { name: "process_unresponsive", inputs: &[] },
    OutcomeKind { name: "withheld", inputs: &[] },
];

/// A decision's `action`, by code: 0 retry, 1 stop.
pub const ACTIONS: [&str; 2] = ["retry", "stop"];

/// What a client-face export refuses, by code. `freed`: a handle that was freed (or never made);
/// `too_many`: over a million live engines or calls.
pub const ERROR_KINDS: [&str; 9] = [
    "not_finite",
    "negative",
    "not_integer",
    "too_small",
    "too_large",
    "base_exceeds_cap",
    "invalid_value",
    "freed",
    "too_many",
];

/// What is wrong: its code is its index in [`ERROR_KINDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// NaN or ±∞.
    NotFinite = 0,
    /// Below zero.
    Negative = 1,
    /// A count with a fraction.
    NotInteger = 2,
    /// Below the smallest accepted value (the bound is in the detail).
    TooSmall = 3,
    /// Past the largest accepted value (the bound is in the detail).
    TooLarge = 4,
    /// `baseDelayMs` above `maxDelayMs` (the detail holds both).
    BaseExceedsCap = 5,
    /// Not one of the codes.
    InvalidValue = 6,
    /// A handle that is not live.
    Freed = 7,
    /// Too many live engines or calls.
    TooMany = 8,
}

/// Bits of `safetyOf`'s first argument: what a tool says about itself, and whether the app trusts it.
pub const TOOL_TRUSTED: u32 = 1;
/// `annotations.readOnlyHint` is a boolean.
pub const TOOL_READ_ONLY_GIVEN: u32 = 2;
/// `annotations.readOnlyHint` is `true`.
pub const TOOL_READ_ONLY: u32 = 4;
/// `annotations.destructiveHint` is a boolean.
pub const TOOL_DESTRUCTIVE_GIVEN: u32 = 8;
/// `annotations.destructiveHint` is `true`.
pub const TOOL_DESTRUCTIVE: u32 = 16;
/// `annotations.idempotentHint` is a boolean.
pub const TOOL_IDEMPOTENT_GIVEN: u32 = 32;
/// `annotations.idempotentHint` is `true`.
pub const TOOL_IDEMPOTENT: u32 = 64;
/// The input schema declares the operation-id argument.
pub const TOOL_DECLARES_ID: u32 = 128;

fn numbers() -> [(&'static str, u32); 8] {
    [
        ("TOOL_TRUSTED", TOOL_TRUSTED),
        ("TOOL_READ_ONLY_GIVEN", TOOL_READ_ONLY_GIVEN),
        ("TOOL_READ_ONLY", TOOL_READ_ONLY),
        ("TOOL_DESTRUCTIVE_GIVEN", TOOL_DESTRUCTIVE_GIVEN),
        ("TOOL_DESTRUCTIVE", TOOL_DESTRUCTIVE),
        ("TOOL_IDEMPOTENT_GIVEN", TOOL_IDEMPOTENT_GIVEN),
        ("TOOL_IDEMPOTENT", TOOL_IDEMPOTENT),
        ("TOOL_DECLARES_ID", TOOL_DECLARES_ID),
    ]
}

/// Durations both faces read (milliseconds): the longest the core takes, and what an `in_progress` answer suggests.
/// Each ledger look's first code, by `LOOK_MODES` code (JS starts a look without crossing: `Look::new(mode).code()`).
fn look_starts() -> Vec<String> {
    LookMode::ALL.iter().map(|m| Look::new(*m).code().to_string()).collect()
}

fn durations() -> [(&'static str, u64); 2] {
    [
        ("MAX_DURATION_MS", crate::retry::MAX_DURATION_MS),
        ("IN_PROGRESS_POLL_MS", crate::ledger::record::IN_PROGRESS_POLL_MS),
    ]
}

/// The revision setting that means "not known".
pub const UNKNOWN_REVISION: &str = "unknown";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_kinds_name_their_table_entries() {
        let kinds = [
            (ErrorKind::NotFinite, "not_finite"),
            (ErrorKind::Negative, "negative"),
            (ErrorKind::NotInteger, "not_integer"),
            (ErrorKind::TooSmall, "too_small"),
            (ErrorKind::TooLarge, "too_large"),
            (ErrorKind::BaseExceedsCap, "base_exceeds_cap"),
            (ErrorKind::InvalidValue, "invalid_value"),
            (ErrorKind::Freed, "freed"),
            (ErrorKind::TooMany, "too_many"),
        ];
        for (k, name) in kinds {
            assert_eq!(ERROR_KINDS.get(k as usize), Some(&name), "{k:?}");
        }
    }

    #[test]
    fn outcome_inputs_use_each_slot_once() {
        for k in OUTCOME_KINDS {
            let mut used = 0u32;
            for i in k.inputs {
                let bit = match i.slot {
                    InSlot::C(b) => b << 4,
                    s => 1 << s.index(),
                };
                assert_eq!(used & bit, 0, "{}.{} shares a slot", k.name, i.key);
                used |= bit;
                // A flag of c holds a boolean; an optional number sits where a presence bit says it is there.
                assert!(!matches!(i.slot, InSlot::C(_)) || i.read == InRead::Bool, "{}.{}", k.name, i.key);
                if i.read == InRead::Number && i.required.is_none() {
                    assert!(matches!(i.slot, InSlot::B | InSlot::D), "{}.{}", k.name, i.key);
                }
            }
        }
    }
}
