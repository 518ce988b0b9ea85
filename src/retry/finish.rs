//! A call's end, after its attempt loop, as a sans-IO step: what is left before the outcome is answered.
//!
//! The call driver ([`super::drive`]) stops with the engine's decision. Before the face answers, a keyed write
//! whose end is open (`unknown`, `pending`) is asked about — the server's status tool, through the status
//! driver ([`super::resolve`]) — and a keyed call's journal entry is settled at the status the call ends on.
//! The face feeds in what happened ([`Finished`]) and carries out what comes back ([`FinishNext`]); the last
//! answer, [`FinishNext::End`], is the outcome's status and reason (the key of its words) and whether the call
//! gave up (an end that is not the tool's own answer).
//!
//! ```text
//! Start ─(keyed, open, may resolve, not cancelled)─▶ Resolve ─Resolved─▶ ┐
//!   └──────────────────────────────────────────────────────────────────▶ ├─(keyed)─▶ Settle ─Settled─▶ End
//!                                                                        └──────────────────────────▶ End
//! ```
//!
//! The write is never sent again to find out, an open end is never turned into a success or a failure here
//! (only the status tool's answer, read by the status driver, changes it), and an entry is settled once, at the
//! status the outcome carries.

use super::decide::Decision;
use super::{FinalStatus, Reason};

/// What the face knows about the call as it ends: given once, at [`Finished::Start`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FinishFacts {
    /// The call carries an operation id (it has a journal entry, and the server's status tool can be asked).
    pub keyed: bool,
    /// The face may ask the server's status tool: one is named and asking is on (the JS `autoResolve`).
    pub may_resolve: bool,
    /// The caller cancelled the call: nothing more is asked on its behalf.
    pub cancelled: bool,
}

/// What happened, fed to [`CallFinish::next`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    /// The loop is over; the first step.
    Start,
    /// The status look asked for is over: the status driver's end (`None`: nothing learned, the call's own end
    /// stands).
    Resolved(Option<Decision>),
    /// The journal entry was settled (or the journal failed: the entry stays listed as not finished).
    Settled,
}

/// What the face does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinishNext {
    /// Ask the server's status tool about the write, with the status driver, `before` being this open end;
    /// feed back [`Finished::Resolved`].
    Resolve {
        /// The call's open end.
        status: FinalStatus,
        /// Its reason.
        reason: Reason,
    },
    /// Settle the call's journal entry at `status`; feed back [`Finished::Settled`] whatever the journal says.
    Settle {
        /// The status the outcome carries.
        status: FinalStatus,
    },
    /// Answer the outcome.
    End {
        /// Its status.
        status: FinalStatus,
        /// Its reason: with the status, the key of its words.
        reason: Reason,
        /// The call gave up: its end is not the tool's own answer (the face tells its listeners).
        gave_up: bool,
    },
}

impl FinishNext {
    /// Which of the three it is.
    pub const fn kind(&self) -> FinishNextKind {
        match self {
            FinishNext::Resolve { .. } => FinishNextKind::Resolve,
            FinishNext::Settle { .. } => FinishNextKind::Settle,
            FinishNext::End { .. } => FinishNextKind::End,
        }
    }
}

macro_rules! kinds {
    ($(#[$doc:meta])* $name:ident { $($v:ident = $s:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $(#[doc = concat!("`", $s, "`")] $v,)*
        }
        impl $name {
            /// Every kind, in the order of their codes.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];
            /// The stable snake_case name.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$v => $s,)* }
            }
        }
    };
}

kinds! {
    /// The kinds of [`FinishNext`], by their stable names (the JS face's `FINISH_NEXTS`).
    FinishNextKind { Resolve = "resolve", Settle = "settle", End = "end", }
}

kinds! {
    /// The kinds of [`Finished`], by their stable names (the JS face's `FINISHINGS`).
    FinishedKind { Start = "start", Resolved = "resolved", Settled = "settled", }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Resolving,
    Settling,
    Over,
}

/// One call's end. Make one with [`CallFinish::new`] from the loop's last decision, then step it from
/// [`Finished::Start`] until it answers [`FinishNext::End`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallFinish {
    status: FinalStatus,
    reason: Reason,
    facts: FinishFacts,
    phase: Phase,
}

impl CallFinish {
    /// The end of a call whose loop stopped with `decision` (a retry, which the loop never ends with, is read as
    /// what it would mean if it did: `unknown`).
    pub fn new(decision: Decision, facts: FinishFacts) -> Self {
        let (status, reason) = match decision {
            Decision::Stop { status, reason } => (status, reason),
            Decision::Retry { reason, .. } => (FinalStatus::Unknown, reason),
        };
        CallFinish { status, reason, facts, phase: Phase::Start }
    }

    /// The end as it would stand just before `kind` is fed, with `status`/`reason` what the face carries:
    /// for a face that keeps no handle between steps (the wasm binding). Feeding it `kind`'s happening gives
    /// what the stateful driver gives.
    pub fn before(kind: FinishedKind, status: FinalStatus, reason: Reason, facts: FinishFacts) -> Self {
        let phase = match kind {
            FinishedKind::Start => Phase::Start,
            FinishedKind::Resolved => Phase::Resolving,
            FinishedKind::Settled => Phase::Settling,
        };
        CallFinish { status, reason, facts, phase }
    }

    /// The status and reason the outcome carries now.
    pub fn stands(&self) -> (FinalStatus, Reason) {
        (self.status, self.reason)
    }

    /// The next thing to do after `happened`. An event out of order moves the end on, never back: a status
    /// look is asked for at most once, an entry settled at most once, and after [`FinishNext::End`] the same end
    /// is answered again.
    pub fn next(&mut self, happened: Finished) -> FinishNext {
        match (self.phase, happened) {
            (Phase::Start, _) => {
                let open = matches!(self.status, FinalStatus::Unknown | FinalStatus::Pending);
                let f = self.facts;
                if f.keyed && f.may_resolve && !f.cancelled && open {
                    self.phase = Phase::Resolving;
                    return FinishNext::Resolve { status: self.status, reason: self.reason };
                }
                self.settle()
            }
            (Phase::Resolving, happened) => {
                // Only the status driver's stop changes the end; anything else leaves the call's own end.
                if let Finished::Resolved(Some(Decision::Stop { status, reason })) = happened {
                    (self.status, self.reason) = (status, reason);
                }
                self.settle()
            }
            (Phase::Settling, _) | (Phase::Over, _) => self.end(),
        }
    }

    fn settle(&mut self) -> FinishNext {
        if self.facts.keyed {
            self.phase = Phase::Settling;
            return FinishNext::Settle { status: self.status };
        }
        self.end()
    }

    fn end(&mut self) -> FinishNext {
        self.phase = Phase::Over;
        FinishNext::End { status: self.status, reason: self.reason, gave_up: !self.status.tool_answered() }
    }
}
