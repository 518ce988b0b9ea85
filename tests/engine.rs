//! The engine's own wiring, natively: each test fails if one wire is cut — the budget never spent, "maybe
//! delivered" never set, jitter drawn as 0, a retry's cost refunded on success.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::retry::{
    AttemptOutcome as O, Decision, Engine, FinalStatus, Policy, Reason, ResultType, Revision, Safety, Sent,
};

const OK: O = O::Result { is_error: false, result_type: ResultType::Complete };
const NOT_SENT: O = O::Network { sent: Sent::No };
const BAD_REQUEST: O = O::Http { status: 400, retry_after_ms: None, had_session: false, jsonrpc_code: None };
const REV: Revision = Revision::LATEST;

/// One attempt: admit, then record `outcome` at `now`.
fn attempt(
    e: &mut Engine,
    call: &mut mcp_retry_policy::retry::CallState,
    outcome: &O,
    safety: Safety,
    now: u64,
    random: u64,
) -> Decision {
    match e.admit(call, now) {
        Ok(_) => e.record(call, outcome, safety, REV, now, random).decision,
        Err(stop) => stop,
    }
}

#[test]
fn a_retry_spends_budget_tokens_and_a_timeout_spends_more() {
    let mut e = Engine::new(Policy::default());
    let full = e.budget_milli().unwrap();
    let mut call = e.begin(0);
    assert!(attempt(&mut e, &mut call, &NOT_SENT, Safety::ReadOnly, 0, 7).is_retry());
    assert_eq!(e.budget_milli().unwrap(), full - 1_000, "a retry after a transient failure costs one token");
    assert!(attempt(&mut e, &mut call, &O::Timeout, Safety::ReadOnly, 10, 7).is_retry());
    assert_eq!(e.budget_milli().unwrap(), full - 3_000, "a retry after a timeout costs two");
}

#[test]
fn a_retry_that_succeeds_is_not_refunded() {
    // gRPC-style throttling: the cost of a retry stays spent; a success returns 0.1 token.
    let mut e = Engine::new(Policy { breaker: None, ..Policy::default() });
    let full = e.budget_milli().unwrap();
    let mut call = e.begin(0);
    assert!(attempt(&mut e, &mut call, &NOT_SENT, Safety::Unsafe, 0, 7).is_retry());
    let end = attempt(&mut e, &mut call, &OK, Safety::Unsafe, 10, 7);
    assert_eq!(end, Decision::stop(FinalStatus::Succeeded, Reason::Succeeded));
    assert_eq!(e.budget_milli().unwrap(), full - 900, "the retry is not refunded; the success returns 0.1");
    // Fail-then-succeed forever: the budget runs dry after capacity / (cost - refill) calls and binds.
    let mut retried = 0;
    for i in 0..100u64 {
        let mut call = e.begin(i * 1_000);
        if attempt(&mut e, &mut call, &NOT_SENT, Safety::Unsafe, i * 1_000, 7).is_retry() {
            retried += 1;
            attempt(&mut e, &mut call, &OK, Safety::Unsafe, i * 1_000 + 1, 7);
        }
    }
    assert!(retried < 15, "the budget must bind under a brownout: {retried} of 100 calls retried");
}

#[test]
fn an_empty_budget_stops_the_retry() {
    // No breaker, so that only the budget can stop these retries.
    let mut e = Engine::new(Policy { breaker: None, ..Policy::default() });
    let mut stops = 0;
    for i in 0..30u64 {
        let mut call = e.begin(i * 100_000);
        let d = attempt(&mut e, &mut call, &NOT_SENT, Safety::ReadOnly, i * 100_000, 7);
        if d == Decision::stop(FinalStatus::Failed, Reason::BudgetExhausted) {
            stops += 1;
        }
    }
    assert_eq!(stops, 20, "10 tokens, 1 per retry: calls 11..30 stop on the budget");
}

#[test]
fn once_maybe_delivered_every_later_stop_is_unknown() {
    // Attempt 1 times out (maybe delivered); attempt 2 is refused before dispatch. The call is unknown, not
    // failed: attempt 1 may have acted.
    let mut e = Engine::new(Policy::default());
    let mut call = e.begin(0);
    assert!(attempt(&mut e, &mut call, &O::Timeout, Safety::Idempotent, 0, 7).is_retry());
    assert!(call.maybe_delivered);
    let d = attempt(&mut e, &mut call, &BAD_REQUEST, Safety::Idempotent, 10, 7);
    assert_eq!(d, Decision::stop(FinalStatus::Unknown, Reason::Permanent));
    // Same for running out of attempts on not-sent failures after a maybe-delivered one.
    let mut call = e.begin(0);
    attempt(&mut e, &mut call, &O::Timeout, Safety::Keyed, 0, 7);
    attempt(&mut e, &mut call, &NOT_SENT, Safety::Keyed, 10, 7);
    let d = attempt(&mut e, &mut call, &NOT_SENT, Safety::Keyed, 20, 7);
    assert_eq!(d, Decision::stop(FinalStatus::Unknown, Reason::MaxAttempts));
    // And an unsafe tool is not re-sent after a not-sent failure that follows a maybe-delivered one.
    let mut call = e.begin(0);
    let first = attempt(&mut e, &mut call, &O::Network { sent: Sent::Maybe }, Safety::Unsafe, 0, 7);
    assert_eq!(first, Decision::stop(FinalStatus::Unknown, Reason::UnsafeAfterUnknown));
}

#[test]
fn jitter_uses_the_random_bits() {
    // Full jitter: delay = random share of base·2^n. Random bits of all ones give (nearly) the whole step;
    // different bits give different delays. An engine that drew jitter as 0 would return 0 every time.
    let mut delays = Vec::new();
    for random in [u64::MAX, u64::MAX / 2, u64::MAX / 3, 12_345_678_901_234_567] {
        let mut e = Engine::new(Policy::default());
        let mut call = e.begin(0);
        match attempt(&mut e, &mut call, &NOT_SENT, Safety::ReadOnly, 0, random) {
            Decision::Retry { delay_ms, .. } => delays.push(delay_ms),
            d => panic!("expected a retry, got {d:?}"),
        }
    }
    assert!(delays[0] >= 190 && delays[0] <= 200, "all-ones random bits give the whole first step: {delays:?}");
    let mut distinct = delays.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), delays.len(), "different random bits, different delays: {delays:?}");
}
