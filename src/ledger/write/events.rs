//! What crosses a write ([`super`]): the checks it runs, its events and steps, what it answers and how an answer
//! is counted. Each kind's stable names are what the JS face reads (generated into `names.js`).

use crate::ledger::record::RecordState;
use crate::ledger::reply::Reply;

/// The app's optional checks a write runs (the JS `withIdempotency` options of the same names; the rmcp face
/// has none but `transaction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteChecks {
    /// Ask the app's `authorize` hook, on every call (a replay included), before the ledger is read.
    pub authorize: bool,
    /// Read the caller's principal and bind it into the fingerprint.
    pub principal: bool,
    /// Ask the app's validator before any claim.
    pub validate: bool,
    /// Run the handler in the store's transaction with its record (no claim, no hold).
    pub transaction: bool,
}

/// What the app's validator said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validation {
    /// Nothing wrong.
    Ok,
    /// A problem with the input (the face fills `{problem}` with it).
    Problem,
    /// The validator itself failed.
    Threw,
}

/// What the ledger made of the write: the end of its look (`begin`), of its transaction, or of a status read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Begun {
    /// The key is claimed here: run the handler (a transaction: it ran and committed with its record).
    Execute,
    /// The outcome is recorded: its result is the answer.
    Replay,
    /// The id was used for other input.
    Conflict,
    /// The write runs now elsewhere.
    InProgress,
    /// Nobody knows whether it took effect.
    Unknown,
    /// The store failed before anything ran here.
    StoreDown,
    /// A transaction's handler failed: its writes were rolled back with the claim.
    RolledBack,
    /// A transaction's commit did not answer: it may have committed.
    CommitUnknown,
}

/// How the handler's run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ran {
    /// It returned a result (`is_error`: an error result, recorded `failed`).
    Result {
        /// Whether the result is an error result.
        is_error: bool,
    },
    /// It said it cannot tell whether its write took effect (its message is shown).
    OutcomeUnknown,
    /// It failed some other way after the claim: nobody can tell either (its message is not shown).
    Threw,
    /// Its fenced commit was refused: nothing of it stands, and the record is another run's now.
    CommitRefused,
}

/// What happened, fed back to the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteEvent {
    /// The operation-id argument was read: whether it is a valid id.
    OperationId {
        /// A valid operation id.
        valid: bool,
    },
    /// The tenant was read from the request's authentication.
    Tenant {
        /// A non-empty tenant (a hook that threw reads as none).
        present: bool,
    },
    /// The `authorize` hook answered.
    Authorized {
        /// `true` exactly (anything else, a throw included, refuses).
        allowed: bool,
    },
    /// The principal was read.
    Principal {
        /// A non-empty principal.
        present: bool,
    },
    /// The validator answered.
    Validated(Validation),
    /// The input was fingerprinted.
    Fingerprinted {
        /// `false`: the input cannot be (too large, not JSON).
        ok: bool,
    },
    /// The begin or the transaction ended.
    Begun(Begun),
    /// The handler's run ended.
    Ran(Ran),
    /// The outcome was written (or could not be: the record stays pending, and is reconciled after its lease).
    Recorded,
    /// The record's status, read after a refused commit.
    Status(Begun),
}

/// The next thing the face does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStep {
    /// Read the operation-id argument ([`WriteEvent::OperationId`]).
    ReadOperationId,
    /// Read the tenant ([`WriteEvent::Tenant`]).
    AskTenant,
    /// Ask the `authorize` hook ([`WriteEvent::Authorized`]).
    AskAuthorize,
    /// Read the principal ([`WriteEvent::Principal`]).
    AskPrincipal,
    /// Ask the validator ([`WriteEvent::Validated`]).
    Validate,
    /// Fingerprint the input without the operation id — with the principal, if read ([`WriteEvent::Fingerprinted`]).
    Fingerprint,
    /// Begin the write at the ledger: its look, claiming the key ([`WriteEvent::Begun`]).
    Begin,
    /// Run the handler in the store's transaction with its claim and record ([`WriteEvent::Begun`]).
    RunTransaction,
    /// Run the handler under the claim's hold ([`WriteEvent::Ran`]).
    Run,
    /// Stop the hold and write the outcome, in this state ([`WriteEvent::Recorded`]).
    Record(RecordState),
    /// Stop the hold and read the record's status ([`WriteEvent::Status`]).
    AskStatus,
    /// The write is over: answer this.
    Answer(WriteAnswer),
}

/// What a write answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The handler's own result (it ran here).
    Result,
    /// The recorded result (the store's, or the status's after a refused commit).
    Replay,
    /// One of the ledger's own replies; `why`: fill `{why}` with the cause the face holds (the fingerprint's
    /// refusal, or an `OutcomeUnknown`'s message), else leave it empty.
    Reply {
        /// The reply.
        reply: Reply,
        /// Whether the cause is shown.
        why: bool,
    },
}

/// The kind an answer is counted as (the `mcp_retry_policy.ledger.answer` attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerKind {
    /// The handler ran here.
    Execute,
    /// A recorded outcome, replayed.
    Replay,
    /// The id was used for other input.
    Conflict,
    /// It runs now elsewhere.
    InProgress,
    /// Nobody knows.
    Unknown,
    /// Refused before any claim.
    Rejected,
    /// Its transaction was rolled back.
    RolledBack,
}

/// A write's answer and the kind it is counted as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteAnswer {
    /// What to answer.
    pub with: Answer,
    /// How it is counted.
    pub kind: AnswerKind,
}

impl WriteEvent {
    /// The events' stable names, by code.
    pub const NAMES: [&'static str; 10] = [
        "operation_id",
        "tenant",
        "authorized",
        "principal",
        "validated",
        "fingerprinted",
        "begun",
        "ran",
        "recorded",
        "status",
    ];

    /// The event of a code in [`WriteEvent::NAMES`] and what it carries: a flag (0 or 1), a
    /// [`Validation::NAMES`], [`Begun::NAMES`] or [`Ran::NAMES`] code, or 0; `None` for anything else.
    pub const fn from_code(code: u32, arg: u32) -> Option<WriteEvent> {
        let (flag, is_flag) = (arg == 1, arg <= 1);
        match code {
            0 if is_flag => Some(WriteEvent::OperationId { valid: flag }),
            1 if is_flag => Some(WriteEvent::Tenant { present: flag }),
            2 if is_flag => Some(WriteEvent::Authorized { allowed: flag }),
            3 if is_flag => Some(WriteEvent::Principal { present: flag }),
            5 if is_flag => Some(WriteEvent::Fingerprinted { ok: flag }),
            _ => WriteEvent::coded(code, arg),
        }
    }

    /// The events that carry a code (or nothing).
    const fn coded(code: u32, arg: u32) -> Option<WriteEvent> {
        match (code, arg) {
            (4, 0) => Some(WriteEvent::Validated(Validation::Ok)),
            (4, 1) => Some(WriteEvent::Validated(Validation::Problem)),
            (4, 2) => Some(WriteEvent::Validated(Validation::Threw)),
            (6 | 9, _) => match Begun::from_code(arg) {
                Some(b) if code == 6 => Some(WriteEvent::Begun(b)),
                Some(b) => Some(WriteEvent::Status(b)),
                None => None,
            },
            (7, 0) => Some(WriteEvent::Ran(Ran::Result { is_error: false })),
            (7, 1) => Some(WriteEvent::Ran(Ran::Result { is_error: true })),
            (7, 2) => Some(WriteEvent::Ran(Ran::OutcomeUnknown)),
            (7, 3) => Some(WriteEvent::Ran(Ran::Threw)),
            (7, 4) => Some(WriteEvent::Ran(Ran::CommitRefused)),
            (8, 0) => Some(WriteEvent::Recorded),
            _ => None,
        }
    }
}

impl Validation {
    /// The validator's answers' stable names, by code.
    pub const NAMES: [&'static str; 3] = ["ok", "problem", "threw"];
}

impl Ran {
    /// The runs' ends' stable names, by code (`succeeded` and `failed`: a result, an error result).
    pub const NAMES: [&'static str; 5] = ["succeeded", "failed", "outcome_unknown", "threw", "commit_refused"];
}

impl Begun {
    /// The ledger's ends' stable names, by code.
    pub const NAMES: [&'static str; 8] =
        ["execute", "replay", "conflict", "in_progress", "unknown", "store_down", "rolled_back", "commit_unknown"];

    /// Every end, by code.
    pub const ALL: [Begun; 8] = [
        Begun::Execute,
        Begun::Replay,
        Begun::Conflict,
        Begun::InProgress,
        Begun::Unknown,
        Begun::StoreDown,
        Begun::RolledBack,
        Begun::CommitUnknown,
    ];

    /// The end of a code in [`Begun::NAMES`].
    pub const fn from_code(code: u32) -> Option<Begun> {
        Some(match code {
            0 => Begun::Execute,
            1 => Begun::Replay,
            2 => Begun::Conflict,
            3 => Begun::InProgress,
            4 => Begun::Unknown,
            5 => Begun::StoreDown,
            6 => Begun::RolledBack,
            7 => Begun::CommitUnknown,
            _ => return None,
        })
    }
}

impl WriteStep {
    /// The steps' stable names, by code.
    pub const NAMES: [&'static str; 12] = [
        "read_operation_id",
        "ask_tenant",
        "ask_authorize",
        "ask_principal",
        "validate",
        "fingerprint",
        "begin",
        "run_transaction",
        "run",
        "record",
        "ask_status",
        "answer",
    ];

    /// The step's code in [`WriteStep::NAMES`].
    pub const fn code(&self) -> u32 {
        match self {
            WriteStep::ReadOperationId => 0,
            WriteStep::AskTenant => 1,
            WriteStep::AskAuthorize => 2,
            WriteStep::AskPrincipal => 3,
            WriteStep::Validate => 4,
            WriteStep::Fingerprint => 5,
            WriteStep::Begin => 6,
            WriteStep::RunTransaction => 7,
            WriteStep::Run => 8,
            WriteStep::Record(_) => 9,
            WriteStep::AskStatus => 10,
            WriteStep::Answer(_) => 11,
        }
    }
}

impl Answer {
    /// The answers' stable names, by code.
    pub const NAMES: [&'static str; 3] = ["result", "replay", "reply"];

    /// The answer's code in [`Answer::NAMES`].
    pub const fn code(&self) -> u32 {
        match self {
            Answer::Result => 0,
            Answer::Replay => 1,
            Answer::Reply { .. } => 2,
        }
    }
}

impl AnswerKind {
    /// The kinds' stable names, by code (the values of the `mcp_retry_policy.ledger.answer` attribute).
    pub const NAMES: [&'static str; 7] =
        ["execute", "replay", "conflict", "in_progress", "unknown", "rejected", "rolled_back"];

    /// The kind's stable name.
    pub const fn as_str(self) -> &'static str {
        match self {
            AnswerKind::Execute => "execute",
            AnswerKind::Replay => "replay",
            AnswerKind::Conflict => "conflict",
            AnswerKind::InProgress => "in_progress",
            AnswerKind::Unknown => "unknown",
            AnswerKind::Rejected => "rejected",
            AnswerKind::RolledBack => "rolled_back",
        }
    }

    /// The kind a reply of the ledger's own is counted as: by its status; `rolled_back` by itself.
    pub const fn of(reply: Reply) -> AnswerKind {
        match (reply, reply.status().as_bytes()) {
            (Reply::RolledBack, _) => AnswerKind::RolledBack,
            (_, b"conflict") => AnswerKind::Conflict,
            (_, b"in_progress") => AnswerKind::InProgress,
            (_, b"unknown") => AnswerKind::Unknown,
            _ => AnswerKind::Rejected,
        }
    }
}
