//! The engine: one per server. Holds the policy, the server's retry budget and circuit breaker, and runs
//! each call's attempts through [`classify`](super::classify()) and [`decide`](super::decide()).
//!
//! Still pure: `now_ms` and random bits are arguments. The caller's loop is
//! `begin → (admit → send → record → wait delay_ms)* → stop`; see the crate docs for an example.

mod hedging;
mod shared;
mod waits;

use super::breaker::{Breaker, BreakerSnapshot, BreakerState, Transition};
use super::budget::RetryBudget;
use super::classify::{classify_under, Cause, Classification, Delivery, Recover, Verdict};
use super::decide::{
    budget_wait_ms, decide, hold_wait, recover_bit, retry_cost, CallOptions, CallState, Decision, DecisionInput,
    FinalStatus, Reason,
};
use super::hedge::{HedgeAdmission, HedgeConfig, HedgeRefusal, Hedging, HEDGE_SUBREQUESTS};
use super::outcome::{AttemptOutcome, Revision};
use super::policy::Policy;
use super::safety::Safety;

/// A go-ahead for one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// The attempt's number among those that count toward `maxAttempts` (1 for the first).
    pub attempt: u32,
    /// How long this attempt may take: the per-attempt timeout, shortened to the call's deadline.
    pub timeout_ms: u64,
    /// The breaker transition this admission caused (open → half-open), if any.
    pub breaker: Option<Transition>,
}

/// What one recorded attempt led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// What the outcome meant.
    pub classification: Classification,
    /// What to do next.
    pub decision: Decision,
    /// The breaker transition the outcome caused, if any.
    pub breaker: Option<Transition>,
}

/// The retry engine for one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Engine {
    policy: Policy,
    budget: Option<RetryBudget>,
    breaker: Option<Breaker>,
    hedging: Hedging,
    behind_retrying_proxy: bool,
}

impl Engine {
    /// An engine with a full budget and a closed breaker.
    pub fn new(policy: Policy) -> Self {
        Engine {
            budget: policy.budget.map(RetryBudget::new),
            // A probe still within its attempt timeout is not replaced: a hanging server gets one at a time.
            breaker: policy.breaker.map(|b| Breaker::new(b).with_probe_timeout(policy.attempt_timeout_ms)),
            policy,
            hedging: Hedging::default(),
            behind_retrying_proxy: false,
        }
    }

    /// Says that the server sits behind a proxy that may retry a POST on another replica (Envoy/Istio's default
    /// retry policy, nginx `proxy_next_upstream … non_idempotent`): a lost session and a 429/503 with
    /// `Retry-After` still recover (re-initialize, wait) but no longer prove "not processed", so an unsafe tool
    /// is not sent again after them ([`Classification::behind_retrying_proxy`]). Off by default.
    pub fn set_behind_retrying_proxy(&mut self, on: bool) {
        self.behind_retrying_proxy = on;
    }

    /// Whether [`Engine::set_behind_retrying_proxy`] is on.
    pub const fn behind_retrying_proxy(&self) -> bool {
        self.behind_retrying_proxy
    }

    /// How this engine reads an outcome: [`classify_under`] the revision, behind a retrying proxy when set.
    pub fn classify(&self, outcome: &AttemptOutcome, revision: Option<Revision>) -> Classification {
        let c = classify_under(outcome, revision);
        if self.behind_retrying_proxy {
            c.behind_retrying_proxy()
        } else {
            c
        }
    }

    /// The policy.
    pub const fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The budget's tokens left (thousandths), or `None` without a budget.
    pub fn budget_milli(&self) -> Option<u64> {
        self.budget.as_ref().map(RetryBudget::tokens_milli)
    }

    /// The breaker's state, or `None` without a breaker.
    pub fn breaker_state(&self) -> Option<BreakerState> {
        self.breaker.as_ref().map(Breaker::state)
    }

    /// Starts a call at `now_ms` (a caller that answers `input_required`; see [`Engine::begin_with`]).
    pub fn begin(&self, now_ms: u64) -> CallState {
        self.begin_with(now_ms, CallOptions::default())
    }

    /// Starts a call at `now_ms` with what the caller can do.
    pub fn begin_with(&self, now_ms: u64, options: CallOptions) -> CallState {
        CallState {
            started_ms: now_ms,
            deadline_ms: now_ms.saturating_add(self.policy.total_timeout_ms),
            cannot_answer_input: !options.answers_input,
            ..CallState::default()
        }
    }

    /// Asks to send the next attempt at `now_ms` ([`Engine::admit_with`] with no jitter and requests not
    /// counted). `Err` is what to do instead: a stop to report (deadline passed, attempts used up, the breaker
    /// open for a call that sent nothing), or a held retry (a `Retry` to wait out, then admit again).
    #[inline(never)]
    pub fn admit(&mut self, call: &mut CallState, now_ms: u64) -> Result<Admission, Decision> {
        self.admit_with(call, now_ms, 0, None)
    }

    /// [`Engine::admit`] where outgoing requests are counted (a Cloudflare Worker's subrequests per
    /// invocation): `room` is how many this call may still make. An attempt costs its request plus the
    /// recovery step it follows ([`Recover::subrequests`]); when that is more than `room` the call stops
    /// ([`Reason::SubrequestBudget`]: `failed` if nothing may have been delivered, else `unknown`) before it
    /// takes a breaker probe or an attempt. `None`: not counted.
    pub fn admit_within(
        &mut self,
        call: &mut CallState,
        now_ms: u64,
        room: Option<u32>,
    ) -> Result<Admission, Decision> {
        self.admit_with(call, now_ms, 0, room)
    }

    /// Asks to send the next attempt at `now_ms`, with 64 random bits to spread a held call's wait and the
    /// invocation's `room` ([`Engine::admit_within`]). A re-send the gate allowed is **held**, not ended, while the
    /// breaker refuses it or the budget cannot pay what it owes: `Err(Retry)` with the wait
    /// ([`Reason::BreakerHold`], [`Reason::BudgetHold`]; see [`decide`](mod@super::decide)), or the stop with that
    /// reason when the wait would pass the deadline. A first attempt at an open breaker fails fast.
    #[inline(never)] // one copy, shared by `admit`, `admit_within` and the call driver
    pub fn admit_with(
        &mut self,
        call: &mut CallState,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> Result<Admission, Decision> {
        let give_up = |call: &CallState, reason| {
            let ambiguous = call.maybe_delivered || call.input_processed;
            Decision::stop(if ambiguous { FinalStatus::Unknown } else { FinalStatus::Failed }, reason)
        };
        // Continuations and one-shot recoveries are not attempts.
        let counts = !call.pending_recover.is_some_and(|r| r == Recover::ContinueInput || r.is_one_shot());
        // A probe failed while this call was held: the server was tried for it, and that counts as its attempt.
        let openings = self.breaker.as_ref().map_or(0, Breaker::openings);
        let mut tried_for_it = false;
        if let Some(seen) = call.held_opening {
            if seen != openings {
                call.held_opening = Some(openings);
                call.attempts = call.attempts.saturating_add(1);
                tried_for_it = true;
            }
        }
        if now_ms >= call.deadline_ms {
            let reason = if call.held_opening.is_some() { Reason::BreakerOpen } else { Reason::Deadline };
            return Err(give_up(call, reason));
        }
        if counts && call.attempts >= self.policy.max_attempts {
            return Err(give_up(call, if tried_for_it { Reason::BreakerOpen } else { Reason::MaxAttempts }));
        }
        let cost = Recover::attempt_subrequests(call.pending_recover);
        if room.is_some_and(|room| room < cost) {
            return Err(give_up(call, Reason::SubrequestBudget));
        }
        // What a held retry owes the budget is paid before it may take a probe.
        if call.owed_milli > 0 {
            if let Some(b) = self.budget.as_mut() {
                b.refill(now_ms);
                let tokens = b.tokens_milli();
                match budget_wait_ms(&self.policy, tokens, call.owed_milli) {
                    Some(0) => {}
                    Some(wait) => return Err(self.hold(call, wait, now_ms, random, Reason::BudgetHold)),
                    None => return Err(give_up(call, Reason::BudgetExhausted)),
                }
            }
        }
        let (allowed, transition) = match self.breaker.as_mut() {
            // A continuation answers a server that is up; it is not gated by the breaker.
            Some(b) if call.pending_recover != Some(Recover::ContinueInput) => b.admit(now_ms),
            _ => (true, None),
        };
        if !allowed {
            if call.attempts == 0 {
                return Err(give_up(call, Reason::BreakerOpen)); // nothing sent: fail fast
            }
            if call.pending_recover == Some(Recover::ResumeStream) && call.resend_safe {
                // Held: a tool that may be sent again is, instead of resuming a stream likely gone by then.
                call.pending_recover = None;
            }
            // Open: until it lets a probe go; half-open with its probe out: look again after a base delay.
            let wait = self
                .breaker
                .as_ref()
                .and_then(Breaker::open_until)
                .map_or(self.policy.base_delay_ms, |until| until.saturating_sub(now_ms));
            call.held_opening.get_or_insert(openings);
            return Err(self.hold(call, wait, now_ms, random, Reason::BreakerHold));
        }
        if call.owed_milli > 0 {
            if let Some(b) = self.budget.as_mut() {
                if b.try_withdraw(call.owed_milli) {
                    call.spent_milli = call.spent_milli.saturating_add(call.owed_milli);
                }
            }
            call.owed_milli = 0;
        }
        call.held_opening = None;
        if counts {
            call.attempts = call.attempts.saturating_add(1);
        }
        if !call.in_flight {
            self.hedging.requests_in_flight = self.hedging.requests_in_flight.saturating_add(1);
        }
        call.in_flight = true;
        call.room = room.map(|room| room.saturating_sub(cost));
        let timeout_ms = self.policy.attempt_timeout_ms.min(call.deadline_ms.saturating_sub(now_ms));
        Ok(Admission { attempt: call.attempts, timeout_ms, breaker: transition })
    }

    /// A held re-send: wait `wait_ms` (plus a spread), or stop with the reason that held it when that passes the
    /// deadline.
    fn hold(&self, call: &CallState, wait_ms: u64, now_ms: u64, random: u64, reason: Reason) -> Decision {
        let delay_ms = hold_wait(&self.policy, wait_ms, random);
        if now_ms.saturating_add(delay_ms) >= call.deadline_ms {
            let stop = if reason == Reason::BudgetHold { Reason::BudgetExhausted } else { Reason::BreakerOpen };
            let ambiguous = call.maybe_delivered || call.input_processed;
            return Decision::stop(if ambiguous { FinalStatus::Unknown } else { FinalStatus::Failed }, stop);
        }
        Decision::Retry { delay_ms, recover: call.pending_recover, reason }
    }

    /// Records how an attempt ended and decides what comes next. `random` is 64 random bits for jitter.
    /// `revision` is the server's revision, or `None` when it is not known (then every row takes its most
    /// conservative reading across revisions: [`classify_conservatively`](super::classify_conservatively)).
    #[inline(never)]
    pub fn record(
        &mut self,
        call: &mut CallState,
        outcome: &AttemptOutcome,
        safety: Safety,
        revision: impl Into<Option<Revision>>,
        now_ms: u64,
        random: u64,
    ) -> Step {
        if !call.in_flight && call.pending_recover.is_none() {
            // Recorded without an admit: still count it, so that a loop that skips admit ends.
            call.attempts = call.attempts.saturating_add(1);
        }
        self.attempt_ended(call);
        call.resend_safe = safety.retry_after_unknown();
        let classification = self.classify(outcome, revision.into());
        // The server answered a round that carried input (a continuation, or a re-send of one) by asking again.
        if classification.recover == Some(Recover::ContinueInput) && call.continuations > 0 {
            call.input_processed = true;
        }
        let mut transition = None;
        if let Some(b) = self.budget.as_mut() {
            b.refill(now_ms);
        }
        if let Some(b) = self.breaker.as_mut() {
            let failure = classification.is_transport_failure();
            if classification.verdict == Verdict::Cancelled || classification.cause == Cause::Withheld {
                // Says nothing about the server (cancelled, or never sent): a probe frees its slot.
                b.cancel();
            } else if classification.verdict == Verdict::Throttled {
                // A 429 is this caller told to slow down, not a failing server: it never moves the breaker
                // (one tenant's bursts would pause every tenant's calls), and a throttled probe frees its slot.
                b.cancel();
            } else if failure && call.breaker_failure_counted && b.state() == BreakerState::Closed {
                // This call already counted one failure: its own retries do not open the breaker by themselves
                // (Polly's minimum throughput, gRPC's and Envoy's budgets across calls). A probe's failure
                // (half-open) is always recorded: it re-opens the breaker.
            } else {
                transition = b.record(now_ms, failure);
            }
            call.breaker_failure_counted |= failure && classification.verdict != Verdict::Throttled;
        }
        if classification.delivery == Delivery::Processed {
            if let Some(b) = self.budget.as_mut() {
                b.on_success();
            }
        }
        let breaker_open_until_ms = self.breaker.as_ref().and_then(Breaker::open_until);
        let decision = decide(&DecisionInput {
            policy: &self.policy,
            call,
            classification: &classification,
            safety,
            now_ms,
            random,
            breaker_open_until_ms,
            budget_milli: self.budget_milli(),
        });
        // A created task is the server's word that it took the call in: from then on no outcome of a later
        // request (a look that never left, an abort) can make the call read as not delivered.
        if classification.delivery == Delivery::Unknown || classification.cause == Cause::TaskCreated {
            call.maybe_delivered = true;
        }
        call.pending_recover = None;
        if let Decision::Retry { delay_ms, recover, reason } = decision {
            call.pending_recover = recover;
            match recover {
                Some(Recover::ContinueInput) => call.continuations = call.continuations.saturating_add(1),
                Some(r) if r.is_one_shot() => call.used_recover |= recover_bit(r),
                _ if matches!(reason, Reason::BreakerHold | Reason::BudgetHold) => {
                    // Held: the budget is paid when the retry goes ([`Engine::admit_with`]).
                    if reason == Reason::BreakerHold {
                        // Released by a probe the server answered: not a retry into a failing server, so it
                        // is not charged to the budget (the spread paces the release).
                        call.held_opening = Some(self.breaker.as_ref().map_or(0, Breaker::openings));
                    } else {
                        call.owed_milli = retry_cost(&self.policy, &classification);
                    }
                    call.retries = call.retries.saturating_add(1);
                    call.previous_delay_ms = delay_ms;
                }
                _ => {
                    let cost = retry_cost(&self.policy, &classification);
                    if let Some(b) = self.budget.as_mut() {
                        // decide() checked the tokens; this cannot fail, and would only stop a retry if it did.
                        if b.try_withdraw(cost) {
                            call.spent_milli = call.spent_milli.saturating_add(cost);
                        }
                    }
                    call.retries = call.retries.saturating_add(1);
                    call.previous_delay_ms = delay_ms;
                }
            }
        }
        Step { classification, decision, breaker: transition }
    }

    /// The call's attempt is no longer in flight (recorded, or ended without a send).
    fn attempt_ended(&mut self, call: &mut CallState) {
        if call.in_flight {
            self.hedging.requests_in_flight = self.hedging.requests_in_flight.saturating_sub(1);
        }
        call.in_flight = false;
    }
}
