//! The core's call driver (`retry::drive`), natively: the sequences a face carries out — send, back off, hold,
//! gather input, cancel — and what it refuses (a send it was not told to make, anything after the end). Each
//! test fails if the driver skips the engine, sends after a stop, or ends a maybe-delivered call `failed`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::retry::{
    AttemptOutcome as O, BreakerConfig, CallDriver, CallOptions, CallState, Decision, Engine, FinalStatus, Happened,
    Next, Policy, Reason, Recover, ResultType, Revision, Safety, Sent, SplitMix64, Step,
};

const OK: O = O::Result { is_error: false, result_type: ResultType::Complete };
const RESET: O = O::Network { sent: Sent::Maybe };
const REFUSED: O = O::Network { sent: Sent::No };
/// Random bits for the jitter (mid-range: a backoff is neither zero nor the cap).
const R: u64 = 0x9E37_79B9_7F4A_7C15;
const ASKS_INPUT: O = O::Result { is_error: false, result_type: ResultType::InputRequired };

/// A call's driver and its engine state: `d.next(&mut e, …)` steps both.
struct Call {
    driver: CallDriver,
    state: CallState,
}

impl Call {
    fn next(&mut self, e: &mut Engine, happened: Happened<'_>, now: u64, random: u64) -> Next {
        self.driver.next(e, &mut self.state, happened, now, random)
    }

    fn last_step(&self) -> Option<Step> {
        self.driver.last_step()
    }
}

fn driver(e: &Engine, safety: Safety, answers_input: bool) -> Call {
    let state = e.begin_with(0, CallOptions { answers_input });
    Call { driver: CallDriver::new(safety, Some(Revision::LATEST)), state }
}

fn sends(next: Next) -> bool {
    matches!(next, Next::Send { .. })
}

fn stop(status: FinalStatus, reason: Reason) -> Next {
    Next::Done(Decision::stop(status, reason))
}

#[test]
fn a_read_that_fails_once_backs_off_is_sent_again_and_succeeds() {
    let mut e = Engine::new(Policy::default());
    let mut d = driver(&e, Safety::ReadOnly, false);
    assert!(sends(d.next(&mut e, Happened::Start, 0, R)));
    let wait = d.next(&mut e, Happened::Sent(&RESET), 10, R);
    let Next::Wait { delay_ms, held: false, .. } = wait else { panic!("a backoff, not {wait:?}") };
    assert!(delay_ms > 0);
    assert!(d.last_step().unwrap().decision.is_retry());
    let Next::Send { admission, .. } = d.next(&mut e, Happened::Waited, 10 + delay_ms, R) else { panic!() };
    assert_eq!(admission.attempt, 2);
    assert_eq!(d.next(&mut e, Happened::Sent(&OK), 20 + delay_ms, R), stop(FinalStatus::Succeeded, Reason::Succeeded));
    assert_eq!(d.state.attempts, 2);
}

#[test]
fn an_unsafe_write_whose_answer_was_lost_stops_unknown_and_is_never_sent_again() {
    let mut e = Engine::new(Policy::default());
    let mut d = driver(&e, Safety::Unsafe, false);
    assert!(sends(d.next(&mut e, Happened::Start, 0, R)));
    let end = d.next(&mut e, Happened::Sent(&RESET), 10, R);
    let Next::Done(Decision::Stop { status: FinalStatus::Unknown, .. }) = end else { panic!("unknown, not {end:?}") };
    // Whatever the face feeds afterwards, the end stands: no second send.
    for h in [Happened::Waited, Happened::Start, Happened::Sent(&OK), Happened::InputGathered, Happened::Cancelled] {
        assert_eq!(d.next(&mut e, h, 20, R), end);
    }
}

#[test]
fn a_request_refused_before_it_left_is_sent_again_even_for_an_unsafe_tool() {
    let mut e = Engine::new(Policy::default());
    let mut d = driver(&e, Safety::Unsafe, false);
    assert!(sends(d.next(&mut e, Happened::Start, 0, R)));
    assert!(matches!(d.next(&mut e, Happened::Sent(&REFUSED), 10, R), Next::Wait { held: false, .. }));
    assert!(sends(d.next(&mut e, Happened::Waited, 5_000, R)));
}

#[test]
fn cancelled_during_the_backoff_the_engine_records_an_attempt_not_sent() {
    // Refused before it left, then cancelled while waiting: nothing was ever sent.
    let mut e = Engine::new(Policy::default());
    let mut d = driver(&e, Safety::Unsafe, false);
    assert!(sends(d.next(&mut e, Happened::Start, 0, R)));
    assert!(matches!(d.next(&mut e, Happened::Sent(&REFUSED), 10, R), Next::Wait { .. }));
    let end = d.next(&mut e, Happened::Cancelled, 20, R);
    assert_eq!(end, stop(FinalStatus::Failed, Reason::Aborted), "nothing left this machine");
    // A write that may have been delivered and is cancelled during a backoff (a keyed write) stays unknown.
    let mut d = driver(&e, Safety::Keyed, false);
    assert!(sends(d.next(&mut e, Happened::Start, 0, R)));
    assert!(matches!(d.next(&mut e, Happened::Sent(&RESET), 10, R), Next::Wait { .. }));
    let Next::Done(Decision::Stop { status, .. }) = d.next(&mut e, Happened::Cancelled, 20, R) else { panic!() };
    assert_eq!(status, FinalStatus::Unknown, "maybe delivered, then cancelled: never failed");
}

#[test]
fn cancelled_before_the_first_attempt_nothing_is_sent() {
    let mut e = Engine::new(Policy::default());
    let mut d = driver(&e, Safety::Unsafe, false);
    assert_eq!(d.next(&mut e, Happened::Cancelled, 0, R), stop(FinalStatus::Failed, Reason::Aborted));
}

#[test]
fn an_input_round_is_gathered_then_sent_as_a_continuation_and_an_unanswered_one_ends_the_call() {
    let mut e = Engine::new(Policy::default());
    let mut d = driver(&e, Safety::Unsafe, true);
    assert!(sends(d.next(&mut e, Happened::Start, 0, R)));
    assert_eq!(d.next(&mut e, Happened::Sent(&ASKS_INPUT), 10, R), Next::GatherInput);
    // Out of order while gathering: the driver repeats itself, never a send.
    assert_eq!(d.next(&mut e, Happened::Waited, 11, R), Next::GatherInput);
    let Next::Wait { recover, delay_ms, .. } = d.next(&mut e, Happened::InputGathered, 20, R) else { panic!() };
    assert_eq!(recover, Some(Recover::ContinueInput));
    let Next::Send { recover, .. } = d.next(&mut e, Happened::Waited, 20 + delay_ms, R) else { panic!() };
    assert_eq!(recover, Some(Recover::ContinueInput), "the next round carries the answers");
    assert_eq!(d.next(&mut e, Happened::Sent(&ASKS_INPUT), 30 + delay_ms, R), Next::GatherInput);
    let unanswered = Happened::InputUnanswered { timed_out: false, handler_missing: true };
    let Next::Done(Decision::Stop { status, .. }) = d.next(&mut e, unanswered, 40 + delay_ms, R) else { panic!() };
    assert_eq!(status, FinalStatus::Unknown, "the first round ran: the write may be half done");
}

#[test]
fn a_resend_at_an_open_breaker_is_held_not_ended_and_goes_out_when_the_breaker_lets_it() {
    let breaker = BreakerConfig { consecutive_failures: 2, open_ms: 30_000, ..BreakerConfig::default() };
    let mut e = Engine::new(Policy { breaker: Some(breaker), total_timeout_ms: 120_000, ..Policy::default() });
    let (mut b, mut a) = (driver(&e, Safety::ReadOnly, false), driver(&e, Safety::ReadOnly, false));
    assert!(sends(b.next(&mut e, Happened::Start, 0, R)));
    let Next::Wait { delay_ms, .. } = b.next(&mut e, Happened::Sent(&RESET), 10, R) else { panic!() };
    // Another call's failure opens the breaker while this one backs off.
    assert!(sends(a.next(&mut e, Happened::Start, 5, R)));
    let _ = a.next(&mut e, Happened::Sent(&RESET), 11, R);
    // The re-send is held (a wait), not ended.
    let mut now = 10 + delay_ms;
    let held = b.next(&mut e, Happened::Waited, now, R);
    let Next::Wait { held: true, reason: Reason::BreakerHold, .. } = held else { panic!("held, not {held:?}") };
    let mut next = held;
    while let Next::Wait { delay_ms, held: true, .. } = next {
        now += delay_ms;
        next = b.next(&mut e, Happened::Waited, now, R);
    }
    assert!(sends(next), "the probe goes out: {next:?}");
    assert!(now >= 30_011, "not before the breaker lets one through");
    assert_eq!(b.next(&mut e, Happened::Sent(&OK), now + 5, R), stop(FinalStatus::Succeeded, Reason::Succeeded));
}

#[test]
fn an_event_out_of_order_never_makes_a_send_and_never_ends_a_maybe_delivered_write_failed() {
    let mut e = Engine::new(Policy::default());
    let mut d = driver(&e, Safety::Unsafe, false);
    assert!(sends(d.next(&mut e, Happened::Start, 0, R)));
    // The face says "waited" where it should have reported the attempt: it may have been sent.
    let Next::Done(Decision::Stop { status, .. }) = d.next(&mut e, Happened::Waited, 10, R) else { panic!() };
    assert_eq!(status, FinalStatus::Unknown);
}

#[test]
fn any_sequence_of_events_ends_and_sends_only_when_told_to() {
    // Random events (each a random kind) for many calls: the driver never panics, sends only after Start or
    // Waited, ends within a bounded number of steps, and once done answers the same end.
    let mut rng = SplitMix64::new(42);
    let outcomes = [OK, RESET, REFUSED, ASKS_INPUT, O::Timeout];
    for call in 0..2_000u64 {
        let mut e = Engine::new(Policy::default());
        let safety = [Safety::ReadOnly, Safety::Idempotent, Safety::Keyed, Safety::Unsafe][(call % 4) as usize];
        let mut d = driver(&e, safety, call % 2 == 0);
        let mut now = 0;
        let mut end = None;
        for _ in 0..200 {
            let pick = rng.next_u64();
            let outcome = outcomes[(pick % 5) as usize];
            let happened = match (pick >> 8) % 7 {
                0 => Happened::Start,
                1 | 2 => Happened::Waited,
                3 | 4 => Happened::Sent(&outcome),
                5 => Happened::InputGathered,
                _ => Happened::InputUnanswered { timed_out: pick & 1 == 0, handler_missing: pick & 2 == 0 },
            };
            now += (pick >> 20) % 5_000;
            let next = d.next(&mut e, happened, now, pick);
            if sends(next) {
                assert!(matches!(happened, Happened::Start | Happened::Waited), "sent after {happened:?}");
            }
            if let Some(end) = end {
                assert_eq!(next, end, "after the end, the end again");
            } else if let Next::Done(_) = next {
                end = Some(next);
            }
        }
        assert!(end.is_some(), "call {call} never ended");
    }
}

#[test]
fn a_call_with_no_room_left_for_its_next_attempt_is_not_sent_and_ends_by_what_may_have_been_delivered() {
    let mut e = Engine::new(Policy::default());
    // No room before anything was sent: nothing was delivered, `failed`.
    let mut d = driver(&e, Safety::ReadOnly, false);
    let next = d.driver.next_within(&mut e, &mut d.state, Happened::Start, 0, R, Some(0));
    assert_eq!(next, stop(FinalStatus::Failed, Reason::SubrequestBudget));
    // Room for one attempt (its request and the cancel that may follow it), which may have been delivered;
    // none for the re-send: `unknown`, never `failed`.
    let mut d = driver(&e, Safety::ReadOnly, false);
    assert!(sends(d.driver.next_within(&mut e, &mut d.state, Happened::Start, 0, R, Some(2))));
    let Next::Wait { delay_ms, .. } = d.driver.next_within(&mut e, &mut d.state, Happened::Sent(&RESET), 5, R, Some(0))
    else {
        panic!("a backoff")
    };
    let next = d.driver.next_within(&mut e, &mut d.state, Happened::Waited, 5 + delay_ms, R, Some(1));
    assert_eq!(next, stop(FinalStatus::Unknown, Reason::SubrequestBudget));
    assert!(d.last_step().is_some() && !d.driver.is_sending());
}
