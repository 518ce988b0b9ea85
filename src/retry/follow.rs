//! The call driver's last leg: following a task the server created (2025-11-25 tasks), written once for both
//! faces. The call is never sent again; the task is looked at (`tasks/get`) with the engine's waits (the
//! task's `pollInterval` as the hint), its result fetched (`tasks/result`, which also carries the server's
//! input requests) once it ended or waits for input, and cancelled (`tasks/cancel`) when the caller aborts.
//!
//! ```text
//! TaskCreated / TaskLooked ──ended or input_required──▶ FetchTaskResult ──TaskResult──▶ record ─▶ Done
//!        │                                                   │ TaskResultFailed
//!        │ working                                           ▼
//!        └────────────▶ the status's end (decide_task_end) ──stop──▶ Done
//!                               │ follow on
//!                               ▼
//!                     PollTask (engine.poll) ─Waited─▶ LookAtTask ─TaskLooked / TaskLookFailed─▶ (again)
//! Cancelled while following ─▶ CancelTask ─TaskCancelAnswered─▶ the engine records an abort that may have run ─▶ Done
//! ```

use super::decide::{CallState, Decision};
use super::drive::{CallDriver, Happened, Next, Phase, TaskView};
use super::ends::{decide_task_end, decide_task_result, TaskStatus};
use super::engine::Engine;
use super::outcome::{AttemptOutcome, Sent};

/// How long a `tasks/cancel` may take at most (ms), and never more than the attempt timeout.
pub const TASK_CANCEL_TIMEOUT_MS: u64 = 5_000;

/// Where the following is: what it waits for, and the task as last seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Follow {
    /// The task's status as last seen.
    status: TaskStatus,
    /// The last `pollInterval` the server gave (a look without one keeps it).
    interval_ms: Option<u64>,
    /// The last look answered: its interval is the next wait's hint.
    looked: bool,
    /// What the face was told to do.
    at: At,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Fetching,
    Polling { delay_ms: u64 },
    Looking,
    Cancelling,
}

impl CallDriver {
    /// The task was created (or looked at): fetch its result if it ended or waits for input, otherwise the
    /// status says whether it goes on.
    pub(super) fn follow(
        &mut self,
        engine: &Engine,
        call: &mut CallState,
        task: TaskView,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> Next {
        let previous = match self.phase {
            Phase::Task(f) => f.interval_ms,
            _ => None,
        };
        let seen = Follow {
            status: task.status,
            interval_ms: task.poll_interval_ms.or(previous),
            looked: true,
            at: At::Fetching,
        };
        self.seen(engine, call, seen, now_ms, random, room)
    }

    fn seen(
        &mut self,
        engine: &Engine,
        call: &mut CallState,
        follow: Follow,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> Next {
        if fetches(follow.status) {
            self.phase = Phase::Task(Follow { at: At::Fetching, ..follow });
            // Held by the server until the task ends: it may take what is left of the deadline.
            return Next::FetchTaskResult { timeout_ms: call.deadline_ms.saturating_sub(now_ms).max(1) };
        }
        self.no_result(engine, call, follow, now_ms, random, room)
    }

    /// No result the engine stopped on: the task's status says what the call is, or when to look again.
    fn no_result(
        &mut self,
        engine: &Engine,
        call: &mut CallState,
        follow: Follow,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> Next {
        let end = decide_task_end(follow.status);
        if let Decision::Stop { .. } = end {
            return self.done(end);
        }
        // Waiting for input and no result yet: the next wait takes no hint from the look before.
        let looked = follow.looked && !fetches(follow.status);
        let hint = follow.interval_ms.filter(|_| looked);
        match engine.poll_within(call, hint, now_ms, random, room) {
            Decision::Retry { delay_ms, .. } => {
                self.phase = Phase::Task(Follow { looked, at: At::Polling { delay_ms }, ..follow });
                Next::PollTask { delay_ms, status: follow.status }
            }
            stop => self.done(stop),
        }
    }

    /// One event while a task is followed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn following(
        &mut self,
        engine: &mut Engine,
        call: &mut CallState,
        follow: Follow,
        happened: Happened<'_>,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> Next {
        match (follow.at, happened) {
            (At::Cancelling, Happened::TaskCancelAnswered | Happened::Cancelled) => {
                // The task may have run in part: never succeeded, failed or sent again.
                let aborted = AttemptOutcome::Aborted { sent: Sent::Maybe };
                let step = engine.record(call, &aborted, self.safety, self.revision, now_ms, random);
                self.done(step.decision)
            }
            (At::Cancelling, _) => self.cancelling(engine, follow),
            (_, Happened::Cancelled) => self.cancelling(engine, follow),
            (At::Fetching, Happened::TaskResult(outcome)) => {
                let step = engine.record(call, outcome, self.safety, self.revision, now_ms, random);
                // A result the engine would not stop on (the server ledger's in_progress or unknown, run as a
                // task): the task ended, the operation's outcome did not — never the task's status read as the
                // tool's answer.
                self.done(decide_task_result(step.classification.cause, step.decision))
            }
            (At::Fetching, Happened::TaskResultFailed) => {
                self.no_result(engine, call, Follow { looked: false, ..follow }, now_ms, random, room)
            }
            (At::Polling { .. }, Happened::Waited) => {
                self.phase = Phase::Task(Follow { at: At::Looking, ..follow });
                let left = call.deadline_ms.saturating_sub(now_ms);
                Next::LookAtTask { timeout_ms: engine.policy().attempt_timeout_ms.min(left).max(1) }
            }
            (At::Looking, Happened::TaskLooked(task)) => self.follow(engine, call, task, now_ms, random, room),
            (At::Looking, Happened::TaskLookFailed) => {
                self.seen(engine, call, Follow { looked: false, ..follow }, now_ms, random, room)
            }
            // Out of order: repeat what the face was told (a look or a fetch is never a send of the call).
            (At::Fetching, _) => Next::FetchTaskResult { timeout_ms: call.deadline_ms.saturating_sub(now_ms).max(1) },
            (At::Polling { delay_ms }, _) => Next::PollTask { delay_ms, status: follow.status },
            (At::Looking, _) => {
                let left = call.deadline_ms.saturating_sub(now_ms);
                Next::LookAtTask { timeout_ms: engine.policy().attempt_timeout_ms.min(left).max(1) }
            }
        }
    }

    fn cancelling(&mut self, engine: &Engine, follow: Follow) -> Next {
        self.phase = Phase::Task(Follow { at: At::Cancelling, ..follow });
        Next::CancelTask { timeout_ms: TASK_CANCEL_TIMEOUT_MS.min(engine.policy().attempt_timeout_ms) }
    }
}

/// Whether a task of this status has a result to ask for: it ended, or it waits for input (`tasks/result`
/// relays the server's input requests to the client's handlers).
fn fetches(status: TaskStatus) -> bool {
    matches!(status, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::InputRequired)
}
