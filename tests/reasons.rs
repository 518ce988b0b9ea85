//! Every way a call ends is decided in the core: the tables of `src/retry/ends.rs` row by row, and every
//! [`Reason`] produced by some core function (so no reason is left for the JS layer to pick).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use std::collections::HashSet;

use mcp_retry_policy::retry::decide::MAX_INPUT_ROUNDS;
use mcp_retry_policy::retry::{
    decide, decide_list_recovery, decide_poll, decide_status, decide_task_end, decide_task_result, decide_unanswered,
    AttemptOutcome as O, CallState, Cause, Classification, Decision, DecisionInput, Delivery, Engine, FinalStatus,
    OperationStatus, Policy, Reason, Recover, Revision, Safety, TaskStatus, Verdict, MAX_POLLS,
};

const STOP: fn(FinalStatus, Reason) -> Decision = Decision::stop;

/// An answer, the engine's stop before it, and what the call ends as.
type StatusRow = (Option<OperationStatus>, Option<(FinalStatus, Reason)>, Decision);

#[test]
fn the_status_answer_table() {
    use FinalStatus as S;
    use OperationStatus as A;
    let unknown_write = Some((S::Unknown, Reason::UnsafeAfterUnknown));
    let task = Some((S::Pending, Reason::TaskPending));
    let rows: [StatusRow; 13] = [
        (Some(A::Succeeded), unknown_write, STOP(S::Succeeded, Reason::ResolvedByStatus)),
        (Some(A::Failed), unknown_write, STOP(S::ToolError, Reason::ResolvedByStatus)),
        (Some(A::NotDone), unknown_write, STOP(S::Failed, Reason::ResolvedByStatus)),
        (Some(A::InProgress), unknown_write, STOP(S::Pending, Reason::StatusInProgress)),
        (Some(A::NotFound), unknown_write, STOP(S::Unknown, Reason::StatusNotFound)),
        (Some(A::Unknown), unknown_write, STOP(S::Unknown, Reason::StatusUnknown)),
        // No answer: the engine's own stop stands; `resolve` (nothing before) could not ask.
        (None, unknown_write, STOP(S::Unknown, Reason::UnsafeAfterUnknown)),
        (None, task, STOP(S::Pending, Reason::TaskPending)),
        (None, None, STOP(S::Unknown, Reason::StatusNotAsked)),
        // A pending call is answered like an unknown one; unknown stays unknown.
        (Some(A::NotFound), task, STOP(S::Unknown, Reason::StatusNotFound)),
        (Some(A::Succeeded), None, STOP(S::Succeeded, Reason::ResolvedByStatus)),
        // A known end is never replaced.
        (Some(A::NotDone), Some((S::Succeeded, Reason::Succeeded)), STOP(S::Succeeded, Reason::Succeeded)),
        (Some(A::Succeeded), Some((S::Failed, Reason::Permanent)), STOP(S::Failed, Reason::Permanent)),
    ];
    for (answer, before, want) in rows {
        assert_eq!(decide_status(answer, before), want, "{answer:?} after {before:?}");
    }
    // Only the ledger's own "not done" makes a failure; no answer ever makes a success or a failure.
    for before in [unknown_write, task, None] {
        for answer in OperationStatus::ALL.map(Some).into_iter().chain([None]) {
            let d = decide_status(answer, before);
            if matches!(d, Decision::Stop { status: S::Failed, .. }) {
                assert_eq!(answer, Some(A::NotDone));
            }
            if answer.is_none() || answer == Some(A::Unknown) || answer == Some(A::NotFound) {
                assert!(matches!(d, Decision::Stop { status: S::Unknown | S::Pending, .. }), "{answer:?}: {d:?}");
            }
        }
    }
}

#[test]
fn the_task_end_table() {
    let follow = Decision::Retry { delay_ms: 0, recover: Some(Recover::PollTask), reason: Reason::StillRunning };
    let rows = [
        (TaskStatus::Working, follow),
        (TaskStatus::InputRequired, follow),
        (TaskStatus::Completed, STOP(FinalStatus::Succeeded, Reason::TaskResultUnavailable)),
        (TaskStatus::Failed, STOP(FinalStatus::ToolError, Reason::TaskResultUnavailable)),
        (TaskStatus::Cancelled, STOP(FinalStatus::Unknown, Reason::TaskCancelled)),
    ];
    assert_eq!(rows.len(), TaskStatus::ALL.len());
    for (status, want) in rows {
        assert_eq!(decide_task_end(status), want, "{status:?}");
    }
}

/// A followed task whose `tasks/result` the engine would not stop on — the server ledger's error-flagged
/// answer, for a keyed tool wrapped in `withIdempotency` run as a task — never ends as the task's status says
/// (`completed` → succeeded): the engine's own reading of that result, through the real engine.
#[test]
fn a_task_result_the_engine_would_retry_ends_open_never_succeeded() {
    use mcp_retry_policy::retry::{LedgerStatus, ResultType};
    let policy = Policy::default();
    let created = O::Result { is_error: false, result_type: ResultType::Task };
    let ledger = |status| O::Ledger { status, retry_after_ms: Some(100) };
    let rows = [
        (ledger(LedgerStatus::InProgress), STOP(FinalStatus::Pending, Reason::StatusInProgress)),
        (ledger(LedgerStatus::Unknown), STOP(FinalStatus::Unknown, Reason::StatusUnknown)),
        // What the engine stops on stands: the tool's answer, the ledger's refusal (unknown: the task ran).
        (
            O::Result { is_error: false, result_type: ResultType::Complete },
            STOP(FinalStatus::Succeeded, Reason::Succeeded),
        ),
        (
            O::Result { is_error: true, result_type: ResultType::Complete },
            STOP(FinalStatus::ToolError, Reason::ToolError),
        ),
    ];
    for (result, want) in rows {
        let mut e = Engine::new(policy);
        let mut call = e.begin(1);
        e.admit(&mut call, 1).unwrap();
        let first = e.record(&mut call, &created, Safety::Keyed, Revision::LATEST, 2, 0).decision;
        assert_eq!(first, STOP(FinalStatus::Pending, Reason::TaskPending));
        let step = e.record(&mut call, &result, Safety::Keyed, Revision::LATEST, 3, 0);
        let end = decide_task_result(step.classification.cause, step.decision);
        assert_eq!(end, want, "{result:?}: the engine said {:?}", step.decision);
        for status in TaskStatus::ALL {
            // Whatever the task's own status, a retry of its result is never the task's end.
            if step.decision.is_retry() {
                assert_ne!(decide_task_end(status), end, "{result:?} {status:?}");
            }
        }
    }
    // Any other retry is unknown with the retry's reason, never a success or a failure.
    let retry = Decision::Retry { delay_ms: 5, recover: None, reason: Reason::Transient };
    assert_eq!(decide_task_result(Cause::Timeout, retry), STOP(FinalStatus::Unknown, Reason::Transient));
}

#[test]
fn the_list_recovery_table() {
    let retry = |recover| Decision::Retry { delay_ms: 0, recover, reason: Reason::Recover };
    let rows = [
        (retry(Some(Recover::Reinitialize)), retry(Some(Recover::Reinitialize))),
        (retry(Some(Recover::Renegotiate)), retry(Some(Recover::Renegotiate))),
        (retry(Some(Recover::RefreshTools)), STOP(FinalStatus::Unknown, Reason::Recover)),
        (retry(Some(Recover::ResumeStream)), STOP(FinalStatus::Unknown, Reason::Recover)),
        (
            Decision::Retry { delay_ms: 40, recover: None, reason: Reason::Transient },
            STOP(FinalStatus::Unknown, Reason::Transient),
        ),
        (STOP(FinalStatus::Failed, Reason::Permanent), STOP(FinalStatus::Failed, Reason::Permanent)),
    ];
    for (given, want) in rows {
        assert_eq!(decide_list_recovery(given), want, "{given:?}");
    }
    // Through the engine: a session lost before the first call is re-initialized; a refused or broken read is not.
    let lost =
        O::Http { status: 404, retry_after_ms: None, had_session: true, jsonrpc_code: None, mismatch_confirmed: false };
    let mut e = Engine::new(Policy::default());
    let d = e.list_failed(&lost, Revision::V2025_11_25, 0, 1);
    assert_eq!(d, retry(Some(Recover::Reinitialize)));
    let refused = O::Http {
        status: 400,
        retry_after_ms: None,
        had_session: false,
        jsonrpc_code: None,
        mismatch_confirmed: false,
    };
    assert!(!e.list_failed(&refused, Revision::V2025_11_25, 0, 1).is_retry());
    assert!(!e.list_failed(&O::Timeout, Revision::V2025_11_25, 0, 1).is_retry(), "a transient failure is not followed");
}

fn classification(verdict: Verdict, delivery: Delivery, recover: Option<Recover>, cause: Cause) -> Classification {
    Classification { verdict, delivery, recover, retry_after_ms: None, cause }
}

/// Every reason, with one core call that produces it.
#[test]
fn every_reason_has_a_core_producer() {
    let policy = Policy::default();
    let call = CallState { deadline_ms: 60_000, ..CallState::default() };
    let d =
        |c: Classification, call: CallState, safety: Safety, now_ms: u64, breaker_open: bool, budget: Option<u64>| {
            decide(&DecisionInput {
                policy: &policy,
                call: &call,
                classification: &c,
                safety,
                now_ms,
                random: 0,
                breaker_open_until_ms: breaker_open.then_some(now_ms + 2_000),
                budget_milli: budget,
            })
        };
    let transient = classification(Verdict::Transient, Delivery::NotProcessed, None, Cause::Timeout);
    let ro = Safety::ReadOnly;
    let recover = |r: Recover| classification(Verdict::Recover, Delivery::NotProcessed, Some(r), Cause::Timeout);
    let used = |r: Recover| CallState { used_recover: 1 << (r as u8), ..call };
    let produced: Vec<(Decision, Reason)> = vec![
        (
            d(classification(Verdict::Success, Delivery::Processed, None, Cause::Timeout), call, ro, 0, false, None),
            Reason::Succeeded,
        ),
        (
            d(classification(Verdict::ToolError, Delivery::Processed, None, Cause::Timeout), call, ro, 0, false, None),
            Reason::ToolError,
        ),
        (d(recover(Recover::PollTask), call, ro, 0, false, None), Reason::TaskPending),
        (
            d(
                classification(Verdict::Permanent, Delivery::NotProcessed, None, Cause::Timeout),
                call,
                ro,
                0,
                false,
                None,
            ),
            Reason::Permanent,
        ),
        (
            d(
                classification(Verdict::Transient, Delivery::Unknown, None, Cause::Timeout),
                call,
                Safety::Unsafe,
                0,
                false,
                None,
            ),
            Reason::UnsafeAfterUnknown,
        ),
        (d(transient, CallState { attempts: policy.max_attempts, ..call }, ro, 0, false, None), Reason::MaxAttempts),
        (d(transient, call, ro, 60_000, false, None), Reason::Deadline),
        (d(transient, call, ro, 59_500, false, Some(0)), Reason::BudgetExhausted),
        (d(transient, call, ro, 59_000, true, None), Reason::BreakerOpen),
        (d(transient, call, ro, 0, false, Some(0)), Reason::BudgetHold),
        (d(transient, call, ro, 0, true, None), Reason::BreakerHold),
        (
            d(Classification { retry_after_ms: Some(120_000), ..transient }, call, ro, 0, false, None),
            Reason::RetryAfterBeyondDeadline,
        ),
        (
            d(
                classification(Verdict::Cancelled, Delivery::NotProcessed, None, Cause::Timeout),
                call,
                ro,
                0,
                false,
                None,
            ),
            Reason::Aborted,
        ),
        (d(recover(Recover::Reinitialize), used(Recover::Reinitialize), ro, 0, false, None), Reason::RecoverExhausted),
        (d(recover(Recover::Reauthenticate), call, ro, 0, false, None), Reason::ReauthenticationRequired),
        (d(transient, call, ro, 0, false, None), Reason::Transient),
        (
            d(
                classification(Verdict::Throttled, Delivery::NotProcessed, None, Cause::Timeout),
                call,
                ro,
                0,
                false,
                None,
            ),
            Reason::Throttled,
        ),
        (d(recover(Recover::Reinitialize), call, ro, 0, false, None), Reason::Recover),
        (d(recover(Recover::ContinueInput), call, ro, 0, false, None), Reason::ContinueInput),
        (
            d(
                recover(Recover::ContinueInput),
                CallState { continuations: MAX_INPUT_ROUNDS, ..call },
                ro,
                0,
                false,
                None,
            ),
            Reason::InputRoundsExceeded,
        ),
        (
            d(recover(Recover::ContinueInput), CallState { cannot_answer_input: true, ..call }, ro, 0, false, None),
            Reason::InputRequiredUnhandled,
        ),
        (decide_unanswered(&call, false), Reason::InputNotGiven),
        (decide_status(Some(OperationStatus::Succeeded), None), Reason::ResolvedByStatus),
        (decide_status(Some(OperationStatus::InProgress), None), Reason::StatusInProgress),
        (decide_status(Some(OperationStatus::NotFound), None), Reason::StatusNotFound),
        (decide_status(Some(OperationStatus::Unknown), None), Reason::StatusUnknown),
        (decide_status(None, None), Reason::StatusNotAsked),
        (decide_poll(&policy, &call, None, 0, 0), Reason::StillRunning),
        (decide_poll(&policy, &CallState { polls: MAX_POLLS, ..call }, None, 0, 0), Reason::PollsExhausted),
        (decide_task_end(TaskStatus::Cancelled), Reason::TaskCancelled),
        (decide_task_end(TaskStatus::Completed), Reason::TaskResultUnavailable),
        (
            mcp_retry_policy::retry::Engine::new(policy).admit_within(&mut call.clone(), 0, Some(0)).unwrap_err(),
            Reason::SubrequestBudget,
        ),
    ];
    let mut seen = HashSet::new();
    for (decision, want) in &produced {
        assert_eq!(decision.reason(), *want, "{decision:?}");
        seen.insert(*want);
    }
    for r in Reason::ALL {
        assert!(seen.contains(r), "no core function in this table produces {r:?}: add its producer here");
    }
}
