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
//! | `budget` | 10 tokens, retry 1, timeout 2, success +0.1 | AWS's token bucket, scaled to one client |
//! | `breaker` | 5 in a row, or 50 % of ≥ 10 in 10 s; open 2 s, then one probe | cockatiel, Envoy, Hystrix; 2 s: the storm simulator's recovery |
//!
//! Input arrives as [`PolicyOptions`] (raw, as a JS caller may send it: every number an `f64`) and leaves as
//! [`Policy`] or a [`PolicyError`]: NaN, ±∞, negative, fractional counts, zero where zero makes no sense,
//! values past a sane maximum and `baseDelayMs > maxDelayMs` are each rejected by name.

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

/// Budget options as a caller sends them, in whole tokens.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BudgetOptions {
    /// `capacity`.
    pub capacity: Option<f64>,
    /// `retryCost`.
    pub retry_cost: Option<f64>,
    /// `timeoutCost`.
    pub timeout_cost: Option<f64>,
    /// `successRefill`.
    pub success_refill: Option<f64>,
}

/// Breaker options as a caller sends them.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BreakerOptions {
    /// `consecutiveFailures`.
    pub consecutive_failures: Option<f64>,
    /// `failureRatio`, in `(0, 1]`.
    pub failure_ratio: Option<f64>,
    /// `minimumCalls`.
    pub minimum_calls: Option<f64>,
    /// `windowMs`.
    pub window_ms: Option<f64>,
    /// `openMs`.
    pub open_ms: Option<f64>,
}

/// A section that may be switched off (`budget: false`) or tuned (`budget: { … }`).
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Section<T> {
    /// Not given: the defaults.
    #[default]
    Default,
    /// `false`: switched off.
    Off,
    /// An object: these fields over the defaults.
    On(T),
}

/// Policy options as a caller sends them: every field optional, every number raw.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PolicyOptions {
    /// `maxAttempts`.
    pub max_attempts: Option<f64>,
    /// `baseDelayMs`.
    pub base_delay_ms: Option<f64>,
    /// `maxDelayMs`.
    pub max_delay_ms: Option<f64>,
    /// `jitter`: `full`, `equal`, `decorrelated` or `none`.
    pub jitter: Option<String>,
    /// `attemptTimeoutMs`.
    pub attempt_timeout_ms: Option<f64>,
    /// `totalTimeoutMs`.
    pub total_timeout_ms: Option<f64>,
    /// `maxRetryAfterMs`.
    pub max_retry_after_ms: Option<f64>,
    /// `budget`.
    pub budget: Section<BudgetOptions>,
    /// `breaker`.
    pub breaker: Section<BreakerOptions>,
}

/// What is wrong with an option.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PolicyErrorKind {
    /// NaN or ±∞.
    NotFinite(f64),
    /// Below zero.
    Negative(f64),
    /// A count with a fraction.
    NotInteger(f64),
    /// Below the smallest accepted value.
    TooSmall {
        /// The value given.
        value: f64,
        /// The smallest accepted.
        min: f64,
    },
    /// Past the largest accepted value.
    TooLarge {
        /// The value given.
        value: f64,
        /// The largest accepted.
        max: f64,
    },
    /// `baseDelayMs` is larger than `maxDelayMs`.
    BaseExceedsCap {
        /// `baseDelayMs`.
        base: u64,
        /// `maxDelayMs`.
        cap: u64,
    },
    /// A string that is none of the accepted names.
    InvalidValue {
        /// The value given.
        value: String,
        /// The accepted names.
        expected: &'static str,
    },
    /// A value of the wrong JS type (reported by the binding).
    WrongType {
        /// What was expected.
        expected: &'static str,
        /// What was given (`typeof`, or `null`).
        got: String,
    },
    /// A field this version does not know (a typo would otherwise be silently ignored).
    UnknownField,
}

/// An invalid option: which field (dotted JS name, e.g. `budget.capacity`) and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyError {
    /// The option's JS name, dotted for nested options.
    pub field: String,
    /// What is wrong.
    pub kind: PolicyErrorKind,
}

impl PolicyError {
    /// A stable snake_case code for the kind of error.
    pub const fn code(&self) -> &'static str {
        match self.kind {
            PolicyErrorKind::NotFinite(_) => "not_finite",
            PolicyErrorKind::Negative(_) => "negative",
            PolicyErrorKind::NotInteger(_) => "not_integer",
            PolicyErrorKind::TooSmall { .. } => "too_small",
            PolicyErrorKind::TooLarge { .. } => "too_large",
            PolicyErrorKind::BaseExceedsCap { .. } => "base_exceeds_cap",
            PolicyErrorKind::InvalidValue { .. } => "invalid_value",
            PolicyErrorKind::WrongType { .. } => "invalid_type",
            PolicyErrorKind::UnknownField => "unknown_option",
        }
    }

    /// Whether JS should see a `TypeError` (wrong kind of value) rather than a `RangeError` (a value out
    /// of range).
    pub const fn is_type_error(&self) -> bool {
        matches!(self.kind, PolicyErrorKind::WrongType { .. } | PolicyErrorKind::UnknownField)
    }
}

/// Displays an `f64` the way JavaScript would name it (`NaN`, `Infinity`, `2.5`, `1e+300`-ish), without
/// core's float formatter: that one costs about 20 KB of wasm, a fifth of the module.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v.is_nan() {
            return f.write_str("NaN");
        }
        if v.is_infinite() {
            return f.write_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
        }
        let sign = if v < 0.0 { "-" } else { "" };
        let a = v.abs();
        if a >= 1e15 {
            // Scientific, three decimals: divide down without libm.
            let (mut m, mut e) = (a, 0u32);
            while m >= 10.0 {
                m /= 10.0;
                e = e.saturating_add(1);
            }
            let milli = (m * 1000.0).round() as u64;
            return write!(f, "{sign}{}.{:03}e+{e}", milli / 1000, milli % 1000);
        }
        let whole = a.trunc() as u64;
        let micro = ((a - a.trunc()) * 1e6).round() as u64;
        let (whole, micro) = if micro >= 1_000_000 { (whole.saturating_add(1), 0) } else { (whole, micro) };
        if micro == 0 {
            return write!(f, "{sign}{whole}");
        }
        let mut digits = micro;
        let mut width = 6usize;
        while digits % 10 == 0 {
            digits /= 10;
            width = width.saturating_sub(1);
        }
        write!(f, "{sign}{whole}.{digits:0width$}")
    }
}

/// Displays a string in double quotes without core's `Debug` escaping (which brings Unicode tables).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars().take(64) {
            if c.is_control() {
                f.write_str("?")?;
            } else {
                fmt::Write::write_char(f, c)?;
            }
        }
        f.write_str(if self.0.chars().nth(64).is_some() { "…\"" } else { "\"" })
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = &self.field;
        match &self.kind {
            PolicyErrorKind::NotFinite(v) => write!(f, "{field} must be a finite number, got {}", Num(*v)),
            PolicyErrorKind::Negative(v) => write!(f, "{field} must not be negative, got {}", Num(*v)),
            PolicyErrorKind::NotInteger(v) => write!(f, "{field} must be a whole number, got {}", Num(*v)),
            PolicyErrorKind::TooSmall { value, min } => {
                write!(f, "{field} must be at least {}, got {}", Num(*min), Num(*value))
            }
            PolicyErrorKind::TooLarge { value, max } => {
                write!(f, "{field} must be at most {}, got {}", Num(*max), Num(*value))
            }
            PolicyErrorKind::BaseExceedsCap { base, cap } => {
                write!(f, "{field} ({base}) must not exceed maxDelayMs ({cap})")
            }
            PolicyErrorKind::InvalidValue { value, expected } => {
                write!(f, "{field} must be one of {expected}, got {}", Quoted(value))
            }
            PolicyErrorKind::WrongType { expected, got } => write!(f, "{field} must be {expected}, got {got}"),
            PolicyErrorKind::UnknownField => write!(f, "{field} is not a known option"),
        }
    }
}

impl std::error::Error for PolicyError {}

/// Checks a raw number: finite, not negative, within `[min, max]`, and whole when `integer`.
/// Returns it rounded to an integer (durations are whole milliseconds; fractions of a ms are dropped).
pub fn check_number(field: &str, value: f64, min: u64, max: u64, integer: bool) -> Result<u64, PolicyError> {
    let err = |kind| Err(PolicyError { field: field.to_owned(), kind });
    if !value.is_finite() {
        return err(PolicyErrorKind::NotFinite(value));
    }
    if value < 0.0 {
        return err(PolicyErrorKind::Negative(value));
    }
    if integer && value.fract() != 0.0 {
        return err(PolicyErrorKind::NotInteger(value));
    }
    // Compare in f64 before converting, so that huge values are named, not saturated.
    if value > max as f64 {
        return err(PolicyErrorKind::TooLarge { value, max: max as f64 });
    }
    if value < min as f64 {
        return err(PolicyErrorKind::TooSmall { value, min: min as f64 });
    }
    // In range [0, max ≤ 2^53]: the cast is exact for integers and truncates fractions.
    Ok(value as u64)
}

fn field_or(
    field: &str,
    value: Option<f64>,
    default: u64,
    min: u64,
    max: u64,
    integer: bool,
) -> Result<u64, PolicyError> {
    match value {
        Some(v) => check_number(field, v, min, max, integer),
        None => Ok(default),
    }
}

fn tokens(field: &str, value: Option<f64>, default_milli: u64) -> Result<u64, PolicyError> {
    match value {
        None => Ok(default_milli),
        Some(v) => {
            check_number(field, v, 0, MAX_TOKENS, false)?;
            // Finite, in [0, 1e6]: the product is at most 1e9 and exact enough.
            Ok((v * 1000.0).round() as u64)
        }
    }
}

impl Policy {
    /// Validates raw options over the defaults.
    pub fn from_options(o: &PolicyOptions) -> Result<Policy, PolicyError> {
        let d = Policy::default();
        let max_attempts =
            field_or("maxAttempts", o.max_attempts, d.max_attempts.into(), 1, MAX_ATTEMPTS.into(), true)?;
        let base_delay_ms = field_or("baseDelayMs", o.base_delay_ms, d.base_delay_ms, 0, MAX_DURATION_MS, false)?;
        let max_delay_ms = field_or("maxDelayMs", o.max_delay_ms, d.max_delay_ms, 0, MAX_DURATION_MS, false)?;
        if base_delay_ms > max_delay_ms {
            return Err(PolicyError {
                field: "baseDelayMs".into(),
                kind: PolicyErrorKind::BaseExceedsCap { base: base_delay_ms, cap: max_delay_ms },
            });
        }
        let jitter = match &o.jitter {
            None => d.jitter,
            Some(s) => s.parse().map_err(|()| PolicyError {
                field: "jitter".into(),
                kind: PolicyErrorKind::InvalidValue { value: s.clone(), expected: "full, equal, decorrelated, none" },
            })?,
        };
        let attempt_timeout_ms =
            field_or("attemptTimeoutMs", o.attempt_timeout_ms, d.attempt_timeout_ms, 1, MAX_DURATION_MS, false)?;
        let total_timeout_ms =
            field_or("totalTimeoutMs", o.total_timeout_ms, d.total_timeout_ms, 1, MAX_DURATION_MS, false)?;
        let max_retry_after_ms =
            field_or("maxRetryAfterMs", o.max_retry_after_ms, d.max_retry_after_ms, 0, MAX_DURATION_MS, false)?;

        let budget = match &o.budget {
            Section::Off => None,
            Section::Default => d.budget,
            Section::On(b) => {
                let def = BudgetConfig::default();
                Some(BudgetConfig {
                    capacity_milli: tokens("budget.capacity", b.capacity, def.capacity_milli)?,
                    retry_cost_milli: tokens("budget.retryCost", b.retry_cost, def.retry_cost_milli)?,
                    timeout_cost_milli: tokens("budget.timeoutCost", b.timeout_cost, def.timeout_cost_milli)?,
                    success_refill_milli: tokens("budget.successRefill", b.success_refill, def.success_refill_milli)?,
                })
            }
        };
        let breaker = match &o.breaker {
            Section::Off => None,
            Section::Default => d.breaker,
            Section::On(b) => {
                let def = BreakerConfig::default();
                let ratio_permille = match b.failure_ratio {
                    None => def.failure_ratio_permille,
                    Some(r) => {
                        let err = |kind| PolicyError { field: "breaker.failureRatio".into(), kind };
                        if !r.is_finite() {
                            return Err(err(PolicyErrorKind::NotFinite(r)));
                        }
                        if r < 0.0 {
                            return Err(err(PolicyErrorKind::Negative(r)));
                        }
                        if r > 1.0 {
                            return Err(err(PolicyErrorKind::TooLarge { value: r, max: 1.0 }));
                        }
                        if r < 0.001 {
                            return Err(err(PolicyErrorKind::TooSmall { value: r, min: 0.001 }));
                        }
                        (r * 1000.0).round() as u32
                    }
                };
                let count = |field, v, def: u32| -> Result<u32, PolicyError> {
                    let n = field_or(field, v, def.into(), 1, 1_000_000, true)?;
                    Ok(u32::try_from(n).unwrap_or(u32::MAX))
                };
                Some(BreakerConfig {
                    consecutive_failures: count(
                        "breaker.consecutiveFailures",
                        b.consecutive_failures,
                        def.consecutive_failures,
                    )?,
                    failure_ratio_permille: ratio_permille,
                    minimum_calls: count("breaker.minimumCalls", b.minimum_calls, def.minimum_calls)?,
                    window_ms: field_or("breaker.windowMs", b.window_ms, def.window_ms, 1, MAX_DURATION_MS, false)?,
                    open_ms: field_or("breaker.openMs", b.open_ms, def.open_ms, 1, MAX_DURATION_MS, false)?,
                })
            }
        };
        Ok(Policy {
            max_attempts: u32::try_from(max_attempts).unwrap_or(MAX_ATTEMPTS),
            base_delay_ms,
            max_delay_ms,
            jitter,
            attempt_timeout_ms,
            total_timeout_ms,
            max_retry_after_ms,
            budget,
            breaker,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(o: PolicyOptions) -> (String, &'static str) {
        match Policy::from_options(&o) {
            Err(e) => (e.field.clone(), e.code()),
            Ok(p) => (format!("accepted {p:?}"), ""),
        }
    }

    #[test]
    fn empty_options_are_the_defaults() {
        assert_eq!(Policy::from_options(&PolicyOptions::default()), Ok(Policy::default()));
    }

    #[test]
    fn bad_numbers_are_named() {
        let cases: Vec<(PolicyOptions, &str, &str)> = vec![
            (PolicyOptions { max_attempts: Some(f64::NAN), ..Default::default() }, "maxAttempts", "not_finite"),
            (PolicyOptions { max_attempts: Some(0.0), ..Default::default() }, "maxAttempts", "too_small"),
            (PolicyOptions { max_attempts: Some(2.5), ..Default::default() }, "maxAttempts", "not_integer"),
            (PolicyOptions { max_attempts: Some(1e300), ..Default::default() }, "maxAttempts", "too_large"),
            (PolicyOptions { base_delay_ms: Some(-1.0), ..Default::default() }, "baseDelayMs", "negative"),
            (PolicyOptions { max_delay_ms: Some(f64::INFINITY), ..Default::default() }, "maxDelayMs", "not_finite"),
            (
                PolicyOptions { base_delay_ms: Some(500.0), max_delay_ms: Some(100.0), ..Default::default() },
                "baseDelayMs",
                "base_exceeds_cap",
            ),
            (PolicyOptions { jitter: Some("fast".into()), ..Default::default() }, "jitter", "invalid_value"),
            (PolicyOptions { attempt_timeout_ms: Some(0.0), ..Default::default() }, "attemptTimeoutMs", "too_small"),
            (
                PolicyOptions { total_timeout_ms: Some(f64::NEG_INFINITY), ..Default::default() },
                "totalTimeoutMs",
                "not_finite",
            ),
            (PolicyOptions { max_retry_after_ms: Some(1e12), ..Default::default() }, "maxRetryAfterMs", "too_large"),
            (
                PolicyOptions {
                    budget: Section::On(BudgetOptions { capacity: Some(-0.5), ..Default::default() }),
                    ..Default::default()
                },
                "budget.capacity",
                "negative",
            ),
            (
                PolicyOptions {
                    breaker: Section::On(BreakerOptions { failure_ratio: Some(1.5), ..Default::default() }),
                    ..Default::default()
                },
                "breaker.failureRatio",
                "too_large",
            ),
            (
                PolicyOptions {
                    breaker: Section::On(BreakerOptions { failure_ratio: Some(0.0), ..Default::default() }),
                    ..Default::default()
                },
                "breaker.failureRatio",
                "too_small",
            ),
            (
                PolicyOptions {
                    breaker: Section::On(BreakerOptions { consecutive_failures: Some(0.0), ..Default::default() }),
                    ..Default::default()
                },
                "breaker.consecutiveFailures",
                "too_small",
            ),
        ];
        for (o, field, code) in cases {
            assert_eq!(err(o), (field.to_owned(), code));
        }
    }

    #[test]
    fn sections_switch_off_and_tune() {
        let p = Policy::from_options(&PolicyOptions {
            budget: Section::Off,
            breaker: Section::On(BreakerOptions {
                open_ms: Some(2500.0),
                failure_ratio: Some(0.25),
                ..Default::default()
            }),
            max_attempts: Some(5.0),
            jitter: Some("decorrelated".into()),
            ..Default::default()
        });
        let p = p.map_err(|e| e.to_string());
        let p = match p {
            Ok(p) => p,
            Err(e) => unreachable!("{e}"),
        };
        assert_eq!(p.budget, None);
        assert_eq!(p.max_attempts, 5);
        assert_eq!(p.jitter, Jitter::Decorrelated);
        let b = p.breaker.unwrap_or(BreakerConfig { open_ms: 0, ..BreakerConfig::default() });
        assert_eq!((b.open_ms, b.failure_ratio_permille, b.consecutive_failures), (2500, 250, 5));
    }

    #[test]
    fn numbers_display_like_javascript() {
        let cases = [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (-1.0, "-1"),
            (2.5, "2.5"),
            (0.001, "0.001"),
            (1.9999999, "2"),
            (123456.25, "123456.25"),
            (1e300, "1.000e+300"),
            (-2.5e20, "-2.500e+20"),
            (f64::MAX, "1.798e+308"),
        ];
        for (v, want) in cases {
            assert_eq!(Num(v).to_string(), want, "{v}");
        }
        assert_eq!(Quoted("fast").to_string(), "\"fast\"");
        assert_eq!(Quoted("a\nb").to_string(), "\"a?b\"");
        assert_eq!(Quoted(&"x".repeat(100)).to_string().chars().count(), 67);
    }

    #[test]
    fn messages_read_well() {
        let e = PolicyError { field: "maxAttempts".into(), kind: PolicyErrorKind::NotFinite(f64::NAN) };
        assert_eq!(e.to_string(), "maxAttempts must be a finite number, got NaN");
        assert!(!e.is_type_error());
    }
}
