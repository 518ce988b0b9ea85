//! The call driver following a created task (`retry::drive`, `follow.rs`), natively: the sequence both faces
//! carry out — fetch the result of an ended task, look at a running one with the engine's waits, cancel on
//! the caller's abort — and what it never does: send the call again, end a cancelled task's call `failed`, or
//! forget the server's interval when a look leaves it out. Each test fails if the driver skips a step, re-sends,
//! or reads a task's status as the tool's answer.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::retry::{
    AttemptOutcome as O, CallDriver, CallOptions, CallState, Decision, Engine, FinalStatus, Happened, LedgerStatus,
    Next, Policy, Reason, ResultType, Revision, Safety, SplitMix64, TaskStatus, TaskView, TASK_CANCEL_TIMEOUT_MS,
};

const OK: O = O::Result { is_error: false, result_type: ResultType::Complete };
const TOOL_ERROR: O = O::Result { is_error: true, result_type: ResultType::Complete };
const CREATED: O = O::Result { is_error: false, result_type: ResultType::Task };
const R: u64 = 0x9E37_79B9_7F4A_7C15;

fn view(status: TaskStatus, poll_interval_ms: Option<u64>) -> TaskView {
    TaskView { status, poll_interval_ms }
}

struct Call {
    driver: CallDriver,
    state: CallState,
}

impl Call {
    fn next(&mut self, e: &mut Engine, happened: Happened<'_>, now: u64) -> Next {
        self.driver.next(e, &mut self.state, happened, now, R)
    }
}

/// A call of a tool of `safety` whose one attempt created a task: the loop ended `pending`, `task_pending`.
fn created(e: &mut Engine, safety: Safety) -> Call {
    let state = e.begin_with(0, CallOptions { answers_input: false });
    let mut c = Call { driver: CallDriver::new(safety, Some(Revision::LATEST)), state };
    assert!(matches!(c.next(e, Happened::Start, 0), Next::Send { .. }));
    assert_eq!(
        c.next(e, Happened::Sent(&CREATED), 10),
        Next::Done(Decision::stop(FinalStatus::Pending, Reason::TaskPending))
    );
    c
}

fn done(status: FinalStatus, reason: Reason) -> Next {
    Next::Done(Decision::stop(status, reason))
}

#[test]
fn a_working_task_is_looked_at_with_its_interval_then_its_result_read_and_the_call_is_never_sent_again() {
    let mut e = Engine::new(Policy::default());
    let mut c = created(&mut e, Safety::Unsafe);
    let next = c.next(&mut e, Happened::TaskCreated(view(TaskStatus::Working, Some(700))), 20);
    let Next::PollTask { delay_ms, status: TaskStatus::Working } = next else { panic!("a poll, not {next:?}") };
    assert!((700..=770).contains(&delay_ms), "the server's interval, jittered up to a tenth: {delay_ms}");
    let Next::LookAtTask { timeout_ms } = c.next(&mut e, Happened::Waited, 20 + delay_ms) else { panic!() };
    assert!(timeout_ms >= 1 && timeout_ms <= e.policy().attempt_timeout_ms);
    // This look leaves the interval out: the server's last one still holds (never the engine's own backoff).
    let next = c.next(&mut e, Happened::TaskLooked(view(TaskStatus::Working, None)), 1_000);
    let Next::PollTask { delay_ms, .. } = next else { panic!("a poll, not {next:?}") };
    assert!((700..=770).contains(&delay_ms), "the last interval kept: {delay_ms}");
    assert!(matches!(c.next(&mut e, Happened::Waited, 1_000 + delay_ms), Next::LookAtTask { .. }));
    let next = c.next(&mut e, Happened::TaskLooked(view(TaskStatus::Completed, None)), 2_000);
    let Next::FetchTaskResult { timeout_ms } = next else { panic!("fetch, not {next:?}") };
    assert_eq!(timeout_ms, c.state.deadline_ms - 2_000, "held by the server: what is left of the deadline");
    assert_eq!(c.next(&mut e, Happened::TaskResult(&OK), 2_100), done(FinalStatus::Succeeded, Reason::Succeeded));
    // Done stands; a second created task is not followed.
    let again = c.next(&mut e, Happened::TaskCreated(view(TaskStatus::Working, None)), 2_200);
    assert_eq!(again, done(FinalStatus::Succeeded, Reason::Succeeded));
}

#[test]
fn a_task_is_followed_only_when_the_call_ended_on_it_and_only_once() {
    let mut e = Engine::new(Policy::default());
    // A call that succeeded outright: a created task fed afterwards is not followed.
    let state = e.begin_with(0, CallOptions { answers_input: false });
    let mut c = Call { driver: CallDriver::new(Safety::ReadOnly, None), state };
    assert!(matches!(c.next(&mut e, Happened::Start, 0), Next::Send { .. }));
    let end = c.next(&mut e, Happened::Sent(&OK), 5);
    assert_eq!(c.next(&mut e, Happened::TaskCreated(view(TaskStatus::Working, None)), 6), end);
    // A task event before the loop ended is out of order: what was sent may have been delivered — unknown.
    let state = e.begin_with(0, CallOptions { answers_input: false });
    let mut c = Call { driver: CallDriver::new(Safety::Unsafe, None), state };
    assert!(matches!(c.next(&mut e, Happened::Start, 0), Next::Send { .. }));
    let Next::Done(Decision::Stop { status, .. }) = c.next(&mut e, Happened::TaskLookFailed, 5) else { panic!() };
    assert_eq!(status, FinalStatus::Unknown);
    // Without following, the call ends as the engine said: pending on the task.
    let c = created(&mut e, Safety::Unsafe);
    assert!(!c.driver.is_sending());
}

#[test]
fn a_task_waiting_for_input_has_its_result_fetched_and_a_failed_fetch_looks_again_without_a_hint() {
    let mut e = Engine::new(Policy { base_delay_ms: 100, ..Policy::default() });
    let mut c = created(&mut e, Safety::Keyed);
    let next = c.next(&mut e, Happened::TaskCreated(view(TaskStatus::InputRequired, Some(60_000))), 20);
    assert!(matches!(next, Next::FetchTaskResult { .. }), "tasks/result relays the input request: {next:?}");
    let next = c.next(&mut e, Happened::TaskResultFailed, 30);
    let Next::PollTask { delay_ms, status: TaskStatus::InputRequired } = next else { panic!("{next:?}") };
    assert!(delay_ms < 60_000, "no hint after a fetch that failed: the engine's own wait ({delay_ms})");
    assert!(matches!(c.next(&mut e, Happened::Waited, 30 + delay_ms), Next::LookAtTask { .. }));
    // The look fails: the task is as last seen, waiting for input — its result is asked for again.
    assert!(matches!(c.next(&mut e, Happened::TaskLookFailed, 40 + delay_ms), Next::FetchTaskResult { .. }));
    assert_eq!(
        c.next(&mut e, Happened::TaskResult(&TOOL_ERROR), 50 + delay_ms),
        done(FinalStatus::ToolError, Reason::ToolError)
    );
}

#[test]
fn a_task_status_without_a_result_ends_the_call_as_the_core_reads_it() {
    for (status, end) in [
        (TaskStatus::Completed, done(FinalStatus::Succeeded, Reason::TaskResultUnavailable)),
        (TaskStatus::Failed, done(FinalStatus::ToolError, Reason::TaskResultUnavailable)),
        (TaskStatus::Cancelled, done(FinalStatus::Unknown, Reason::TaskCancelled)),
    ] {
        let mut e = Engine::new(Policy::default());
        let mut c = created(&mut e, Safety::Unsafe);
        let first = c.next(&mut e, Happened::TaskCreated(view(status, None)), 20);
        let next = if status == TaskStatus::Cancelled {
            first
        } else {
            assert!(matches!(first, Next::FetchTaskResult { .. }));
            c.next(&mut e, Happened::TaskResultFailed, 30)
        };
        assert_eq!(next, end, "{status:?}");
    }
}

#[test]
fn a_task_result_that_is_the_ledgers_in_progress_or_unknown_is_an_open_end_never_the_tasks_completed() {
    for (ledger, end) in [
        (LedgerStatus::InProgress, done(FinalStatus::Pending, Reason::StatusInProgress)),
        (LedgerStatus::Unknown, done(FinalStatus::Unknown, Reason::StatusUnknown)),
    ] {
        let mut e = Engine::new(Policy::default());
        let mut c = created(&mut e, Safety::Keyed);
        assert!(matches!(
            c.next(&mut e, Happened::TaskCreated(view(TaskStatus::Completed, None)), 20),
            Next::FetchTaskResult { .. }
        ));
        let answer = O::Ledger { status: ledger, retry_after_ms: Some(100) };
        assert_eq!(c.next(&mut e, Happened::TaskResult(&answer), 30), end, "{ledger:?}");
    }
}

#[test]
fn cancelled_while_following_the_task_is_cancelled_and_the_call_ends_unknown_never_failed() {
    let mut e = Engine::new(Policy { attempt_timeout_ms: 60_000, ..Policy::default() });
    let mut c = created(&mut e, Safety::Unsafe);
    assert!(matches!(
        c.next(&mut e, Happened::TaskCreated(view(TaskStatus::Working, Some(100))), 20),
        Next::PollTask { .. }
    ));
    assert_eq!(c.next(&mut e, Happened::Cancelled, 50), Next::CancelTask { timeout_ms: TASK_CANCEL_TIMEOUT_MS });
    // Anything but the cancel's answer repeats the cancel.
    assert!(matches!(c.next(&mut e, Happened::Waited, 60), Next::CancelTask { .. }));
    let Next::Done(Decision::Stop { status, reason }) = c.next(&mut e, Happened::TaskCancelAnswered, 70) else {
        panic!()
    };
    assert_eq!((status, reason), (FinalStatus::Unknown, Reason::Aborted), "the task may have run in part");
    // A short attempt timeout bounds the cancel too.
    let mut e = Engine::new(Policy { attempt_timeout_ms: 1_000, ..Policy::default() });
    let mut c = created(&mut e, Safety::Unsafe);
    assert!(matches!(
        c.next(&mut e, Happened::TaskCreated(view(TaskStatus::Completed, None)), 20),
        Next::FetchTaskResult { .. }
    ));
    assert_eq!(c.next(&mut e, Happened::Cancelled, 30), Next::CancelTask { timeout_ms: 1_000 });
}

#[test]
fn a_task_still_running_at_the_deadline_ends_pending() {
    let mut e = Engine::new(Policy { total_timeout_ms: 5_000, attempt_timeout_ms: 5_000, ..Policy::default() });
    let mut c = created(&mut e, Safety::Unsafe);
    let next = c.next(&mut e, Happened::TaskCreated(view(TaskStatus::Working, Some(10_000))), 20);
    assert_eq!(next, done(FinalStatus::Pending, Reason::Deadline), "the next look would start past the deadline");
}

#[test]
fn any_sequence_of_task_events_never_sends_the_call_again_and_ends() {
    let mut rng = SplitMix64::new(7);
    let outcomes = [OK, TOOL_ERROR, O::Ledger { status: LedgerStatus::InProgress, retry_after_ms: None }, O::Timeout];
    for call in 0..2_000u64 {
        let mut e = Engine::new(Policy::default());
        let safety = [Safety::ReadOnly, Safety::Idempotent, Safety::Keyed, Safety::Unsafe][(call % 4) as usize];
        let mut c = created(&mut e, safety);
        let mut now = 20;
        let mut end = None;
        let status = |p: u64| TaskStatus::ALL[(p % 5) as usize];
        let first = c.next(&mut e, Happened::TaskCreated(view(status(rng.next_u64()), None)), now);
        let mut told = first;
        for _ in 0..300 {
            let pick = rng.next_u64();
            let outcome = outcomes[(pick % 4) as usize];
            let happened = match (pick >> 8) % 9 {
                0 => Happened::Waited,
                1 => Happened::Cancelled,
                2 => Happened::TaskLooked(view(status(pick >> 16), (pick & 1 == 0).then_some(pick >> 40))),
                3 => Happened::TaskLookFailed,
                4 => Happened::TaskResult(&outcome),
                5 => Happened::TaskResultFailed,
                6 => Happened::TaskCancelAnswered,
                7 => Happened::Start,
                _ => Happened::Sent(&outcome),
            };
            now += (pick >> 20) % 3_000;
            let next = c.next(&mut e, happened, now);
            assert!(
                !matches!(next, Next::Send { .. } | Next::Wait { .. } | Next::GatherInput),
                "{next:?} after {happened:?}"
            );
            if let Next::LookAtTask { .. } = next {
                assert!(
                    matches!(told, Next::PollTask { .. } | Next::LookAtTask { .. }),
                    "a look only after a poll's wait"
                );
            }
            if let Some(end) = end {
                assert_eq!(next, end, "after the end, the end again");
            } else if let Next::Done(Decision::Stop { status, .. }) = next {
                if matches!(told, Next::CancelTask { .. }) {
                    assert_ne!(status, FinalStatus::Failed, "a cancelled task may have run");
                }
                end = Some(next);
            }
            told = next;
        }
        assert!(end.is_some(), "call {call} never ended");
    }
}
