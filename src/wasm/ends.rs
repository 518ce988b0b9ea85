//! The ends the core decides outside an attempt's step, for the JS face: the status tool's answer
//! (`statusAnswer`), a followed task's status (`taskEnd`) and result (`taskResultEnd`), and a call's end after
//! its loop (`callFinish`, `src/retry/finish.rs`: ask the status tool about an open keyed write, settle the
//! journal entry, answer). None keeps a handle: each takes what the face carries and answers into the out slots.

use wasm_bindgen::prelude::wasm_bindgen;

use super::client::Field;
use super::fail::{run, Fail};
use super::out::put;
use super::packed::{code, put_decision};
use crate::retry::{
    decide_status, decide_task_end, decide_task_result, CallFinish, Cause, Decision, FinalStatus, FinishFacts,
    FinishNext, Finished, FinishedKind, OperationStatus, Reason, TaskStatus,
};
use crate::seam::Out;

/// What the status tool's answer (`OPERATION_STATUSES` code; their count: no answer) makes of a call whose
/// outcome was open: `before_status` and `before_reason` are the engine's stop (a `STATUSES` code and a
/// `REASONS` code; the count of statuses: none). The decision into the out slots: a stop ([`decide_status`]).
#[wasm_bindgen(js_name = statusAnswer)]
pub fn status_answer(answer: f64, before_status: f64, before_reason: f64) -> f64 {
    run(|| {
        let none = OperationStatus::ALL.len() as f64;
        let answer = if answer == none { None } else { Some(code(&OperationStatus::ALL, answer, Field::Answer)?) };
        put_decision(&decide_status(answer, before_of(before_status, before_reason)?));
        Ok(0.0)
    })
}

/// A call's open end as JS passes it: a `STATUSES` code and a `REASONS` code; the count of statuses: none.
pub(super) fn before_of(before_status: f64, before_reason: f64) -> Result<Option<(FinalStatus, Reason)>, Fail> {
    if before_status == FinalStatus::ALL.len() as f64 {
        return Ok(None);
    }
    Ok(Some((code(&FinalStatus::ALL, before_status, Field::Before)?, code(Reason::ALL, before_reason, Field::Before)?)))
}

/// What a followed task's status (`TASK_STATUSES` code) means for the call when no result was read: the
/// decision into the out slots ([`decide_task_end`]: a stop, or a `poll_task` retry while it runs).
#[wasm_bindgen(js_name = taskEnd)]
pub fn task_end(status: f64) -> f64 {
    run(|| {
        put_decision(&decide_task_end(code(&TaskStatus::ALL, status, Field::TaskStatus)?));
        Ok(0.0)
    })
}

/// What a followed task's result means when the engine would not stop on it (its `record` was a retry, which
/// a created task never is): [`decide_task_result`] of the result's cause (`CAUSES` code) and the retry's reason
/// (`REASONS` code), into the out slots — an open end (`pending`, `unknown`), never the task's own `completed`.
#[wasm_bindgen(js_name = taskResultEnd)]
pub fn task_result_end(cause: f64, reason: f64) -> f64 {
    run(|| {
        let cause = code(Cause::ALL, cause, Field::TaskResultCause)?;
        let reason = code(Reason::ALL, reason, Field::TaskResultReason)?;
        put_decision(&decide_task_result(cause, Decision::Retry { delay_ms: 0, recover: None, reason }));
        Ok(0.0)
    })
}

/// One step of a call's end: what happened (`happened`, a `FINISHINGS` code), the end as it stands (`status`,
/// `reason`: the loop's decision at `start`; after `resolved`, what the status look made of it — the same end
/// when it learned nothing; at `settled`, the settled end) and the facts (`keyed`, `may_resolve`, `cancelled`:
/// 1 or 0) → `finishNext` (a `FINISH_NEXTS` code), the end in `stop`/`reason`, and `gaveUp` for `end`.
#[wasm_bindgen(js_name = callFinish)]
pub fn call_finish(happened: f64, status: f64, reason: f64, keyed: f64, may_resolve: f64, cancelled: f64) -> f64 {
    run(|| {
        let kind = code(FinishedKind::ALL, happened, Field::Happened)?;
        let status = code(&FinalStatus::ALL, status, Field::End)?;
        let reason = code(Reason::ALL, reason, Field::End)?;
        let flag = |v| Fail::number(Field::Facts, v, 0, 1, true).map(|v| v == 1);
        let facts = FinishFacts { keyed: flag(keyed)?, may_resolve: flag(may_resolve)?, cancelled: flag(cancelled)? };
        let stop = Decision::stop(status, reason);
        let happened = match kind {
            FinishedKind::Start => Finished::Start,
            FinishedKind::Resolved => Finished::Resolved(Some(stop)),
            FinishedKind::Settled => Finished::Settled,
        };
        let next = CallFinish::before(kind, status, reason, facts).next(happened);
        put(Out::FinishNext, f64::from(next.kind() as u32));
        let (status, reason, gave_up) = match next {
            FinishNext::Resolve { status, reason } => (status, reason, false),
            FinishNext::Settle { status } => (status, reason, false),
            FinishNext::End { status, reason, gave_up } => (status, reason, gave_up),
        };
        put_decision(&Decision::stop(status, reason));
        put(Out::GaveUp, f64::from(u8::from(gave_up)));
        Ok(0.0)
    })
}
