//! What crosses the call driver ([`super::drive`]): what happened ([`Happened`]), what to do next ([`Next`]),
//! their kinds' stable names (what the JS face reads, generated into `names.js`), and a task as the face sees it.

use super::classify::Recover;
use super::decide::Decision;
use super::ends::TaskStatus;
use super::engine::Admission;
use super::outcome::AttemptOutcome;
use super::Reason;

/// What the face does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Carry out `recover` (if any: re-initialize the session, start a fresh process, resume the stream, send the
    /// next input round), then send the attempt within `admission.timeout_ms`; feed back [`Happened::Sent`].
    Send {
        /// The engine's go-ahead (the attempt's number, its timeout, a breaker transition).
        admission: Admission,
        /// The recovery step the attempt follows.
        recover: Option<Recover>,
    },
    /// Wait `delay_ms`, then feed back [`Happened::Waited`] (or [`Happened::Cancelled`]).
    Wait {
        /// How long.
        delay_ms: u64,
        /// Why (a backoff's reason, or the hold's: `breaker_hold`, `budget_hold`).
        reason: Reason,
        /// What the attempt after the wait does first.
        recover: Option<Recover>,
        /// `true`: the engine held the attempt (an open breaker, an empty budget); `false`: a backoff after an
        /// attempt.
        held: bool,
    },
    /// Gather the answers to the input the server asked for (the next round carries them, never the first
    /// phase again); feed back [`Happened::InputGathered`] or [`Happened::InputUnanswered`].
    GatherInput,
    /// Wait `delay_ms` before looking at the followed task again (its status is `status`), then feed back
    /// [`Happened::Waited`] (or [`Happened::Cancelled`]). A look, not a retry: nothing is sent again.
    PollTask {
        /// How long (the engine's `poll`: the task's `pollInterval` as the hint, jittered).
        delay_ms: u64,
        /// The task's status as last seen.
        status: TaskStatus,
    },
    /// Look at the task (`tasks/get`) within `timeout_ms`; feed back [`Happened::TaskLooked`] or
    /// [`Happened::TaskLookFailed`].
    LookAtTask {
        /// The look's timeout: the attempt timeout, within the call's deadline.
        timeout_ms: u64,
    },
    /// Ask for the task's result (`tasks/result`, which also relays the server's input requests; a look that
    /// carried the result inline is its answer) within `timeout_ms`; feed back [`Happened::TaskResult`] or
    /// [`Happened::TaskResultFailed`].
    FetchTaskResult {
        /// What is left of the call's deadline (at least 1 ms).
        timeout_ms: u64,
    },
    /// The caller cancelled while the task runs: cancel it (`tasks/cancel`) within `timeout_ms`, then feed
    /// back [`Happened::TaskCancelAnswered`], whatever the answer.
    CancelTask {
        /// The attempt timeout, and never more than [`TASK_CANCEL_TIMEOUT_MS`](super::TASK_CANCEL_TIMEOUT_MS).
        timeout_ms: u64,
    },
    /// The loop is over: the engine's last decision (a [`Decision::Stop`]).
    Done(Decision),
}

impl Next {
    /// Which of the four it is.
    pub const fn kind(&self) -> NextKind {
        match self {
            Next::Send { .. } => NextKind::Send,
            Next::Wait { .. } => NextKind::Wait,
            Next::GatherInput => NextKind::GatherInput,
            Next::PollTask { .. } => NextKind::PollTask,
            Next::LookAtTask { .. } => NextKind::LookAtTask,
            Next::FetchTaskResult { .. } => NextKind::FetchTaskResult,
            Next::CancelTask { .. } => NextKind::CancelTask,
            Next::Done(_) => NextKind::Done,
        }
    }
}

/// The kinds of [`Next`], named across the boundary (the generated `DRIVE_NEXTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextKind {
    /// [`Next::Send`].
    Send,
    /// [`Next::Wait`].
    Wait,
    /// [`Next::GatherInput`].
    GatherInput,
    /// [`Next::Done`].
    Done,
    /// [`Next::PollTask`].
    PollTask,
    /// [`Next::LookAtTask`].
    LookAtTask,
    /// [`Next::FetchTaskResult`].
    FetchTaskResult,
    /// [`Next::CancelTask`].
    CancelTask,
}

impl NextKind {
    /// Every kind, in declaration order (the order of the codes).
    pub const ALL: [NextKind; 8] = [
        NextKind::Send,
        NextKind::Wait,
        NextKind::GatherInput,
        NextKind::Done,
        NextKind::PollTask,
        NextKind::LookAtTask,
        NextKind::FetchTaskResult,
        NextKind::CancelTask,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            NextKind::Send => "send",
            NextKind::Wait => "wait",
            NextKind::GatherInput => "gather_input",
            NextKind::Done => "done",
            NextKind::PollTask => "poll_task",
            NextKind::LookAtTask => "look_at_task",
            NextKind::FetchTaskResult => "fetch_task_result",
            NextKind::CancelTask => "cancel_task",
        }
    }
}

/// The kinds of [`Happened`], named across the boundary (the generated `HAPPENINGS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HappenedKind {
    /// [`Happened::Start`].
    Start,
    /// [`Happened::Waited`].
    Waited,
    /// [`Happened::Cancelled`].
    Cancelled,
    /// [`Happened::Sent`].
    Sent,
    /// [`Happened::InputGathered`].
    InputGathered,
    /// [`Happened::InputUnanswered`].
    InputUnanswered,
    /// [`Happened::TaskCreated`].
    TaskCreated,
    /// [`Happened::TaskLooked`].
    TaskLooked,
    /// [`Happened::TaskLookFailed`].
    TaskLookFailed,
    /// [`Happened::TaskResult`].
    TaskResult,
    /// [`Happened::TaskResultFailed`].
    TaskResultFailed,
    /// [`Happened::TaskCancelAnswered`].
    TaskCancelAnswered,
}

impl HappenedKind {
    /// Every kind, in declaration order (the order of the codes).
    pub const ALL: [HappenedKind; 12] = [
        HappenedKind::Start,
        HappenedKind::Waited,
        HappenedKind::Cancelled,
        HappenedKind::Sent,
        HappenedKind::InputGathered,
        HappenedKind::InputUnanswered,
        HappenedKind::TaskCreated,
        HappenedKind::TaskLooked,
        HappenedKind::TaskLookFailed,
        HappenedKind::TaskResult,
        HappenedKind::TaskResultFailed,
        HappenedKind::TaskCancelAnswered,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            HappenedKind::Start => "start",
            HappenedKind::Waited => "waited",
            HappenedKind::Cancelled => "cancelled",
            HappenedKind::Sent => "sent",
            HappenedKind::InputGathered => "input_gathered",
            HappenedKind::InputUnanswered => "input_unanswered",
            HappenedKind::TaskCreated => "task_created",
            HappenedKind::TaskLooked => "task_looked",
            HappenedKind::TaskLookFailed => "task_look_failed",
            HappenedKind::TaskResult => "task_result",
            HappenedKind::TaskResultFailed => "task_result_failed",
            HappenedKind::TaskCancelAnswered => "task_cancel_answered",
        }
    }
}

/// What happened, fed back to the driver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Happened<'a> {
    /// The call begins (the first step).
    Start,
    /// A wait ran out.
    Waited,
    /// The caller cancelled while the face waited, gathered input or before an attempt left: nothing was sent.
    Cancelled,
    /// An attempt ended so.
    Sent(&'a AttemptOutcome),
    /// The input round was gathered.
    InputGathered,
    /// The input round could not be gathered: the handlers ran past the call's deadline (`timed_out`), or no
    /// handler answers that kind of request (`handler_missing`).
    InputUnanswered {
        /// The handlers did not answer within the call's deadline.
        timed_out: bool,
        /// No handler for the kind of request the server made.
        handler_missing: bool,
    },
    /// The call ended `pending` on a task the server created ([`Reason::TaskPending`]), and the face follows
    /// tasks: this is the task as created. Heard once, only after that [`Next::Done`].
    TaskCreated(TaskView),
    /// A look (`tasks/get`) answered with this task.
    TaskLooked(TaskView),
    /// A look failed, or answered something that is not this task.
    TaskLookFailed,
    /// `tasks/result` answered with the tool's result, read as an attempt's outcome is.
    TaskResult(&'a AttemptOutcome),
    /// `tasks/result` failed, or answered something that is not a tool result.
    TaskResultFailed,
    /// `tasks/cancel` answered, or failed: the call ends either way.
    TaskCancelAnswered,
}

/// A task as the server last showed it: its status and the interval it asked for between looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskView {
    /// The task's status.
    pub status: TaskStatus,
    /// Its `pollInterval` (ms), if the answer had one: a look without one keeps the last the server gave.
    pub poll_interval_ms: Option<u64>,
}
