//! The server face: an operation ledger that turns a replayed write into a replay of its first outcome.
//!
//! The client can only make a retry *safe to attempt*; the server makes it *harmless*. A write tool takes an
//! `operation_id`; the ledger keys records by `(tenant, action, operation_id)` and remembers the input's
//! [`fingerprint`](fingerprint::fingerprint) (RFC 8785 + SHA-256) and outcome. A replay returns the first
//! outcome, a reused id with other input is a conflict, a concurrent duplicate is in progress, and an
//! outcome nobody knows stays `unknown` (and a claim whose lease ran out stays `pending`) until the app's
//! reconcile hook says otherwise or an operator releases it: an unresolved write never expires into a
//! second execution. The TTL applies to resolved records only.

pub mod canonical;
pub mod fingerprint;
pub mod hold;
pub mod hold_events;
pub mod json;
pub mod look;
pub mod record;
pub mod reply;
pub mod sql;
pub mod status_tool;
pub mod write;

pub use fingerprint::{fingerprint, fingerprint_of_canonical, fingerprint_of_js_json};
pub use hold::{Hold, HoldAnswer, HoldEvent, HoldStep, HoldTell, LostReason, Renewal, Standing, HOLD_WORDS};
pub use json::MAX_TEXT_BYTES;
pub use look::{Look, LookEnd, LookEvent, LookMode, LookPhase, LookStep, ReconcileVerdict, MAX_ROUNDS};
pub use record::{
    admit, admit_matching, claim, finish, give_up_at_ms, keep_alive_ms, lookup, release, renew, valid_operation_id,
    Admission, LedgerConfig, LedgerConfigError, Lookup, Record, RecordState, ReleaseRefusal, OPERATION_STATUSES,
};
pub use write::{Answer, AnswerKind, Begun, Ran, Validation, Write, WriteAnswer, WriteChecks, WriteEvent, WriteStep};
