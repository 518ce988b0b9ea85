//! A call's end (`retry::finish`), natively: what both faces do after the attempt loop. Each test fails if
//! the end asks the status tool about an end that is not open (or for an unkeyed or cancelled call), closes an
//! open end without the status tool's answer, settles an entry twice or at another status than the outcome's,
//! leaves a keyed entry unsettled, or calls a tool's own answer a give-up.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::retry::{
    CallFinish, Decision, FinalStatus, FinishFacts, FinishNext, Finished, FinishedKind, Reason, SplitMix64,
};

fn all_facts() -> Vec<FinishFacts> {
    (0..8u8).map(|b| FinishFacts { keyed: b & 1 != 0, may_resolve: b & 2 != 0, cancelled: b & 4 != 0 }).collect()
}

/// The reasons a loop may end with, a few of each kind (the end reads only the status, which is the point).
const REASONS: [Reason; 4] = [Reason::Succeeded, Reason::UnsafeAfterUnknown, Reason::TaskPending, Reason::MaxAttempts];

fn open(s: FinalStatus) -> bool {
    matches!(s, FinalStatus::Unknown | FinalStatus::Pending)
}

/// Runs an end to its answer as a face does, the status look answering `look` (`None`: it learned nothing).
/// Returns every step's answer.
fn run(decision: Decision, facts: FinishFacts, look: Option<Decision>) -> Vec<FinishNext> {
    let mut f = CallFinish::new(decision, facts);
    let mut happened = Finished::Start;
    let mut steps = Vec::new();
    loop {
        let next = f.next(happened);
        steps.push(next);
        happened = match next {
            FinishNext::Resolve { .. } => Finished::Resolved(look),
            FinishNext::Settle { .. } => Finished::Settled,
            FinishNext::End { .. } => return steps,
        };
        assert!(steps.len() <= 3, "an end takes at most three steps: {steps:?}");
    }
}

#[test]
fn every_end_asks_only_about_an_open_keyed_write_and_settles_each_keyed_entry_once_at_the_outcomes_status() {
    let looks: Vec<Option<Decision>> = std::iter::once(None)
        .chain(FinalStatus::ALL.iter().map(|&s| Some(Decision::stop(s, Reason::ResolvedByStatus))))
        .collect();
    let mut runs = 0;
    for &status in &FinalStatus::ALL {
        for &reason in &REASONS {
            for facts in all_facts() {
                for &look in &looks {
                    let steps = run(Decision::stop(status, reason), facts, look);
                    let asked = steps.iter().filter(|s| matches!(s, FinishNext::Resolve { .. })).count();
                    let settled: Vec<FinalStatus> = steps
                        .iter()
                        .filter_map(|s| if let FinishNext::Settle { status } = s { Some(*status) } else { None })
                        .collect();
                    let FinishNext::End { status: end, reason: why, gave_up } = *steps.last().unwrap() else {
                        panic!("ends with End: {steps:?}");
                    };
                    let should_ask = facts.keyed && facts.may_resolve && !facts.cancelled && open(status);
                    assert_eq!(asked, usize::from(should_ask), "{status:?} {facts:?}: {steps:?}");
                    if asked == 1 {
                        assert_eq!(
                            steps[0],
                            FinishNext::Resolve { status, reason },
                            "the look is about the loop's end"
                        );
                    }
                    // Only the status tool's answer changes the end; without one, the loop's end stands — an
                    // open end is never collapsed into a success or a failure here.
                    let expected = match (should_ask, look) {
                        (true, Some(Decision::Stop { status, reason })) => (status, reason),
                        _ => (status, reason),
                    };
                    assert_eq!((end, why), expected, "{status:?} {facts:?} {look:?}");
                    if facts.keyed {
                        assert_eq!(settled, vec![end], "a keyed entry is settled once, at the outcome's status");
                    } else {
                        assert!(settled.is_empty(), "no entry to settle without an operation id");
                    }
                    assert_eq!(gave_up, !end.tool_answered(), "a give-up is an end that is not the tool's answer");
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, 5 * 4 * 8 * 6);
}

#[test]
fn a_loop_that_ended_on_a_retry_ends_unknown() {
    let retry = Decision::Retry { delay_ms: 10, recover: None, reason: Reason::MaxAttempts };
    let steps = run(retry, FinishFacts::default(), None);
    assert_eq!(
        steps,
        vec![FinishNext::End { status: FinalStatus::Unknown, reason: Reason::MaxAttempts, gave_up: true }]
    );
}

#[test]
fn a_stateless_step_answers_what_the_stateful_driver_answers() {
    // The wasm binding keeps no handle: it rebuilds the end before each happening from what the face carries.
    for &status in &FinalStatus::ALL {
        for facts in all_facts() {
            let mut f = CallFinish::new(Decision::stop(status, Reason::UnsafeAfterUnknown), facts);
            let mut happened = (FinishedKind::Start, Finished::Start);
            loop {
                let (s, r) = f.stands();
                let carried = if let Finished::Resolved(Some(Decision::Stop { status, reason })) = happened.1 {
                    (status, reason)
                } else {
                    (s, r)
                };
                let stateless = CallFinish::before(happened.0, carried.0, carried.1, facts).next(happened.1);
                let next = f.next(happened.1);
                assert_eq!(stateless, next, "{status:?} {facts:?} at {:?}", happened.0);
                happened = match next {
                    FinishNext::Resolve { .. } => (
                        FinishedKind::Resolved,
                        Finished::Resolved(Some(Decision::stop(FinalStatus::Succeeded, Reason::ResolvedByStatus))),
                    ),
                    FinishNext::Settle { .. } => (FinishedKind::Settled, Finished::Settled),
                    FinishNext::End { .. } => break,
                };
            }
        }
    }
}

#[test]
fn events_out_of_order_move_the_end_on_never_back() {
    // A face's mistakes (any event, any order): never a second look, never a second settle, always an end
    // within three steps, and after the end the same end again.
    let mut rng = SplitMix64::new(29);
    let events = |r: u64| match r % 4 {
        0 => Finished::Start,
        1 => Finished::Resolved(None),
        2 => Finished::Resolved(Some(Decision::stop(FinalStatus::Succeeded, Reason::ResolvedByStatus))),
        _ => Finished::Settled,
    };
    for _ in 0..3_000 {
        let status = FinalStatus::ALL[(rng.next_u64() % 5) as usize];
        let facts = all_facts()[(rng.next_u64() % 8) as usize];
        let mut f = CallFinish::new(Decision::stop(status, Reason::UnsafeAfterUnknown), facts);
        let (mut asks, mut settles, mut end) = (0, 0, None);
        for i in 0..8 {
            match f.next(events(rng.next_u64())) {
                FinishNext::Resolve { .. } => asks += 1,
                FinishNext::Settle { .. } => settles += 1,
                e @ FinishNext::End { .. } => {
                    assert!(end.is_none_or(|was| was == e), "the end changed after it was answered");
                    end.get_or_insert(e);
                    assert!(i < 3 || end == Some(e));
                }
            }
        }
        assert!(asks <= 1 && settles <= 1, "{asks} looks, {settles} settles");
        assert!(end.is_some(), "an end within eight steps");
        if !facts.keyed {
            assert_eq!((asks, settles), (0, 0));
        }
    }
}
