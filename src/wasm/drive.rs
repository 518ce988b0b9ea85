//! The drivers' exports (`src/retry/drive.rs`, `src/retry/resolve.rs`): the JS face's attempt loop and its
//! status look ask them what to do next, as the rmcp face does natively. Numbers in, numbers out, like the rest of the client face; the driver lives with its
//! call (the call's handle), created at the first step.

use wasm_bindgen::prelude::wasm_bindgen;

use super::client::{subrequest_room, time, with_call_slot, with_engine, FailKind, Field};
use super::ends::before_of;
use super::fail::{run, Fail};
use super::out::put;
use super::packed::{code, put_classification, put_decision, transition_code, unpack_outcome, unpack_safety};
use crate::retry::{
    CallDriver, Decision, Happened, HappenedKind, Next, OperationStatus, Reason, Recover, SplitMix64, StatusDriver,
    StatusHappened, StatusHeard, StatusNext, TaskStatus, TaskView, MAX_DURATION_MS,
};
use crate::seam::Out;

/// One step of `call`'s loop: what happened (`happened`, a `HAPPENINGS` code) → what to do next, into the out
/// slots (`next`, a `DRIVE_NEXTS` code, with the admission, the wait, the task look's timeout or the decision;
/// `stepped` 1 with the classification and breaker transition when this step recorded an attempt's outcome).
/// For `sent` and `task_result`, `kind` and `a`–`d` are the outcome (as `record` takes it); for
/// `input_unanswered`, `a` is 1 when the handlers ran past the deadline and `b` 1 when no handler answers that
/// kind of request; for `task_created` and `task_looked`, `a` is the task's `TASK_STATUSES` code, `b` 1 when
/// it gave a `pollInterval` and `c` that interval (ms). `safety` is the tool's (fixed at the first step);
/// `has_room`/`room` the invocation's subrequests, as `admit` takes them.
#[wasm_bindgen]
#[allow(clippy::too_many_arguments)]
pub fn next(
    engine: f64,
    call: f64,
    happened: f64,
    kind: f64,
    a: f64,
    b: f64,
    c: f64,
    d: f64,
    safety: f64,
    now_ms: f64,
    has_room: f64,
    room: f64,
) -> f64 {
    run(|| {
        let what = code(&HappenedKind::ALL, happened, Field::Happened)?;
        let outcome = match what {
            HappenedKind::Sent | HappenedKind::TaskResult => Some(unpack_outcome(kind, a, b, c, d)?),
            _ => None,
        };
        let flag = |v: f64| match v {
            0.0 => Ok(false),
            1.0 => Ok(true),
            _ => Err(Fail::new(FailKind::InvalidValue, Field::Happened, v)),
        };
        let happened = match (what, &outcome) {
            (HappenedKind::Start, _) => Happened::Start,
            (HappenedKind::Waited, _) => Happened::Waited,
            (HappenedKind::Cancelled, _) => Happened::Cancelled,
            (HappenedKind::Sent, Some(o)) => Happened::Sent(o),
            (HappenedKind::InputGathered, _) => Happened::InputGathered,
            (HappenedKind::InputUnanswered, _) => {
                Happened::InputUnanswered { timed_out: flag(a)?, handler_missing: flag(b)? }
            }
            (HappenedKind::TaskCreated, _) => Happened::TaskCreated(task_view(a, flag(b)?, c)?),
            (HappenedKind::TaskLooked, _) => Happened::TaskLooked(task_view(a, flag(b)?, c)?),
            (HappenedKind::TaskLookFailed, _) => Happened::TaskLookFailed,
            (HappenedKind::TaskResult, Some(o)) => Happened::TaskResult(o),
            (HappenedKind::TaskResultFailed, _) => Happened::TaskResultFailed,
            (HappenedKind::TaskCancelAnswered, _) => Happened::TaskCancelAnswered,
            (HappenedKind::Sent | HappenedKind::TaskResult, None) => {
                return Err(Fail::new(FailKind::InvalidValue, Field::Happened, happened))
            }
        };
        let safety = unpack_safety(safety)?;
        let now = time(now_ms)?;
        let room = subrequest_room(has_room, room)?;
        with_engine(engine, |e| {
            // JS seeds before the first step; an engine somehow unseeded draws from a fixed seed.
            let random = e.rng.get_or_insert_with(|| SplitMix64::new(0)).next_u64();
            let revision = e.revision;
            with_call_slot(call, Field::Call, |slot| {
                let driver = slot.driver.get_or_insert_with(|| CallDriver::new(safety, revision));
                let sending = driver.is_sending();
                let next = driver.next_within(&mut e.engine, &mut slot.state, happened, now, random, room);
                let step = driver.last_step().filter(|_| sending && matches!(happened, Happened::Sent(_)));
                put_next(&next);
                put(Out::Stepped, f64::from(u8::from(step.is_some())));
                if let Some(step) = step {
                    // The step's decision too: for `gather_input` it is the only word of the round's wait.
                    put_decision(&step.decision);
                    put_classification(&step.classification);
                    put(Out::Breaker, transition_code(step.breaker));
                }
                Ok(0.0)
            })
        })
    })
}

/// A task as the face saw it: its status code, and its `pollInterval` when it gave one.
fn task_view(status: f64, has_interval: bool, interval_ms: f64) -> Result<TaskView, Fail> {
    let status = code(&TaskStatus::ALL, status, Field::Happened)?;
    let poll_interval_ms = match has_interval {
        true => Some(Fail::number(Field::Happened, interval_ms, 0, MAX_DURATION_MS, true)?),
        false => None,
    };
    Ok(TaskView { status, poll_interval_ms })
}

fn put_next(next: &Next) {
    put(Out::Next, f64::from(next.kind() as u32));
    match *next {
        Next::Send { admission, recover } => {
            put(Out::Admitted, 1.0);
            put(Out::Attempt, f64::from(admission.attempt));
            put(Out::TimeoutMs, admission.timeout_ms as f64);
            put(Out::Breaker, transition_code(admission.breaker));
            put(Out::Recover, recover.map_or(f64::NAN, |r| f64::from(r as u32)));
        }
        Next::Wait { delay_ms, reason, recover, held } => {
            put_decision(&Decision::Retry { delay_ms, recover, reason });
            put(Out::Held, f64::from(u8::from(held)));
            put(Out::Breaker, 0.0);
        }
        Next::GatherInput => put(Out::Breaker, 0.0),
        Next::PollTask { delay_ms, status } => {
            put_decision(&Decision::Retry { delay_ms, recover: Some(Recover::PollTask), reason: Reason::StillRunning });
            put(Out::TaskStatus, f64::from(status as u8));
            put(Out::Breaker, 0.0);
        }
        Next::LookAtTask { timeout_ms } | Next::FetchTaskResult { timeout_ms } | Next::CancelTask { timeout_ms } => {
            put(Out::TimeoutMs, timeout_ms as f64);
            put(Out::Breaker, 0.0);
        }
        Next::Done(decision) => {
            put_decision(&decision);
            put(Out::Breaker, 0.0);
        }
    }
}

/// One step of the status driver (`src/retry/resolve.rs`) for `call`, a status look's own call handle: what
/// happened (`heard`, a `STATUS_HEARD` code; for `answered`, `answer` an `OPERATION_STATUSES` code — their count:
/// no usable answer — and `has_retry_after`/`retry_after` its `retryAfterMs`) → what to do next, into the out
/// slots (`resolveNext`, a `RESOLVE_NEXTS` code; `delayMs` for a wait; the decision for `done`). The driver is
/// made at the first step, from `before_status`/`before_reason` (the call's open end, as `statusAnswer` takes
/// it) and `deadline_ms`; later steps ignore them.
#[wasm_bindgen(js_name = statusNext)]
#[allow(clippy::too_many_arguments)]
pub fn status_next(
    engine: f64,
    call: f64,
    heard: f64,
    answer: f64,
    has_retry_after: f64,
    retry_after: f64,
    before_status: f64,
    before_reason: f64,
    deadline_ms: f64,
    now_ms: f64,
    has_room: f64,
    room: f64,
) -> f64 {
    run(|| {
        let happened = match code(&StatusHeard::ALL, heard, Field::Happened)? {
            StatusHeard::Start => StatusHappened::Start,
            StatusHeard::Waited => StatusHappened::Waited,
            StatusHeard::Cancelled => StatusHappened::Cancelled,
            StatusHeard::Answered => {
                let none = OperationStatus::ALL.len() as f64;
                let status =
                    if answer == none { None } else { Some(code(&OperationStatus::ALL, answer, Field::Answer)?) };
                let retry_after_ms = match has_retry_after {
                    0.0 => None,
                    1.0 => Some(Fail::number(Field::HintMs, retry_after, 0, MAX_DURATION_MS, true)?),
                    v => return Err(Fail::new(FailKind::InvalidValue, Field::HintMs, v)),
                };
                StatusHappened::Answered { status, retry_after_ms }
            }
        };
        let before = before_of(before_status, before_reason)?;
        let deadline = Fail::number(Field::DeadlineMs, deadline_ms, 0, 1 << 53, true)?;
        let now = time(now_ms)?;
        let room = subrequest_room(has_room, room)?;
        with_engine(engine, |e| {
            let random = e.rng.get_or_insert_with(|| SplitMix64::new(0)).next_u64();
            with_call_slot(call, Field::Call, |slot| {
                let driver = slot.status.get_or_insert_with(|| StatusDriver::new(&e.engine, before, deadline, now));
                let next = driver.next(&e.engine, happened, now, random, room);
                put(Out::ResolveNext, f64::from(next.kind() as u32));
                match next {
                    StatusNext::Wait { delay_ms } => {
                        put_decision(&Decision::Retry { delay_ms, recover: None, reason: Reason::StillRunning });
                    }
                    StatusNext::Done(Some(decision)) => put_decision(&decision),
                    StatusNext::Ask | StatusNext::Done(None) => {}
                }
                Ok(0.0)
            })
        })
    })
}
