//! The core's status driver (`retry::resolve`), natively: a keyed write left open is asked about through the
//! status tool, looked at again while `in_progress` with the engine's waits, within the deadline — and the end
//! is the core's `decide_status`. Each test fails if the driver asks past the deadline, keeps an answer it no
//! longer has, or turns an answer that proves nothing into `failed`.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use mcp_retry_policy::retry::{
    Decision, Engine, FinalStatus, OperationStatus as S, Policy, Reason, SplitMix64, StatusDriver, StatusHappened as H,
    StatusNext as N,
};

const R: u64 = 0x9E37_79B9_7F4A_7C15;
const OPEN: Option<(FinalStatus, Reason)> = Some((FinalStatus::Unknown, Reason::MaxAttempts));

fn answered(status: S, retry_after_ms: Option<u64>) -> H {
    H::Answered { status: Some(status), retry_after_ms }
}

fn done(status: FinalStatus, reason: Reason) -> N {
    N::Done(Some(Decision::stop(status, reason)))
}

#[test]
fn each_answer_ends_the_call_as_the_core_reads_it_and_only_not_done_is_failed() {
    let e = Engine::new(Policy::default());
    for (answer, end) in [
        (S::Succeeded, done(FinalStatus::Succeeded, Reason::ResolvedByStatus)),
        (S::Failed, done(FinalStatus::ToolError, Reason::ResolvedByStatus)),
        (S::NotDone, done(FinalStatus::Failed, Reason::ResolvedByStatus)),
        (S::NotFound, done(FinalStatus::Unknown, Reason::StatusNotFound)),
        (S::Unknown, done(FinalStatus::Unknown, Reason::StatusUnknown)),
    ] {
        let mut d = StatusDriver::new(&e, OPEN, 10_000, 0);
        assert_eq!(d.next(&e, H::Start, 0, R, None), N::Ask);
        assert_eq!(d.next(&e, answered(answer, None), 5, R, None), end, "{answer:?}");
        assert_eq!(d.next(&e, H::Waited, 6, R, None), end, "the end stands");
    }
}

#[test]
fn in_progress_is_looked_at_again_with_the_ledgers_hint_until_it_ends() {
    let e = Engine::new(Policy::default());
    let mut d = StatusDriver::new(&e, OPEN, 30_000, 0);
    assert_eq!(d.next(&e, H::Start, 0, R, None), N::Ask);
    let N::Wait { delay_ms } = d.next(&e, answered(S::InProgress, Some(400)), 5, R, None) else { panic!() };
    assert!((400..=440).contains(&delay_ms), "the hint, jittered: {delay_ms}");
    assert_eq!(d.next(&e, H::Waited, 5 + delay_ms, R, None), N::Ask);
    assert_eq!(
        d.next(&e, answered(S::Succeeded, None), 500, R, None),
        done(FinalStatus::Succeeded, Reason::ResolvedByStatus)
    );
}

#[test]
fn in_progress_at_the_deadline_ends_pending_and_a_cancel_ends_by_the_last_answer() {
    let e = Engine::new(Policy::default());
    let mut d = StatusDriver::new(&e, OPEN, 1_000, 0);
    assert_eq!(d.next(&e, H::Start, 0, R, None), N::Ask);
    let pending = done(FinalStatus::Pending, Reason::StatusInProgress);
    assert_eq!(
        d.next(&e, answered(S::InProgress, Some(5_000)), 5, R, None),
        pending,
        "the next look is past the deadline"
    );
    let mut d = StatusDriver::new(&e, OPEN, 30_000, 0);
    assert_eq!(d.next(&e, H::Start, 0, R, None), N::Ask);
    assert!(matches!(d.next(&e, answered(S::InProgress, None), 5, R, None), N::Wait { .. }));
    assert_eq!(d.next(&e, H::Cancelled, 10, R, None), pending);
}

#[test]
fn no_answer_or_no_time_left_learns_nothing_and_the_calls_end_stands() {
    let e = Engine::new(Policy::default());
    let mut d = StatusDriver::new(&e, OPEN, 1_000, 0);
    assert_eq!(d.next(&e, H::Start, 1_000, R, None), N::Done(None), "no time left: never asked");
    for closed in [FinalStatus::Succeeded, FinalStatus::ToolError, FinalStatus::Failed] {
        let mut d = StatusDriver::new(&e, Some((closed, Reason::Succeeded)), 30_000, 0);
        assert_eq!(d.next(&e, H::Start, 0, R, None), N::Done(None), "{closed:?}: an end known is never asked about");
    }
    let mut d = StatusDriver::new(&e, OPEN, 30_000, 0);
    assert_eq!(d.next(&e, H::Start, 0, R, None), N::Ask);
    assert!(matches!(d.next(&e, answered(S::InProgress, None), 5, R, None), N::Wait { .. }));
    assert_eq!(d.next(&e, H::Waited, 500, R, None), N::Ask);
    let none = H::Answered { status: None, retry_after_ms: None };
    assert_eq!(d.next(&e, none, 600, R, None), N::Done(None), "the in_progress before is not kept");
}

#[test]
fn no_room_left_for_another_look_ends_pending() {
    let e = Engine::new(Policy::default());
    let mut d = StatusDriver::new(&e, OPEN, 30_000, 0);
    assert_eq!(d.next(&e, H::Start, 0, R, Some(1)), N::Ask);
    assert_eq!(
        d.next(&e, answered(S::InProgress, None), 5, R, Some(0)),
        done(FinalStatus::Pending, Reason::StatusInProgress)
    );
}

#[test]
fn any_sequence_asks_only_when_told_and_never_ends_failed_without_the_servers_not_done() {
    let mut rng = SplitMix64::new(11);
    let e = Engine::new(Policy::default());
    for _ in 0..2_000 {
        let mut d = StatusDriver::new(&e, OPEN, 20_000, 0);
        let (mut now, mut told, mut end) = (0, d.next(&e, H::Start, 0, R, None), None);
        let mut not_done_heard = false;
        for _ in 0..200 {
            let pick = rng.next_u64();
            let happened = match pick % 6 {
                0 => H::Start,
                1 => H::Waited,
                2 => H::Cancelled,
                3 => H::Answered { status: None, retry_after_ms: None },
                _ => H::Answered {
                    status: Some(S::ALL[((pick >> 8) % 6) as usize]),
                    retry_after_ms: Some((pick >> 16) % 3_000),
                },
            };
            if let H::Answered { status: Some(S::NotDone), .. } = happened {
                not_done_heard |= matches!(told, N::Ask);
            }
            now += (pick >> 32) % 2_000;
            let next = d.next(&e, happened, now, pick, None);
            if next == N::Ask && end.is_none() {
                assert!(
                    matches!((told, happened), (N::Ask, _) | (N::Wait { .. }, H::Waited)),
                    "asked after {happened:?}"
                );
            }
            if let Some(end) = end {
                assert_eq!(next, end);
            } else if let N::Done(d) = next {
                if let Some(Decision::Stop { status: FinalStatus::Failed, .. }) = d {
                    assert!(not_done_heard, "failed without the server's not_done");
                }
                end = Some(next);
            }
            told = next;
        }
    }
}
