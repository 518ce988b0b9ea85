//! One look at a ledger key, as a sans-IO driver: the sequence both faces run for a write (`begin`, and the
//! admission of an atomic write) and for the status tool. The face performs each [`LookStep`] — a store read or
//! write, the in-process guard, the reconcile hook — and feeds back what happened as a [`LookEvent`]; the driver
//! answers the next step, until [`LookStep::Done`]. Every choice in the sequence is here: what an admission
//! leads to, when the reconcile hook is asked, when a lost race reads again, when to give up reading.
//!
//! ```text
//!   Read ──stored──► admit / lookup ─► Done (replay, conflict, in progress, not found, …)
//!     ▲                   │ execute ─────────────────────► WriteClaim ──won──► Done(Execute)
//!     │                   │ reconcile                          │ lost
//!     │                   ▼                                    │
//!     │   AskHeld ──held──► Done(InProgress)                   │
//!     │      │ not held                                        │
//!     │      ▼                                                 │
//!     │   AskReconcile ─► succeeded/failed ─► WriteReconciled ─won─► Done(Replay)
//!     │      │ not done: claim (a write) or Done(NotDone) (a status look)
//!     │      │ unknown ─► Done(Unknown)                        │ lost
//!     └──────┴─────────────── next round (at most 4) ◄─────────┘
//! ```
//!
//! The driver is `Copy` and holds no record: the face keeps the record it read and the claim it wrote, and
//! hands the stored record in with each event (the JS face's state crosses the boundary as one number,
//! [`Look::code`]).

use super::record::IN_PROGRESS_POLL_MS;
use super::record::{admit_matching, claim, finish, lookup, Admission, LedgerConfig, Lookup, Record, RecordState};

/// The most reads one look makes: each lost race (another request claimed first, or the record changed while
/// the reconcile hook was asked) reads again; past this the key is busy, and the look answers `in_progress`.
pub const MAX_ROUNDS: u8 = 4;

/// What the look is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookMode {
    /// A write (`begin`): admit it and claim the key here.
    Claim,
    /// A write run in the store's own transaction: admit it; the claim is written by that transaction, with the
    /// handler's writes and its record ([`LookStep::WriteClaim`] means: run the transaction).
    Atomic,
    /// The status tool: read-only, never claims or executes.
    Status,
}

/// Where a look is: which event it waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookPhase {
    /// The key's record, read ([`LookEvent::Read`]).
    Read,
    /// Whether this process holds it ([`LookEvent::Held`]).
    Held,
    /// The reconcile hook's verdict ([`LookEvent::Reconciled`]).
    Reconcile,
    /// Whether the reconciled record was written ([`LookEvent::Wrote`]).
    WroteReconciled,
    /// Whether the claim was written ([`LookEvent::Wrote`]).
    WroteClaim,
}

/// What the reconcile hook found out about a record whose outcome is not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReconcileVerdict {
    /// It took effect, and this is its outcome: `Succeeded` or `Failed`.
    Resolved(RecordState),
    /// It provably did not happen and cannot happen any more: it may run (again).
    NotDone,
    /// The hook cannot tell (or failed, or there is none).
    Unknown,
}

/// What happened, fed back to the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookEvent {
    /// The key was read (its record, if any, is the `stored` handed to [`Look::step`]): whether the write's input
    /// fingerprint equals the record's (`same_input`; ignored by a status look).
    Read {
        /// Whether the incoming write's fingerprint equals the stored one.
        same_input: bool,
    },
    /// Whether the stored record is a live claim of this process whose handler still runs here: the wait to
    /// suggest if so (`Some`), `None` if not.
    Held(Option<u64>),
    /// The reconcile hook's verdict on the stored record.
    Reconciled(ReconcileVerdict),
    /// Whether the versioned write the driver asked for won (`false`: the record had changed).
    Wrote(bool),
}

/// The next thing the face does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LookStep {
    /// Read the key's record from the store.
    Read,
    /// Tell whether the stored record is this process's live claim ([`LookEvent::Held`]).
    AskHeld,
    /// Ask the reconcile hook about the stored record (without a hook: [`ReconcileVerdict::Unknown`]).
    AskReconcile,
    /// Write `record` — the hook's outcome, `state` — over the stored record's version, with the hook's result.
    WriteReconciled {
        /// The resolved record.
        record: Record,
        /// Its state (`Succeeded` or `Failed`).
        state: RecordState,
    },
    /// Write `claim` (insert when `expected` is `None`, else replace the record at version `expected`); an atomic
    /// look writes it in the store's transaction, around the handler. [`LookEvent::Wrote`]`(false)`: another
    /// request wrote first.
    WriteClaim {
        /// The pending record that claims the key.
        claim: Record,
        /// The version it replaces, if a record is stored.
        expected: Option<u64>,
    },
    /// The look is over.
    Done(LookEnd),
}

/// How a look ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LookEnd {
    /// The claim the face wrote is the key's: run the handler (an atomic look: its transaction committed).
    Execute {
        /// The version the claim replaced (`None`: no record was stored).
        expected: Option<u64>,
    },
    /// The outcome is recorded: replay it (the stored result, or the one just reconciled). A status look
    /// answers it as the operation's status.
    Replay(RecordState),
    /// The write is running now (or the key stayed busy for [`MAX_ROUNDS`] reads): ask again after this long.
    InProgress {
        /// The suggested wait.
        retry_after_ms: u64,
    },
    /// The id was used for other input (a write look).
    Conflict,
    /// Its outcome is not known, and the reconcile hook could not tell.
    Unknown,
    /// No record (a status look): not proof it did not happen.
    NotFound,
    /// It did not take effect: released, or the hook says so (a status look; a write look claims instead).
    NotDone,
}

impl LookMode {
    /// Every mode, by code.
    pub const ALL: [LookMode; 3] = [LookMode::Claim, LookMode::Atomic, LookMode::Status];

    /// The mode's stable name.
    pub const fn as_str(self) -> &'static str {
        match self {
            LookMode::Claim => "claim",
            LookMode::Atomic => "atomic",
            LookMode::Status => "status",
        }
    }
}

impl LookEvent {
    /// The events' stable names, by code.
    pub const NAMES: [&'static str; 4] = ["read", "held", "reconciled", "wrote"];
}

impl ReconcileVerdict {
    /// The verdicts' stable names, by code (`not_done`, `unknown`, then the outcomes it resolves to).
    pub const NAMES: [&'static str; 4] = ["not_done", "unknown", "succeeded", "failed"];

    /// The verdict of a code in [`ReconcileVerdict::NAMES`].
    pub const fn from_code(code: u32) -> Option<ReconcileVerdict> {
        match code {
            0 => Some(ReconcileVerdict::NotDone),
            1 => Some(ReconcileVerdict::Unknown),
            2 => Some(ReconcileVerdict::Resolved(RecordState::Succeeded)),
            3 => Some(ReconcileVerdict::Resolved(RecordState::Failed)),
            _ => None,
        }
    }
}

impl LookStep {
    /// The steps' stable names, by code.
    pub const NAMES: [&'static str; 6] =
        ["read", "ask_held", "ask_reconcile", "write_reconciled", "write_claim", "done"];

    /// The step's code in [`LookStep::NAMES`].
    pub const fn code(&self) -> u32 {
        match self {
            LookStep::Read => 0,
            LookStep::AskHeld => 1,
            LookStep::AskReconcile => 2,
            LookStep::WriteReconciled { .. } => 3,
            LookStep::WriteClaim { .. } => 4,
            LookStep::Done(_) => 5,
        }
    }
}

impl LookEnd {
    /// The ends' stable names, by code.
    pub const NAMES: [&'static str; 7] =
        ["execute", "replay", "in_progress", "conflict", "unknown", "not_found", "not_done"];

    /// The end's code in [`LookEnd::NAMES`].
    pub const fn code(&self) -> u32 {
        match self {
            LookEnd::Execute { .. } => 0,
            LookEnd::Replay(_) => 1,
            LookEnd::InProgress { .. } => 2,
            LookEnd::Conflict => 3,
            LookEnd::Unknown => 4,
            LookEnd::NotFound => 5,
            LookEnd::NotDone => 6,
        }
    }
}

/// A look in progress. Start one with [`Look::new`] (its first step is [`LookStep::Read`]), then feed each
/// event to [`Look::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Look {
    mode: LookMode,
    phase: LookPhase,
    /// Reads made so far (1 after the first).
    round: u8,
    /// The state being written by a [`LookStep::WriteReconciled`].
    resolving: Option<RecordState>,
}

impl Look {
    /// A new look; the face's first step is [`LookStep::Read`].
    pub const fn new(mode: LookMode) -> Look {
        Look { mode, phase: LookPhase::Read, round: 1, resolving: None }
    }

    /// What the look is for.
    pub const fn mode(&self) -> LookMode {
        self.mode
    }

    /// Which event it waits for.
    pub const fn phase(&self) -> LookPhase {
        self.phase
    }

    /// The next step after `event`, at `now_ms`. `stored` is the record the face read last (the driver keeps
    /// none); `fingerprint` the write's input fingerprint (the claim carries it). An event the look does not wait
    /// for ends it `Unknown` — a face out of step never leads to a claim or a replay.
    pub fn step(
        &mut self,
        event: LookEvent,
        stored: Option<&Record>,
        fingerprint: &str,
        now_ms: u64,
        config: &LedgerConfig,
    ) -> LookStep {
        match (self.phase, event) {
            (LookPhase::Read, LookEvent::Read { same_input }) => {
                self.read(stored, same_input, fingerprint, now_ms, config)
            }
            (LookPhase::Held, LookEvent::Held(Some(retry_after_ms))) => {
                LookStep::Done(LookEnd::InProgress { retry_after_ms })
            }
            (LookPhase::Held, LookEvent::Held(None)) => {
                self.phase = LookPhase::Reconcile;
                LookStep::AskReconcile
            }
            (LookPhase::Reconcile, LookEvent::Reconciled(verdict)) => match (verdict, stored) {
                (ReconcileVerdict::Resolved(state @ (RecordState::Succeeded | RecordState::Failed)), Some(s)) => {
                    self.phase = LookPhase::WroteReconciled;
                    self.resolving = Some(state);
                    LookStep::WriteReconciled { record: finish(s, state, now_ms, config), state }
                }
                (ReconcileVerdict::NotDone, Some(s)) if self.mode != LookMode::Status => {
                    self.claim(Some(s), fingerprint, now_ms, config)
                }
                (ReconcileVerdict::NotDone, Some(_)) => LookStep::Done(LookEnd::NotDone),
                _ => LookStep::Done(LookEnd::Unknown),
            },
            (LookPhase::WroteReconciled, LookEvent::Wrote(true)) => match self.resolving {
                Some(state) => LookStep::Done(LookEnd::Replay(state)),
                None => LookStep::Done(LookEnd::Unknown),
            },
            (LookPhase::WroteClaim, LookEvent::Wrote(true)) => {
                LookStep::Done(LookEnd::Execute { expected: stored.map(|s| s.version) })
            }
            (LookPhase::WroteReconciled | LookPhase::WroteClaim, LookEvent::Wrote(false)) => self.again(),
            _ => LookStep::Done(LookEnd::Unknown),
        }
    }

    fn read(
        &mut self,
        stored: Option<&Record>,
        same_input: bool,
        fingerprint: &str,
        now_ms: u64,
        config: &LedgerConfig,
    ) -> LookStep {
        if self.mode == LookMode::Status {
            return match lookup(stored, now_ms) {
                Lookup::NotFound => LookStep::Done(LookEnd::NotFound),
                Lookup::NotDone => LookStep::Done(LookEnd::NotDone),
                Lookup::InProgress { retry_after_ms } => LookStep::Done(LookEnd::InProgress { retry_after_ms }),
                Lookup::Resolved(state) => LookStep::Done(LookEnd::Replay(state)),
                Lookup::Reconcile => self.ask_held(stored),
            };
        }
        match admit_matching(stored, same_input, now_ms) {
            Admission::Execute => self.claim(stored, fingerprint, now_ms, config),
            Admission::Replay => match stored {
                Some(s) => LookStep::Done(LookEnd::Replay(s.state)),
                None => LookStep::Done(LookEnd::Unknown),
            },
            Admission::InProgress { retry_after_ms } => LookStep::Done(LookEnd::InProgress { retry_after_ms }),
            Admission::Conflict => LookStep::Done(LookEnd::Conflict),
            Admission::Reconcile => self.ask_held(stored),
        }
    }

    /// An unresolved record: this process's own live claim is in progress, never reconciled.
    fn ask_held(&mut self, stored: Option<&Record>) -> LookStep {
        if stored.is_none() {
            return LookStep::Done(LookEnd::Unknown); // the rules reconcile only a record
        }
        self.phase = LookPhase::Held;
        LookStep::AskHeld
    }

    fn claim(&mut self, previous: Option<&Record>, fingerprint: &str, now_ms: u64, config: &LedgerConfig) -> LookStep {
        self.phase = LookPhase::WroteClaim;
        LookStep::WriteClaim {
            claim: claim(previous, fingerprint, now_ms, config),
            expected: previous.map(|p| p.version),
        }
    }

    /// A lost race: read again, or — the key busy for every round — in progress.
    fn again(&mut self) -> LookStep {
        if self.round >= MAX_ROUNDS {
            return LookStep::Done(LookEnd::InProgress { retry_after_ms: IN_PROGRESS_POLL_MS });
        }
        self.round = self.round.saturating_add(1);
        self.phase = LookPhase::Read;
        self.resolving = None;
        LookStep::Read
    }

    /// The look as one number, for a face that keeps it across a boundary: mode, phase, round and the state
    /// being resolved, packed. [`Look::from_code`] reads it back.
    pub fn code(&self) -> u32 {
        let mode = self.mode as u32;
        let phase = self.phase as u32;
        let resolving = self.resolving.map_or(0, |s| (s as u32).saturating_add(1));
        mode | phase << 2 | u32::from(self.round) << 5 | resolving << 8
    }

    /// A look from [`Look::code`]; `None` for a number no look packs to.
    pub fn from_code(code: u32) -> Option<Look> {
        let mode = match code & 3 {
            0 => LookMode::Claim,
            1 => LookMode::Atomic,
            2 => LookMode::Status,
            _ => return None,
        };
        let phase = match (code >> 2) & 7 {
            0 => LookPhase::Read,
            1 => LookPhase::Held,
            2 => LookPhase::Reconcile,
            3 => LookPhase::WroteReconciled,
            4 => LookPhase::WroteClaim,
            _ => return None,
        };
        let round = u8::try_from((code >> 5) & 7).ok().filter(|r| (1..=MAX_ROUNDS).contains(r))?;
        let resolving = match code >> 8 {
            0 => None,
            n => Some(*RecordState::ALL.get(usize::try_from(n.saturating_sub(1)).ok()?)?),
        };
        Some(Look { mode, phase, round, resolving })
    }
}
