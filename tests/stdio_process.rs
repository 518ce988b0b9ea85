//! A lost stdio server process, through the engine: a process that exited (or stopped answering) while a
//! request was in flight asks for a fresh one (re-initialize) with the delivery unknown, so the gate decides who
//! is re-sent there; one that had exited before the request was handed over proves it was not sent.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::retry::{
    classify_conservatively, AttemptOutcome as O, Cause, Decision, Delivery, Engine, FinalStatus, Policy, Reason,
    Recover, ResultType, Revision, Safety, Sent,
};

const EXITED: O = O::ProcessExited { sent: Sent::Maybe };
const EXITED_BEFORE: O = O::ProcessExited { sent: Sent::No };
const HUNG: O = O::ProcessUnresponsive;
const OK: O = O::Result { is_error: false, result_type: ResultType::Complete };
const FRESH: Decision = Decision::Retry { delay_ms: 0, recover: Some(Recover::Reinitialize), reason: Reason::Recover };

/// One call: each outcome in turn, admitted and recorded (stdio: no revision is known). Returns the decisions.
fn run(safety: Safety, outcomes: &[O]) -> Vec<Decision> {
    let mut e = Engine::new(Policy::default());
    let mut call = e.begin(0);
    let mut out = Vec::new();
    for (i, o) in outcomes.iter().enumerate() {
        let now = i as u64;
        match e.admit(&mut call, now) {
            Ok(_) => out.push(e.record(&mut call, o, safety, None::<Revision>, now, 7).decision),
            Err(stop) => {
                out.push(stop);
                break;
            }
        }
    }
    out
}

#[test]
fn a_lost_process_is_a_reinitialization_with_the_delivery_it_proves() {
    let rows = [
        (EXITED, Delivery::Unknown, Cause::ProcessExited),
        (EXITED_BEFORE, Delivery::NotProcessed, Cause::ProcessExitedNotSent),
        (HUNG, Delivery::Unknown, Cause::ProcessUnresponsive),
    ];
    for (o, delivery, cause) in rows {
        let c = classify_conservatively(&o);
        assert_eq!((c.delivery, c.cause, c.recover), (delivery, cause, Some(Recover::Reinitialize)), "{o:?}");
        assert!(!c.is_transport_failure(), "a fresh process is the recovery, not a breaker failure: {o:?}");
    }
}

#[test]
fn reads_idempotent_and_keyed_calls_go_to_the_fresh_process_and_unsafe_ones_stop_unknown() {
    for lost in [EXITED, HUNG] {
        for safety in [Safety::ReadOnly, Safety::Idempotent, Safety::Keyed] {
            assert_eq!(
                run(safety, &[lost, OK]),
                [FRESH, Decision::stop(FinalStatus::Succeeded, Reason::Succeeded)],
                "{lost:?} {safety:?}"
            );
        }
        // The gate reads this attempt's own delivery: the first attempt already may have acted.
        assert_eq!(run(Safety::Unsafe, &[lost]), [Decision::stop(FinalStatus::Unknown, Reason::UnsafeAfterUnknown)]);
    }
    // Nothing written to the dead process: even an unsafe call goes to the fresh one, and its end is its own.
    assert_eq!(
        run(Safety::Unsafe, &[EXITED_BEFORE, OK]),
        [FRESH, Decision::stop(FinalStatus::Succeeded, Reason::Succeeded)]
    );
}

#[test]
fn one_fresh_process_per_call_and_the_re_send_is_not_an_attempt() {
    // A second loss on the fresh process ends the call: unknown (the first may have acted).
    assert_eq!(
        run(Safety::ReadOnly, &[EXITED, HUNG]),
        [FRESH, Decision::stop(FinalStatus::Unknown, Reason::RecoverExhausted)]
    );
    // The re-send does not count toward maxAttempts: a call whose last attempt lost its process still gets it.
    let mut e = Engine::new(Policy { max_attempts: 1, ..Policy::default() });
    let mut call = e.begin(0);
    e.admit(&mut call, 0).unwrap();
    assert_eq!(e.record(&mut call, &EXITED, Safety::Keyed, None::<Revision>, 0, 7).decision, FRESH);
    assert!(e.admit(&mut call, 1).is_ok(), "the re-send to the fresh process is admitted");
    assert_eq!(
        e.record(&mut call, &OK, Safety::Keyed, None::<Revision>, 1, 7).decision,
        Decision::stop(FinalStatus::Succeeded, Reason::Succeeded)
    );
}
