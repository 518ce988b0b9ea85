//! Closing an open end, as a sans-IO driver: a keyed write whose call ended `unknown` or `pending` is asked
//! about — the server's status tool (the operation ledger), looked at again with the engine's waits while it
//! answers `in_progress`, within the call's deadline — and [`decide_status`] says what the answer makes of the
//! call. The write itself is never sent again; the face only asks the status tool and waits when told.
//!
//! ```text
//! Start ─(open, time left)─▶ Ask ─Answered(in_progress)─▶ engine.poll ─retry─▶ Wait ─Waited─▶ Ask
//!   │                   │                               └─stop (deadline, polls)─▶ Done(pending)
//!   └─(closed, no time)─▶ Done(none)   └─Answered(other) ─▶ Done(decide_status) · no answer ─▶ Done(none)
//! Cancelled while waiting: Done with the last answer.
//! ```

use super::decide::{CallState, Decision};
use super::ends::{decide_status, OperationStatus};
use super::engine::Engine;
use super::{CallOptions, FinalStatus, Reason};

/// What the face does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusNext {
    /// Ask the status tool about the operation; feed back [`StatusHappened::Answered`].
    Ask,
    /// Wait `delay_ms` (the ledger's `retryAfterMs` as the hint, jittered), then feed back
    /// [`StatusHappened::Waited`] (or [`StatusHappened::Cancelled`]).
    Wait {
        /// How long.
        delay_ms: u64,
    },
    /// Over: what the call ends as (`None`: nothing was learned — the call's own end stands).
    Done(Option<Decision>),
}

impl StatusNext {
    /// Which of the four it is (`Done(None)` is [`StatusNextKind::Unchanged`]).
    pub const fn kind(&self) -> StatusNextKind {
        match self {
            StatusNext::Ask => StatusNextKind::Ask,
            StatusNext::Wait { .. } => StatusNextKind::Wait,
            StatusNext::Done(Some(_)) => StatusNextKind::Done,
            StatusNext::Done(None) => StatusNextKind::Unchanged,
        }
    }
}

/// The kinds of [`StatusNext`], named across the boundary (the generated `RESOLVE_NEXTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusNextKind {
    /// [`StatusNext::Ask`].
    Ask,
    /// [`StatusNext::Wait`].
    Wait,
    /// [`StatusNext::Done`] with what the call ends as.
    Done,
    /// [`StatusNext::Done`] with nothing learned.
    Unchanged,
}

impl StatusNextKind {
    /// Every kind, in declaration order (the order of the codes).
    pub const ALL: [StatusNextKind; 4] =
        [StatusNextKind::Ask, StatusNextKind::Wait, StatusNextKind::Done, StatusNextKind::Unchanged];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            StatusNextKind::Ask => "ask",
            StatusNextKind::Wait => "wait",
            StatusNextKind::Done => "done",
            StatusNextKind::Unchanged => "unchanged",
        }
    }
}

/// The kinds of [`StatusHappened`], named across the boundary (the generated `STATUS_HEARD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusHeard {
    /// [`StatusHappened::Start`].
    Start,
    /// [`StatusHappened::Answered`].
    Answered,
    /// [`StatusHappened::Waited`].
    Waited,
    /// [`StatusHappened::Cancelled`].
    Cancelled,
}

impl StatusHeard {
    /// Every kind, in declaration order (the order of the codes).
    pub const ALL: [StatusHeard; 4] =
        [StatusHeard::Start, StatusHeard::Answered, StatusHeard::Waited, StatusHeard::Cancelled];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            StatusHeard::Start => "start",
            StatusHeard::Answered => "answered",
            StatusHeard::Waited => "waited",
            StatusHeard::Cancelled => "cancelled",
        }
    }
}

/// What happened, fed back to the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusHappened {
    /// The look begins.
    Start,
    /// The status tool answered so (`None`: no usable answer — an error, a refusal, another operation's).
    Answered {
        /// The ledger's status for the operation.
        status: Option<OperationStatus>,
        /// Its `retryAfterMs`, if it gave one (an `in_progress` answer's hint).
        retry_after_ms: Option<u64>,
    },
    /// A wait ran out.
    Waited,
    /// The caller cancelled while the face waited.
    Cancelled,
}

/// One look at an operation's status on the server. Make one with [`StatusDriver::new`]; it is `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusDriver {
    before: Option<(FinalStatus, Reason)>,
    polls: CallState,
    last: Option<OperationStatus>,
    phase: Phase,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Asking,
    Waiting { delay_ms: u64 },
    Done(Option<Decision>),
}

impl StatusDriver {
    /// A look for a call that ended with `before` (its open stop; `None` for an operation known only from the
    /// journal), to be over by `deadline_ms`, begun at `now_ms`.
    pub fn new(engine: &Engine, before: Option<(FinalStatus, Reason)>, deadline_ms: u64, now_ms: u64) -> Self {
        let mut polls = engine.begin_with(now_ms, CallOptions { answers_input: false });
        polls.deadline_ms = polls.deadline_ms.min(deadline_ms);
        StatusDriver { before, polls, last: None, phase: Phase::Start }
    }

    /// The next thing to do after `happened`, at `now_ms`, with 64 `random` bits for the wait's jitter; `room`
    /// the outgoing requests left (a Worker invocation's; `None`: not counted).
    pub fn next(
        &mut self,
        engine: &Engine,
        happened: StatusHappened,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> StatusNext {
        let next = match (self.phase, happened) {
            (Phase::Done(end), _) => StatusNext::Done(end),
            (Phase::Start, StatusHappened::Start) if self.open() && now_ms < self.polls.deadline_ms => StatusNext::Ask,
            (Phase::Start, _) => StatusNext::Done(None),
            (Phase::Asking, StatusHappened::Answered { status: None, .. }) => {
                // No usable answer, also after an `in_progress` one: nothing learned, the call's end stands.
                self.last = None;
                self.end()
            }
            (Phase::Asking, StatusHappened::Answered { status: Some(status), retry_after_ms }) => {
                self.last = Some(status);
                if status != OperationStatus::InProgress {
                    return self.finish(self.end());
                }
                // Still running: the engine says when to look again, or that the call ends pending.
                match engine.poll_within(&mut self.polls, retry_after_ms, now_ms, random, room) {
                    Decision::Retry { delay_ms, .. } => StatusNext::Wait { delay_ms },
                    Decision::Stop { .. } => self.end(),
                }
            }
            (Phase::Waiting { .. }, StatusHappened::Waited) => StatusNext::Ask,
            (Phase::Waiting { .. }, StatusHappened::Cancelled) => self.end(),
            // Out of order: what the face was told, again (never more than a question).
            (Phase::Asking, _) => StatusNext::Ask,
            (Phase::Waiting { delay_ms }, _) => StatusNext::Wait { delay_ms },
        };
        self.finish(next)
    }

    /// Whether the call's end is open (`unknown` or `pending`, or not known): only then is anything asked.
    fn open(&self) -> bool {
        self.before.map_or(true, |(status, _)| matches!(status, FinalStatus::Unknown | FinalStatus::Pending))
    }

    /// The end by the last answer (none: nothing learned).
    fn end(&self) -> StatusNext {
        StatusNext::Done(self.last.map(|answer| decide_status(Some(answer), self.before)))
    }

    fn finish(&mut self, next: StatusNext) -> StatusNext {
        self.phase = match next {
            StatusNext::Ask => Phase::Asking,
            StatusNext::Wait { delay_ms } => Phase::Waiting { delay_ms },
            StatusNext::Done(end) => Phase::Done(end),
        };
        next
    }
}
