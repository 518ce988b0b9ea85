//! Every name and every number that crosses the wasm boundary, defined once, here and in the core's enums.
//!
//! JavaScript switches on the core's names (statuses, reasons, causes, recover actions, …), reads the
//! `_meta` keys, and reads the answers of the hot path (their slots and readers: [`crate::seam`]). None of it is spelled by hand on the JS
//! side: `cargo run --example names` renders this module as `pkg-template/generated/names.js` (the tables) and
//! `names.d.ts` (closed TypeScript unions), and `scripts/build.sh` and `cargo test` (`tests/names.rs`) fail
//! when the committed files differ from what these definitions render. A rename here without regenerating,
//! or a hand edit of a generated file, goes red.
//!
//! The codes of an enum are its declaration order (each enum's `ALL`, checked in `decide.rs`'s tests).

use core::fmt::Write as _;

pub use crate::seam::{ErrorField, BOUNDARY_FIELDS, POLICY_VALUES};

use crate::ledger::reply::Reply;
use crate::ledger::status_tool;
use crate::ledger::{
    Admission, HoldAnswer, HoldEvent, HoldStep, HoldTell, Look, LookEnd, LookEvent, LookMode, LookStep, Lookup,
    ReconcileVerdict, RecordState, ReleaseRefusal, Standing,
};
use crate::retry::{
    BreakerState, Cause, Delivery, FinalStatus, HappenedKind, HedgeRefusal, Jitter, LedgerStatus, NextKind,
    OperationStatus, Reason, Recover, ResultType, Revision, Safety, Sent, StatusHeard, StatusNextKind, TaskStatus,
    Verdict,
};

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

/// A named list of stable names: JS gets `NAME` (the array, index = code) and TS the union `Type`.
struct List {
    js: &'static str,
    /// Each name is also exported as `PREFIX_NAME` (an import of a renamed one fails at module link).
    prefix: Option<&'static str>,
    ts: &'static str,
    doc: &'static str,
    names: Vec<&'static str>,
}

fn names<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().map(|v| name(*v)).collect()
}

fn lists() -> Vec<List> {
    let list = |js, ts, doc, names| List { js, prefix: None, ts, doc, names };
    let named = |prefix, l: List| List { prefix: Some(prefix), ..l };
    vec![
        named(
            "SAFETY",
            list("SAFETIES", "Safety", "How safe a re-send of a tool is.", names(&Safety::ALL, Safety::as_str)),
        ),
        named(
            "STATUS",
            list("STATUSES", "FinalStatus", "How a call ended.", names(&FinalStatus::ALL, FinalStatus::as_str)),
        ),
        named("REASON", list("REASONS", "Reason", "Why a decision was taken.", names(Reason::ALL, Reason::as_str))),
        named("RECOVER", list("RECOVERS", "Recover", "A recovery step.", names(&Recover::ALL, Recover::as_str))),
        named(
            "VERDICT",
            list("VERDICTS", "Verdict", "What an outcome means for the call.", names(&Verdict::ALL, Verdict::as_str)),
        ),
        named(
            "DELIVERY",
            list(
                "DELIVERIES",
                "Delivery",
                "Whether the server acted on a request.",
                names(&Delivery::ALL, Delivery::as_str),
            ),
        ),
        named(
            "CAUSE",
            list(
                "CAUSES",
                "Cause",
                "The row of the classification table that applied.",
                names(Cause::ALL, Cause::as_str),
            ),
        ),
        named(
            "RESULT_TYPE",
            list("RESULT_TYPES", "ResultType", "A result's `resultType`.", names(&ResultType::ALL, ResultType::as_str)),
        ),
        named("SENT", list("SENT", "Sent", "Whether a failed request may have left.", names(&Sent::ALL, Sent::as_str))),
        named(
            "LEDGER",
            list(
                "LEDGER_STATUSES",
                "LedgerStatus",
                "What a server's ledger answers instead of running the tool.",
                names(&LedgerStatus::ALL, LedgerStatus::as_str),
            ),
        ),
        named(
            "RECORD",
            list(
                "RECORD_STATES",
                "RecordState",
                "A ledger record's state.",
                names(&RecordState::ALL, RecordState::as_str),
            ),
        ),
        named(
            "LOOKUP",
            list("LOOKUPS", "LedgerLookupStatus", "What a ledger status lookup finds.", Lookup::NAMES.to_vec()),
        ),
        list("ADMISSIONS", "LedgerAdmissionAction", "What the ledger does with a write.", Admission::NAMES.to_vec()),
        named(
            "LOOK_MODE",
            list("LOOK_MODES", "LedgerLookMode", "What a ledger look is for.", names(&LookMode::ALL, LookMode::as_str)),
        ),
        named(
            "LOOK_EVENT",
            list(
                "LOOK_EVENTS",
                "LedgerLookEvent",
                "What happened, fed back to a ledger look.",
                LookEvent::NAMES.to_vec(),
            ),
        ),
        named(
            "LOOK_VERDICT",
            list(
                "LOOK_VERDICTS",
                "LedgerLookVerdict",
                "The reconcile hook's verdict, to a ledger look.",
                ReconcileVerdict::NAMES.to_vec(),
            ),
        ),
        named(
            "LOOK_STEP",
            list(
                "LOOK_STEPS",
                "LedgerLookStep",
                "What a ledger look asks the face to do next.",
                LookStep::NAMES.to_vec(),
            ),
        ),
        named("LOOK_END", list("LOOK_ENDS", "LedgerLookEnd", "How a ledger look ended.", LookEnd::NAMES.to_vec())),
        named(
            "HOLD_EVENT",
            list(
                "HOLD_EVENTS",
                "LedgerHoldEvent",
                "What happened, fed back to a claim's hold.",
                HoldEvent::NAMES.to_vec(),
            ),
        ),
        named(
            "HOLD_ANSWER",
            list(
                "HOLD_ANSWERS",
                "LedgerHoldAnswer",
                "How a write a hold asked for answered.",
                names(&HoldAnswer::ALL, HoldAnswer::as_str),
            ),
        ),
        named(
            "HOLD_STEP",
            list(
                "HOLD_STEPS",
                "LedgerHoldStep",
                "What a claim's hold asks the face to do next.",
                HoldStep::NAMES.to_vec(),
            ),
        ),
        named(
            "CLAIM_STANDING",
            list("CLAIM_STANDINGS", "ClaimStanding", "Where a held claim stands.", Standing::NAMES.to_vec()),
        ),
        named(
            "HOLD_TELL",
            list("HOLD_TELLS", "LedgerHoldTell", "What operators hear of a claim's hold.", HoldTell::NAMES.to_vec()),
        ),
        list(
            "RELEASE_REFUSALS",
            "LedgerReleaseRefusalCode",
            "Why the ledger's rules refuse a release.",
            ReleaseRefusal::NAMES.to_vec(),
        ),
        named(
            "OPERATION",
            list(
                "OPERATION_STATUSES",
                "OperationStatus",
                "What the status tool answers about an operation.",
                names(&OperationStatus::ALL, OperationStatus::as_str),
            ),
        ),
        named(
            "TASK",
            list("TASK_STATUSES", "TaskStatus", "A task's status.", names(&TaskStatus::ALL, TaskStatus::as_str)),
        ),
        list("REVISIONS", "Revision", "An MCP revision this package knows.", names(&Revision::ALL, Revision::as_str)),
        list(
            "PARAM_HEADER_REVISIONS",
            "ParamHeaderRevision",
            "The revisions whose `tools/call` carries the `Mcp-Param-*` headers.",
            Revision::ALL.iter().filter(|r| r.has_param_headers()).map(|r| r.as_str()).collect(),
        ),
        list(
            "LIST_TTL_REVISIONS",
            "ListTtlRevision",
            "The revisions whose list results carry `ttlMs` (a list without it is stale at once).",
            Revision::ALL.iter().filter(|r| r.caches_lists()).map(|r| r.as_str()).collect(),
        ),
        list("JITTERS", "Jitter", "A jitter strategy.", names(&Jitter::ALL, Jitter::as_str)),
        list("ERROR_KINDS", "BoundaryErrorKind", "What a numbers-only export refuses.", ERROR_KINDS.to_vec()),
        list(
            "BOUNDARY_FIELDS",
            "BoundaryField",
            "A field a numbers-only export's error names.",
            BOUNDARY_FIELDS.to_vec(),
        ),
        named("ACTION", list("ACTIONS", "Action", "What a decision does.", ACTIONS.to_vec())),
        list(
            "OUTCOME_KINDS",
            "OutcomeKind",
            "An attempt outcome's `kind`.",
            OUTCOME_KINDS.iter().map(|k| k.name).collect(),
        ),
        named(
            "BREAKER",
            list(
                "BREAKER_STATES",
                "BreakerStateName",
                "A breaker state.",
                vec![
                    BreakerState::Closed.as_str(),
                    BreakerState::Open { until_ms: 0 }.as_str(),
                    BreakerState::HalfOpen { probe_ms: 0 }.as_str(),
                ],
            ),
        ),
        named(
            "NEXT",
            list(
                "DRIVE_NEXTS",
                "DriveNext",
                "What the call driver says to do next (`next`: the `next` slot).",
                names(&NextKind::ALL, NextKind::as_str),
            ),
        ),
        named(
            "HAPPENED",
            list(
                "HAPPENINGS",
                "Happening",
                "What happened, fed to the call driver (`next`).",
                names(&HappenedKind::ALL, HappenedKind::as_str),
            ),
        ),
        named(
            "RESOLVE",
            list(
                "RESOLVE_NEXTS",
                "ResolveNext",
                "What the status driver says to do next (`statusNext`: the `resolveNext` slot).",
                names(&StatusNextKind::ALL, StatusNextKind::as_str),
            ),
        ),
        named(
            "HEARD",
            list(
                "STATUS_HEARD",
                "StatusHeard",
                "What happened, fed to the status driver (`statusNext`).",
                names(&StatusHeard::ALL, StatusHeard::as_str),
            ),
        ),
        list(
            "HEDGE_REFUSALS",
            "HedgeRefusalName",
            "Why the engine refused a hedge (`hedge`: the `refusal` slot).",
            names(&HedgeRefusal::ALL, HedgeRefusal::as_str),
        ),
    ]
}

fn quoted(s: &str) -> String {
    format!("'{s}'")
}

const HEADER: &str = "Generated by `cargo run --example names` from src/vocab.rs and the core's enums. Do not edit:\n\
// scripts/build.sh and `cargo test` (tests/names.rs) fail when this file differs from what they render.\n";

fn meta_keys() -> [(&'static str, &'static str); 3] {
    [
        ("LEDGER_META_KEY", LEDGER_META_KEY),
        ("ATTEMPT_META_KEY", ATTEMPT_META_KEY),
        ("OUTCOME_META_KEY", OUTCOME_META_KEY),
    ]
}

/// `pkg-template/generated/names.js`. Each table is marked `/* @__PURE__ */`: a bundler drops the ones an app never
/// reads (a browser client bundles none of the ledger's).
pub fn render_js() -> String {
    let mut s = format!("// {HEADER}\n");
    for (name, value) in meta_keys() {
        let _ = writeln!(s, "export const {name} = {};", quoted(value));
    }
    let _ = writeln!(s, "export const UNKNOWN_REVISION = {};", quoted(UNKNOWN_REVISION));
    let _ = writeln!(s, "export const POLICY_VALUES = {POLICY_VALUES};");
    for (name, n) in numbers() {
        let _ = writeln!(s, "export const {name} = {n};");
    }
    for (name, n) in durations() {
        let _ = writeln!(s, "export const {name} = {n};");
    }
    let _ = writeln!(
        s,
        "/** The status tool's default name. */\nexport const STATUS_TOOL_NAME = {};",
        quoted(status_tool::NAME)
    );
    let _ = writeln!(
        s,
        "/** The status tool's definition (both faces serve this one). */\nexport const STATUS_TOOL = /* @__PURE__ */ Object.freeze({{ \"name\": {:?}, \"description\": {:?}, \"inputSchema\": {}, \"annotations\": {} }});",
        status_tool::NAME,
        status_tool::DESCRIPTION,
        status_tool::INPUT_SCHEMA,
        status_tool::ANNOTATIONS
    );
    let words: Vec<String> = status_tool::words_templates().iter().map(|(s, w)| format!("{s:?}: {w:?}")).collect();
    let _ = writeln!(
        s,
        "/** What the model reads for each status-tool answer: `{{id}}` the operation id, `{{seconds}}` the wait. */\nexport const STATUS_WORDS = /* @__PURE__ */ Object.freeze({{ {} }});",
        words.join(", ")
    );
    let replies: Vec<String> = Reply::ALL
        .iter()
        .map(|r| {
            let reason = r.reason().map_or_else(|| "undefined".to_owned(), |x| format!("{x:?}"));
            format!("{:?}: Object.freeze([{:?}, {reason}, {:?}])", r.as_str(), r.status(), r.template())
        })
        .collect();
    let _ = writeln!(
        s,
        "/** The ledger's own replies (src/ledger/reply.rs): `[status, reason, words]` by name; in the words `{{arg}}` is the\n * operation-id argument, `{{id}}` the operation id, `{{why}}` a cause (` (…)` or nothing), `{{problem}}` the validator's. */\nexport const LEDGER_REPLIES = /* @__PURE__ */ Object.freeze({{ {} }});",
        replies.join(", ")
    );
    for t in crate::telemetry_names::TELEMETRY_NAMES.iter().filter(|t| t.faces.js()) {
        let _ = writeln!(
            s,
            "/** Telemetry: {} */\nexport const TEL_{} = {:?};",
            t.what.replace("*/", "* /"),
            t.constant,
            t.name
        );
    }
    let _ = writeln!(
        s,
        "/** Each ledger look's first code, by `LOOK_MODES` code. */\nexport const LOOK_STARTS = /* @__PURE__ */ Object.freeze([{}]);",
        look_starts().join(", ")
    );
    s.push('\n');
    for l in lists() {
        let items: Vec<String> = l.names.iter().map(|n| quoted(n)).collect();
        let _ = writeln!(
            s,
            "/** {} Index = code. */\nexport const {} = /* @__PURE__ */ Object.freeze([{}]);",
            l.doc,
            l.js,
            items.join(", ")
        );
        if let Some(prefix) = l.prefix {
            for n in &l.names {
                let _ = writeln!(s, "export const {prefix}_{} = {};", n.to_uppercase(), quoted(n));
            }
        }
    }
    let opt = |w: Option<&str>| w.map_or_else(|| "undefined".to_owned(), |w| format!("{w:?}"));
    for (js, doc, f) in [
        (
            "STATUS_TOOL_ANSWERED",
            "Whether the tool itself answered, by status: the outcome is its result, with no error of the call's.",
            FinalStatus::tool_answered as fn(FinalStatus) -> bool,
        ),
        (
            "STATUS_CARRIES_RESULT",
            "Whether the outcome carries the server's answer (the tool's result, or a pending call's task), by status.",
            FinalStatus::carries_result,
        ),
    ] {
        let entries: Vec<String> = FinalStatus::ALL.iter().map(|st| format!("{:?}: {}", st.as_str(), f(*st))).collect();
        let _ = writeln!(
            s,
            "/** {doc} */\nexport const {js} = /* @__PURE__ */ Object.freeze({{ {} }});",
            entries.join(", ")
        );
    }
    let words: Vec<String> = Reason::ALL.iter().map(|r| format!("{:?}", r.words())).collect();
    let next: Vec<String> = Reason::ALL.iter().map(|r| opt(r.next_step())).collect();
    let _ = writeln!(
        s,
        "/** What the model is told happened, by reason code. */\nexport const REASON_WORDS = /* @__PURE__ */ Object.freeze([{}]);",
        words.join(", ")
    );
    let _ = writeln!(
        s,
        "/** What the model is told to do after a `failed` stop, by reason code (undefined: \"It is safe to call it again later.\"). */\nexport const REASON_NEXT_STEPS = /* @__PURE__ */ Object.freeze([{}]);",
        next.join(", ")
    );
    let cause_tables: [(&str, &str, Vec<String>); 3] = [
        (
            "CAUSE_WORDS",
            "What the model is told when the row says more than the reason",
            Cause::ALL.iter().map(|c| opt(c.words())).collect(),
        ),
        (
            "CAUSE_NEXT_FAILED",
            "What to do next after a `failed` stop, when the row decides it",
            Cause::ALL.iter().map(|c| opt(c.next_step(false))).collect(),
        ),
        (
            "CAUSE_NEXT_UNKNOWN",
            "What to do next after an `unknown` stop, when the row decides it",
            Cause::ALL.iter().map(|c| opt(c.next_step(true))).collect(),
        ),
    ];
    for (name, doc, items) in cause_tables {
        let _ = writeln!(
            s,
            "/** {doc}, by cause code. */\nexport const {name} = /* @__PURE__ */ Object.freeze([{}]);",
            items.join(", ")
        );
    }
    let mut costs = vec![format!("'': {}", Recover::attempt_subrequests(None))];
    costs.extend(Recover::ALL.iter().map(|&r| format!("{}: {}", r.as_str(), Recover::attempt_subrequests(Some(r)))));
    let _ = writeln!(
        s,
        "/** What an attempt costs in outgoing requests, by the recover step it follows ('' for none; `Recover::attempt_subrequests`). */\nexport const ATTEMPT_SUBREQUESTS = /* @__PURE__ */ Object.freeze({{ {} }});",
        costs.join(", ")
    );
    let cause_recovers: Vec<String> =
        Cause::ALL.iter().map(|c| c.recover().map_or_else(|| "undefined".to_owned(), |r| quoted(r.as_str()))).collect();
    let _ = writeln!(
        s,
        "/** The recover action each cause implies (by cause code). */\nexport const CAUSE_RECOVERS = /* @__PURE__ */ Object.freeze([{}]);",
        cause_recovers.join(", ")
    );
    s.push_str(
        "\n/** Outcome kind codes, and each kind's keys (besides `kind`) in the order of the slots a, b, c, d. */\n",
    );
    for (code, k) in OUTCOME_KINDS.iter().enumerate() {
        let _ = writeln!(s, "export const KIND_{} = {code};", k.name.to_uppercase());
    }
    let kinds: Vec<String> = OUTCOME_KINDS
        .iter()
        .map(|k| {
            let f: Vec<String> = k.inputs.iter().map(|i| quoted(i.key)).collect();
            format!("Object.freeze([{}])", f.join(", "))
        })
        .collect();
    let _ = writeln!(
        s,
        "export const C_HAD_SESSION = {C_HAD_SESSION};\nexport const C_B_PRESENT = {C_B_PRESENT};\nexport const C_D_PRESENT = {C_D_PRESENT};\nexport const C_MISMATCH_CONFIRMED = {C_MISMATCH_CONFIRMED};"
    );
    let _ = writeln!(
        s,
        "/** The codes whose mismatch the client checks (`mismatchConfirmed`): -32020 header mismatch, -32022 unsupported protocol version. */\nexport const CODE_HEADER_MISMATCH = {};\nexport const CODE_UNSUPPORTED_PROTOCOL_VERSION = {};",
        crate::retry::HEADER_MISMATCH_CODE,
        crate::retry::UNSUPPORTED_PROTOCOL_VERSION_CODE
    );
    let _ = writeln!(s, "export const OUTCOME_FIELDS = /* @__PURE__ */ Object.freeze([{}]);", kinds.join(", "));
    let transitions: Vec<String> = BREAKER_TRANSITIONS
        .iter()
        .map(
            |(from, to)| {
                if from.is_empty() {
                    "undefined".to_owned()
                } else {
                    format!("[{}, {}]", quoted(from), quoted(to))
                }
            },
        )
        .collect();
    let _ = writeln!(
        s,
        "/** Breaker transitions by code: [from, to]. */\nexport const BREAKER_TRANSITIONS = /* @__PURE__ */ Object.freeze([{}]);",
        transitions.join(", ")
    );
    s
}

/// `pkg-template/generated/names.d.ts`.
pub fn render_dts() -> String {
    let mut s = format!("// {HEADER}\n");
    for (name, value) in meta_keys() {
        let _ = writeln!(s, "export declare const {name}: {};", quoted(value));
    }
    let _ = writeln!(s, "export declare const UNKNOWN_REVISION: {};", quoted(UNKNOWN_REVISION));
    let _ = writeln!(s, "export declare const POLICY_VALUES: number;");
    for (name, _) in numbers() {
        let _ = writeln!(s, "export declare const {name}: number;");
    }
    for (name, _) in durations() {
        let _ = writeln!(s, "export declare const {name}: number;");
    }
    let _ = writeln!(s, "export declare const LOOK_STARTS: readonly number[];");
    let _ = writeln!(s, "export declare const STATUS_TOOL_NAME: {};", quoted(status_tool::NAME));
    let _ = writeln!(
        s,
        "export declare const STATUS_TOOL: {{ readonly name: string; readonly description: string; readonly inputSchema: Record<string, unknown>; readonly annotations: Record<string, boolean> }};"
    );
    let _ = writeln!(s, "export declare const STATUS_WORDS: Readonly<Record<OperationStatus, string>>;");
    for t in crate::telemetry_names::TELEMETRY_NAMES.iter().filter(|t| t.faces.js()) {
        let _ = writeln!(s, "export declare const TEL_{}: {};", t.constant, quoted(t.name));
    }
    let kinds: Vec<String> = Reply::ALL.iter().map(|r| quoted(r.as_str())).collect();
    let _ = writeln!(
        s,
        "export type LedgerReply = {};\nexport declare const LEDGER_REPLIES: Readonly<Record<LedgerReply, readonly [status: LedgerStatus, reason: string | undefined, words: string]>>;",
        kinds.join(" | ")
    );
    s.push('\n');
    for l in lists() {
        let items: Vec<String> = l.names.iter().map(|n| quoted(n)).collect();
        let _ = writeln!(s, "/** {} */\nexport type {} = {};", l.doc, l.ts, items.join(" | "));
        let _ = writeln!(s, "export declare const {}: readonly {}[];", l.js, l.ts);
        if let Some(prefix) = l.prefix {
            for n in &l.names {
                let _ = writeln!(s, "export declare const {prefix}_{}: {};", n.to_uppercase(), quoted(n));
            }
        }
    }
    s.push_str("export declare const CAUSE_RECOVERS: readonly (Recover | undefined)[];\n");
    s.push_str("export declare const ATTEMPT_SUBREQUESTS: Readonly<Record<Recover | '', number>>;\n");
    s.push_str("export declare const STATUS_TOOL_ANSWERED: Readonly<Record<FinalStatus, boolean>>;\nexport declare const STATUS_CARRIES_RESULT: Readonly<Record<FinalStatus, boolean>>;\n");
    s.push_str("export declare const REASON_WORDS: readonly string[];\nexport declare const REASON_NEXT_STEPS: readonly (string | undefined)[];\n");
    s.push_str("export declare const CAUSE_WORDS: readonly (string | undefined)[];\nexport declare const CAUSE_NEXT_FAILED: readonly (string | undefined)[];\nexport declare const CAUSE_NEXT_UNKNOWN: readonly (string | undefined)[];\n");
    for k in OUTCOME_KINDS {
        let _ = writeln!(s, "export declare const KIND_{}: number;", k.name.to_uppercase());
    }
    s.push_str("export declare const C_HAD_SESSION: number;\nexport declare const C_B_PRESENT: number;\nexport declare const C_D_PRESENT: number;\nexport declare const C_MISMATCH_CONFIRMED: number;\n");
    s.push_str("export declare const CODE_HEADER_MISMATCH: number;\nexport declare const CODE_UNSUPPORTED_PROTOCOL_VERSION: number;\n");
    s.push_str("export declare const OUTCOME_FIELDS: readonly (readonly string[])[];\n");
    s.push_str("/** How one attempt ended, as the caller observed it. */\nexport type AttemptOutcome =\n");
    for k in OUTCOME_KINDS {
        let mut members = vec![format!("kind: {}", quoted(k.name))];
        for i in k.inputs {
            let opt = if i.required.is_some() { "" } else { "?" };
            members.push(format!("{}{opt}: {}", i.key, i.read.ts()));
        }
        let _ = writeln!(s, "  | {{ {} }}", members.join("; "));
    }
    s.push_str(";\n");
    s.push_str("export declare const BREAKER_TRANSITIONS: readonly (readonly [BreakerStateName, BreakerStateName] | undefined)[];\n");
    s
}

/// `pkg-template/generated/outcome.js`: the outcome encoder, straight-line code from [`OUTCOME_KINDS`]'s inputs
/// (one case a kind; the typed errors from `client/engine-read.js`'s readers).
pub fn render_outcome_js() -> String {
    let mut s = format!("// {HEADER}\n");
    let mut tables: Vec<&str> = OUTCOME_KINDS
        .iter()
        .flat_map(|k| k.inputs.iter())
        .filter_map(|i| if let InRead::Code { js, .. } = i.read { Some(js) } else { None })
        .collect();
    tables.sort_unstable();
    tables.dedup();
    let _ = writeln!(s, "import {{ bool, code, codes, number, required }} from '../client/engine-read.js';");
    let _ = writeln!(s, "import {{ {} }} from './names.js';\n", tables.join(", "));
    for t in &tables {
        let _ = writeln!(s, "const {t}_CODES = codes({t});");
    }
    s.push_str(
        "\n/**\n * Encodes outcome `o` of kind code `k` into `e.a`…`e.d`, written only once every key was read (a getter may\n * encode another outcome meanwhile); when a read throws, `e.at` is the field it was reading. Each key is\n * read once, in slot order.\n */\nexport function encodeInputs(o, k, e) {\n  let a = 0;\n  let b = 0;\n  let c = 0;\n  let d = 0;\n  let v;\n  let at = 'outcome';\n  try {\n    switch (k) {\n",
    );
    let slot = |i: &Input| ["a", "b", "c", "d"].get(i.slot.index() as usize).copied().unwrap_or("a");
    for (code, k) in OUTCOME_KINDS.iter().enumerate() {
        if k.inputs.is_empty() {
            continue;
        }
        let _ = writeln!(s, "      case {code}: // {}", k.name);
        for i in k.inputs {
            let _ = writeln!(s, "        at = 'outcome.{}';", i.key);
            let value = match i.required {
                Some("") => {
                    let table = if let InRead::Code { js, .. } = i.read { js } else { "undefined" };
                    format!("required(o.{}, at, {table})", i.key)
                }
                Some(what) => format!("required(o.{}, at, {})", i.key, quoted(what)),
                None => format!("o.{}", i.key),
            };
            let line = match (i.read, i.slot) {
                (InRead::Bool, InSlot::C(bit)) => format!("if (bool({value}, at)) c |= {bit};"),
                (InRead::Bool, _) => format!("{} = bool({value}, at);", slot(i)),
                (InRead::Code { js, .. }, _) => format!("{} = code({value}, at, {js}_CODES, {js});", slot(i)),
                (InRead::Number, _) if i.required.is_some() => format!("{} = number({value}, at);", slot(i)),
                (InRead::Number, _) => format!(
                    "v = {value};\n        if (v !== undefined) {{\n          {} = number(v, at);\n          c |= {};\n        }}",
                    slot(i),
                    i.slot.bit()
                ),
            };
            let _ = writeln!(s, "        {line}");
        }
        s.push_str("        break;\n");
    }
    s.push_str("      default:\n    }\n  } catch (error) {\n    e.at = at;\n    throw error;\n  }\n  e.a = a;\n  e.b = b;\n  e.c = c;\n  e.d = d;\n}\n");
    s
}

/// Every file `cargo run --example names` writes into `pkg-template/generated/`, with what it should hold: the
/// names ([`render_js`], [`render_dts`]), the outcome encoder ([`render_outcome_js`]) and the seam ([`crate::seam::render_js`], [`crate::seam::render_dts`]).
pub fn generated_files() -> [(&'static str, String); 5] {
    [
        ("names.js", render_js()),
        ("outcome.js", render_outcome_js()),
        ("names.d.ts", render_dts()),
        ("seam.js", crate::seam::render_js()),
        ("seam.d.ts", crate::seam::render_dts()),
    ]
}

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
