//! Hedged reads, natively: which safeties may hedge, the per-call cap, the deadline, the breaker, the shared
//! retry budget and Envoy's concurrency cap (max(3, 20 % of requests in flight)), the in-flight counts, the
//! call's subrequest room a hedge must fit in, and which copy stands for an attempt no copy answered.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::retry::{
    copy_stands, AttemptOutcome as O, CallState, Decision, Engine, FinalStatus, HedgeConfig, HedgeError, HedgeField,
    HedgeOptions, HedgeRefusal, Policy, Reason, Recover, ResultType, Revision, Safety, Sent, HEDGE_SUBREQUESTS,
    MAX_HEDGES,
};

const OK: O = O::Result { is_error: false, result_type: ResultType::Complete };
const TIMEOUT: O = O::Timeout;

fn hedging(after: u64, max: u32) -> Option<HedgeConfig> {
    HedgeConfig::new(&HedgeOptions { hedge_after_ms: Some(after), max_hedges: Some(max) }).unwrap()
}

fn engine(policy: Policy, max: u32) -> Engine {
    let mut e = Engine::new(policy);
    e.set_hedging(hedging(100, max));
    e
}

/// A call with its first attempt admitted at 0 (in flight).
fn in_flight(e: &mut Engine) -> CallState {
    let mut call = e.begin(0);
    e.admit(&mut call, 0).unwrap();
    call
}

#[test]
fn only_read_only_and_idempotent_tools_hedge() {
    let table = [
        (Safety::ReadOnly, Ok(())),
        (Safety::Idempotent, Ok(())),
        (Safety::Keyed, Err(HedgeRefusal::Safety)),
        (Safety::Unsafe, Err(HedgeRefusal::Safety)),
    ];
    for (safety, expected) in table {
        let mut e = engine(Policy::default(), 1);
        let mut call = in_flight(&mut e);
        let got = e.hedge(&mut call, safety, 100).map(|_| ());
        assert_eq!(got, expected, "{safety:?}");
        if expected.is_err() {
            assert_eq!(call.hedges, 0, "a refused hedge is not counted");
            assert_eq!(e.budget_milli(), Some(10_000), "a refused hedge spends nothing");
        }
    }
}

#[test]
fn hedging_is_off_by_default_and_needs_an_attempt_in_flight() {
    let mut e = Engine::new(Policy::default());
    let mut call = in_flight(&mut e);
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 100), Err(HedgeRefusal::Off));
    let mut e = engine(Policy::default(), 1);
    let mut call = e.begin(0);
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 100), Err(HedgeRefusal::NotInFlight));
    e.admit(&mut call, 0).unwrap();
    e.record(&mut call, &OK, Safety::ReadOnly, Revision::LATEST, 50, 0);
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 100), Err(HedgeRefusal::NotInFlight), "answered: nothing to race");
}

#[test]
fn at_most_max_hedges_per_call_and_never_at_or_after_the_deadline() {
    let mut e = engine(Policy::default(), 2);
    let mut call = in_flight(&mut e);
    let first = e.hedge(&mut call, Safety::ReadOnly, 100).unwrap();
    assert_eq!((first.hedge, first.timeout_ms), (1, 60_000));
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 200).unwrap().hedge, 2);
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 300), Err(HedgeRefusal::MaxHedges));

    let mut e = engine(Policy { total_timeout_ms: 1_000, ..Policy::default() }, 3);
    let mut call = in_flight(&mut e);
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 900).unwrap().timeout_ms, 100, "shortened to the deadline");
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 1_000), Err(HedgeRefusal::Deadline));
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 5_000), Err(HedgeRefusal::Deadline));
}

#[test]
fn a_hedge_spends_the_retry_budget_and_an_empty_budget_stops_hedges() {
    let mut e = engine(Policy::default(), 1);
    let mut spent = 0;
    // Ten tokens, one a hedge: ten calls hedge, the eleventh cannot (no success refilled the bucket).
    for i in 0..11 {
        let mut call = in_flight(&mut e);
        let got = e.hedge(&mut call, Safety::Idempotent, 100);
        if i < 10 {
            assert!(got.is_ok(), "hedge {i}");
            spent += 1;
            assert_eq!(call.spent_milli, 1_000);
        } else {
            assert_eq!(got, Err(HedgeRefusal::Budget));
        }
        e.hedge_ended(&mut call, false); // (no success recorded: that would refill a tenth of a token)
    }
    assert_eq!(spent, 10);
    // Retries see the same bucket: a timeout's retry (2 tokens) waits for the bucket to refill, the hedges having
    // spent it.
    let mut call = in_flight(&mut e);
    let step = e.record(&mut call, &TIMEOUT, Safety::ReadOnly, Revision::LATEST, 200, 0);
    assert_eq!(step.decision.reason(), Reason::BudgetHold, "the hedges spent the budget the retry needed");
    // No budget configured: hedges are bounded by the other rules only.
    let mut e = engine(Policy { budget: None, ..Policy::default() }, 1);
    let mut call = in_flight(&mut e);
    assert!(e.hedge(&mut call, Safety::ReadOnly, 100).is_ok());
}

#[test]
fn hedges_in_flight_stay_under_max_of_3_and_a_fifth_of_requests_in_flight() {
    let mut e = engine(Policy { budget: None, ..Policy::default() }, 1);
    let mut calls: Vec<CallState> = (0..10).map(|_| in_flight(&mut e)).collect();
    assert_eq!(e.in_flight(), (10, 0));
    // 10 attempts in flight: 20 % is 2, so the floor of 3 binds.
    for (i, call) in calls.iter_mut().enumerate() {
        let got = e.hedge(call, Safety::ReadOnly, 100);
        assert_eq!(got.is_ok(), i < 3, "hedge {i}: {got:?}");
    }
    assert_eq!(e.in_flight(), (13, 3));
    // 30 more attempts: 43 requests in flight, a fifth is 8; each hedge is a request too: 9 of 49.
    let mut more: Vec<CallState> = (0..30).map(|_| in_flight(&mut e)).collect();
    let sent = more.iter_mut().map(|c| e.hedge(c, Safety::ReadOnly, 100)).filter(Result::is_ok).count();
    assert_eq!(sent, 6, "3 + 6 = 9 hedges of 49 requests");
    assert_eq!(e.in_flight(), (49, 9));
    assert_eq!(e.hedge(&mut calls[9], Safety::ReadOnly, 100), Err(HedgeRefusal::Concurrency));
    // A hedge that ends frees its slot; the call's attempt is ended by its record.
    e.hedge_ended(&mut calls[0], true);
    e.hedge_ended(&mut calls[0], true); // nothing left in flight for this call: no change
    assert_eq!(e.in_flight(), (48, 8));
    assert_eq!(e.hedge_counts(), (9, 1));
    for c in calls.iter_mut().chain(more.iter_mut()) {
        e.hedge_ended(c, false);
        e.record(c, &OK, Safety::ReadOnly, Revision::LATEST, 150, 0);
    }
    assert_eq!(e.in_flight(), (0, 0), "every admission and hedge is ended exactly once");
}

#[test]
fn no_hedge_while_the_breaker_is_not_closed() {
    let mut e = engine(Policy { budget: None, max_attempts: 1, ..Policy::default() }, 1);
    // Five failing calls in a row open the default breaker.
    for t in 0..5 {
        let mut call = in_flight(&mut e);
        e.record(&mut call, &TIMEOUT, Safety::ReadOnly, Revision::LATEST, t, 0);
    }
    assert_eq!(e.breaker_state().map(|s| s.as_str()), Some("open"));
    let mut call = e.begin(3_000);
    e.admit(&mut call, 3_000).unwrap(); // the half-open probe
    assert_eq!(e.breaker_state().map(|s| s.as_str()), Some("half_open"));
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 3_100), Err(HedgeRefusal::BreakerOpen));
}

#[test]
fn options_are_validated_and_refused_by_name() {
    let new = |after, max| HedgeConfig::new(&HedgeOptions { hedge_after_ms: after, max_hedges: max });
    assert_eq!(new(None, None), Ok(None), "off by default");
    assert_eq!(new(Some(250), None), Ok(Some(HedgeConfig { after_ms: 250, max_hedges: 1 })), "Polly's one hedge");
    let err = |field, value, max| Err(HedgeError { field, value, min: 1, max });
    assert_eq!(new(Some(0), None), err(HedgeField::HedgeAfterMs, 0, 86_400_000));
    assert_eq!(new(Some(86_400_001), None), err(HedgeField::HedgeAfterMs, 86_400_001, 86_400_000));
    assert_eq!(new(Some(10), Some(0)), err(HedgeField::MaxHedges, 0, u64::from(MAX_HEDGES)));
    assert_eq!(new(None, Some(11)), err(HedgeField::MaxHedges, 11, 10), "checked even when off");
    assert_eq!(new(Some(10), Some(10)), Ok(Some(HedgeConfig { after_ms: 10, max_hedges: 10 })));
}

/// The outcome standing for an attempt whose copies all failed, folded in the order they ended (what the JS
/// does with the engine's answers).
fn standing(copies: &[O], revision: Option<Revision>) -> O {
    copies.iter().skip(1).fold(copies[0], |s, later| if copy_stands(&s, later, revision) { *later } else { s })
}

#[test]
fn copy_stands_a_copy_refused_at_connect_never_replaces_one_that_may_have_run() {
    let maybe = O::Network { sent: Sent::Maybe };
    let refused = O::Network { sent: Sent::No };
    let unavailable = O::Http {
        status: 503,
        retry_after_ms: Some(1_000),
        had_session: true,
        jsonrpc_code: None,
        mismatch_confirmed: false,
    };
    let revisions = Revision::ALL.map(Some).into_iter().chain([None]);
    for r in revisions {
        // The review's sequence: copy 0 forwarded and its answer lost, then the hedge refused at connect.
        assert_eq!(standing(&[maybe, refused], r), maybe, "{r:?}");
        assert_eq!(standing(&[refused, maybe], r), maybe, "{r:?}");
        assert_eq!(standing(&[TIMEOUT, refused, refused], r), TIMEOUT, "{r:?}");
        // Alike: the last to end stands (its recovery step is the freshest).
        assert_eq!(standing(&[refused, unavailable], r), unavailable, "{r:?}");
        assert_eq!(standing(&[maybe, TIMEOUT], r), TIMEOUT, "{r:?}");
    }
    // Through the engine: the standing copy is recorded, and with no attempt left the call is unknown, never
    // failed; recording the last copy to end (the refused hedge) would have said `failed`.
    for (recorded, status) in
        [(standing(&[maybe, refused], None), FinalStatus::Unknown), (refused, FinalStatus::Failed)]
    {
        let mut e = engine(Policy { max_attempts: 1, ..Policy::default() }, 1);
        let mut call = in_flight(&mut e);
        e.hedge(&mut call, Safety::Idempotent, 100).unwrap();
        e.hedge_ended(&mut call, false);
        let step = e.record(&mut call, &recorded, Safety::Idempotent, Revision::LATEST, 200, 0);
        assert!(
            matches!(step.decision, Decision::Stop { status: s, .. } if s == status),
            "{recorded:?}: {:?}",
            step.decision
        );
    }
}

#[test]
fn a_hedge_needs_hedge_subrequests_of_the_calls_room_and_never_the_apps_reserve() {
    assert_eq!(HEDGE_SUBREQUESTS, 2, "its tools/call, and the notifications/cancelled of the copy that loses");
    let policy = Policy { budget: None, ..Policy::default() };
    // The room given at admission, less the attempt's (its request and its cancellation), is what a hedge may
    // spend.
    let attempt_cost = Recover::attempt_subrequests(None);
    for (room, admitted) in [(2, false), (3, false), (4, true), (10, true)] {
        let mut e = engine(policy, 1);
        let mut call = e.begin(0);
        e.admit_within(&mut call, 0, Some(room)).unwrap();
        let got = e.hedge(&mut call, Safety::ReadOnly, 100);
        if admitted {
            assert!(got.is_ok(), "room {room}: {got:?}");
            assert_eq!(call.room, Some(room - attempt_cost - HEDGE_SUBREQUESTS));
        } else {
            assert_eq!(got, Err(HedgeRefusal::SubrequestBudget), "room {room}");
            assert_eq!((call.hedges, e.in_flight()), (0, (1, 0)), "room {room}: nothing sent, nothing counted");
        }
    }
    // Each hedge spends from what is left: room 6 pays the attempt and two hedges, not three.
    let mut e = engine(policy, 3);
    let mut call = e.begin(0);
    e.admit_within(&mut call, 0, Some(6)).unwrap();
    assert!(e.hedge(&mut call, Safety::ReadOnly, 100).is_ok());
    assert!(e.hedge(&mut call, Safety::ReadOnly, 200).is_ok());
    assert_eq!(e.hedge(&mut call, Safety::ReadOnly, 300), Err(HedgeRefusal::SubrequestBudget));
    // The room given when the hedge is asked binds too (the app spent some meanwhile), whichever is smaller.
    let mut e = engine(policy, 1);
    let mut call = e.begin(0);
    e.admit_within(&mut call, 0, Some(10)).unwrap();
    assert_eq!(e.hedge_within(&mut call, Safety::ReadOnly, 100, Some(1)), Err(HedgeRefusal::SubrequestBudget));
    assert!(e.hedge_within(&mut call, Safety::ReadOnly, 100, Some(2)).is_ok());
    // Not counted at admission nor at the hedge: no bound; a later admission without room forgets the count.
    let mut e = engine(policy, 1);
    let mut call = in_flight(&mut e);
    assert_eq!(call.room, None);
    assert!(e.hedge(&mut call, Safety::ReadOnly, 100).is_ok());
    let mut call = e.begin(0);
    e.admit_within(&mut call, 0, Some(2)).unwrap();
    e.record(&mut call, &TIMEOUT, Safety::ReadOnly, Revision::LATEST, 50, 0);
    e.admit(&mut call, 2_000).unwrap();
    assert_eq!(call.room, None);
}
