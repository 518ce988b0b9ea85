//! One write behind the ledger, as a sans-IO driver: the sequence both faces' `with_idempotency` run for a
//! `tools/call`, from the operation id to the answer. The face performs each [`WriteStep`] — read the
//! argument, ask the app's hooks, fingerprint the input, begin (the [`super::look`] driver), run the handler
//! under its hold, record, answer — and feeds back what happened as a [`WriteEvent`]. Every choice in the
//! sequence is here: which checks run and in what order, what each refusal answers, when the handler runs,
//! what is recorded after it, which answer is a replay, what a refused commit leads to, and the telemetry kind
//! of every answer.
//!
//! ```text
//!   ReadOperationId ─► AskTenant ─► [AskAuthorize] ─► [AskPrincipal] ─► [Validate] ─► Fingerprint
//!        (each refusal: Answer(Reply rejected))                                            │
//!                      ┌───────────────── transaction ─────────────────┬─────────────────┘
//!                      ▼                                               ▼
//!               RunTransaction ─committed─► Answer(Result)           Begin ─execute─► Run ─► Record ─► Answer
//!                      │ else                                          │ else           │ commit refused
//!                      ▼                                               ▼                ▼
//!               Answer(Replay / Reply)                        Answer(Replay / Reply)  AskStatus ─► Answer
//! ```
//!
//! The handler runs only after the store said `execute` for this key ([`Begun::Execute`]); a result is
//! answered only after it ran, a replay only after the store or the status said so. An event the driver does
//! not wait for ends it `unknown`: a face out of step never runs a handler or replays a result. The driver is
//! `Copy`; the JS face keeps it across the boundary as one number ([`Write::code`]).

mod events;

pub use events::{Answer, AnswerKind, Begun, Ran, Validation, WriteAnswer, WriteChecks, WriteEvent, WriteStep};

use super::record::RecordState;
use super::reply::Reply;

/// Where a write is: which event it waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    OperationId,
    Tenant,
    Authorize,
    Principal,
    Validate,
    Fingerprint,
    Begin,
    Run,
    Record,
    Status,
    Done,
}

const fn reply(reply: Reply) -> WriteStep {
    WriteStep::Answer(WriteAnswer { with: Answer::Reply { reply, why: false }, kind: AnswerKind::of(reply) })
}

const RESULT: WriteStep = WriteStep::Answer(WriteAnswer { with: Answer::Result, kind: AnswerKind::Execute });
const REPLAY: WriteStep = WriteStep::Answer(WriteAnswer { with: Answer::Replay, kind: AnswerKind::Replay });

/// A write in progress. Start one with [`Write::new`] (its first step is [`WriteStep::ReadOperationId`]), then
/// feed each event to [`Write::step`] until [`WriteStep::Answer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    checks: WriteChecks,
    phase: Phase,
    /// How the handler's run ended, once it did (what [`WriteStep::Record`] is followed by).
    ran: Option<Ran>,
}

impl Write {
    /// A new write with these checks; the face's first step is [`WriteStep::ReadOperationId`].
    pub const fn new(checks: WriteChecks) -> Write {
        Write { checks, phase: Phase::OperationId, ran: None }
    }

    /// The checks it runs.
    pub const fn checks(&self) -> WriteChecks {
        self.checks
    }

    /// Whether it has answered.
    pub const fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// The next step after `event`.
    pub fn step(&mut self, event: WriteEvent) -> WriteStep {
        let next = match (self.phase, event) {
            (Phase::OperationId, WriteEvent::OperationId { valid: true }) => self.to(Phase::Tenant),
            (Phase::OperationId, WriteEvent::OperationId { valid: false }) => reply(Reply::InvalidOperationId),
            (Phase::Tenant, WriteEvent::Tenant { present: true }) => self.to(Phase::Authorize),
            (Phase::Tenant, WriteEvent::Tenant { present: false }) => reply(Reply::Unauthenticated),
            (Phase::Authorize, WriteEvent::Authorized { allowed: true }) => self.to(Phase::Principal),
            (Phase::Authorize, WriteEvent::Authorized { allowed: false }) => reply(Reply::Unauthorized),
            (Phase::Principal, WriteEvent::Principal { present: true }) => self.to(Phase::Validate),
            (Phase::Principal, WriteEvent::Principal { present: false }) => reply(Reply::UnauthenticatedPrincipal),
            (Phase::Validate, WriteEvent::Validated(Validation::Ok)) => self.to(Phase::Fingerprint),
            (Phase::Validate, WriteEvent::Validated(Validation::Problem)) => reply(Reply::InvalidInput),
            (Phase::Validate, WriteEvent::Validated(Validation::Threw)) => reply(Reply::ValidationFailed),
            (Phase::Fingerprint, WriteEvent::Fingerprinted { ok: true }) => self.to(Phase::Begin),
            (Phase::Fingerprint, WriteEvent::Fingerprinted { ok: false }) => WriteStep::Answer(WriteAnswer {
                with: Answer::Reply { reply: Reply::Unfingerprintable, why: true },
                kind: AnswerKind::Rejected,
            }),
            (Phase::Begin, WriteEvent::Begun(begun)) => self.begun(begun),
            (Phase::Run, WriteEvent::Ran(Ran::CommitRefused)) if !self.checks.transaction => {
                self.phase = Phase::Status;
                WriteStep::AskStatus
            }
            (Phase::Run, WriteEvent::Ran(ran)) => {
                self.phase = Phase::Record;
                self.ran = Some(ran);
                WriteStep::Record(match ran {
                    Ran::Result { is_error: true } => RecordState::Failed,
                    Ran::Result { is_error: false } => RecordState::Succeeded,
                    Ran::OutcomeUnknown | Ran::Threw | Ran::CommitRefused => RecordState::Unknown,
                })
            }
            (Phase::Record, WriteEvent::Recorded) => match self.ran {
                Some(Ran::Result { .. }) => RESULT,
                Some(Ran::OutcomeUnknown) => WriteStep::Answer(WriteAnswer {
                    with: Answer::Reply { reply: Reply::Unknown, why: true },
                    kind: AnswerKind::Unknown,
                }),
                _ => reply(Reply::Unknown),
            },
            (Phase::Status, WriteEvent::Status(Begun::Replay)) => REPLAY,
            (Phase::Status, WriteEvent::Status(Begun::InProgress)) => reply(Reply::InProgress),
            _ => reply(Reply::Unknown),
        };
        if matches!(next, WriteStep::Answer(_)) {
            self.phase = Phase::Done;
        }
        next
    }

    /// The first phase from `phase` on whose check is asked, and its step.
    fn to(&mut self, phase: Phase) -> WriteStep {
        let c = self.checks;
        let (phase, step) = match phase {
            Phase::Tenant => (Phase::Tenant, WriteStep::AskTenant),
            Phase::Authorize if c.authorize => (Phase::Authorize, WriteStep::AskAuthorize),
            Phase::Authorize | Phase::Principal if c.principal => (Phase::Principal, WriteStep::AskPrincipal),
            Phase::Authorize | Phase::Principal | Phase::Validate if c.validate => {
                (Phase::Validate, WriteStep::Validate)
            }
            Phase::Authorize | Phase::Principal | Phase::Validate | Phase::Fingerprint => {
                (Phase::Fingerprint, WriteStep::Fingerprint)
            }
            _ if c.transaction => (Phase::Begin, WriteStep::RunTransaction),
            _ => (Phase::Begin, WriteStep::Begin),
        };
        self.phase = phase;
        step
    }

    /// After the begin (or the transaction) ended.
    fn begun(&mut self, begun: Begun) -> WriteStep {
        let tx = self.checks.transaction;
        match begun {
            Begun::Execute if tx => RESULT,
            Begun::Execute => {
                self.phase = Phase::Run;
                WriteStep::Run
            }
            Begun::Replay => REPLAY,
            Begun::Conflict if self.checks.principal => reply(Reply::ConflictPrincipal),
            Begun::Conflict => reply(Reply::Conflict),
            Begun::InProgress => reply(Reply::InProgress),
            Begun::StoreDown => reply(Reply::StoreDown),
            Begun::RolledBack if tx => reply(Reply::RolledBack),
            Begun::Unknown | Begun::CommitUnknown | Begun::RolledBack => reply(Reply::Unknown),
        }
    }

    /// The write as one number, for a face that keeps it across a boundary: its checks, phase and how the
    /// handler's run ended, packed. [`Write::from_code`] reads it back.
    pub const fn code(&self) -> u32 {
        let c = self.checks;
        let checks =
            c.authorize as u32 | (c.principal as u32) << 1 | (c.validate as u32) << 2 | (c.transaction as u32) << 3;
        let ran = match self.ran {
            None => 0,
            Some(Ran::Result { is_error: false }) => 1,
            Some(Ran::Result { is_error: true }) => 2,
            Some(Ran::OutcomeUnknown) => 3,
            Some(Ran::Threw) => 4,
            Some(Ran::CommitRefused) => 5,
        };
        checks | (self.phase as u32) << 4 | ran << 8
    }

    /// A write from [`Write::code`]; `None` for a number no write packs to.
    pub const fn from_code(code: u32) -> Option<Write> {
        let checks = WriteChecks {
            authorize: code & 1 != 0,
            principal: code & 2 != 0,
            validate: code & 4 != 0,
            transaction: code & 8 != 0,
        };
        let phase = match (code >> 4) & 15 {
            0 => Phase::OperationId,
            1 => Phase::Tenant,
            2 => Phase::Authorize,
            3 => Phase::Principal,
            4 => Phase::Validate,
            5 => Phase::Fingerprint,
            6 => Phase::Begin,
            7 => Phase::Run,
            8 => Phase::Record,
            9 => Phase::Status,
            10 => Phase::Done,
            _ => return None,
        };
        if code >> 11 != 0 {
            return None;
        }
        let ran = match (code >> 8) & 7 {
            0 => None,
            1 => Some(Ran::Result { is_error: false }),
            2 => Some(Ran::Result { is_error: true }),
            3 => Some(Ran::OutcomeUnknown),
            4 => Some(Ran::Threw),
            5 => Some(Ran::CommitRefused),
            _ => return None,
        };
        Some(Write { checks, phase, ran })
    }
}
