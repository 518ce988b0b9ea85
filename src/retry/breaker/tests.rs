//! `breaker`'s own tests.

use super::*;

fn cfg() -> BreakerConfig {
    BreakerConfig {
        consecutive_failures: 3,
        failure_ratio_permille: 500,
        minimum_calls: 4,
        window_ms: 1_000,
        open_ms: 500,
    }
}

#[test]
fn opens_on_a_run_then_probes_then_closes() {
    let mut b = Breaker::new(cfg());
    assert_eq!(b.record(0, true), None);
    assert_eq!(b.record(1, true), None);
    let t = b.record(2, true);
    assert_eq!(t.map(|t| t.to), Some(BreakerState::Open { until_ms: 502 }));
    assert_eq!(b.admit(100), (false, None));
    let (ok, t) = b.admit(502);
    assert!(ok);
    assert_eq!(t.map(|t| t.to), Some(BreakerState::HalfOpen { probe_ms: 502 }));
    assert_eq!(b.admit(503), (false, None), "one probe at a time");
    assert_eq!(b.record(600, false).map(|t| t.to), Some(BreakerState::Closed));
    assert_eq!(b.admit(601), (true, None));
}

#[test]
fn failed_probe_reopens_and_lost_probe_is_replaced() {
    let mut b = Breaker::new(cfg());
    for t in 0..3 {
        b.record(t, true);
    }
    assert!(b.admit(600).0);
    assert_eq!(b.record(650, true).map(|t| t.to), Some(BreakerState::Open { until_ms: 1150 }));
    assert!(b.admit(1150).0);
    assert!(!b.admit(1200).0);
    assert!(b.admit(1650).0, "a probe that never reported is replaced after open_ms");
}

#[test]
fn a_probe_in_flight_is_not_doubled_and_a_cancelled_one_frees_its_slot() {
    let mut b = Breaker::new(cfg()).with_probe_timeout(60_000);
    for t in 0..3 {
        b.record(t, true);
    }
    assert!(b.admit(502).0, "the probe");
    assert!(!b.admit(1_100).0, "a hanging probe is not replaced after open_ms");
    assert!(!b.admit(60_501).0);
    assert!(b.admit(60_502).0, "…only after the probe timeout");
    b.cancel();
    let (ok, t) = b.admit(60_503);
    assert!(ok && t.is_none(), "a cancelled probe frees its slot at once");
    assert!(!b.admit(60_504).0, "one probe at a time");
    assert_eq!(b.record(60_600, false).map(|t| t.to), Some(BreakerState::Closed));
    // Cancelling outside half-open changes nothing.
    b.cancel();
    assert_eq!(b.state(), BreakerState::Closed);
    // A probe timeout below open_ms is raised to it.
    assert_eq!(Breaker::new(cfg()).with_probe_timeout(1).probe_timeout_ms, 500);
}

#[test]
fn opens_on_ratio_in_a_window_and_windows_roll() {
    let mut b = Breaker::new(cfg());
    // fail, ok, fail, ok: 2 of 4 = 50 % → opens on the 4th call only if that one failed.
    b.record(0, true);
    b.record(1, false);
    b.record(2, true);
    assert_eq!(b.record(3, false), None);
    assert!(b.record(4, true).is_some(), "3 of 5 failed");
    let mut b = Breaker::new(cfg());
    b.record(0, true);
    b.record(1, false);
    // A new window forgets the old one.
    b.record(2_000, true);
    b.record(2_001, false);
    assert_eq!(b.record(2_002, false), None);
    assert_eq!(b.state(), BreakerState::Closed);
}

#[test]
fn successes_never_open_and_backwards_clocks_do_not_panic() {
    let mut b = Breaker::new(cfg());
    for t in (0..100).rev() {
        assert_eq!(b.record(t, false), None);
    }
    assert_eq!(b.record(u64::MAX, true), None);
    assert_eq!(b.record(0, true), None);
    assert!(b.record(u64::MAX, true).is_some());
    assert_eq!(b.open_until(), Some(u64::MAX));
}

fn open_at(t: u64) -> BreakerSnapshot {
    BreakerSnapshot { state: SharedState::Open, since_ms: t }
}

#[test]
fn adopts_a_newer_open_state_and_fails_fast_until_its_own_open_time() {
    let mut b = Breaker::new(cfg());
    b.record(10, true); // a failure counted locally
    let t = b.adopt(open_at(100));
    assert_eq!(t, Some(Transition { from: BreakerState::Closed, to: BreakerState::Open { until_ms: 600 } }));
    assert_eq!(b.snapshot(), open_at(100));
    assert!(!b.probe_due(599));
    assert_eq!(b.admit(599), (false, None));
    assert!(b.probe_due(600));
    // Adopting is idempotent; an older or equal snapshot changes nothing.
    assert_eq!(b.adopt(open_at(100)), None);
    assert_eq!(b.adopt(open_at(50)), None);
    assert_eq!(b.adopt(BreakerSnapshot { state: SharedState::Closed, since_ms: 99 }), None);
    assert_eq!(b.state(), BreakerState::Open { until_ms: 600 });
    // A later open moves the time on, without a transition (still open).
    assert_eq!(b.adopt(open_at(300)), None);
    assert_eq!(b.open_until(), Some(800));
    // The counts started again: two failures after a shared close do not open a 3-in-a-row breaker.
    assert!(b.adopt(BreakerSnapshot { state: SharedState::Closed, since_ms: 900 }).is_some());
    assert_eq!(b.record(901, true), None);
    assert_eq!(b.record(902, true), None);
    assert!(b.record(903, true).is_some(), "its own third failure opens it");
}

#[test]
fn a_probe_out_elsewhere_holds_this_one_back_until_that_probe_time_is_up() {
    let mut b = Breaker::new(cfg()).with_probe_timeout(1_000);
    for t in 0..3 {
        b.record(t, true);
    }
    assert!(b.probe_due(502));
    let t = b.adopt(BreakerSnapshot { state: SharedState::HalfOpen, since_ms: 502 });
    assert_eq!(t.map(|t| t.to), Some(BreakerState::HalfOpen { probe_ms: 502 }));
    assert!(!b.probe_due(1_501));
    assert_eq!(b.admit(1_000), (false, None), "another process's probe is out");
    // That probe failed: open again from its report.
    assert_eq!(b.adopt(open_at(700)).map(|t| t.to), Some(BreakerState::Open { until_ms: 1_200 }));
    assert!(b.admit(1_200).0, "this process may probe after the shared open time");
    // Its probe succeeds: closed, and the snapshot says since when.
    assert_eq!(b.record(1_250, false).map(|t| t.to), Some(BreakerState::Closed));
    assert_eq!(b.snapshot(), BreakerSnapshot { state: SharedState::Closed, since_ms: 1_250 });
    // A half-open snapshot whose probe never reports is replaced after the probe timeout.
    b.record(1_900, true); // its own last attempt failed: it takes the fleet's shedding state
    b.adopt(BreakerSnapshot { state: SharedState::HalfOpen, since_ms: 2_000 });
    assert!(!b.probe_due(2_999));
    assert!(b.probe_due(3_000));
    assert!(b.admit(3_000).0);
}

#[test]
fn a_newer_close_ends_an_open_or_half_open_breaker_and_extreme_times_do_not_panic() {
    let mut b = Breaker::new(cfg());
    for t in 0..3 {
        b.record(t, true);
    }
    assert!(b.admit(600).0); // its own probe
    let t = b.adopt(BreakerSnapshot { state: SharedState::Closed, since_ms: 650 });
    assert_eq!(t, Some(Transition { from: BreakerState::HalfOpen { probe_ms: 600 }, to: BreakerState::Closed }));
    assert!(b.admit(651).0);
    assert!(!b.probe_due(651));
    b.record(652, true);
    assert_eq!(b.adopt(open_at(u64::MAX)).map(|t| t.to), Some(BreakerState::Open { until_ms: u64::MAX }));
    assert_eq!(b.adopt(open_at(u64::MAX)), None);
    assert_eq!(b.admit(0), (false, None));
}

#[test]
fn a_snapshot_from_the_future_is_taken_as_begun_now_and_sheds_at_most_open_ms() {
    // Adopted as it was, an open snapshot far ahead sheds every call and refuses every honest snapshot after it.
    let mut trusting = Breaker::new(cfg());
    trusting.adopt(open_at(u64::MAX >> 11));
    assert!(!trusting.admit(10_000).0 && !trusting.probe_due(10_000));
    assert_eq!(trusting.adopt(BreakerSnapshot { state: SharedState::Closed, since_ms: 10_000 }), None);
    // Taken at the adopting process's now: open for open_ms from now, then a probe; a later report wins.
    let mut b = Breaker::new(cfg());
    let future = open_at(u64::MAX >> 11).no_later_than(1_000);
    assert_eq!(future, open_at(1_000));
    assert_eq!(b.adopt(future).map(|t| t.to), Some(BreakerState::Open { until_ms: 1_500 }));
    assert!(!b.probe_due(1_499));
    assert!(b.probe_due(1_500) && b.admit(1_500).0);
    let closed = BreakerSnapshot { state: SharedState::Closed, since_ms: 1_600 };
    assert!(b.adopt(closed.no_later_than(1_600)).is_some());
    assert_eq!(b.state(), BreakerState::Closed);
    // A snapshot of the past or the present is unchanged.
    assert_eq!(open_at(7).no_later_than(7), open_at(7));
    assert_eq!(open_at(7).no_later_than(u64::MAX), open_at(7));
}

#[test]
fn a_closed_breaker_takes_an_open_state_only_after_its_own_failure_or_when_fresh() {
    let mut fresh = Breaker::new(cfg());
    assert!(fresh.adopt(open_at(100)).is_some(), "a fresh process trusts the fleet");
    let mut b = Breaker::new(cfg());
    b.record(50, false);
    assert_eq!(b.adopt(open_at(100)), None, "its own last attempt was answered: another's bad luck is not adopted");
    assert_eq!(b.adopt(BreakerSnapshot { state: SharedState::HalfOpen, since_ms: 110 }), None);
    assert_eq!(b.state(), BreakerState::Closed);
    b.record(120, true);
    assert_eq!(b.adopt(open_at(100)).map(|t| t.to), Some(BreakerState::Open { until_ms: 600 }), "confirmed");
    // An open breaker takes a newer open (or close) whatever its counts.
    assert!(b.adopt(BreakerSnapshot { state: SharedState::Closed, since_ms: 700 }).is_some());
}

#[test]
fn the_fleets_failures_count_toward_a_trip_on_a_failure_of_its_own() {
    let mut b = Breaker::new(cfg());
    b.adopt_failures(2);
    assert_eq!(b.consecutive_failures(), 2);
    assert_eq!(b.state(), BreakerState::Closed, "adopting counts never opens by itself");
    assert!(b.record(10, true).is_some(), "its own failure is the third in a row");
    b.adopt_failures(9);
    assert_eq!(b.consecutive_failures(), 0, "only while closed");
    let mut b = Breaker::new(cfg());
    b.record(0, true);
    b.adopt_failures(0);
    assert_eq!(b.consecutive_failures(), 1, "never lowered");
    b.adopt_failures(2);
    assert_eq!(b.record(1, false), None);
    assert_eq!(b.consecutive_failures(), 0, "a success of its own starts again");
}
