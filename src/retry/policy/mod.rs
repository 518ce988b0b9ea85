//! The policy: every knob, validated once into typed values, with an error that names the field.
//!
//! ## Defaults, and why
//! | option | default | anchor |
//! |---|---|---|
//! | `maxAttempts` | 3 | AWS SDK standard retry mode (3); gRPC A6 caps configured attempts at 5 |
//! | `baseDelayMs` | 200 | between Envoy's 25 ms and AWS's 1 s; an MCP round trip is tens to hundreds of ms |
//! | `maxDelayMs` | 20 000 | AWS standard mode's 20 s maximum backoff |
//! | `jitter` | `full` | lowest total work in AWS's "Exponential Backoff And Jitter" |
//! | `attemptTimeoutMs` | 60 000 | the MCP TypeScript SDK's default request timeout |
//! | `totalTimeoutMs` | 180 000 | three full attempts; gRPC's deadline covers all attempts the same way |
//! | `maxRetryAfterMs` | 60 000 | a longer server wait is clamped (and stops the call if it passes the deadline) |
//! | `budget` | 10 tokens, retry 1, timeout 2, success +0.1, +1 a second | AWS's token bucket, scaled to one client; the refill with time is Finagle's `minRetriesPerSec` |
//! | `breaker` | 5 in a row, or 50 % of ≥ 10 in 10 s; open 2 s, then one probe | cockatiel, Envoy, Hystrix; 2 s: the storm simulator's recovery |
//!
//! Input arrives as [`PolicyOptions`] (typed: whole milliseconds, counts, tokens in thousandths, the failure
//! ratio in thousandths; each field optional) and leaves through [`Policy::new`] as a [`Policy`] or a
//! [`PolicyError`] naming the field: zero where zero makes no sense, values past a sane maximum and
//! `base_delay_ms > max_delay_ms` are each rejected. Turning a JS number into these integers (NaN, ±∞,
//! negative, fractional counts) is the binding's, with [`crate::input`].

use core::fmt;

use super::backoff::Jitter;
use super::breaker::BreakerConfig;
use super::budget::BudgetConfig;

/// The longest duration any option accepts: one day.
pub const MAX_DURATION_MS: u64 = 86_400_000;
/// The most attempts a call may make.
pub const MAX_ATTEMPTS: u32 = 100;
/// The largest token amount a budget option accepts.
pub const MAX_TOKENS: u64 = 1_000_000;

/// A validated retry policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Policy {
    /// Attempts per call, the first included (≥ 1).
    pub max_attempts: u32,
    /// The first backoff step.
    pub base_delay_ms: u64,
    /// The largest backoff step (≥ `base_delay_ms`).
    pub max_delay_ms: u64,
    /// How backoff is randomized.
    pub jitter: Jitter,
    /// How long one attempt may take (JS enforces it; the core reports it).
    pub attempt_timeout_ms: u64,
    /// How long the whole call may take, retries and waits included.
    pub total_timeout_ms: u64,
    /// The longest server-given wait honoured as a floor.
    pub max_retry_after_ms: u64,
    /// The retry budget, or `None` for no budget.
    pub budget: Option<BudgetConfig>,
    /// The circuit breaker, or `None` for no breaker.
    pub breaker: Option<BreakerConfig>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_attempts: 3,
            base_delay_ms: 200,
            max_delay_ms: 20_000,
            jitter: Jitter::Full,
            attempt_timeout_ms: 60_000,
            total_timeout_ms: 180_000,
            max_retry_after_ms: 60_000,
            budget: Some(BudgetConfig::default()),
            breaker: Some(BreakerConfig::default()),
        }
    }
}

/// Budget options, in thousandths of a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BudgetOptions {
    /// The bucket's size.
    pub capacity_milli: Option<u64>,
    /// What a retry costs.
    pub retry_cost_milli: Option<u64>,
    /// What a retry after a timeout costs.
    pub timeout_cost_milli: Option<u64>,
    /// What a success puts back.
    pub success_refill_milli: Option<u64>,
    /// What the bucket regains each second.
    pub refill_per_second_milli: Option<u64>,
}

/// Breaker options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BreakerOptions {
    /// Failures in a row that open it.
    pub consecutive_failures: Option<u32>,
    /// The failure ratio that opens it, in thousandths (1–1000).
    pub failure_ratio_permille: Option<u32>,
    /// Calls in the window before the ratio counts.
    pub minimum_calls: Option<u32>,
    /// The ratio's window.
    pub window_ms: Option<u64>,
    /// How long it stays open before one probe.
    pub open_ms: Option<u64>,
}

/// A section that may be switched off (`budget: false`) or tuned (`budget: { … }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Section<T> {
    /// Not given: the defaults.
    #[default]
    Default,
    /// Switched off.
    Off,
    /// These fields over the defaults.
    On(T),
}

/// Policy options: every field optional (absent: the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PolicyOptions {
    /// Attempts per call, the first included.
    pub max_attempts: Option<u32>,
    /// The first backoff step.
    pub base_delay_ms: Option<u64>,
    /// The largest backoff step.
    pub max_delay_ms: Option<u64>,
    /// How backoff is randomized.
    pub jitter: Option<Jitter>,
    /// How long one attempt may take.
    pub attempt_timeout_ms: Option<u64>,
    /// How long the whole call may take.
    pub total_timeout_ms: Option<u64>,
    /// The longest server-given wait honoured.
    pub max_retry_after_ms: Option<u64>,
    /// The retry budget.
    pub budget: Section<BudgetOptions>,
    /// The circuit breaker.
    pub breaker: Section<BreakerOptions>,
}

/// A policy field, for [`PolicyError`] (the JS binding names each by its option name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyField {
    /// `max_attempts`.
    MaxAttempts,
    /// `base_delay_ms`.
    BaseDelayMs,
    /// `max_delay_ms`.
    MaxDelayMs,
    /// `attempt_timeout_ms`.
    AttemptTimeoutMs,
    /// `total_timeout_ms`.
    TotalTimeoutMs,
    /// `max_retry_after_ms`.
    MaxRetryAfterMs,
    /// `budget.capacity_milli`.
    BudgetCapacity,
    /// `budget.retry_cost_milli`.
    BudgetRetryCost,
    /// `budget.timeout_cost_milli`.
    BudgetTimeoutCost,
    /// `budget.success_refill_milli`.
    BudgetSuccessRefill,
    /// `budget.refill_per_second_milli`.
    BudgetRefillPerSecond,
    /// `breaker.consecutive_failures`.
    BreakerConsecutiveFailures,
    /// `breaker.failure_ratio_permille`.
    BreakerFailureRatio,
    /// `breaker.minimum_calls`.
    BreakerMinimumCalls,
    /// `breaker.window_ms`.
    BreakerWindowMs,
    /// `breaker.open_ms`.
    BreakerOpenMs,
}

impl PolicyField {
    /// Every field, in declaration order.
    pub const ALL: [PolicyField; 16] = [
        PolicyField::MaxAttempts,
        PolicyField::BaseDelayMs,
        PolicyField::MaxDelayMs,
        PolicyField::AttemptTimeoutMs,
        PolicyField::TotalTimeoutMs,
        PolicyField::MaxRetryAfterMs,
        PolicyField::BudgetCapacity,
        PolicyField::BudgetRetryCost,
        PolicyField::BudgetTimeoutCost,
        PolicyField::BudgetSuccessRefill,
        PolicyField::BudgetRefillPerSecond,
        PolicyField::BreakerConsecutiveFailures,
        PolicyField::BreakerFailureRatio,
        PolicyField::BreakerMinimumCalls,
        PolicyField::BreakerWindowMs,
        PolicyField::BreakerOpenMs,
    ];

    /// The Rust name (section and field).
    pub const fn as_str(self) -> &'static str {
        match self {
            PolicyField::MaxAttempts => "max_attempts",
            PolicyField::BaseDelayMs => "base_delay_ms",
            PolicyField::MaxDelayMs => "max_delay_ms",
            PolicyField::AttemptTimeoutMs => "attempt_timeout_ms",
            PolicyField::TotalTimeoutMs => "total_timeout_ms",
            PolicyField::MaxRetryAfterMs => "max_retry_after_ms",
            PolicyField::BudgetCapacity => "budget.capacity_milli",
            PolicyField::BudgetRetryCost => "budget.retry_cost_milli",
            PolicyField::BudgetTimeoutCost => "budget.timeout_cost_milli",
            PolicyField::BudgetSuccessRefill => "budget.success_refill_milli",
            PolicyField::BudgetRefillPerSecond => "budget.refill_per_second_milli",
            PolicyField::BreakerConsecutiveFailures => "breaker.consecutive_failures",
            PolicyField::BreakerFailureRatio => "breaker.failure_ratio_permille",
            PolicyField::BreakerMinimumCalls => "breaker.minimum_calls",
            PolicyField::BreakerWindowMs => "breaker.window_ms",
            PolicyField::BreakerOpenMs => "breaker.open_ms",
        }
    }

    /// The accepted range, inclusive.
    pub const fn range(self) -> (u64, u64) {
        match self {
            PolicyField::MaxAttempts => (1, MAX_ATTEMPTS as u64),
            PolicyField::BaseDelayMs | PolicyField::MaxDelayMs | PolicyField::MaxRetryAfterMs => (0, MAX_DURATION_MS),
            PolicyField::AttemptTimeoutMs
            | PolicyField::TotalTimeoutMs
            | PolicyField::BreakerWindowMs
            | PolicyField::BreakerOpenMs => (1, MAX_DURATION_MS),
            PolicyField::BudgetCapacity
            | PolicyField::BudgetRetryCost
            | PolicyField::BudgetTimeoutCost
            | PolicyField::BudgetSuccessRefill
            | PolicyField::BudgetRefillPerSecond => (0, MAX_TOKENS * 1000),
            PolicyField::BreakerConsecutiveFailures | PolicyField::BreakerMinimumCalls => (1, MAX_COUNT as u64),
            PolicyField::BreakerFailureRatio => (1, 1000),
        }
    }
}

/// What is wrong with an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyErrorKind {
    /// Below the field's range.
    TooSmall {
        /// The value given.
        value: u64,
        /// The smallest accepted.
        min: u64,
    },
    /// Past the field's range.
    TooLarge {
        /// The value given.
        value: u64,
        /// The largest accepted.
        max: u64,
    },
    /// `base_delay_ms` is larger than `max_delay_ms` (the field is `base_delay_ms`).
    BaseExceedsCap {
        /// `base_delay_ms`.
        base: u64,
        /// `max_delay_ms`.
        cap: u64,
    },
}

/// An invalid option: which field, and what is wrong with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyError {
    /// The field.
    pub field: PolicyField,
    /// What is wrong.
    pub kind: PolicyErrorKind,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = self.field.as_str();
        match self.kind {
            PolicyErrorKind::TooSmall { value, min } => write!(f, "{field} must be at least {min}, got {value}"),
            PolicyErrorKind::TooLarge { value, max } => write!(f, "{field} must be at most {max}, got {value}"),
            PolicyErrorKind::BaseExceedsCap { base, cap } => {
                write!(f, "{field} ({base}) must not exceed max_delay_ms ({cap})")
            }
        }
    }
}

impl std::error::Error for PolicyError {}

/// The largest count (`consecutive_failures`, `minimum_calls`) accepted.
pub const MAX_COUNT: u32 = 1_000_000;

/// `value` (or `default` when absent) within the field's range.
fn checked<T: Copy + Into<u64>>(field: PolicyField, value: Option<T>, default: T) -> Result<T, PolicyError> {
    let Some(v) = value else { return Ok(default) };
    let (min, max) = field.range();
    let n: u64 = v.into();
    if n < min {
        return Err(PolicyError { field, kind: PolicyErrorKind::TooSmall { value: n, min } });
    }
    if n > max {
        return Err(PolicyError { field, kind: PolicyErrorKind::TooLarge { value: n, max } });
    }
    Ok(v)
}

impl Policy {
    /// Validates options over the defaults.
    pub fn new(o: &PolicyOptions) -> Result<Policy, PolicyError> {
        use PolicyField as F;
        let d = Policy::default();
        let base_delay_ms = checked(F::BaseDelayMs, o.base_delay_ms, d.base_delay_ms)?;
        let max_delay_ms = checked(F::MaxDelayMs, o.max_delay_ms, d.max_delay_ms)?;
        if base_delay_ms > max_delay_ms {
            return Err(PolicyError {
                field: F::BaseDelayMs,
                kind: PolicyErrorKind::BaseExceedsCap { base: base_delay_ms, cap: max_delay_ms },
            });
        }
        let budget = match o.budget {
            Section::Off => None,
            Section::Default => d.budget,
            Section::On(b) => {
                let def = BudgetConfig::default();
                Some(BudgetConfig {
                    capacity_milli: checked(F::BudgetCapacity, b.capacity_milli, def.capacity_milli)?,
                    retry_cost_milli: checked(F::BudgetRetryCost, b.retry_cost_milli, def.retry_cost_milli)?,
                    timeout_cost_milli: checked(F::BudgetTimeoutCost, b.timeout_cost_milli, def.timeout_cost_milli)?,
                    success_refill_milli: checked(
                        F::BudgetSuccessRefill,
                        b.success_refill_milli,
                        def.success_refill_milli,
                    )?,
                    refill_per_second_milli: checked(
                        F::BudgetRefillPerSecond,
                        b.refill_per_second_milli,
                        def.refill_per_second_milli,
                    )?,
                })
            }
        };
        let breaker = match o.breaker {
            Section::Off => None,
            Section::Default => d.breaker,
            Section::On(b) => {
                let def = BreakerConfig::default();
                Some(BreakerConfig {
                    consecutive_failures: checked(
                        F::BreakerConsecutiveFailures,
                        b.consecutive_failures,
                        def.consecutive_failures,
                    )?,
                    failure_ratio_permille: checked(
                        F::BreakerFailureRatio,
                        b.failure_ratio_permille,
                        def.failure_ratio_permille,
                    )?,
                    minimum_calls: checked(F::BreakerMinimumCalls, b.minimum_calls, def.minimum_calls)?,
                    window_ms: checked(F::BreakerWindowMs, b.window_ms, def.window_ms)?,
                    open_ms: checked(F::BreakerOpenMs, b.open_ms, def.open_ms)?,
                })
            }
        };
        Ok(Policy {
            max_attempts: checked(F::MaxAttempts, o.max_attempts, d.max_attempts)?,
            base_delay_ms,
            max_delay_ms,
            jitter: o.jitter.unwrap_or(d.jitter),
            attempt_timeout_ms: checked(F::AttemptTimeoutMs, o.attempt_timeout_ms, d.attempt_timeout_ms)?,
            total_timeout_ms: checked(F::TotalTimeoutMs, o.total_timeout_ms, d.total_timeout_ms)?,
            max_retry_after_ms: checked(F::MaxRetryAfterMs, o.max_retry_after_ms, d.max_retry_after_ms)?,
            budget,
            breaker,
        })
    }
}

#[cfg(test)]
mod tests;
