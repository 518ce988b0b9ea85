//! `policy`'s own tests.

use super::*;

fn err(o: PolicyOptions) -> Option<(PolicyField, PolicyErrorKind)> {
    Policy::new(&o).err().map(|e| (e.field, e.kind))
}

#[test]
fn empty_options_are_the_defaults() {
    assert_eq!(Policy::new(&PolicyOptions::default()), Ok(Policy::default()));
}

#[test]
fn out_of_range_values_are_named() {
    use PolicyErrorKind::{TooLarge, TooSmall};
    use PolicyField as F;
    let small = |value, min| Some(TooSmall { value, min });
    let cases = [
        (PolicyOptions { max_attempts: Some(0), ..Default::default() }, F::MaxAttempts, small(0, 1)),
        (
            PolicyOptions { max_attempts: Some(101), ..Default::default() },
            F::MaxAttempts,
            Some(TooLarge { value: 101, max: 100 }),
        ),
        (PolicyOptions { attempt_timeout_ms: Some(0), ..Default::default() }, F::AttemptTimeoutMs, small(0, 1)),
        (
            PolicyOptions { max_retry_after_ms: Some(MAX_DURATION_MS + 1), ..Default::default() },
            F::MaxRetryAfterMs,
            Some(TooLarge { value: MAX_DURATION_MS + 1, max: MAX_DURATION_MS }),
        ),
        (
            PolicyOptions {
                budget: Section::On(BudgetOptions { capacity_milli: Some(u64::MAX), ..Default::default() }),
                ..Default::default()
            },
            F::BudgetCapacity,
            Some(TooLarge { value: u64::MAX, max: 1_000_000_000 }),
        ),
        (
            PolicyOptions {
                breaker: Section::On(BreakerOptions { failure_ratio_permille: Some(1001), ..Default::default() }),
                ..Default::default()
            },
            F::BreakerFailureRatio,
            Some(TooLarge { value: 1001, max: 1000 }),
        ),
        (
            PolicyOptions {
                breaker: Section::On(BreakerOptions { consecutive_failures: Some(0), ..Default::default() }),
                ..Default::default()
            },
            F::BreakerConsecutiveFailures,
            small(0, 1),
        ),
    ];
    for (o, field, kind) in cases {
        assert_eq!(err(o), kind.map(|k| (field, k)), "{field:?}");
    }
    let e = Policy::new(&PolicyOptions { base_delay_ms: Some(500), max_delay_ms: Some(100), ..Default::default() });
    assert_eq!(e.map_err(|e| e.to_string()), Err("base_delay_ms (500) must not exceed max_delay_ms (100)".to_owned()));
}

#[test]
fn sections_switch_off_and_tune() {
    let p = Policy::new(&PolicyOptions {
        budget: Section::Off,
        breaker: Section::On(BreakerOptions {
            open_ms: Some(2500),
            failure_ratio_permille: Some(250),
            ..Default::default()
        }),
        max_attempts: Some(5),
        jitter: Some(Jitter::Decorrelated),
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
fn every_field_has_a_name_and_a_range() {
    for f in PolicyField::ALL {
        let (min, max) = f.range();
        assert!(min < max && !f.as_str().is_empty(), "{f:?}");
    }
}
