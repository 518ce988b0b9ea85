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
mod status;

pub use status::{Decision, FinalStatus, Reason};

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
mod tests;
