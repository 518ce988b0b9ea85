//! The whole policy on one screen: may this call be sent again, when, and if not, what is its status?
//!
//! ## The gate
//! | delivery \ safety | read_only | idempotent | keyed | unsafe |
//! |---|---|---|---|---|
//! | not_processed | retry | retry | retry | retry |
//! | unknown | retry | retry | retry, same key | **stop: unknown** |
//! | processed | stop | stop | stop | stop |
//!
//! A retry is also stopped by max attempts, the total deadline (now + delay past it), a `Retry-After` that
//! passes the deadline, or a caller abort. **Once any attempt of a call may have been delivered, every stop of
//! that call is [`FinalStatus::Unknown`]** unless a later attempt got an answer from the tool: whatever stopped
//! it, the first attempt may have acted.
//!
//! ## Protections decide *when*, not *whether*
//! An open breaker or an empty retry budget **holds** a retry the gate allows instead of ending the call: the
//! retry waits until the breaker's next probe ([`Reason::BreakerHold`]) or the budget's next token
//! ([`Reason::BudgetHold`], the bucket refilling with time), spread by jitter over [`hold_spread_ms`] so that held
//! calls are never released all at once, and its budget cost is paid when it goes
//! ([`Engine::admit`](super::Engine::admit)). It ends only when the wait would pass the deadline, with the
//! reason that held it ([`Reason::BreakerOpen`], [`Reason::BudgetExhausted`]), or when a budget with no refill
//! with time can never pay. A held call's `max_attempts` counts every probe that failed while it waited: the
//! server was tried for it. A call that has sent nothing still fails fast at an open breaker (`failed`,
//! nothing happened: that is the breaker's job — Polly's, resilience4j's and Envoy's breakers refuse new calls
//! at once).
//!
//! [`decide`] is a pure function of its [`DecisionInput`]: same input (random bits included), same
//! decision. [`Engine`](super::Engine) feeds it from the per-server budget and breaker.

use super::backoff;
use super::classify::{Cause, Classification, Delivery, Recover, Verdict};
use super::policy::Policy;
use super::safety::Safety;

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FinalStatus {
    /// The tool ran and returned a result.
    Succeeded,
    /// The tool ran and said no (`isError: true`): returned to the model as is.
    ToolError,
    /// Definitely not done.
    Failed,
    /// May or may not have happened. Never to be reported as success or as a clean failure.
    Unknown,
    /// In progress: a task, or an in-flight operation with an id to check.
    Pending,
}

impl FinalStatus {
    /// Every status, in declaration order (the order of the `as u8` codes).
    pub const ALL: [FinalStatus; 5] = [
        FinalStatus::Succeeded,
        FinalStatus::ToolError,
        FinalStatus::Failed,
        FinalStatus::Unknown,
        FinalStatus::Pending,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            FinalStatus::Succeeded => "succeeded",
            FinalStatus::ToolError => "tool_error",
            FinalStatus::Failed => "failed",
            FinalStatus::Unknown => "unknown",
            FinalStatus::Pending => "pending",
        }
    }

    /// Whether the tool itself answered (`succeeded`, `tool_error`): the outcome is the tool's result, and
    /// carries no error of the call's. Both faces assemble a call's outcome by it.
    pub const fn tool_answered(self) -> bool {
        matches!(self, FinalStatus::Succeeded | FinalStatus::ToolError)
    }

    /// Whether the outcome carries the answer the server gave: the tool's result, or the task a `pending`
    /// call created.
    pub const fn carries_result(self) -> bool {
        matches!(self, FinalStatus::Succeeded | FinalStatus::ToolError | FinalStatus::Pending)
    }
}

macro_rules! reasons {
    ($($(#[$doc:meta])* $v:ident = $s:literal, $words:literal, $next:expr;)*) => {
        /// Why a decision was taken: one stable name per branch of [`decide`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Reason { $($(#[$doc])* $v,)* }
        impl Reason {
            /// Every reason, in declaration order (the order of the `as u8` codes).
            pub const ALL: &'static [Reason] = &[$(Reason::$v,)*];
            /// The stable snake_case name.
            pub const fn as_str(self) -> &'static str { match self { $(Reason::$v => $s,)* } }
            /// What the model is told happened, as a phrase ("the time allowed for this call ran out").
            pub const fn words(self) -> &'static str { match self { $(Reason::$v => $words,)* } }
            /// What the model is told to do after a `failed` stop for this reason, when it is more than
            /// "It is safe to call it again later."
            pub const fn next_step(self) -> Option<&'static str> { match self { $(Reason::$v => $next,)* } }
        }
    };
}

// Adding a reason: one line here (its name, the words the model reads, the next step after a `failed` stop),
// then use it in `decide`; `cargo run --example names` (scripts/build.sh runs it) renders the JS and TS tables.
reasons! {
    /// The tool answered.
    Succeeded = "succeeded", "it succeeded", None;
    /// The tool answered `isError: true`.
    ToolError = "tool_error", "the tool ran and reported an error", None;
    /// The server created a task.
    TaskPending = "task_pending", "the server started it as a task that is still running", None;
    /// The same request would fail the same way.
    Permanent = "permanent", "the server rejected the request",
        Some("Calling it again with the same arguments will fail the same way; fix the arguments or choose another tool.");
    /// The delivery is unknown and the tool is unsafe: a re-send may act twice.
    UnsafeAfterUnknown = "unsafe_after_unknown",
        "the request may have been acted on before it failed, and this tool is not safe to send twice", None;
    /// `maxAttempts` reached.
    MaxAttempts = "max_attempts", "every attempt failed", None;
    /// The next attempt would start past the total deadline.
    Deadline = "deadline", "the time allowed for this call ran out", None;
    /// The retry budget for this server is empty.
    BudgetExhausted = "budget_exhausted", "the retry budget for this server is spent (it has been failing)", None;
    /// The circuit breaker for this server is open (a call that sent nothing, or a held call whose wait would
    /// pass its deadline).
    BreakerOpen = "breaker_open", "the server has been failing and calls to it are paused", None;
    /// The server asked to wait past the total deadline.
    RetryAfterBeyondDeadline = "retry_after_beyond_deadline", "the server asked to wait longer than the time allowed",
        None;
    /// The caller aborted.
    Aborted = "aborted", "the call was cancelled", Some("It is safe to call it again if it is still wanted.");
    /// A recovery step (re-initialize, refresh tools, renegotiate) was already tried once in this call.
    RecoverExhausted = "recover_exhausted",
        "a recovery step (a new session, a fresh tool list or a new protocol version) was needed more than once", None;
    /// Credentials were refused: the user or the auth provider must act.
    ReauthenticationRequired = "reauthentication_required", "the server refused the credentials",
        Some("The user must sign in again before this tool can be used.");
    /// Retry: a transient transport failure.
    Transient = "transient", "the connection failed", None;
    /// Retry: the server asked us to slow down.
    Throttled = "throttled", "the server asked to slow down", None;
    /// Retry: after (or by way of) a recovery step.
    Recover = "recover",
        "a recovery step was needed (a new session, a fresh tool list, a new protocol version or a resumed stream)",
        None;
    /// Retry: answer the server's input request (a continuation, not a failure).
    ContinueInput = "continue_input", "the server asked for more input", None;
    /// Retry, held: the breaker is open; wait for its next probe, then send again.
    BreakerHold = "breaker_hold", "the server has been failing; the call waits for it to recover", None;
    /// Retry, held: the retry budget is empty; wait for it to refill, then send again.
    BudgetHold = "budget_hold", "the retry budget for this server is spent; the call waits for it to refill", None;
    /// The server asked for input more than [`MAX_INPUT_ROUNDS`] times in one call.
    InputRoundsExceeded = "input_rounds_exceeded", "the server kept asking for more input", None;
    /// The server asked for input and this caller cannot answer it ([`CallState::cannot_answer_input`]).
    InputRequiredUnhandled = "input_required_unhandled",
        "the server asked for input and no input handler is configured", None;
    /// Not a branch of [`decide`]: the server asked for input, the caller has handlers, and they did not give
    /// it (a handler failed, or gave up before the deadline): [`decide_unanswered`].
    InputNotGiven = "input_not_given", "the server asked for input and it could not be given", None;
    /// Not a branch of [`decide`]: the server's status tool (the operation ledger) said how a write whose
    /// delivery was unknown ended, so the client reports that instead of `unknown`.
    ResolvedByStatus = "resolved_by_status", "the server's record of this operation says so", None;
    /// Not a branch of [`decide`]: the status tool says the write is still running.
    StatusInProgress = "status_in_progress", "the server says it is still running", None;
    /// Not a branch of [`decide`]: the status tool has no record of the write (it may still be on its way,
    /// or its record was purged): the outcome stays unknown.
    StatusNotFound = "status_not_found",
        "the server has no record of it (the request may not have arrived yet, or its record was purged)", None;
    /// Not a branch of [`decide`]: the status tool does not know the outcome either.
    StatusUnknown = "status_unknown", "the server does not know whether it took effect either", None;
    /// Not a branch of [`decide`]: `resolve` could not ask (no status tool, or no answer in time).
    StatusNotAsked = "status_not_asked", "the server could not be asked what happened", None;
    /// [`decide_poll`]: the operation is still running (a task working, a write in progress): look again.
    StillRunning = "still_running", "it is still running", None;
    /// [`decide_poll`]: still running after [`MAX_POLLS`] looks in one call: the call ends `pending`.
    PollsExhausted = "polls_exhausted", "it was still running after the most checks one call makes", None;
    /// Not a branch of [`decide`]: the server cancelled the task before it finished (some of it may have run).
    TaskCancelled = "task_cancelled", "its task was cancelled before it finished, after some of it may have run",
        None;
    /// Not a branch of [`decide`]: the task finished, but its result could not be fetched.
    TaskResultUnavailable = "task_result_unavailable", "its task finished, but the result could not be fetched", None;
    /// [`Engine::admit_within`](super::Engine::admit_within) / [`Engine::poll_within`](super::Engine::poll_within):
    /// the next attempt (or look) needs more outgoing requests than the invocation has left (a Cloudflare
    /// Worker's subrequest limit, less what the app keeps for itself).
    SubrequestBudget = "subrequest_budget",
        "this request has no outgoing requests left for another attempt",
        Some("It is safe to call it again in a later request.");
}

/// What to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Wait `delay_ms`, do `recover` if given, then send again (with the same operation id).
    Retry {
        /// How long to wait first.
        delay_ms: u64,
        /// A recovery step to take instead of, or before, the re-send.
        recover: Option<Recover>,
        /// Why.
        reason: Reason,
    },
    /// Stop and report `status`.
    Stop {
        /// The call's final status.
        status: FinalStatus,
        /// Why.
        reason: Reason,
    },
}

impl Decision {
    /// A stop.
    pub const fn stop(status: FinalStatus, reason: Reason) -> Self {
        Decision::Stop { status, reason }
    }

    /// Whether this is a retry.
    pub const fn is_retry(&self) -> bool {
        matches!(self, Decision::Retry { .. })
    }

    /// The reason.
    pub const fn reason(&self) -> Reason {
        match *self {
            Decision::Retry { reason, .. } | Decision::Stop { reason, .. } => reason,
        }
    }
}

/// The state of one call across its attempts. Plain data: created by
/// [`Engine::begin`](super::Engine::begin), advanced by the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CallState {
    /// When the call began.
    pub started_ms: u64,
    /// When the call must be over.
    pub deadline_ms: u64,
    /// Attempts that count toward `maxAttempts` (recoveries and continuations do not).
    pub attempts: u32,
    /// Backoff retries so far (the exponent of the next delay).
    pub retries: u32,
    /// Whether any attempt so far may have been delivered without an answer from the tool.
    pub maybe_delivered: bool,
    /// The last backoff delay (for decorrelated jitter).
    pub previous_delay_ms: u64,
    /// Budget tokens (thousandths) this call's retries spent.
    pub spent_milli: u64,
    /// The recovery step the last decision asked for, if any.
    pub pending_recover: Option<Recover>,
    /// Recovery steps already used (bit per [`Recover`] variant).
    pub used_recover: u8,
    /// Whether an attempt was admitted and not yet recorded.
    pub in_flight: bool,
    /// `input_required` rounds answered so far.
    pub continuations: u32,
    /// Looks taken at an operation still running ([`decide_poll`]).
    pub polls: u32,
    /// Whether the server answered a round that carried the caller's input with another input request: it
    /// has taken that input in and may have acted on it, so a stop after that is `unknown`, never `failed`.
    /// (A first round answered `input_required` is not enough: the spec lets the client walk away then —
    /// "Servers MUST NOT assume that clients will fulfill the inputRequests or retry the original request",
    /// basic/utilities/mrtr.) Set by [`Engine::record`](super::Engine::record).
    pub input_processed: bool,
    /// Whether the caller cannot answer an `input_required` result (set at
    /// [`Engine::begin_with`](super::Engine::begin_with)): such a result then stops the call
    /// ([`Reason::InputRequiredUnhandled`]) instead of asking for a continuation the caller cannot send.
    pub cannot_answer_input: bool,
    /// Whether an attempt of this call already reported a transport failure to the server's breaker. A call's
    /// own retries count once toward opening it: the breaker protects the server across calls, and a call
    /// that was allowed ten attempts rides out a short outage instead of tripping it by itself.
    pub breaker_failure_counted: bool,
    /// Hedges this call sent ([`Engine::hedge`](super::Engine::hedge)).
    pub hedges: u32,
    /// Hedges of this call sent and not yet ended.
    pub hedges_in_flight: u32,
    /// Whether the tool may be sent again after an unknown delivery (its safety, as last recorded): a held
    /// stream resumption then goes as a fresh send once the hold is over (the stream it would resume is as
    /// likely gone after a wait as the server that served it).
    pub resend_safe: bool,
    /// A held retry's budget cost (thousandths), paid when it is admitted; 0: nothing owed.
    pub owed_milli: u64,
    /// The breaker's count of openings when an open breaker held this call; `None`: not held by it. A probe
    /// that failed meanwhile (the count moved) counts as one of this call's attempts.
    pub held_opening: Option<u32>,
    /// Where outgoing requests are counted: how many this call may still make, as the engine last counted —
    /// the room given at its latest admission, less that attempt's cost and the hedges sent since
    /// ([`Engine::hedge_within`](super::Engine::hedge_within)). `None`: not counted.
    pub room: Option<u32>,
}

/// What the caller tells the engine about one call when it begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallOptions {
    /// Whether the caller can answer an `input_required` result by re-sending with the input (default `true`).
    pub answers_input: bool,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions { answers_input: true }
    }
}

impl CallState {
    /// Whether `action` was already taken once in this call.
    pub const fn used(&self, action: Recover) -> bool {
        self.used_recover & recover_bit(action) != 0
    }
}

pub(crate) const fn recover_bit(action: Recover) -> u8 {
    1 << (action as u8)
}

/// The most `input_required` rounds one call answers: a server that keeps asking is not converging.
pub const MAX_INPUT_ROUNDS: u32 = 32;

/// The most looks one call takes at an operation that is still running ([`decide_poll`]).
pub const MAX_POLLS: u32 = 1_000;

/// The shortest wait between two looks at a running operation, whatever the server hints.
pub const MIN_POLL_MS: u64 = 50;

/// When to look again at an operation that is still running — a created task that is `working`, or a write
/// the server's status tool reports `in_progress` — after `call.polls` looks. Pure and total.
///
/// The wait is the server's hint (a task's `pollInterval`, the ledger's `retryAfterMs`), or without one the
/// policy's backoff (`base_delay_ms` doubling per look, capped at `max_delay_ms`); at least [`MIN_POLL_MS`];
/// plus up to a tenth more from `random` (never earlier than the hint), so that clients polling the same
/// server drift apart. A look is not a retry: nothing is re-sent, so it spends no budget, does not count
/// toward `max_attempts`, and the breaker is not asked (the server answered). It stops — the call ends
/// `pending`, the operation still running — when the next look would start at or past the call's deadline
/// ([`Reason::Deadline`]) or after [`MAX_POLLS`] looks ([`Reason::PollsExhausted`]).
pub fn decide_poll(policy: &Policy, call: &CallState, hint_ms: Option<u64>, now_ms: u64, random: u64) -> Decision {
    if call.polls >= MAX_POLLS {
        return Decision::stop(FinalStatus::Pending, Reason::PollsExhausted);
    }
    let wait = hint_ms.unwrap_or_else(|| {
        let doubled = policy.base_delay_ms.saturating_mul(1u64 << call.polls.min(32));
        doubled.min(policy.max_delay_ms)
    });
    let wait = wait.clamp(MIN_POLL_MS, super::policy::MAX_DURATION_MS);
    // `wait / 10 + 1` is at least 1: the remainder is defined.
    let spread = wait.checked_div(10).unwrap_or(0).saturating_add(1);
    let delay_ms = wait.saturating_add(random.checked_rem(spread).unwrap_or(0));
    if now_ms.saturating_add(delay_ms) >= call.deadline_ms {
        return Decision::stop(FinalStatus::Pending, Reason::Deadline);
    }
    Decision::Retry { delay_ms, recover: None, reason: Reason::StillRunning }
}

/// The caller was told to answer an input request ([`Recover::ContinueInput`]) and could not:
/// `handler_missing` when it has no handler for one of the requests (the server asked for a kind of input the
/// caller cannot give: [`Reason::InputRequiredUnhandled`]), otherwise its handler failed
/// ([`Reason::InputNotGiven`]). Nothing is sent: the call stops, `unknown` if an attempt may have been
/// delivered unanswered or the server already took an earlier round's input in ([`CallState::input_processed`]),
/// else `failed` — the tool did not complete, and the server was told nothing it may act on. Pure and total.
pub fn decide_unanswered(call: &CallState, handler_missing: bool) -> Decision {
    let status = if call.maybe_delivered || call.input_processed { FinalStatus::Unknown } else { FinalStatus::Failed };
    Decision::stop(status, if handler_missing { Reason::InputRequiredUnhandled } else { Reason::InputNotGiven })
}

/// Everything [`decide`] looks at.
#[derive(Clone, Copy, Debug)]
pub struct DecisionInput<'a> {
    /// The policy.
    pub policy: &'a Policy,
    /// The call so far (this attempt included in `attempts`).
    pub call: &'a CallState,
    /// This attempt's classification.
    pub classification: &'a Classification,
    /// The tool's safety.
    pub safety: Safety,
    /// Now.
    pub now_ms: u64,
    /// 64 random bits for jitter.
    pub random: u64,
    /// When the server's breaker, open after this attempt was recorded, lets a probe go; `None`: not open.
    pub breaker_open_until_ms: Option<u64>,
    /// The server's budget tokens left (thousandths), refilled to now, or `None` without a budget.
    pub budget_milli: Option<u64>,
}

/// Over how long held calls are spread when they are released: half the breaker's open time (its default 2 s:
/// 1 s), at least the base delay. A held call waits its hold plus a random share of this.
pub fn hold_spread_ms(policy: &Policy) -> u64 {
    policy.breaker.map_or(0, |b| b.open_ms / 2).max(policy.base_delay_ms).max(MIN_HOLD_SPREAD_MS)
}

/// The shortest spread of held calls (a base delay of 0 still spreads them).
pub const MIN_HOLD_SPREAD_MS: u64 = 50;

/// A held call's wait: `wait_ms` plus a random share of [`hold_spread_ms`] (the bits are mixed so that they
/// are not the backoff's own jitter); at least 1 ms, so that a loop that waits it out always moves on.
pub fn hold_wait(policy: &Policy, wait_ms: u64, random: u64) -> u64 {
    let spread = hold_spread_ms(policy).saturating_add(1);
    let mixed = (random ^ 0x9E37_79B9_7F4A_7C15).rotate_left(23).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    wait_ms.saturating_add(mixed.checked_rem(spread).unwrap_or(0)).max(1)
}

/// How long until a budget holding `tokens_milli` can pay `cost_milli`, refilling at the policy's rate: `Some(0)`
/// now, `None` never (no refill with time, or a cost above capacity).
pub fn budget_wait_ms(policy: &Policy, tokens_milli: u64, cost_milli: u64) -> Option<u64> {
    let b = policy.budget?;
    let mut bucket = super::budget::RetryBudget::new(b);
    bucket.adopt(tokens_milli);
    bucket.wait_ms(cost_milli)
}

/// What a backoff retry after this classification costs from the budget (thousandths of a token).
pub fn retry_cost(policy: &Policy, c: &Classification) -> u64 {
    let Some(b) = policy.budget else { return 0 };
    match c.cause {
        Cause::Timeout | Cause::SdkRequestTimeout | Cause::HttpGatewayTimeout => b.timeout_cost_milli,
        _ => b.retry_cost_milli,
    }
}

/// Decides what to do after one attempt. Pure and total.
pub fn decide(i: &DecisionInput<'_>) -> Decision {
    let c = i.classification;
    let ambiguous = c.delivery == Delivery::Unknown || i.call.maybe_delivered || i.call.input_processed;
    // The server's ledger said the operation is running: giving up leaves it in progress, not failed.
    let running = c.cause == Cause::LedgerInProgress;
    let give_up = |reason| {
        let status = if running {
            FinalStatus::Pending
        } else if ambiguous {
            FinalStatus::Unknown
        } else {
            FinalStatus::Failed
        };
        Decision::stop(status, reason)
    };
    match c.verdict {
        Verdict::Success => Decision::stop(FinalStatus::Succeeded, Reason::Succeeded),
        Verdict::ToolError => Decision::stop(FinalStatus::ToolError, Reason::ToolError),
        Verdict::Cancelled => give_up(Reason::Aborted),
        Verdict::Permanent => give_up(Reason::Permanent),
        Verdict::Transient => backoff_retry(i, None, Reason::Transient, give_up),
        Verdict::Throttled => backoff_retry(i, None, Reason::Throttled, give_up),
        Verdict::Recover => match c.recover {
            Some(Recover::PollTask) => Decision::stop(FinalStatus::Pending, Reason::TaskPending),
            // A continuation: no delay, no budget, not an attempt; bounded by the deadline and a round limit.
            Some(Recover::ContinueInput) => {
                if i.call.cannot_answer_input {
                    give_up(Reason::InputRequiredUnhandled)
                } else if i.now_ms >= i.call.deadline_ms {
                    give_up(Reason::Deadline)
                } else if i.call.continuations >= MAX_INPUT_ROUNDS {
                    give_up(Reason::InputRoundsExceeded)
                } else {
                    Decision::Retry {
                        delay_ms: 0,
                        recover: Some(Recover::ContinueInput),
                        reason: Reason::ContinueInput,
                    }
                }
            }
            // Resuming a stream is a GET with Last-Event-ID, not a re-send: allowed for every tool.
            Some(Recover::ResumeStream) => backoff_retry(i, Some(Recover::ResumeStream), Reason::Recover, give_up),
            Some(Recover::Reauthenticate) | None => give_up(Reason::ReauthenticationRequired),
            // The rest are the one-shot actions (`Recover::is_one_shot`: re-initialize, refresh tools,
            // renegotiate): recover and re-send at once, once — through the gate, since a lost stdio process
            // (re-initialize) may have acted on this very attempt.
            Some(action) => {
                if i.call.used(action) {
                    give_up(Reason::RecoverExhausted)
                } else if i.now_ms >= i.call.deadline_ms {
                    give_up(Reason::Deadline)
                } else if (c.delivery == Delivery::Unknown || i.call.maybe_delivered) && !i.safety.retry_after_unknown()
                {
                    give_up(Reason::UnsafeAfterUnknown)
                } else {
                    Decision::Retry { delay_ms: 0, recover: Some(action), reason: Reason::Recover }
                }
            }
        },
    }
}

/// The retry-with-backoff branch, every stop checked in order.
fn backoff_retry(
    i: &DecisionInput<'_>,
    recover: Option<Recover>,
    reason: Reason,
    give_up: impl Fn(Reason) -> Decision,
) -> Decision {
    let (p, call, c) = (i.policy, i.call, i.classification);
    let resending = recover.is_none();
    // The gate: an unsafe tool is never sent again once any attempt may have been delivered.
    if resending && !i.safety.retry_after_unknown() && (c.delivery == Delivery::Unknown || call.maybe_delivered) {
        // Always `unknown` here (a delivery may have happened), or `pending` if the server's ledger said so.
        return give_up(Reason::UnsafeAfterUnknown);
    }
    if call.attempts >= p.max_attempts {
        return give_up(Reason::MaxAttempts);
    }
    if let Some(ra) = c.retry_after_ms {
        if i.now_ms.saturating_add(ra) >= call.deadline_ms {
            return give_up(Reason::RetryAfterBeyondDeadline);
        }
    }
    let jittered =
        backoff::delay(p.base_delay_ms, p.max_delay_ms, p.jitter, call.retries, call.previous_delay_ms, i.random);
    let mut delay_ms = backoff::with_floor(jittered, c.retry_after_ms, p.max_retry_after_ms);
    // Held (see the module docs): (the retry's reason while it waits, the stop's if the wait passes the deadline).
    let mut held = None;
    if let Some(until) = i.breaker_open_until_ms {
        delay_ms = delay_ms.max(hold_wait(p, until.saturating_sub(i.now_ms), i.random));
        held = Some((Reason::BreakerHold, Reason::BreakerOpen));
    }
    if let (Some(tokens), None) = (i.budget_milli, held) {
        match budget_wait_ms(p, tokens, retry_cost(p, c)) {
            Some(0) => {}
            Some(wait) => {
                delay_ms = delay_ms.max(hold_wait(p, wait, i.random));
                held = held.or(Some((Reason::BudgetHold, Reason::BudgetExhausted)));
            }
            None => return give_up(Reason::BudgetExhausted),
        }
    }
    if i.now_ms.saturating_add(delay_ms) >= call.deadline_ms {
        return give_up(held.map_or(Reason::Deadline, |(_, stop)| stop));
    }
    // Held, a tool that may be sent again does so instead of resuming a stream that is likely gone by then.
    let recover = if held.is_some() && i.safety.retry_after_unknown() && recover == Some(Recover::ResumeStream) {
        None
    } else {
        recover
    };
    Decision::Retry { delay_ms, recover, reason: held.map_or(reason, |(hold, _)| hold) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_tables_follow_declaration_order() {
        for (i, r) in Reason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i, "{r:?}");
        }
        for (i, s) in FinalStatus::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "{s:?}");
        }
        for (i, r) in Recover::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i, "{r:?}");
        }
        for (i, v) in crate::retry::Verdict::ALL.iter().enumerate() {
            assert_eq!(*v as usize, i, "{v:?}");
        }
        for (i, d) in Delivery::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i, "{d:?}");
        }
        for (i, c) in crate::retry::Cause::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i, "{c:?}");
        }
        assert!(crate::retry::Cause::ALL.len() <= 64 && Reason::ALL.len() <= 32);
    }

    fn recovering(action: Recover) -> Classification {
        let cause = *crate::retry::Cause::ALL.iter().find(|c| c.recover() == Some(action)).unwrap_or(&Cause::Timeout);
        Classification {
            verdict: Verdict::Recover,
            delivery: Delivery::NotProcessed,
            recover: Some(action),
            retry_after_ms: None,
            cause,
        }
    }

    fn input<'a>(policy: &'a Policy, call: &'a CallState, c: &'a Classification) -> DecisionInput<'a> {
        DecisionInput {
            policy,
            call,
            classification: c,
            safety: Safety::Unsafe,
            now_ms: 0,
            random: 0,
            breaker_open_until_ms: None,
            budget_milli: None,
        }
    }

    /// `Recover::is_one_shot` is the one definition: `decide` re-sends exactly those at once and once, and
    /// the engine (`admit`, `record`) counts exactly those as not attempts.
    #[test]
    fn one_shot_actions_are_one_definition() {
        let policy = Policy::default();
        let call = CallState { deadline_ms: 1_000, ..CallState::default() };
        for action in Recover::ALL {
            let c = recovering(action);
            let first = decide(&input(&policy, &call, &c));
            let at_once = first == Decision::Retry { delay_ms: 0, recover: Some(action), reason: Reason::Recover };
            let used = CallState { used_recover: recover_bit(action), ..call };
            let again = decide(&input(&policy, &used, &c)).reason() == Reason::RecoverExhausted;
            assert_eq!(at_once && again, action.is_one_shot(), "{action:?}");
        }
    }

    #[test]
    fn a_caller_that_cannot_answer_input_stops_in_the_core() {
        let policy = Policy::default();
        let c = recovering(Recover::ContinueInput);
        let call = CallState { deadline_ms: 1_000, cannot_answer_input: true, ..CallState::default() };
        assert_eq!(
            decide(&input(&policy, &call, &c)),
            Decision::stop(FinalStatus::Failed, Reason::InputRequiredUnhandled)
        );
        let maybe = CallState { maybe_delivered: true, ..call };
        assert_eq!(
            decide(&input(&policy, &maybe, &c)),
            Decision::stop(FinalStatus::Unknown, Reason::InputRequiredUnhandled)
        );
        let answers = CallState { cannot_answer_input: false, ..call };
        assert_eq!(decide(&input(&policy, &answers, &c)).reason(), Reason::ContinueInput);
    }
}
