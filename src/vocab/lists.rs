//! The named lists of stable names (an enum's `ALL` + `as_str`): JS gets `NAME` (the array, index = code), TS the union.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A named list of stable names: JS gets `NAME` (the array, index = code) and TS the union `Type`.
pub(super) struct List {
    pub(super) js: &'static str,
    /// Each name is also exported as `PREFIX_NAME` (an import of a renamed one fails at module link).
    pub(super) prefix: Option<&'static str>,
    pub(super) ts: &'static str,
    pub(super) doc: &'static str,
    pub(super) names: Vec<&'static str>,
}

pub(super) fn names<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().map(|v| name(*v)).collect()
}

pub(super) fn lists() -> Vec<List> {
    let list = |js, ts, doc, names| List { js, prefix: None, ts, doc, names };
    let named = |prefix, l: List| List { prefix: Some(prefix), ..l };
    vec![
        named(
            "SAFETY",
            list("SAFETIES", "Safety", "How safe a re-send of a tool is.", names(&Safety::ALL, Safety::as_str)),
        ),
        named(
            "STATUS",
            list("STATUSES", "FinalStatus", "How a call ended.", names(&FinalStatus::ALL, FinalStatus::as_str)),
        ),
        named("REASON", list("REASONS", "Reason", "Why a decision was taken.", names(Reason::ALL, Reason::as_str))),
        named("RECOVER", list("RECOVERS", "Recover", "A recovery step.", names(&Recover::ALL, Recover::as_str))),
        named(
            "VERDICT",
            list("VERDICTS", "Verdict", "What an outcome means for the call.", names(&Verdict::ALL, Verdict::as_str)),
        ),
        named(
            "DELIVERY",
            list(
                "DELIVERIES",
                "Delivery",
                "Whether the server acted on a request.",
                names(&Delivery::ALL, Delivery::as_str),
            ),
        ),
        named(
            "CAUSE",
            list(
                "CAUSES",
                "Cause",
                "The row of the classification table that applied.",
                names(Cause::ALL, Cause::as_str),
            ),
        ),
        named(
            "RESULT_TYPE",
            list("RESULT_TYPES", "ResultType", "A result's `resultType`.", names(&ResultType::ALL, ResultType::as_str)),
        ),
        named("SENT", list("SENT", "Sent", "Whether a failed request may have left.", names(&Sent::ALL, Sent::as_str))),
        named(
            "LEDGER",
            list(
                "LEDGER_STATUSES",
                "LedgerStatus",
                "What a server's ledger answers instead of running the tool.",
                names(&LedgerStatus::ALL, LedgerStatus::as_str),
            ),
        ),
        named(
            "RECORD",
            list(
                "RECORD_STATES",
                "RecordState",
                "A ledger record's state.",
                names(&RecordState::ALL, RecordState::as_str),
            ),
        ),
        named(
            "LOOKUP",
            list("LOOKUPS", "LedgerLookupStatus", "What a ledger status lookup finds.", Lookup::NAMES.to_vec()),
        ),
        list("ADMISSIONS", "LedgerAdmissionAction", "What the ledger does with a write.", Admission::NAMES.to_vec()),
        named(
            "LOOK_MODE",
            list("LOOK_MODES", "LedgerLookMode", "What a ledger look is for.", names(&LookMode::ALL, LookMode::as_str)),
        ),
        named(
            "LOOK_EVENT",
            list(
                "LOOK_EVENTS",
                "LedgerLookEvent",
                "What happened, fed back to a ledger look.",
                LookEvent::NAMES.to_vec(),
            ),
        ),
        named(
            "LOOK_VERDICT",
            list(
                "LOOK_VERDICTS",
                "LedgerLookVerdict",
                "The reconcile hook's verdict, to a ledger look.",
                ReconcileVerdict::NAMES.to_vec(),
            ),
        ),
        named(
            "LOOK_STEP",
            list(
                "LOOK_STEPS",
                "LedgerLookStep",
                "What a ledger look asks the face to do next.",
                LookStep::NAMES.to_vec(),
            ),
        ),
        named("LOOK_END", list("LOOK_ENDS", "LedgerLookEnd", "How a ledger look ended.", LookEnd::NAMES.to_vec())),
        named(
            "HOLD_EVENT",
            list(
                "HOLD_EVENTS",
                "LedgerHoldEvent",
                "What happened, fed back to a claim's hold.",
                HoldEvent::NAMES.to_vec(),
            ),
        ),
        named(
            "HOLD_ANSWER",
            list(
                "HOLD_ANSWERS",
                "LedgerHoldAnswer",
                "How a write a hold asked for answered.",
                names(&HoldAnswer::ALL, HoldAnswer::as_str),
            ),
        ),
        named(
            "HOLD_STEP",
            list(
                "HOLD_STEPS",
                "LedgerHoldStep",
                "What a claim's hold asks the face to do next.",
                HoldStep::NAMES.to_vec(),
            ),
        ),
        named(
            "CLAIM_STANDING",
            list("CLAIM_STANDINGS", "ClaimStanding", "Where a held claim stands.", Standing::NAMES.to_vec()),
        ),
        named(
            "HOLD_TELL",
            list("HOLD_TELLS", "LedgerHoldTell", "What operators hear of a claim's hold.", HoldTell::NAMES.to_vec()),
        ),
        named(
            "WRITE_EVENT",
            list(
                "WRITE_EVENTS",
                "LedgerWriteEvent",
                "What happened, fed back to a ledger write.",
                WriteEvent::NAMES.to_vec(),
            ),
        ),
        named(
            "WRITE_STEP",
            list(
                "WRITE_STEPS",
                "LedgerWriteStep",
                "What a ledger write asks the face to do next.",
                WriteStep::NAMES.to_vec(),
            ),
        ),
        named(
            "WRITE_VALIDATION",
            list(
                "WRITE_VALIDATIONS",
                "LedgerWriteValidation",
                "What the app's validator said, to a ledger write.",
                Validation::NAMES.to_vec(),
            ),
        ),
        named(
            "WRITE_BEGUN",
            list(
                "WRITE_BEGUNS",
                "LedgerWriteBegun",
                "What the ledger made of a write: its begin, its transaction, or its status.",
                Begun::NAMES.to_vec(),
            ),
        ),
        named("WRITE_RAN", list("WRITE_RANS", "LedgerWriteRan", "How a write's handler ended.", Ran::NAMES.to_vec())),
        named(
            "WRITE_ANSWER",
            list("WRITE_ANSWERS", "LedgerWriteAnswer", "What a ledger write answers.", Answer::NAMES.to_vec()),
        ),
        list(
            "LEDGER_ANSWER_KINDS",
            "LedgerAnswerKind",
            "How a ledger answer is counted (the `mcp_retry_policy.ledger.answer` attribute).",
            AnswerKind::NAMES.to_vec(),
        ),
        named(
            "REPLY",
            list(
                "LEDGER_REPLY_NAMES",
                "LedgerReplyName",
                "The ledger's own replies, by code.",
                names(&Reply::ALL, Reply::as_str),
            ),
        ),
        list(
            "RELEASE_REFUSALS",
            "LedgerReleaseRefusalCode",
            "Why the ledger's rules refuse a release.",
            ReleaseRefusal::NAMES.to_vec(),
        ),
        named(
            "OPERATION",
            list(
                "OPERATION_STATUSES",
                "OperationStatus",
                "What the status tool answers about an operation.",
                names(&OperationStatus::ALL, OperationStatus::as_str),
            ),
        ),
        named(
            "TASK",
            list("TASK_STATUSES", "TaskStatus", "A task's status.", names(&TaskStatus::ALL, TaskStatus::as_str)),
        ),
        list("REVISIONS", "Revision", "An MCP revision this package knows.", names(&Revision::ALL, Revision::as_str)),
        list(
            "PARAM_HEADER_REVISIONS",
            "ParamHeaderRevision",
            "The revisions whose `tools/call` carries the `Mcp-Param-*` headers.",
            Revision::ALL.iter().filter(|r| r.has_param_headers()).map(|r| r.as_str()).collect(),
        ),
        list(
            "LIST_TTL_REVISIONS",
            "ListTtlRevision",
            "The revisions whose list results carry `ttlMs` (a list without it is stale at once).",
            Revision::ALL.iter().filter(|r| r.caches_lists()).map(|r| r.as_str()).collect(),
        ),
        list("JITTERS", "Jitter", "A jitter strategy.", names(&Jitter::ALL, Jitter::as_str)),
        list("ERROR_KINDS", "BoundaryErrorKind", "What a numbers-only export refuses.", ERROR_KINDS.to_vec()),
        list(
            "BOUNDARY_FIELDS",
            "BoundaryField",
            "A field a numbers-only export's error names.",
            BOUNDARY_FIELDS.to_vec(),
        ),
        named("ACTION", list("ACTIONS", "Action", "What a decision does.", ACTIONS.to_vec())),
        list(
            "OUTCOME_KINDS",
            "OutcomeKind",
            "An attempt outcome's `kind`.",
            OUTCOME_KINDS.iter().map(|k| k.name).collect(),
        ),
        named(
            "BREAKER",
            list(
                "BREAKER_STATES",
                "BreakerStateName",
                "A breaker state.",
                vec![
                    BreakerState::Closed.as_str(),
                    BreakerState::Open { until_ms: 0 }.as_str(),
                    BreakerState::HalfOpen { probe_ms: 0 }.as_str(),
                ],
            ),
        ),
        named(
            "NEXT",
            list(
                "DRIVE_NEXTS",
                "DriveNext",
                "What the call driver says to do next (`next`: the `next` slot).",
                names(&NextKind::ALL, NextKind::as_str),
            ),
        ),
        named(
            "HAPPENED",
            list(
                "HAPPENINGS",
                "Happening",
                "What happened, fed to the call driver (`next`).",
                names(&HappenedKind::ALL, HappenedKind::as_str),
            ),
        ),
        named(
            "RESOLVE",
            list(
                "RESOLVE_NEXTS",
                "ResolveNext",
                "What the status driver says to do next (`statusNext`: the `resolveNext` slot).",
                names(&StatusNextKind::ALL, StatusNextKind::as_str),
            ),
        ),
        named(
            "FINISH",
            list(
                "FINISH_NEXTS",
                "FinishNext",
                "What a call's end says to do next (`callFinish`: the `finishNext` slot).",
                names(FinishNextKind::ALL, FinishNextKind::as_str),
            ),
        ),
        named(
            "FINISHED",
            list(
                "FINISHINGS",
                "Finishing",
                "What happened, fed to a call's end (`callFinish`).",
                names(FinishedKind::ALL, FinishedKind::as_str),
            ),
        ),
        named(
            "HEARD",
            list(
                "STATUS_HEARD",
                "StatusHeard",
                "What happened, fed to the status driver (`statusNext`).",
                names(&StatusHeard::ALL, StatusHeard::as_str),
            ),
        ),
        list(
            "HEDGE_REFUSALS",
            "HedgeRefusalName",
            "Why the engine refused a hedge (`hedge`: the `refusal` slot).",
            names(&HedgeRefusal::ALL, HedgeRefusal::as_str),
        ),
    ]
}
