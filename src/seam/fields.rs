//! The fields an error can name — one list, the enum (its code is its declaration order) and their JS names —
//! and the policy table: each value's field, its unit and its out slot.

use super::Out;

/// Declares the fields an error can name: an enum (its code is its declaration order) and their JS names.
macro_rules! error_fields {
    ($($(#[$vm:meta])* $var:ident = $js:literal,)*) => {
        /// A field a failure names: its code is its index in [`BOUNDARY_FIELDS`]. The policy values come
        /// first, in the order of [`POLICY`] (`engineNew`'s arguments), then the two sections.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ErrorField { $($(#[$vm])* $var,)* }
        impl ErrorField {
            /// Every field, by code.
            pub const ALL: &'static [ErrorField] = &[$(ErrorField::$var,)*];
        }
        /// The JS name of each field an error can name, by code.
        pub const BOUNDARY_FIELDS: &[&str] = &[$($js,)*];
    };
}

error_fields! {
    /// `maxAttempts`.
    MaxAttempts = "maxAttempts",
    /// `baseDelayMs`.
    BaseDelayMs = "baseDelayMs",
    /// `maxDelayMs`.
    MaxDelayMs = "maxDelayMs",
    /// `jitter`.
    Jitter = "jitter",
    /// `attemptTimeoutMs`.
    AttemptTimeoutMs = "attemptTimeoutMs",
    /// `totalTimeoutMs`.
    TotalTimeoutMs = "totalTimeoutMs",
    /// `maxRetryAfterMs`.
    MaxRetryAfterMs = "maxRetryAfterMs",
    /// `budget.capacity`.
    BudgetCapacity = "budget.capacity",
    /// `budget.retryCost`.
    BudgetRetryCost = "budget.retryCost",
    /// `budget.timeoutCost`.
    BudgetTimeoutCost = "budget.timeoutCost",
    /// `budget.successRefill`.
    BudgetSuccessRefill = "budget.successRefill",
    /// `budget.refillPerSecond`.
    BudgetRefillPerSecond = "budget.refillPerSecond",
    /// `breaker.consecutiveFailures`.
    BreakerConsecutiveFailures = "breaker.consecutiveFailures",
    /// `breaker.failureRatio`.
    BreakerFailureRatio = "breaker.failureRatio",
    /// `breaker.minimumCalls`.
    BreakerMinimumCalls = "breaker.minimumCalls",
    /// `breaker.windowMs`.
    BreakerWindowMs = "breaker.windowMs",
    /// `breaker.openMs`.
    BreakerOpenMs = "breaker.openMs",
    /// The `budget` section.
    Budget = "budget",
    /// The `breaker` section.
    Breaker = "breaker",
    /// No field.
    None = "",
    /// The engine or call a method was called on.
    This = "this",
    /// The call argument.
    Call = "call",
    /// `nowMs`.
    NowMs = "nowMs",
    /// The outcome's kind, or a code inside it.
    Kind = "kind",
    /// The safety code.
    Safety = "safety",
    /// `outcome.code`.
    OutcomeCode = "outcome.code",
    /// `outcome.status`.
    OutcomeStatus = "outcome.status",
    /// `outcome.retryAfterMs`.
    OutcomeRetryAfterMs = "outcome.retryAfterMs",
    /// `outcome.retryMs`.
    OutcomeRetryMs = "outcome.retryMs",
    /// `outcome.jsonrpcCode`.
    OutcomeJsonrpcCode = "outcome.jsonrpcCode",
    /// `options.seed`.
    Seed = "options.seed",
    /// `options.behindRetryingProxy`.
    BehindRetryingProxy = "options.behindRetryingProxy",
    /// `options.hintMs` of `poll`.
    HintMs = "options.hintMs",
    /// A ledger record's `state` (the server face).
    RecordState = "record.state",
    /// `record.leaseUntilMs`.
    RecordLeaseUntilMs = "record.leaseUntilMs",
    /// `record.createdMs`.
    RecordCreatedMs = "record.createdMs",
    /// `record.expiresMs`.
    RecordExpiresMs = "record.expiresMs",
    /// `record.version`.
    RecordVersion = "record.version",
    /// The ledger's `ttlMs`.
    TtlMs = "ttlMs",
    /// The ledger's `leaseMs`.
    LeaseMs = "leaseMs",
    /// The state a finish records.
    State = "state",
    /// The status tool's answer (`statusAnswer`).
    Answer = "answer",
    /// The decision a status answer may replace (`statusAnswer`).
    Before = "before",
    /// A task's status (`taskEnd`).
    TaskStatus = "task.status",
    /// A task result's cause (`taskResultEnd`).
    TaskResultCause = "step.classification.cause",
    /// The retry a task result was given (`taskResultEnd`).
    TaskResultReason = "step.decision.reason",
    /// `options.subrequests` of `admit` and `poll`: the outgoing requests the call may still make.
    Subrequests = "options.subrequests",
    /// A shared breaker snapshot's `state` (`adoptShared`).
    SnapshotState = "snapshot.state",
    /// A shared breaker snapshot's `sinceMs`.
    SnapshotSinceMs = "snapshot.sinceMs",
    /// A shared snapshot's `budgetTokens`.
    SnapshotBudgetTokens = "snapshot.budgetTokens",
    /// A shared snapshot's `failures` (in a row, while closed).
    SnapshotFailures = "snapshot.failures",
    /// `hedgeAfterMs` of `engineHedging`.
    HedgeAfterMs = "hedgeAfterMs",
    /// `maxHedges` of `engineHedging`.
    MaxHedges = "maxHedges",
    /// A ledger look's code (`ledgerLook`).
    Look = "look",
    /// A ledger look's event, or what it carries.
    LookEvent = "event",
    /// What happened, fed to the call driver (`next`), or what it carries.
    Happened = "happened",
    /// `options.deadlineMs` of `statusNext`: when the look must be over.
    DeadlineMs = "options.deadlineMs",
    /// A hold's state (`ledgerHold`: the numbers of its hold slots).
    Hold = "hold",
    /// The monotonic clock's reading (`ledgerHold`).
    MonoMs = "monoMs",
    /// A call's end as it stands (`callFinish`: `end.status`, `end.reason`).
    End = "end",
    /// What the face knows as a call ends (`callFinish`: `facts.keyed`, `facts.mayResolve`, `facts.cancelled`).
    Facts = "facts",
    /// A ledger write's code (`ledgerWrite`).
    Write = "write",
    /// A ledger write's checks (`ledgerWriteStart`: `authorize`, `principal`, `validate`, `transaction`).
    WriteChecks = "checks",
}

/// How a policy value given in JS becomes the core's integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A count: a whole number.
    Count,
    /// A duration in ms (a fraction is dropped).
    Ms,
    /// Counted in thousandths by the core (budget tokens, the failure ratio): × 1000, rounded.
    Thousandths,
    /// A `JITTERS` name, crossing as its code.
    Jitter,
}

impl Unit {
    /// Whether a JS value must be a whole number.
    pub const fn whole(self) -> bool {
        matches!(self, Unit::Count)
    }
    /// What a JS value is multiplied by to become the core's integer (and the core's divided by for JS).
    pub const fn scale(self) -> f64 {
        match self {
            Unit::Thousandths => 1000.0,
            _ => 1.0,
        }
    }
}

/// The policy values `engineNew` takes, in argument order (`BOUNDARY_FIELDS` 0–15): the field and its unit,
/// and the out slot `enginePolicy` answers it in.
pub const POLICY: [(ErrorField, Unit, Out); 17] = [
    (ErrorField::MaxAttempts, Unit::Count, Out::MaxAttempts),
    (ErrorField::BaseDelayMs, Unit::Ms, Out::BaseDelayMs),
    (ErrorField::MaxDelayMs, Unit::Ms, Out::MaxDelayMs),
    (ErrorField::Jitter, Unit::Jitter, Out::Jitter),
    (ErrorField::AttemptTimeoutMs, Unit::Ms, Out::AttemptTimeoutMs),
    (ErrorField::TotalTimeoutMs, Unit::Ms, Out::TotalTimeoutMs),
    (ErrorField::MaxRetryAfterMs, Unit::Ms, Out::MaxRetryAfterMs),
    (ErrorField::BudgetCapacity, Unit::Thousandths, Out::BudgetCapacity),
    (ErrorField::BudgetRetryCost, Unit::Thousandths, Out::BudgetRetryCost),
    (ErrorField::BudgetTimeoutCost, Unit::Thousandths, Out::BudgetTimeoutCost),
    (ErrorField::BudgetSuccessRefill, Unit::Thousandths, Out::BudgetSuccessRefill),
    (ErrorField::BudgetRefillPerSecond, Unit::Thousandths, Out::BudgetRefillPerSecond),
    (ErrorField::BreakerConsecutiveFailures, Unit::Count, Out::BreakerConsecutiveFailures),
    (ErrorField::BreakerFailureRatio, Unit::Thousandths, Out::BreakerFailureRatio),
    (ErrorField::BreakerMinimumCalls, Unit::Count, Out::BreakerMinimumCalls),
    (ErrorField::BreakerWindowMs, Unit::Ms, Out::BreakerWindowMs),
    (ErrorField::BreakerOpenMs, Unit::Ms, Out::BreakerOpenMs),
];

/// How many of [`BOUNDARY_FIELDS`] are policy values (`engineNew` takes one number for each).
pub const POLICY_VALUES: usize = POLICY.len();
