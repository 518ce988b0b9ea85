//! The client face: everything that decides whether one MCP `tools/call` may be sent again.
//!
//! Reading order: [`decide`](mod@decide) holds the whole policy on one screen; [`classify`](mod@classify) is
//! the table that turns what JS observed into a [`Classification`]; [`engine`](mod@engine) glues the pure
//! decision to the per-server state machines ([`budget`](mod@budget), [`breaker`](mod@breaker)).

pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod classify;
pub mod decide;
pub mod drive;
pub mod drive_events;
pub mod ends;
pub mod engine;
pub mod finish;
mod follow;
pub mod hedge;
pub mod operation_id;
pub mod outcome;
pub mod policy;
pub mod prng;
pub mod resolve;
pub mod safety;

pub use backoff::Jitter;
pub use breaker::{Breaker, BreakerConfig, BreakerSnapshot, BreakerState, SharedState};
pub use budget::{BudgetConfig, RetryBudget};
pub use classify::{
    classify, classify_conservatively, classify_under, Cause, Classification, Delivery, Recover, Verdict,
    HEADER_MISMATCH_CODE, UNSUPPORTED_PROTOCOL_VERSION_CODE,
};
pub use decide::{
    decide, decide_poll, decide_unanswered, hold_spread_ms, hold_wait, CallOptions, CallState, Decision, DecisionInput,
    FinalStatus, Reason, MAX_POLLS, MIN_POLL_MS,
};
pub use drive::{CallDriver, Happened, HappenedKind, Next, NextKind, TaskView};
pub use ends::{decide_list_recovery, decide_status, decide_task_end, decide_task_result, OperationStatus, TaskStatus};
pub use engine::{Admission, Engine, Step};
pub use finish::{CallFinish, FinishFacts, FinishNext, FinishNextKind, Finished, FinishedKind};
pub use follow::TASK_CANCEL_TIMEOUT_MS;
pub use hedge::{
    copy_stands, HedgeAdmission, HedgeConfig, HedgeError, HedgeField, HedgeOptions, HedgeRefusal, HEDGE_SUBREQUESTS,
    MAX_HEDGES,
};
pub use outcome::{AttemptOutcome, LedgerStatus, ResultType, Revision, Sent};
pub use policy::{Policy, PolicyError, PolicyErrorKind, PolicyField, PolicyOptions, MAX_DURATION_MS};
pub use prng::SplitMix64;
pub use resolve::{StatusDriver, StatusHappened, StatusHeard, StatusNext, StatusNextKind};
pub use safety::{safety, Safety, ToolFacts};
