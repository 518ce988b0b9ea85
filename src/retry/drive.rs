//! A call's attempt loop as a sans-IO driver: the sequence between the engine's decisions, written once.
//!
//! The face feeds in what happened ([`Happened`]: the start, a wait that ran out, an attempt's outcome, the
//! caller's cancel, an input round gathered or not) and carries out what comes back ([`Next`]: send an
//! attempt after its recovery step, wait, gather the answers the server asked for, or stop with the
//! engine's decision) — the way quinn-proto's `Connection` takes datagrams and timer events and hands back
//! transmits and timeouts. The driver never sleeps, sends or reads a clock: `now_ms` and the random bits are
//! arguments, and the engine (one per server, shared by its calls) is lent to each step.
//!
//! ```text
//! Start ─▶ admit ──ok──▶ Send ──Sent(outcome)──▶ record ──stop──▶ Done
//!            │                                     │
//!            └─held──▶ Wait ─Waited─▶ admit        └─retry──▶ [GatherInput ─Gathered─▶] Wait ─Waited─▶ admit
//! Cancelled (at any point the face waits): the engine records an attempt that was not sent ─▶ Done
//! ```
//!
//! A call that ended `pending` because the server created a task is followed on by the same driver when the
//! face feeds it the created task ([`Happened::TaskCreated`]; `follow.rs`): look, wait, fetch the result,
//! cancel on the caller's abort — never the call sent again. What follows (asking the status tool about an
//! open keyed write, settling the journal) is the face's, from [`Next::Done`]'s decision.

use super::classify::Recover;
use super::decide::{CallState, Decision};
use super::ends::TaskStatus;
use super::engine::{Admission, Engine, Step};
use super::follow::Follow;
use super::outcome::{AttemptOutcome, Revision, Sent};
use super::safety::Safety;
use super::{FinalStatus, Reason};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Admit,
    Sending,
    Gathering {
        delay_ms: u64,
        reason: Reason,
    },
    Waiting,
    /// Following a created task.
    Task(Follow),
    Done(Decision),
}

/// One call's loop: the tool's safety, the server's revision, and where the loop is. Make one per call with
/// [`CallDriver::new`]. It is `Copy` and holds no engine state: the face keeps the call's [`CallState`] (from
/// [`Engine::begin_with`]) and lends it to each step with the engine, as the ledger's look driver leaves the
/// record with the face — so a face whose call state lives elsewhere (the wasm binding's handles) drives it too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallDriver {
    pub(super) safety: Safety,
    pub(super) revision: Option<Revision>,
    recover: Option<Recover>,
    pub(super) phase: Phase,
    last: Option<Step>,
    /// A created task was followed already (it is followed once).
    followed: bool,
}

impl CallDriver {
    /// A driver for a call of a tool of `safety`, on a server of `revision` (`None`: not known).
    pub fn new(safety: Safety, revision: Option<Revision>) -> Self {
        CallDriver { safety, revision, recover: None, phase: Phase::Admit, last: None, followed: false }
    }

    /// The step the last [`Happened::Sent`] led to (its classification, decision, breaker transition); `None`
    /// before any, or when the last `Sent` came out of order (it recorded no attempt's outcome).
    pub fn last_step(&self) -> Option<Step> {
        self.last
    }

    /// Whether the driver waits for an attempt's outcome: it answered [`Next::Send`] and was not yet fed
    /// [`Happened::Sent`] (or a cancel).
    pub fn is_sending(&self) -> bool {
        self.phase == Phase::Sending
    }

    /// The next thing to do after `happened`, at `now_ms`, with 64 `random` bits for jitter; `call` is the call's
    /// engine state (the same one at every step).
    ///
    /// An event the face was not asked for (a `Sent` while it was told to wait, anything after `Done`) is not
    /// a reason to send: the driver answers what it answered before, or `Done` again.
    pub fn next(
        &mut self,
        engine: &mut Engine,
        call: &mut CallState,
        happened: Happened<'_>,
        now_ms: u64,
        random: u64,
    ) -> Next {
        self.next_within(engine, call, happened, now_ms, random, None)
    }

    /// [`CallDriver::next`] for a call that may make only `room` more outgoing requests (a Worker
    /// invocation's subrequests, [`Engine::admit_with`]); `None`: not counted. An attempt it cannot pay for
    /// is not sent.
    pub fn next_within(
        &mut self,
        engine: &mut Engine,
        call: &mut CallState,
        happened: Happened<'_>,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> Next {
        if let Phase::Done(decision) = self.phase {
            // A task the call created is followed once, only when the loop ended on it.
            let on_task = decision == Decision::stop(FinalStatus::Pending, Reason::TaskPending) && !self.followed;
            return match happened {
                Happened::TaskCreated(task) if on_task => {
                    self.followed = true;
                    self.follow(engine, call, task, now_ms, random, room)
                }
                _ => Next::Done(decision),
            };
        }
        if let Phase::Task(at) = self.phase {
            return self.following(engine, call, at, happened, now_ms, random, room);
        }
        if happened == Happened::Cancelled {
            // Nothing left for this attempt: the engine says what an unsent attempt makes of the call.
            let outcome = AttemptOutcome::Aborted { sent: Sent::No };
            let step = engine.record(call, &outcome, self.safety, self.revision, now_ms, random);
            return self.done(step.decision);
        }
        match (self.phase, happened) {
            (Phase::Admit, Happened::Start) | (Phase::Waiting, Happened::Waited) => {
                self.admit(engine, call, now_ms, random, room)
            }
            (Phase::Sending, Happened::Sent(outcome)) => {
                let step = engine.record(call, outcome, self.safety, self.revision, now_ms, random);
                self.last = Some(step);
                match step.decision {
                    Decision::Stop { .. } => self.done(step.decision),
                    Decision::Retry { delay_ms, recover, reason } => {
                        self.recover = recover;
                        if recover == Some(Recover::ContinueInput) {
                            self.phase = Phase::Gathering { delay_ms, reason };
                            return Next::GatherInput;
                        }
                        self.wait(delay_ms, reason, false)
                    }
                }
            }
            (Phase::Gathering { delay_ms, reason }, Happened::InputGathered) => self.wait(delay_ms, reason, false),
            (Phase::Gathering { .. }, Happened::InputUnanswered { timed_out, handler_missing }) => {
                if timed_out {
                    // Past the deadline it stops; a held answer leaves the round unanswered.
                    if let Err(stop @ Decision::Stop { .. }) = engine.admit_with(call, now_ms, random, room) {
                        return self.done(stop);
                    }
                }
                let end = engine.input_unanswered(call, handler_missing);
                self.done(end)
            }
            // Out of order: repeat what the face was told (never a send it was not told to make).
            (Phase::Gathering { .. }, _) => Next::GatherInput,
            // Any other event out of order is a face's mistake: whatever it did may have been sent, so the
            // engine records an aborted attempt that may have been delivered (never `failed` by assumption).
            _ => {
                self.last = None;
                let outcome = AttemptOutcome::Aborted { sent: Sent::Maybe };
                let step = engine.record(call, &outcome, self.safety, self.revision, now_ms, random);
                match step.decision {
                    Decision::Stop { .. } => self.done(step.decision),
                    Decision::Retry { reason, .. } => self.done(Decision::stop(super::FinalStatus::Unknown, reason)),
                }
            }
        }
    }

    fn admit(
        &mut self,
        engine: &mut Engine,
        call: &mut CallState,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> Next {
        match engine.admit_with(call, now_ms, random, room) {
            Ok(admission) => {
                self.phase = Phase::Sending;
                Next::Send { admission, recover: self.recover }
            }
            Err(Decision::Retry { delay_ms, reason, recover }) => {
                // Held by an open breaker or an empty budget: wait as the engine says, then ask again.
                self.recover = recover;
                self.wait(delay_ms, reason, true)
            }
            Err(stop) => self.done(stop),
        }
    }

    fn wait(&mut self, delay_ms: u64, reason: Reason, held: bool) -> Next {
        self.phase = Phase::Waiting;
        Next::Wait { delay_ms, reason, recover: self.recover, held }
    }

    pub(super) fn done(&mut self, decision: Decision) -> Next {
        self.phase = Phase::Done(decision);
        Next::Done(decision)
    }
}
