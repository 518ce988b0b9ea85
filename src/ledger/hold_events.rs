//! What crosses a hold ([`super::hold`]): its events, steps and answers, where a claim stands, and what
//! operators hear. Each kind's stable names are what the JS face reads (generated into `names.js`).

use super::record::Record;

/// Why a claim was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LostReason {
    /// A renewal (or a fenced commit) found the record changed: another run claimed it.
    RecordChanged,
    /// Not renewed by the give-up point: renewals failed or hung, or the process was paused.
    NotRenewed,
}

impl LostReason {
    /// Every reason, by code.
    pub const ALL: [LostReason; 2] = [LostReason::RecordChanged, LostReason::NotRenewed];

    /// The reason's stable name (the `reason` of a `lease_lost` event and of a `LeaseLost`).
    pub const fn as_str(self) -> &'static str {
        match self {
            LostReason::RecordChanged => "record_changed",
            LostReason::NotRenewed => "not_renewed",
        }
    }
}

/// Where a claim stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Held: the handler may commit.
    Held,
    /// Lost, and why: the handler must not commit (another run may take over).
    Lost(LostReason),
    /// The handler returned with the claim kept.
    Ended,
}

impl Standing {
    /// Every standing's stable name, by code (a lost claim by its reason).
    pub const NAMES: [&'static str; 4] = ["held", "record_changed", "not_renewed", "ended"];

    /// The standing's code in [`Standing::NAMES`].
    pub const fn code(self) -> u32 {
        match self {
            Standing::Held => 0,
            Standing::Lost(LostReason::RecordChanged) => 1,
            Standing::Lost(LostReason::NotRenewed) => 2,
            Standing::Ended => 3,
        }
    }

    /// The standing of a code in [`Standing::NAMES`].
    pub const fn from_code(code: u64) -> Option<Standing> {
        match code {
            0 => Some(Standing::Held),
            1 => Some(Standing::Lost(LostReason::RecordChanged)),
            2 => Some(Standing::Lost(LostReason::NotRenewed)),
            3 => Some(Standing::Ended),
            _ => None,
        }
    }
}

/// How a write the driver asked for answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldAnswer {
    /// It won the store's version check.
    Won,
    /// The record had changed: the write was refused.
    Changed,
    /// It failed (a store error; for a commit, also the work throwing: everything rolled back).
    Failed,
}

impl HoldAnswer {
    /// Every answer, by code.
    pub const ALL: [HoldAnswer; 3] = [HoldAnswer::Won, HoldAnswer::Changed, HoldAnswer::Failed];

    /// The answer's stable name.
    pub const fn as_str(self) -> &'static str {
        match self {
            HoldAnswer::Won => "won",
            HoldAnswer::Changed => "changed",
            HoldAnswer::Failed => "failed",
        }
    }
}

/// What happened, fed back to the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldEvent {
    /// The face's timer, set at [`Hold::timeout`](super::Hold::timeout), fired (any wake-up will do: the driver reads the clocks).
    Timer,
    /// The renewal of [`HoldStep::Renew`] answered.
    Renewed(HoldAnswer),
    /// The handler asks where its claim stands (reads its signal): past the give-up point it is lost now.
    Look,
    /// The handler returned: no more renewals; the run ends after the renewal in flight.
    Stop,
    /// The handler wants writes committed under its claim (a fenced transaction).
    Commit,
    /// The fenced transaction of [`HoldStep::Commit`] answered.
    Committed(HoldAnswer),
    /// The record read back ([`HoldStep::ReadBack`]): whether it is exactly the write that was sent.
    ReadBack(bool),
}

impl HoldEvent {
    /// Every event's stable name, by code.
    pub const NAMES: [&'static str; 7] = ["timer", "renewed", "look", "stop", "commit", "committed", "read_back"];

    /// The event of a code in [`HoldEvent::NAMES`] and what it carries, `arg`: an answer's code in
    /// [`HoldAnswer::ALL`] (`renewed`, `committed`), 1 when the record read back is the write (`read_back`).
    pub fn from_code(code: u32, arg: u32) -> Option<HoldEvent> {
        let answer = || HoldAnswer::ALL.get(arg as usize).copied();
        Some(match code {
            0 => HoldEvent::Timer,
            1 => HoldEvent::Renewed(answer()?),
            2 => HoldEvent::Look,
            3 => HoldEvent::Stop,
            4 => HoldEvent::Commit,
            5 => HoldEvent::Committed(answer()?),
            6 => HoldEvent::ReadBack(arg == 1),
            _ => return None,
        })
    }
}

/// A write of the claim renewed: the record at `expected` becomes the claim at `version`, its lease until
/// `lease_until_ms` (every other field as the claim's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renewal {
    /// The new version (`expected` + 1).
    pub version: u64,
    /// The new lease's end, on the ledger's clock.
    pub lease_until_ms: u64,
    /// The version it replaces (the store's compare-and-set).
    pub expected: u64,
}

impl Renewal {
    /// The renewed record: `claim` with this lease and version.
    pub fn record(&self, claim: &Record) -> Record {
        Record { lease_until_ms: self.lease_until_ms, version: self.version, ..claim.clone() }
    }
}

/// The next thing the face does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldStep {
    /// Nothing now: wake the driver ([`HoldEvent::Timer`]) at [`Hold::timeout`](super::Hold::timeout), if it has one.
    Wait,
    /// Write the renewal (replace the record at `expected`); answer with [`HoldEvent::Renewed`].
    Renew(Renewal),
    /// Run the fenced transaction: the handler's writes with this renewal, committed only if it wins the
    /// version check; answer with [`HoldEvent::Committed`].
    Commit(Renewal),
    /// Read the record back and tell whether it is exactly this write ([`HoldEvent::ReadBack`]): a renewal
    /// left unanswered past the give-up point, or a commit the store said it refused, may have landed.
    ReadBack(Renewal),
    /// The fenced commit was refused: the record changed hands, none of the handler's writes stand.
    Refused,
    /// The run is over: finish with the claim as it is now ([`Hold::claim`](super::Hold::claim)).
    Done,
}

impl HoldStep {
    /// Every step's stable name, by code.
    pub const NAMES: [&'static str; 6] = ["wait", "renew", "commit", "read_back", "refused", "done"];

    /// The step's code in [`HoldStep::NAMES`].
    pub const fn code(&self) -> u32 {
        match self {
            HoldStep::Wait => 0,
            HoldStep::Renew(_) => 1,
            HoldStep::Commit(_) => 2,
            HoldStep::ReadBack(_) => 3,
            HoldStep::Refused => 4,
            HoldStep::Done => 5,
        }
    }
}

/// What operators hear about a hold (the face emits it: `lease_lost`, `lease_late`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldTell {
    /// The claim was lost (told once).
    Lost(LostReason),
    /// A renewal won, but after the give-up point on the ledger's clock: the lease is too short for this
    /// process (it stalled, or the store was slow). `left_ms`: what was left of the lease when it answered.
    Late {
        /// The lease left when the renewal answered (ms).
        left_ms: u64,
    },
}

impl HoldTell {
    /// Every tell's stable name, by code.
    pub const NAMES: [&'static str; 2] = ["lost", "late"];

    /// The tell's code in [`HoldTell::NAMES`].
    pub const fn code(&self) -> u32 {
        match self {
            HoldTell::Lost(_) => 0,
            HoldTell::Late { .. } => 1,
        }
    }
}
