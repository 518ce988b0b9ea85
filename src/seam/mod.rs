//! The seam between the wasm exports and JS, described once: where each answer lies, how JS reads it, which
//! field an error names, and how a policy value is read.
//!
//! **Answers cross in out slots.** An export returns one number — a failure (`< 0`: a kind and a field,
//! [`ErrorField`], [`crate::vocab::ERROR_KINDS`]) or a small result (`≥ 0`) — and writes the rest of its
//! answer into its face's **out slots**: an array of `f64`s in the module's own memory that JS reads in place
//! through a `Float64Array`. Each slot is a whole number, not a bit field, so no field can outgrow its bits
//! as the vocabularies grow; an answer of any size costs one crossing; an absent value is `NaN`. The slots of
//! the client face are [`Out`], the server's [`LedgerOut`].
//!
//! **JS reads them through generated code.** `cargo run --example names` renders this module as
//! `pkg-template/generated/seam.js`: each slot's index (`O_STOP`, `L_STATE`, …) and, for each [`Shape`], a
//! reader function (`readStop(o)`, `readClassification(o)`, `readMade(o, fingerprint)`, …) that builds the
//! object JS hands out from the slots, each code looked up in its generated name table. Neither side spells
//! a position or a scale: the binding writes through these enums, JS reads through the rendered readers, and
//! `tests/names.rs` fails when the committed file differs from what this module renders.
//!
//! Pure: no binding, no clock, no randomness (`tests/architecture.rs`).

/// How JS reads a slot's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// The number as it is.
    Number,
    /// The number, or `undefined` when it is `NaN` (absent).
    Maybe,
    /// `true` when it is 1.
    Flag,
    /// A code: the entry of the named table of `generated/names.js` (`NaN` reads as `undefined`).
    Code(&'static str),
    /// A breaker transition code: `{ from, to }`, or `undefined` for 0 (none).
    Transition,
}

/// Declares a face's out slots: an enum (the slot's index is its declaration order) and, for each slot, its
/// JS name and how JS reads it.
macro_rules! slots {
    ($(#[$m:meta])* $name:ident, $prefix:literal { $($(#[$vm:meta])* $var:ident = $js:literal, $read:expr;)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vm])* $var,)* }
        impl $name {
            /// Every slot, by index.
            pub const ALL: &'static [$name] = &[$($name::$var,)*];
            /// Each slot's JS name and how JS reads it, by index.
            pub const READS: &'static [(&'static str, Read)] = &[$(($js, $read),)*];
            /// Each slot's Rust name, by index (its generated index constant is `PREFIX_NAME`).
            pub const NAMES: &'static [&'static str] = &[$(stringify!($var),)*];
            /// The prefix of the slots' generated index constants.
            pub const PREFIX: &'static str = $prefix;
        }
    };
}

slots! {
    /// The client face's out slots (`src/wasm/client.rs`, `src/wasm/hedge.rs`).
    Out, "O" {
        /// A decision's stop: its `STATUSES` code; `NaN` for a retry.
        Stop = "stop", Read::Code("STATUSES");
        /// A decision's `REASONS` code.
        Reason = "reason", Read::Code("REASONS");
        /// A retry's `RECOVERS` code; `NaN`: none.
        Recover = "recover", Read::Code("RECOVERS");
        /// A retry's delay (ms).
        DelayMs = "delayMs", Read::Number;
        /// A classification's `VERDICTS` code.
        Verdict = "verdict", Read::Code("VERDICTS");
        /// A classification's `DELIVERIES` code.
        Delivery = "delivery", Read::Code("DELIVERIES");
        /// A classification's `CAUSES` code.
        Cause = "cause", Read::Code("CAUSES");
        /// The recover action the cause implies (`RECOVERS` code; `NaN`: none).
        CauseRecover = "causeRecover", Read::Code("RECOVERS");
        /// A classification's `Retry-After` (ms), or `NaN`.
        RetryAfterMs = "retryAfterMs", Read::Maybe;
        /// A step's or an admission's breaker transition (`BREAKER_TRANSITIONS` code; 0: none).
        Breaker = "breaker", Read::Transition;
        /// An admission: 1 when admitted (then `attempt` and `timeoutMs`), 0 when refused (then `stop`, `reason`).
        Admitted = "admitted", Read::Flag;
        /// An admitted attempt's number.
        Attempt = "attempt", Read::Number;
        /// An admitted attempt's (or hedge's) timeout (ms).
        TimeoutMs = "timeoutMs", Read::Number;
        /// The call driver's answer: its `DRIVE_NEXTS` code.
        Next = "next", Read::Code("DRIVE_NEXTS");
        /// The call driver's wait: 1 when the engine held the attempt (breaker, budget), 0 for a backoff.
        Held = "held", Read::Flag;
        /// The call driver's answer carries the step an attempt's outcome led to (then `verdict`, `delivery`,
        /// `cause`, `causeRecover`, `retryAfterMs`, `breaker`): 1, else 0.
        Stepped = "stepped", Read::Flag;
        /// The call driver's look at a followed task: the task's status as last seen (`TASK_STATUSES` code).
        TaskStatus = "taskStatus", Read::Code("TASK_STATUSES");
        /// The status driver's answer: its `RESOLVE_NEXTS` code.
        ResolveNext = "resolveNext", Read::Code("RESOLVE_NEXTS");
        /// A call's end: what it says to do next, its `FINISH_NEXTS` code (the status and reason in `stop`,
        /// `reason`).
        FinishNext = "finishNext", Read::Code("FINISH_NEXTS");
        /// A call's end: 1 when the call gave up (its end is not the tool's own answer), else 0.
        GaveUp = "gaveUp", Read::Flag;
        /// A hedge refused: its `HEDGE_REFUSALS` code; `NaN`: admitted.
        Refusal = "refusal", Read::Code("HEDGE_REFUSALS");
        /// Hedges sent so far.
        HedgesSent = "sent", Read::Number;
        /// Hedges whose answer won.
        HedgesWon = "won", Read::Number;
        /// Requests in flight (first sends and hedges).
        RequestsInFlight = "requestsInFlight", Read::Number;
        /// Hedges in flight.
        HedgesInFlight = "hedgesInFlight", Read::Number;
        /// `hedgeAfterMs` when hedging is on, else `NaN`.
        HedgeAfterMs = "hedgeAfterMs", Read::Maybe;
        /// `maxHedges` when hedging is on, else `NaN`.
        MaxHedges = "maxHedges", Read::Maybe;
        /// The breaker's state (`BREAKER_STATES` code); `NaN` without a breaker.
        State = "state", Read::Code("BREAKER_STATES");
        /// When the breaker's state began (ms); `NaN` without a breaker.
        SinceMs = "sinceMs", Read::Maybe;
        /// The breaker's failures in a row while closed; `NaN` without a breaker.
        Failures = "failures", Read::Maybe;
        /// The retry budget's tokens; `NaN` without a budget.
        BudgetTokens = "budgetTokens", Read::Maybe;
        /// Policy: `maxAttempts`.
        MaxAttempts = "maxAttempts", Read::Number;
        /// Policy: `baseDelayMs`.
        BaseDelayMs = "baseDelayMs", Read::Number;
        /// Policy: `maxDelayMs`.
        MaxDelayMs = "maxDelayMs", Read::Number;
        /// Policy: `jitter` (`JITTERS` code).
        Jitter = "jitter", Read::Code("JITTERS");
        /// Policy: `attemptTimeoutMs`.
        AttemptTimeoutMs = "attemptTimeoutMs", Read::Number;
        /// Policy: `totalTimeoutMs`.
        TotalTimeoutMs = "totalTimeoutMs", Read::Number;
        /// Policy: `maxRetryAfterMs`.
        MaxRetryAfterMs = "maxRetryAfterMs", Read::Number;
        /// Policy: 1 when the retry budget is on.
        BudgetOn = "budgetOn", Read::Flag;
        /// Policy: `budget.capacity` (tokens).
        BudgetCapacity = "capacity", Read::Number;
        /// Policy: `budget.retryCost` (tokens).
        BudgetRetryCost = "retryCost", Read::Number;
        /// Policy: `budget.timeoutCost` (tokens).
        BudgetTimeoutCost = "timeoutCost", Read::Number;
        /// Policy: `budget.successRefill` (tokens).
        BudgetSuccessRefill = "successRefill", Read::Number;
        /// Policy: `budget.refillPerSecond` (tokens a second).
        BudgetRefillPerSecond = "refillPerSecond", Read::Number;
        /// Policy: 1 when the circuit breaker is on.
        BreakerOn = "breakerOn", Read::Flag;
        /// Policy: `breaker.consecutiveFailures`.
        BreakerConsecutiveFailures = "consecutiveFailures", Read::Number;
        /// Policy: `breaker.failureRatio` (0–1).
        BreakerFailureRatio = "failureRatio", Read::Number;
        /// Policy: `breaker.minimumCalls`.
        BreakerMinimumCalls = "minimumCalls", Read::Number;
        /// Policy: `breaker.windowMs`.
        BreakerWindowMs = "windowMs", Read::Number;
        /// Policy: `breaker.openMs`.
        BreakerOpenMs = "openMs", Read::Number;
    }
}

slots! {
    /// The server face's out slots (`src/wasm/ledger.rs`): a rule's answer and the record it made.
    LedgerOut, "L" {
        /// The answer's code: an `ADMISSIONS`, `LOOKUPS` or `RELEASE_REFUSALS` code, or a made record's
        /// `RECORD_STATES` code (each export says which).
        Code = "code", Read::Number;
        /// How long to wait before asking again (ms) where the answer has one; else 0.
        RetryAfterMs = "retryAfterMs", Read::Number;
        /// A made record's `state`.
        State = "state", Read::Code("RECORD_STATES");
        /// A made record's `leaseUntilMs`.
        LeaseUntilMs = "leaseUntilMs", Read::Number;
        /// A made record's `createdMs`.
        CreatedMs = "createdMs", Read::Number;
        /// A made record's `expiresMs`.
        ExpiresMs = "expiresMs", Read::Number;
        /// A made record's `version`.
        Version = "version", Read::Number;
        /// A look's next code (`ledgerLook`).
        Look = "look", Read::Number;
        /// The version a look's claim or reconciled record replaces (`NaN`: none, an insert).
        Expected = "expected", Read::Maybe;
        /// How a look ended: a `LOOK_ENDS` code (its step `done`); `RetryAfterMs` for `in_progress`, `State` the
        /// replayed outcome for `replay`.
        End = "end", Read::Code("LOOK_ENDS");
        /// A hold's next wake-up on its monotonic clock (`ledgerHold`; `NaN`: none).
        Timeout = "timeout", Read::Maybe;
        /// Where a hold's claim stands: a `CLAIM_STANDINGS` code.
        Standing = "standing", Read::Code("CLAIM_STANDINGS");
        /// What operators hear of a hold now: a `HOLD_TELLS` code (`NaN`: nothing).
        Tell = "tell", Read::Code("HOLD_TELLS");
        /// What was left of the lease when a late renewal answered (a `late` tell).
        LeftMs = "leftMs", Read::Number;
        /// A hold's claim as last written: its version.
        ClaimVersion = "claimVersion", Read::Number;
        /// A hold's claim as last written: its lease's end.
        ClaimLeaseUntilMs = "claimLeaseUntilMs", Read::Number;
        /// A write's next code (`ledgerWrite`).
        Write = "write", Read::Number;
        /// What a write answers (its step `answer`): a `WRITE_ANSWERS` code.
        Answer = "answer", Read::Code("WRITE_ANSWERS");
        /// The reply of the ledger's own a write answers with (`NaN`: none, a result or a replay).
        Reply = "reply", Read::Code("LEDGER_REPLY_NAMES");
        /// Whether the reply shows the cause the face holds (`{why}`).
        Why = "why", Read::Flag;
        /// How a write's answer is counted: a `LEDGER_ANSWER_KINDS` code.
        Kind = "kind", Read::Code("LEDGER_ANSWER_KINDS");
    }
}

/// The numbers a ledger record crosses in, after its state code, in the order of the rule exports'
/// arguments (`src/wasm/ledger.rs`): each key of the JS record and the field a failure names. The fingerprint
/// stays in JS.
pub const RECORD_NUMBERS: [(&str, ErrorField); 4] = [
    ("leaseUntilMs", ErrorField::RecordLeaseUntilMs),
    ("createdMs", ErrorField::RecordCreatedMs),
    ("expiresMs", ErrorField::RecordExpiresMs),
    ("version", ErrorField::RecordVersion),
];

mod fields;
mod render;
mod shapes;

pub use fields::{ErrorField, Unit, BOUNDARY_FIELDS, POLICY, POLICY_VALUES};
pub use render::{render_dts, render_js};
pub use shapes::{Key, Shape, CLIENT_SHAPES, LEDGER_SHAPES};

/// The index of the slot named `js` in `reads`.
pub fn slot_index(reads: &[(&str, Read)], js: &str) -> Option<usize> {
    reads.iter().position(|(n, _)| *n == js)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_key_names_a_slot_of_its_face() {
        for (shapes, reads) in [(CLIENT_SHAPES, Out::READS), (LEDGER_SHAPES, LedgerOut::READS)] {
            for s in shapes {
                for (key, k) in s.keys {
                    if let Key::Slot(js) = k {
                        assert!(slot_index(reads, js).is_some(), "{}.{key} reads a slot {js} that is not one", s.name);
                    }
                }
            }
        }
    }

    #[test]
    fn slots_and_fields_are_one_list_each() {
        assert_eq!(Out::ALL.len(), Out::READS.len());
        for reads in [Out::READS, LedgerOut::READS] {
            for (i, (js, _)) in reads.iter().enumerate() {
                assert_eq!(slot_index(reads, js), Some(i), "{js} names two slots");
            }
        }
        assert_eq!(LedgerOut::ALL.len(), LedgerOut::READS.len());
        for (i, s) in Out::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
        assert_eq!(ErrorField::ALL.len(), BOUNDARY_FIELDS.len());
        for (i, f) in ErrorField::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i, "{f:?}");
        }
        // The policy values are the first fields, in order, and their slots are distinct.
        for (i, (f, _, _)) in POLICY.iter().enumerate() {
            assert_eq!(*f as usize, i, "{f:?}");
        }
        assert_eq!(BOUNDARY_FIELDS.get(POLICY_VALUES), Some(&"budget"));
        let mut slots: Vec<usize> = POLICY.iter().map(|(_, _, s)| *s as usize).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), POLICY_VALUES);
    }
}
