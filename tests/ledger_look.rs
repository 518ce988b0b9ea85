//! The ledger's look driver (src/ledger/look.rs): the sequences both faces run for a write and for the status
//! tool, once, natively. Each face's own tests check that it carries the steps out.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::panic
)]

use mcp_retry_policy::ledger::{
    LedgerConfig, Look, LookEnd, LookEvent, LookMode, LookPhase, LookStep, ReconcileVerdict, Record, RecordState,
    MAX_ROUNDS,
};
use proptest::prelude::*;

const CFG: LedgerConfig = LedgerConfig { ttl_ms: 10_000, lease_ms: 1_000 };
const FP: &str = "fp";

fn rec(state: RecordState, version: u64, lease_until_ms: u64) -> Record {
    Record { state, fingerprint: FP.into(), lease_until_ms, created_ms: 0, expires_ms: 5_000, version }
}

/// Runs a look, answering each step from `answers` (a store read answers with `stored`).
fn run(
    mode: LookMode,
    stored: Option<&Record>,
    same_input: bool,
    now: u64,
    answers: &[LookEvent],
) -> (Vec<LookStep>, LookEnd) {
    let mut look = Look::new(mode);
    let mut steps = vec![];
    let mut next = look.step(LookEvent::Read { same_input }, stored, FP, now, &CFG);
    let mut given = answers.iter();
    loop {
        match next {
            LookStep::Done(end) => return (steps, end),
            LookStep::Read => {
                steps.push(LookStep::Read);
                next = look.step(LookEvent::Read { same_input }, stored, FP, now, &CFG);
            }
            step => {
                steps.push(step);
                let e = *given.next().expect("an answer for every step");
                next = look.step(e, stored, FP, now, &CFG);
            }
        }
    }
}

#[test]
fn a_fresh_key_is_claimed_then_executed() {
    let (steps, end) = run(LookMode::Claim, None, true, 100, &[LookEvent::Wrote(true)]);
    let LookStep::WriteClaim { claim, expected } = &steps[0] else { panic!("{steps:?}") };
    assert_eq!((claim.state, claim.version, claim.lease_until_ms, *expected), (RecordState::Pending, 1, 1_100, None));
    assert_eq!(claim.fingerprint, FP);
    assert_eq!(end, LookEnd::Execute { expected: None });
}

#[test]
fn a_lost_claim_reads_again_and_a_busy_key_is_in_progress_after_every_round() {
    let lost = [LookEvent::Wrote(false); 8];
    let (steps, end) = run(LookMode::Claim, None, true, 100, &lost);
    let reads = steps.iter().filter(|s| **s == LookStep::Read).count();
    assert_eq!(reads, usize::from(MAX_ROUNDS) - 1, "one read a round after the first: {steps:?}");
    assert_eq!(end, LookEnd::InProgress { retry_after_ms: 1_000 });
}

#[test]
fn a_recorded_outcome_replays_other_input_conflicts_a_live_claim_is_in_progress() {
    let done = rec(RecordState::Succeeded, 2, 50);
    assert_eq!(run(LookMode::Claim, Some(&done), true, 100, &[]).1, LookEnd::Replay(RecordState::Succeeded));
    assert_eq!(run(LookMode::Claim, Some(&done), false, 100, &[]).1, LookEnd::Conflict);
    let live = rec(RecordState::Pending, 1, 700);
    assert_eq!(run(LookMode::Claim, Some(&live), true, 100, &[]).1, LookEnd::InProgress { retry_after_ms: 600 });
    // Past its TTL a resolved record is claimed over (its version counted on).
    let (steps, _) = run(LookMode::Claim, Some(&done), true, 6_000, &[LookEvent::Wrote(true)]);
    assert!(matches!(&steps[0], LookStep::WriteClaim { claim, expected: Some(2) } if claim.version == 3), "{steps:?}");
}

#[test]
fn an_unresolved_record_is_asked_about_never_claimed_on_its_own() {
    let lost = rec(RecordState::Pending, 4, 50); // its lease ran out
    for stored in [lost.clone(), rec(RecordState::Unknown, 4, 50)] {
        // This process still runs its handler: in progress, the hook not asked.
        let (steps, end) = run(LookMode::Claim, Some(&stored), true, 100, &[LookEvent::Held(Some(250))]);
        assert_eq!((steps, end), (vec![LookStep::AskHeld], LookEnd::InProgress { retry_after_ms: 250 }));
        // The hook cannot tell: unknown, nothing written.
        let (steps, end) = run(
            LookMode::Claim,
            Some(&stored),
            true,
            100,
            &[LookEvent::Held(None), LookEvent::Reconciled(ReconcileVerdict::Unknown)],
        );
        assert_eq!((steps, end), (vec![LookStep::AskHeld, LookStep::AskReconcile], LookEnd::Unknown));
        // It took effect: recorded over the version asked about, then replayed.
        let found = [
            LookEvent::Held(None),
            LookEvent::Reconciled(ReconcileVerdict::Resolved(RecordState::Failed)),
            LookEvent::Wrote(true),
        ];
        let (steps, end) = run(LookMode::Claim, Some(&stored), true, 100, &found);
        assert!(
            matches!(&steps[2], LookStep::WriteReconciled { record, state: RecordState::Failed } if record.version == 5 && record.state == RecordState::Failed)
        );
        assert_eq!(end, LookEnd::Replay(RecordState::Failed));
        // Provably not done: claimed over it (a write look), its version checked.
        let (steps, end) = run(
            LookMode::Claim,
            Some(&stored),
            true,
            100,
            &[LookEvent::Held(None), LookEvent::Reconciled(ReconcileVerdict::NotDone), LookEvent::Wrote(true)],
        );
        assert!(matches!(&steps[2], LookStep::WriteClaim { claim, expected: Some(4) } if claim.version == 5));
        assert_eq!(end, LookEnd::Execute { expected: Some(4) });
    }
}

#[test]
fn a_reconciled_record_that_changed_meanwhile_is_read_again() {
    let lost = rec(RecordState::Unknown, 4, 50);
    let answers = [
        LookEvent::Held(None),
        LookEvent::Reconciled(ReconcileVerdict::Resolved(RecordState::Succeeded)),
        LookEvent::Wrote(false),
        LookEvent::Held(Some(10)),
    ];
    let (steps, end) = run(LookMode::Claim, Some(&lost), true, 100, &answers);
    assert_eq!(steps[3], LookStep::Read);
    assert_eq!(end, LookEnd::InProgress { retry_after_ms: 10 });
}

#[test]
fn an_atomic_look_hands_the_claim_to_the_transaction_and_reads_again_when_another_committed_first() {
    let (steps, end) = run(LookMode::Atomic, None, true, 100, &[LookEvent::Wrote(false), LookEvent::Wrote(true)]);
    assert!(matches!(&steps[0], LookStep::WriteClaim { claim, expected: None } if claim.version == 1));
    assert_eq!(steps[1], LookStep::Read);
    assert_eq!(end, LookEnd::Execute { expected: None });
    let lost = rec(RecordState::Unknown, 4, 50);
    let (steps, _) = run(
        LookMode::Atomic,
        Some(&lost),
        true,
        100,
        &[LookEvent::Held(None), LookEvent::Reconciled(ReconcileVerdict::NotDone), LookEvent::Wrote(true)],
    );
    assert!(
        matches!(&steps[2], LookStep::WriteClaim { claim, expected: Some(4) } if claim.version == 5 && claim.state == RecordState::Pending)
    );
}

#[test]
fn a_status_look_never_claims() {
    assert_eq!(run(LookMode::Status, None, false, 100, &[]).1, LookEnd::NotFound);
    assert_eq!(run(LookMode::Status, Some(&rec(RecordState::Released, 3, 50)), false, 100, &[]).1, LookEnd::NotDone);
    assert_eq!(
        run(LookMode::Status, Some(&rec(RecordState::Succeeded, 3, 50)), false, 100, &[]).1,
        LookEnd::Replay(RecordState::Succeeded)
    );
    let lost = rec(RecordState::Pending, 4, 50);
    let (steps, end) = run(
        LookMode::Status,
        Some(&lost),
        false,
        100,
        &[LookEvent::Held(None), LookEvent::Reconciled(ReconcileVerdict::NotDone)],
    );
    assert_eq!((steps, end), (vec![LookStep::AskHeld, LookStep::AskReconcile], LookEnd::NotDone));
    // `same_input` means nothing to a status look: another fingerprint is no conflict.
    assert_eq!(
        run(LookMode::Status, Some(&rec(RecordState::Failed, 3, 50)), false, 100, &[]).1,
        LookEnd::Replay(RecordState::Failed)
    );
}

#[test]
fn an_event_out_of_step_ends_the_look_unknown() {
    let lost = rec(RecordState::Unknown, 4, 50);
    for (phase_events, wrong) in [
        (vec![], LookEvent::Wrote(true)),                           // reading, told a write won
        (vec![], LookEvent::Reconciled(ReconcileVerdict::NotDone)), // reading, told a verdict
        (vec![LookEvent::Held(None)], LookEvent::Wrote(true)),      // asking the hook, told a write won
        (vec![LookEvent::Held(None)], LookEvent::Reconciled(ReconcileVerdict::Resolved(RecordState::Pending))), // not an outcome
    ] {
        let mut look = Look::new(LookMode::Claim);
        let mut step = look.step(LookEvent::Read { same_input: true }, Some(&lost), FP, 100, &CFG);
        if phase_events.is_empty() {
            // Still in the read phase: replay the wrong event there.
            look = Look::new(LookMode::Claim);
            step = look.step(wrong, Some(&lost), FP, 100, &CFG);
            assert_eq!(step, LookStep::Done(LookEnd::Unknown), "{wrong:?}");
            continue;
        }
        for e in phase_events {
            step = look.step(e, Some(&lost), FP, 100, &CFG);
        }
        assert_eq!(step, LookStep::AskReconcile);
        assert_eq!(look.step(wrong, Some(&lost), FP, 100, &CFG), LookStep::Done(LookEnd::Unknown), "{wrong:?}");
    }
}

fn event() -> impl Strategy<Value = LookEvent> {
    prop_oneof![
        any::<bool>().prop_map(|same_input| LookEvent::Read { same_input }),
        proptest::option::of(0u64..5_000).prop_map(LookEvent::Held),
        prop_oneof![
            Just(ReconcileVerdict::NotDone),
            Just(ReconcileVerdict::Unknown),
            Just(ReconcileVerdict::Resolved(RecordState::Succeeded)),
            Just(ReconcileVerdict::Resolved(RecordState::Failed)),
            Just(ReconcileVerdict::Resolved(RecordState::Pending)),
        ]
        .prop_map(LookEvent::Reconciled),
        any::<bool>().prop_map(LookEvent::Wrote),
    ]
}

fn state() -> impl Strategy<Value = RecordState> {
    prop_oneof![
        Just(RecordState::Pending),
        Just(RecordState::Succeeded),
        Just(RecordState::Failed),
        Just(RecordState::Unknown),
        Just(RecordState::Released),
    ]
}

fn mode() -> impl Strategy<Value = LookMode> {
    prop_oneof![Just(LookMode::Claim), Just(LookMode::Atomic), Just(LookMode::Status)]
}

proptest! {
    /// The rule: an unresolved record (pending past its lease, or unknown) is never claimed over — nor its
    /// write executed — unless the reconcile hook said `not_done` in that round, whatever the face feeds back.
    #[test]
    fn an_unresolved_record_is_claimed_only_after_the_hook_said_not_done(
        m in mode(), unresolved in prop_oneof![Just(RecordState::Pending), Just(RecordState::Unknown)],
        events in proptest::collection::vec(event(), 0..24), now in 100u64..4_000,
    ) {
        let stored = rec(unresolved, 7, 50);
        let mut look = Look::new(m);
        let mut not_done = false;
        let mut step = look.step(LookEvent::Read { same_input: true }, Some(&stored), FP, now, &CFG);
        for e in events {
            let claims_over = matches!(&step, LookStep::WriteClaim { expected: Some(7), .. })
                || matches!(&step, LookStep::Done(LookEnd::Execute { .. }));
            prop_assert!(!claims_over || not_done, "claimed without the hook's not_done: {step:?}");
            let claims = matches!(step, LookStep::WriteClaim { .. } | LookStep::Done(LookEnd::Execute { .. }));
            prop_assert!(m != LookMode::Status || !claims, "a status look claimed: {:?}", step);
            if matches!(step, LookStep::Done(_)) { break; }
            if step == LookStep::Read { not_done = false; }
            if look.phase() == LookPhase::Reconcile && e == LookEvent::Reconciled(ReconcileVerdict::NotDone) { not_done = true; }
            step = look.step(e, Some(&stored), FP, now, &CFG);
        }
        let claims_over = matches!(&step, LookStep::WriteClaim { expected: Some(7), .. }) || matches!(&step, LookStep::Done(LookEnd::Execute { .. }));
        prop_assert!(!claims_over || not_done, "claimed without the hook's not_done: {step:?}");
    }

    /// Every look packs into one number and back, unchanged; any other number is refused, never misread.
    #[test]
    fn a_look_survives_its_code_and_garbage_is_refused(
        m in mode(), s in state(), events in proptest::collection::vec(event(), 0..12), garbage in any::<u32>(),
    ) {
        let stored = rec(s, 3, 50);
        let mut look = Look::new(m);
        prop_assert_eq!(Look::from_code(look.code()), Some(look));
        for e in events {
            if matches!(look.step(e, Some(&stored), FP, 100, &CFG), LookStep::Done(_)) { break; }
            prop_assert_eq!(Look::from_code(look.code()), Some(look));
        }
        if let Some(l) = Look::from_code(garbage) {
            prop_assert_eq!(l.code(), garbage);
        }
    }
}
