//! Hedged reads: when an attempt of a `read_only` or `idempotent` call has no answer after `hedge_after_ms`,
//! a second copy may be sent; the first answer wins and the others are cancelled (the JS side aborts them,
//! which makes the SDK send `notifications/cancelled`).
//!
//! ## Who may hedge, and what bounds it
//! | rule | why |
//! |---|---|
//! | `read_only` and `idempotent` only; never `keyed`, never `unsafe` | two copies in flight at once both run: only a tool that two runs cannot harm may be sent twice *concurrently*. A keyed write is deduped only after the fact (the second copy may be refused `in_progress`, or hold a lease), so it is never hedged |
//! | off by default (`hedge_after_ms` absent) | a hedge is extra load; Polly's hedging strategy and gRPC's hedging policy are both opt-in |
//! | at most `max_hedges` per call (default 1: Polly's `MaxHedgedAttempts`), at most [`MAX_HEDGES`] | gRPC caps hedged attempts at 5 with the first; Polly at 10 |
//! | an attempt of the call is in flight, and the call's deadline has not passed | a hedge races an unanswered attempt; it never outlives the call |
//! | the breaker is closed | an open breaker fails calls fast; a half-open one has its one probe out |
//! | a hedge spends the retry budget's `retry_cost`, like a retry; refused when the bucket cannot pay | one budget for retries and hedges together (failsafe-go's `Budget`) |
//! | hedges in flight ≤ max(3, 20 % of requests in flight) | Envoy's retry budget (`budget_percent` 20 %, `min_retry_concurrency` 3), counted over this engine's attempts and hedges |
//! | where outgoing requests are counted (a Worker's subrequests), a hedge needs [`HEDGE_SUBREQUESTS`] of the call's room | a hedge is its own request, and the copy that loses is aborted, which makes the SDK send `notifications/cancelled`: both are the invocation's subrequests, and neither may take the app's reserve |
//!
//! The engine counts requests in flight from its own admissions: [`Engine::admit`](super::Engine::admit)
//! adds one, [`Engine::record`](super::Engine::record) takes it away, [`Engine::hedge`](super::Engine::hedge)
//! adds one and [`Engine::hedge_ended`](super::Engine::hedge_ended) takes it away. The winning copy's outcome
//! is the one the caller records; a losing copy's outcome is dropped (it was cancelled). When no copy
//! answered, the outcome the caller records is the copy [`copy_stands`] keeps: the one that says the most may
//! have been delivered — a copy that provably never left cannot make a copy that may have run read as
//! "not processed".

use super::classify::{classify_under, Delivery};
use super::decide::CallState;
use super::outcome::{AttemptOutcome, Revision};
use super::policy::MAX_DURATION_MS;
use super::safety::Safety;

/// The most hedges one call may send.
pub const MAX_HEDGES: u32 = 10;
/// Hedges in flight are always allowed up to this many (Envoy's `min_retry_concurrency`).
pub const MIN_HEDGE_CONCURRENCY: u32 = 3;
/// Hedges in flight may be this share (percent) of the engine's requests in flight (Envoy's `budget_percent`).
pub const HEDGE_CONCURRENCY_PERCENT: u32 = 20;
/// What one hedge costs where outgoing requests are counted: its own `tools/call`, and the
/// `notifications/cancelled` the SDK sends when the copy that loses the race is aborted.
pub const HEDGE_SUBREQUESTS: u32 = 2;

/// Hedging options, each optional.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HedgeOptions {
    /// Send a copy when an attempt has had no answer for this long; absent: no hedging.
    pub hedge_after_ms: Option<u64>,
    /// The most copies one call sends (default 1).
    pub max_hedges: Option<u32>,
}

/// Validated hedging settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HedgeConfig {
    /// How long an attempt goes unanswered before a copy may be sent.
    pub after_ms: u64,
    /// The most copies one call sends.
    pub max_hedges: u32,
}

/// A hedging option, for [`HedgeError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HedgeField {
    /// `hedge_after_ms`.
    HedgeAfterMs,
    /// `max_hedges`.
    MaxHedges,
}

/// A hedging option out of range: `value` is outside `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HedgeError {
    /// Which option.
    pub field: HedgeField,
    /// What was given.
    pub value: u64,
    /// The smallest allowed.
    pub min: u64,
    /// The largest allowed.
    pub max: u64,
}

impl HedgeConfig {
    /// Validates `options`: `None` when hedging is off (no `hedge_after_ms`). `hedge_after_ms` is 1 ms – one
    /// day; `max_hedges` 1 – [`MAX_HEDGES`] (checked even when hedging is off, so a typo is not silent).
    pub fn new(options: &HedgeOptions) -> Result<Option<HedgeConfig>, HedgeError> {
        let check = |field, value: u64, max: u64| {
            if (1..=max).contains(&value) {
                Ok(value)
            } else {
                Err(HedgeError { field, value, min: 1, max })
            }
        };
        let max_hedges = match options.max_hedges {
            Some(n) => check(HedgeField::MaxHedges, u64::from(n), u64::from(MAX_HEDGES))?,
            None => 1,
        };
        let Some(after) = options.hedge_after_ms else { return Ok(None) };
        let after_ms = check(HedgeField::HedgeAfterMs, after, MAX_DURATION_MS)?;
        Ok(Some(HedgeConfig { after_ms, max_hedges: u32::try_from(max_hedges).unwrap_or(MAX_HEDGES) }))
    }
}

/// Why a hedge was not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HedgeRefusal {
    /// Hedging is not configured.
    Off,
    /// The tool is `keyed` or `unsafe`.
    Safety,
    /// No attempt of this call is in flight (nothing to race).
    NotInFlight,
    /// The call already sent `max_hedges` copies.
    MaxHedges,
    /// The call's deadline has passed.
    Deadline,
    /// The breaker is not closed.
    BreakerOpen,
    /// The retry budget cannot pay for a copy.
    Budget,
    /// Hedges in flight are at max(3, 20 % of requests in flight).
    Concurrency,
    /// Outgoing requests are counted and the call's room cannot pay for a hedge ([`HEDGE_SUBREQUESTS`]).
    SubrequestBudget,
}

impl HedgeRefusal {
    /// Every refusal, in declaration order (the order of the codes).
    pub const ALL: [HedgeRefusal; 9] = [
        HedgeRefusal::Off,
        HedgeRefusal::Safety,
        HedgeRefusal::NotInFlight,
        HedgeRefusal::MaxHedges,
        HedgeRefusal::Deadline,
        HedgeRefusal::BreakerOpen,
        HedgeRefusal::Budget,
        HedgeRefusal::Concurrency,
        HedgeRefusal::SubrequestBudget,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            HedgeRefusal::Off => "off",
            HedgeRefusal::Safety => "safety",
            HedgeRefusal::NotInFlight => "not_in_flight",
            HedgeRefusal::MaxHedges => "max_hedges",
            HedgeRefusal::Deadline => "deadline",
            HedgeRefusal::BreakerOpen => "breaker_open",
            HedgeRefusal::Budget => "budget",
            HedgeRefusal::Concurrency => "concurrency",
            HedgeRefusal::SubrequestBudget => "subrequest_budget",
        }
    }
}

/// A go-ahead for one hedge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HedgeAdmission {
    /// This hedge's number in its call (1 for the first).
    pub hedge: u32,
    /// How long the copy may take: the per-attempt timeout, shortened to the call's deadline.
    pub timeout_ms: u64,
}

/// The engine's hedging state: the settings and what is in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Hedging {
    /// The settings, or `None` when off.
    pub config: Option<HedgeConfig>,
    /// Attempts and hedges admitted and not yet ended.
    pub requests_in_flight: u32,
    /// Hedges sent and not yet ended.
    pub hedges_in_flight: u32,
    /// Hedges sent so far.
    pub hedges_sent: u64,
    /// Hedges that gave the call its answer.
    pub hedges_won: u64,
}

impl Hedging {
    /// How many hedges may be in flight now: max(3, 20 % of requests in flight).
    pub fn concurrency_cap(&self) -> u32 {
        let share = self.requests_in_flight.saturating_mul(HEDGE_CONCURRENCY_PERCENT).checked_div(100).unwrap_or(0);
        share.max(MIN_HEDGE_CONCURRENCY)
    }

    /// Whether a hedge of `call` may go now (every rule but the budget, which the engine spends after):
    /// pure; the refusal names the first rule that failed, in the order of the module's table. `room`: the
    /// outgoing requests the call may still make (`None`: not counted).
    pub fn check(
        &self,
        call: &CallState,
        safety: Safety,
        now_ms: u64,
        breaker_closed: bool,
        room: Option<u32>,
    ) -> Result<(), HedgeRefusal> {
        let Some(config) = self.config else { return Err(HedgeRefusal::Off) };
        if !matches!(safety, Safety::ReadOnly | Safety::Idempotent) {
            return Err(HedgeRefusal::Safety);
        }
        if !call.in_flight {
            return Err(HedgeRefusal::NotInFlight);
        }
        if call.hedges >= config.max_hedges {
            return Err(HedgeRefusal::MaxHedges);
        }
        if now_ms >= call.deadline_ms {
            return Err(HedgeRefusal::Deadline);
        }
        if !breaker_closed {
            return Err(HedgeRefusal::BreakerOpen);
        }
        if self.hedges_in_flight >= self.concurrency_cap() {
            return Err(HedgeRefusal::Concurrency);
        }
        if room.is_some_and(|room| room < HEDGE_SUBREQUESTS) {
            return Err(HedgeRefusal::SubrequestBudget);
        }
        Ok(())
    }
}

/// How much a delivery says may have reached the tool: not processed 0, unknown 1, processed 2.
const fn reach(d: Delivery) -> u8 {
    match d {
        Delivery::NotProcessed => 0,
        Delivery::Unknown => 1,
        Delivery::Processed => 2,
    }
}

/// A hedged attempt in which no copy answered: whether `later`, a copy that ended after the copy standing
/// for the attempt so far (`standing`), takes its place as the attempt's outcome — the one the caller records.
/// The later copy stands unless the standing one says more may have reached the tool (classified under
/// `revision`, `None` for unknown: [`classify_under`]). So when every copy failed alike the last to end
/// stands (its recovery step is the freshest), and a copy that may have run is never replaced by one that
/// provably never left: a copy refused at connect cannot make the attempt read `not_processed` — and the call
/// `failed` — while another copy of it may have been delivered. Pure and total.
pub fn copy_stands(standing: &AttemptOutcome, later: &AttemptOutcome, revision: Option<Revision>) -> bool {
    reach(classify_under(later, revision).delivery) >= reach(classify_under(standing, revision).delivery)
}
