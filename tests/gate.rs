//! The gate table (README "The rule that matters most"), cell by cell, and every stop of `decide`, one test row each.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use mcp_retry_policy::retry::{
    classify, decide, hold_wait, AttemptOutcome as O, BudgetConfig, CallState, Decision, DecisionInput,
    FinalStatus as F, Jitter, LedgerStatus, Policy, Reason, Recover, ResultType, Revision, Safety, Sent,
};

const NOW: u64 = 10_000;

fn policy() -> Policy {
    Policy { jitter: Jitter::None, base_delay_ms: 100, max_delay_ms: 1_000, ..Policy::default() }
}

fn call() -> CallState {
    CallState { started_ms: NOW, deadline_ms: NOW + 60_000, attempts: 1, ..CallState::default() }
}

struct Case {
    outcome: O,
    safety: Safety,
    call: CallState,
    policy: Policy,
    breaker_open_until_ms: Option<u64>,
    budget: Option<u64>,
    revision: Revision,
}

fn case(outcome: O, safety: Safety) -> Case {
    Case {
        outcome,
        safety,
        call: call(),
        policy: policy(),
        breaker_open_until_ms: None,
        budget: Some(10_000),
        revision: Revision::LATEST,
    }
}

fn run(c: &Case) -> Decision {
    let cl = classify(&c.outcome, c.revision);
    decide(&DecisionInput {
        policy: &c.policy,
        call: &c.call,
        classification: &cl,
        safety: c.safety,
        now_ms: NOW,
        random: 0,
        breaker_open_until_ms: c.breaker_open_until_ms,
        budget_milli: c.budget,
    })
}

const RETRY: Decision = Decision::Retry { delay_ms: 100, recover: None, reason: Reason::Transient };

#[test]
fn the_gate() {
    use Safety::*;
    let not_processed = O::Network { sent: Sent::No };
    let unknown = O::Network { sent: Sent::Maybe };
    let processed = O::Result { is_error: false, result_type: ResultType::Complete };
    let stop_unknown = Decision::stop(F::Unknown, Reason::UnsafeAfterUnknown);
    let done = Decision::stop(F::Succeeded, Reason::Succeeded);
    #[rustfmt::skip]
    let table = [
        //  delivery       read_only  idempotent  keyed   unsafe
        (not_processed, [RETRY,     RETRY,      RETRY,  RETRY]),
        (unknown,       [RETRY,     RETRY,      RETRY,  stop_unknown]),
        (processed,     [done,      done,       done,   done]),
    ];
    for (outcome, row) in table {
        for (safety, want) in [ReadOnly, Idempotent, Keyed, Unsafe].into_iter().zip(row) {
            assert_eq!(run(&case(outcome, safety)), want, "{outcome:?} × {safety:?}");
        }
    }
}

#[test]
fn every_stop() {
    let transient = O::Network { sent: Sent::No };
    let lost = O::Network { sent: Sent::Maybe };
    let held = |wait: u64, reason| Decision::Retry { delay_ms: hold_wait(&policy(), wait, 0), recover: None, reason };
    let no_refill =
        Policy { budget: Some(BudgetConfig { refill_per_second_milli: 0, ..BudgetConfig::default() }), ..policy() };
    let mut rows: Vec<(&str, Case, Decision)> = Vec::new();
    rows.push((
        "tool error",
        case(O::Result { is_error: true, result_type: ResultType::Complete }, Safety::Keyed),
        Decision::stop(F::ToolError, Reason::ToolError),
    ));
    rows.push((
        "task created",
        case(O::Result { is_error: false, result_type: ResultType::Task }, Safety::Unsafe),
        Decision::stop(F::Pending, Reason::TaskPending),
    ));
    rows.push((
        "permanent",
        case(O::JsonRpcError { code: -32700, mismatch_confirmed: false }, Safety::ReadOnly),
        Decision::stop(F::Failed, Reason::Permanent),
    ));
    rows.push((
        "permanent, but the tool may have run (-32602 after a result the server rejected)",
        case(O::JsonRpcError { code: -32602, mismatch_confirmed: false }, Safety::ReadOnly),
        Decision::stop(F::Unknown, Reason::Permanent),
    ));
    rows.push((
        "permanent, but a Python tool may have run (-32600 NoBackChannelError after the side effect)",
        case(O::JsonRpcError { code: -32600, mismatch_confirmed: false }, Safety::Unsafe),
        Decision::stop(F::Unknown, Reason::Permanent),
    ));
    rows.push((
        "abort before send",
        case(O::Aborted { sent: Sent::No }, Safety::Unsafe),
        Decision::stop(F::Failed, Reason::Aborted),
    ));
    rows.push((
        "abort after send",
        case(O::Aborted { sent: Sent::Maybe }, Safety::ReadOnly),
        Decision::stop(F::Unknown, Reason::Aborted),
    ));
    rows.push((
        "max attempts",
        Case { call: CallState { attempts: 3, ..call() }, ..case(transient, Safety::ReadOnly) },
        Decision::stop(F::Failed, Reason::MaxAttempts),
    ));
    rows.push((
        "max attempts after an unknown delivery",
        Case { call: CallState { attempts: 3, ..call() }, ..case(lost, Safety::Keyed) },
        Decision::stop(F::Unknown, Reason::MaxAttempts),
    ));
    rows.push((
        "an earlier attempt may have landed",
        Case { call: CallState { attempts: 3, maybe_delivered: true, ..call() }, ..case(transient, Safety::Keyed) },
        Decision::stop(F::Unknown, Reason::MaxAttempts),
    ));
    rows.push((
        "breaker open: held until its probe",
        Case { breaker_open_until_ms: Some(NOW + 2_000), ..case(transient, Safety::ReadOnly) },
        held(2_000, Reason::BreakerHold),
    ));
    rows.push((
        "breaker open: a keyed write held with its key after an unknown delivery",
        Case { breaker_open_until_ms: Some(NOW + 2_000), ..case(lost, Safety::Keyed) },
        held(2_000, Reason::BreakerHold),
    ));
    rows.push((
        "breaker open, its probe past the deadline",
        Case {
            breaker_open_until_ms: Some(NOW + 2_000),
            call: CallState { deadline_ms: NOW + 2_000, ..call() },
            ..case(transient, Safety::ReadOnly)
        },
        Decision::stop(F::Failed, Reason::BreakerOpen),
    ));
    rows.push((
        "breaker open: an unsafe tool after an unknown delivery still stops",
        Case { breaker_open_until_ms: Some(NOW + 2_000), ..case(lost, Safety::Unsafe) },
        Decision::stop(F::Unknown, Reason::UnsafeAfterUnknown),
    ));
    rows.push((
        "budget empty: held until it refills (one token a second)",
        Case { budget: Some(500), ..case(transient, Safety::ReadOnly) },
        held(500, Reason::BudgetHold),
    ));
    rows.push((
        "budget empty, no refill with time",
        Case { budget: Some(999), policy: no_refill, ..case(transient, Safety::ReadOnly) },
        Decision::stop(F::Failed, Reason::BudgetExhausted),
    ));
    rows.push((
        "budget empty after a timeout (costs 2), no refill with time",
        Case { budget: Some(1_999), policy: no_refill, ..case(O::Timeout, Safety::ReadOnly) },
        Decision::stop(F::Unknown, Reason::BudgetExhausted),
    ));
    rows.push((
        "budget empty, its refill past the deadline",
        Case {
            budget: Some(0),
            call: CallState { deadline_ms: NOW + 1_000, ..call() },
            ..case(O::Timeout, Safety::ReadOnly)
        },
        Decision::stop(F::Unknown, Reason::BudgetExhausted),
    ));
    rows.push((
        "deadline",
        Case { call: CallState { deadline_ms: NOW + 100, ..call() }, ..case(transient, Safety::ReadOnly) },
        Decision::stop(F::Failed, Reason::Deadline),
    ));
    rows.push((
        "retry-after past the deadline",
        Case {
            call: CallState { deadline_ms: NOW + 5_000, ..call() },
            ..case(
                O::Http {
                    status: 429,
                    retry_after_ms: Some(9_000),
                    had_session: false,
                    jsonrpc_code: None,
                    mismatch_confirmed: false,
                },
                Safety::Unsafe,
            )
        },
        Decision::stop(F::Failed, Reason::RetryAfterBeyondDeadline),
    ));
    rows.push((
        "401",
        case(
            O::Http {
                status: 401,
                retry_after_ms: None,
                had_session: false,
                jsonrpc_code: None,
                mismatch_confirmed: false,
            },
            Safety::ReadOnly,
        ),
        Decision::stop(F::Failed, Reason::ReauthenticationRequired),
    ));
    rows.push((
        "re-initialize only once",
        Case {
            revision: Revision::V2025_11_25,
            call: CallState { used_recover: 1 << (Recover::Reinitialize as u8), ..call() },
            ..case(
                O::Http {
                    status: 404,
                    retry_after_ms: None,
                    had_session: true,
                    jsonrpc_code: None,
                    mismatch_confirmed: false,
                },
                Safety::ReadOnly,
            )
        },
        Decision::stop(F::Failed, Reason::RecoverExhausted),
    ));
    rows.push((
        "input rounds",
        Case {
            call: CallState { continuations: 32, ..call() },
            ..case(O::Result { is_error: false, result_type: ResultType::InputRequired }, Safety::Unsafe)
        },
        Decision::stop(F::Failed, Reason::InputRoundsExceeded),
    ));
    rows.push((
        "unsafe, resumed stream then refused",
        Case { call: CallState { maybe_delivered: true, ..call() }, ..case(transient, Safety::Unsafe) },
        Decision::stop(F::Unknown, Reason::UnsafeAfterUnknown),
    ));
    for (name, c, want) in rows {
        assert_eq!(run(&c), want, "{name}");
    }
}

#[test]
fn every_retry_shape() {
    let rows: Vec<(&str, Case, Decision)> = vec![
        (
            "429 waits for Retry-After",
            case(
                O::Http {
                    status: 429,
                    retry_after_ms: Some(2_500),
                    had_session: false,
                    jsonrpc_code: None,
                    mismatch_confirmed: false,
                },
                Safety::Unsafe,
            ),
            Decision::Retry { delay_ms: 2_500, recover: None, reason: Reason::Throttled },
        ),
        (
            "Retry-After is clamped",
            Case {
                policy: Policy { max_retry_after_ms: 1_500, ..policy() },
                ..case(
                    O::Http {
                        status: 503,
                        retry_after_ms: Some(30_000),
                        had_session: false,
                        jsonrpc_code: None,
                        mismatch_confirmed: false,
                    },
                    Safety::Unsafe,
                )
            },
            Decision::Retry { delay_ms: 1_500, recover: None, reason: Reason::Transient },
        ),
        (
            "session 404: re-initialize at once",
            Case {
                revision: Revision::V2025_11_25,
                ..case(
                    O::Http {
                        status: 404,
                        retry_after_ms: None,
                        had_session: true,
                        jsonrpc_code: None,
                        mismatch_confirmed: false,
                    },
                    Safety::Unsafe,
                )
            },
            Decision::Retry { delay_ms: 0, recover: Some(Recover::Reinitialize), reason: Reason::Recover },
        ),
        (
            "-32020, the changed header declaration confirmed: refresh tools at once, re-send",
            case(O::JsonRpcError { code: -32020, mismatch_confirmed: true }, Safety::Unsafe),
            Decision::Retry { delay_ms: 0, recover: Some(Recover::RefreshTools), reason: Reason::Recover },
        ),
        (
            "-32020 unconfirmed (a handler may relay it after it acted): an unsafe tool is unknown",
            case(O::JsonRpcError { code: -32020, mismatch_confirmed: false }, Safety::Unsafe),
            Decision::stop(F::Unknown, Reason::UnsafeAfterUnknown),
        ),
        (
            "-32020 unconfirmed: a read is refreshed and re-sent",
            case(O::JsonRpcError { code: -32020, mismatch_confirmed: false }, Safety::ReadOnly),
            Decision::Retry { delay_ms: 0, recover: Some(Recover::RefreshTools), reason: Reason::Recover },
        ),
        (
            "-32022, the version confirmed unsupported: renegotiate at once, re-send",
            case(O::JsonRpcError { code: -32022, mismatch_confirmed: true }, Safety::Unsafe),
            Decision::Retry { delay_ms: 0, recover: Some(Recover::Renegotiate), reason: Reason::Recover },
        ),
        (
            "-32022 unconfirmed: an unsafe tool is unknown",
            case(O::JsonRpcError { code: -32022, mismatch_confirmed: false }, Safety::Unsafe),
            Decision::stop(F::Unknown, Reason::UnsafeAfterUnknown),
        ),
        (
            "-32022 unconfirmed: a keyed write renegotiates and is re-sent under its id",
            case(O::JsonRpcError { code: -32022, mismatch_confirmed: false }, Safety::Keyed),
            Decision::Retry { delay_ms: 0, recover: Some(Recover::Renegotiate), reason: Reason::Recover },
        ),
        (
            "broken stream with event ids: resume, even for an unsafe tool",
            Case {
                revision: Revision::V2025_11_25,
                ..case(O::StreamBroken { event_id_seen: true, retry_ms: Some(700) }, Safety::Unsafe)
            },
            Decision::Retry { delay_ms: 700, recover: Some(Recover::ResumeStream), reason: Reason::Recover },
        ),
        (
            "input_required: continue at once",
            case(O::Result { is_error: false, result_type: ResultType::InputRequired }, Safety::Unsafe),
            Decision::Retry { delay_ms: 0, recover: Some(Recover::ContinueInput), reason: Reason::ContinueInput },
        ),
        (
            "second retry doubles",
            Case { call: CallState { retries: 1, ..call() }, ..case(O::Timeout, Safety::Idempotent) },
            Decision::Retry { delay_ms: 200, recover: None, reason: Reason::Transient },
        ),
        (
            "ledger in progress: check back after its hint",
            case(O::Ledger { status: LedgerStatus::InProgress, retry_after_ms: Some(800) }, Safety::Keyed),
            Decision::Retry { delay_ms: 800, recover: None, reason: Reason::Transient },
        ),
        ("no budget section: no budget stop", Case { budget: None, ..case(O::Timeout, Safety::Keyed) }, RETRY),
    ];
    for (name, c, want) in rows {
        assert_eq!(run(&c), want, "{name}");
    }
}
