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
//! cancel on the caller's abort — never the call sent again. What follows [`Next::Done`] (asking the status
//! tool about an open keyed write, settling the journal, answering) is the call's end, [`super::finish`].

use super::classify::Recover;
use super::decide::{CallState, Decision};
use super::engine::{Engine, Step};
use super::follow::Follow;
use super::outcome::{AttemptOutcome, Revision, Sent};
use super::safety::Safety;
use super::{FinalStatus, Reason};

pub use super::drive_events::{Happened, HappenedKind, Next, NextKind, TaskView};

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
