//! The rmcp face's loop over the core's write driver ([`crate::ledger::write`]): it performs each step — reads
//! the operation id and the tenant, fingerprints the input, begins at the ledger, runs the handler under its
//! hold, records — and answers what the driver says. It decides nothing: which answer, which record state, which
//! telemetry kind are the driver's (the JS `withIdempotency` runs the same driver).

use super::idempotency::replayed;
#[allow(clippy::wildcard_imports)]
use super::*;
use crate::ledger::write::{Answer, AnswerKind, Begun, Ran, Write, WriteAnswer, WriteChecks, WriteEvent, WriteStep};
use crate::rmcp::transaction::{Atomic, Transact};

/// What the face holds while a write runs: what the driver's answer is filled from.
#[derive(Default)]
pub(crate) struct Held {
    /// The handler's result, or the replayed one.
    pub(crate) result: Option<CallToolResult>,
    /// The cause the answer may show: the fingerprint's refusal, or an `OutcomeUnknown`'s message.
    pub(crate) why: String,
    /// An `in_progress` answer's wait.
    pub(crate) retry_after_ms: u64,
}

/// What the checks before any claim came to.
pub(crate) enum Prepared {
    /// The key, the input's fingerprint and the step after them (`Begin` or `RunTransaction`).
    Ready(LedgerKey, String, WriteStep),
    /// The answer (a refusal) and its kind.
    Answered(CallToolResult, AnswerKind),
}

/// The checks before any claim (operation id, tenant, fingerprint), stepped through `w`.
pub(crate) fn prepared(
    ledger: &OperationLedger,
    options: &IdempotencyOptions,
    tenant: Option<&str>,
    arguments: &JsonObject,
    w: &mut Write,
) -> Prepared {
    let arg = options.operation_id_argument.as_str();
    ledger.add_action(&options.action);
    let id = arguments.get(arg).and_then(Value::as_str).filter(|id| valid_operation_id(id));
    let mut held = Held::default();
    let (mut key, mut print) = (None, None);
    let mut step = w.step(WriteEvent::OperationId { valid: id.is_some() });
    loop {
        step = match step {
            WriteStep::AskTenant => {
                let who = tenant.filter(|t| !t.is_empty());
                key = who.zip(id).map(|(t, id)| LedgerKey {
                    tenant: t.into(),
                    action: options.action.clone(),
                    operation_id: id.into(),
                });
                w.step(WriteEvent::Tenant { present: key.is_some() })
            }
            WriteStep::Fingerprint => {
                let mut input = arguments.clone();
                input.remove(arg);
                let printed = serde_json::to_string(&input)
                    .map_err(|e| e.to_string())
                    .and_then(|t| fingerprint(&t).map_err(|e| e.to_string()));
                match printed {
                    Ok(p) => print = Some(p),
                    Err(why) => held.why = why,
                }
                w.step(WriteEvent::Fingerprinted { ok: print.is_some() })
            }
            WriteStep::Answer(a) => return Prepared::Answered(answered(a, id, arg, held), a.kind),
            next @ (WriteStep::Begin | WriteStep::RunTransaction) => match (key, print) {
                (Some(k), Some(p)) => return Prepared::Ready(k, p, next),
                _ => return out_of_step(w, id, arg),
            },
            // The hooks this face has none of (authorize, principal, validate): never asked for.
            _ => return out_of_step(w, id, arg),
        };
    }
}

/// A step this face cannot take: the driver answers `unknown` to an event it does not wait for.
fn out_of_step(w: &mut Write, id: Option<&str>, arg: &str) -> Prepared {
    let step = w.step(WriteEvent::Recorded);
    let a = if let WriteStep::Answer(a) = step { a } else { unknown_answer() };
    Prepared::Answered(answered(a, id, arg, Held::default()), a.kind)
}

const fn unknown_answer() -> WriteAnswer {
    WriteAnswer { with: Answer::Reply { reply: Reply::Unknown, why: false }, kind: AnswerKind::Unknown }
}

/// The driver's answer, filled from what the face holds.
pub(crate) fn answered(a: WriteAnswer, id: Option<&str>, arg: &str, held: Held) -> CallToolResult {
    match a.with {
        Answer::Result | Answer::Replay => {
            held.result.unwrap_or_else(|| unknown_reply(id.unwrap_or_default(), arg, None))
        }
        Answer::Reply { reply, why } => {
            let why = if why { held.why.as_str() } else { "" };
            let extra = match reply {
                Reply::InProgress => Map::from_iter([("retryAfterMs".to_string(), json!(held.retry_after_ms))]),
                _ => Map::new(),
            };
            ledger_reply(reply, id, Fill { arg, why, ..Fill::default() }, extra)
        }
    }
}

/// What the ledger's answer to a begin is, for the driver; a replay's result and an in-progress wait go to
/// `held`, an execute's claim is returned.
pub(crate) fn begun(begin: Begin, id: &str, held: &mut Held) -> (Begun, Option<Record>) {
    let b = match begin {
        Begin::Execute(claim) => return (Begun::Execute, Some(claim)),
        Begin::Replay { state, result } => {
            held.result = Some(replayed(result.as_deref(), state, id));
            Begun::Replay
        }
        Begin::Conflict => Begun::Conflict,
        Begin::InProgress { retry_after_ms } => {
            held.retry_after_ms = retry_after_ms;
            Begun::InProgress
        }
        Begin::Unknown => Begun::Unknown,
    };
    (b, None)
}

/// [`with_idempotency`]'s answer and its kind: the core's write driver, performed.
pub(crate) async fn idempotent<F, Fut>(
    ledger: &OperationLedger,
    options: &IdempotencyOptions,
    tenant: Option<&str>,
    arguments: &JsonObject,
    handler: F,
) -> (CallToolResult, AnswerKind)
where
    F: FnOnce(HandlerClaim) -> Fut,
    Fut: Future<Output = Result<CallToolResult, OutcomeUnknown>>,
{
    let arg = options.operation_id_argument.as_str();
    let mut w = Write::new(WriteChecks::default());
    let (key, print, mut step) = match prepared(ledger, options, tenant, arguments, &mut w) {
        Prepared::Ready(k, p, s) => (k, p, s),
        Prepared::Answered(refused, kind) => return (refused, kind),
    };
    let id = key.operation_id.as_str();
    let (mut held, mut claimed, mut handler) = (Held::default(), None, Some(handler));
    loop {
        step = match step {
            WriteStep::Begin => {
                let b = match ledger.begin(&key, &print).await {
                    Ok(begin) => {
                        let (b, claim) = begun(begin, id, &mut held);
                        claimed = claim;
                        b
                    }
                    Err(e) => {
                        let error = e.to_string();
                        ledger.emit(LedgerEvent::StoreError { during: "begin", key: Some(key.clone()), error });
                        Begun::StoreDown
                    }
                };
                w.step(WriteEvent::Begun(b))
            }
            WriteStep::Run => match (claimed.take(), handler.take()) {
                (Some(claim), Some(h)) => {
                    let fence = claim.version;
                    let (ran, kept) = ledger
                        .hold_with(&key, claim, |standing| h(HandlerClaim::new(key.clone(), fence, standing)))
                        .await;
                    claimed = Some(kept);
                    let r = match ran {
                        Ok(r) => {
                            let is_error = r.is_error == Some(true);
                            held.result = Some(r);
                            Ran::Result { is_error }
                        }
                        Err(OutcomeUnknown(why)) => {
                            held.why = why;
                            Ran::OutcomeUnknown
                        }
                    };
                    w.step(WriteEvent::Ran(r))
                }
                _ => w.step(WriteEvent::Recorded),
            },
            WriteStep::Record(state) => {
                let text = match (&held.result, state) {
                    (Some(r), RecordState::Succeeded | RecordState::Failed) => Some(ledger.result_text(&key, state, r)),
                    _ => None,
                };
                // A failed or lost finish leaves the record pending: after its lease it is reconciled (or
                // answered unknown). The caller still gets the truth now.
                if let Some(claim) = &claimed {
                    if let Err(e) = ledger.finish_text(&key, claim, state, text).await {
                        let error = e.to_string();
                        ledger.emit(LedgerEvent::StoreError { during: "finish", key: Some(key.clone()), error });
                    }
                }
                w.step(WriteEvent::Recorded)
            }
            WriteStep::Answer(a) => return (answered(a, Some(id), arg, held), a.kind),
            // Steps this face never takes (a transaction, a refused commit's status): out of step, unknown.
            _ => w.step(WriteEvent::Recorded),
        };
    }
}

/// [`with_idempotency_atomic`](crate::rmcp::with_idempotency_atomic)'s answer and its kind: the core's write driver, performed (its transaction step
/// by [`OperationLedger::execute_atomically`]).
pub(crate) async fn atomic(
    ledger: &OperationLedger,
    options: &IdempotencyOptions,
    tenant: Option<&str>,
    arguments: &JsonObject,
    mut transact: impl Transact,
) -> (CallToolResult, AnswerKind) {
    let arg = options.operation_id_argument.as_str();
    let mut w = Write::new(WriteChecks { transaction: true, ..WriteChecks::default() });
    let (key, print, step) = match prepared(ledger, options, tenant, arguments, &mut w) {
        Prepared::Ready(k, p, s) => (k, p, s),
        Prepared::Answered(refused, kind) => return (refused, kind),
    };
    let id = key.operation_id.as_str();
    let mut held = Held::default();
    let b = match step {
        WriteStep::RunTransaction => match ledger.execute_atomically(&key, &print, &mut transact).await {
            // (Told as a store_error event in execute_atomically.)
            Err(_) => Begun::StoreDown,
            Ok(Atomic::Executed(result)) => {
                held.result = Some(result);
                Begun::Execute
            }
            Ok(Atomic::RolledBack(error)) => {
                // The handler ran and failed; the store rolled back its writes with the claim. Its database
                // writes did not take effect — anything it did outside the transaction may have.
                ledger.emit(LedgerEvent::HandlerError { during: "transaction", key: key.clone(), error });
                Begun::RolledBack
            }
            Ok(Atomic::CommitUnknown(error)) => {
                ledger.emit(LedgerEvent::StoreError { during: "commit", key: Some(key.clone()), error });
                Begun::CommitUnknown
            }
            Ok(Atomic::Answer(begin)) => begun(begin, id, &mut held).0,
        },
        // Out of step (never: `prepared` hands on the driver's transaction step): the driver answers unknown.
        _ => Begun::Unknown,
    };
    match w.step(WriteEvent::Begun(b)) {
        WriteStep::Answer(a) => (answered(a, Some(id), arg, held), a.kind),
        _ => (unknown_reply(id, arg, None), AnswerKind::Unknown),
    }
}

/// Counts one answer of the ledger through [`tracing`] (the JS `mcp_retry_policy.ledger.answers` counter): an
/// event `mcp_retry_policy.ledger.answer` whose `monotonic_counter.mcp_retry_policy.ledger.answers` field
/// `tracing-opentelemetry`'s `MetricsLayer` turns into that counter, with the answer's kind (the driver's:
/// `execute`, `replay`, `conflict`, `in_progress`, `unknown`, `rejected`, `rolled_back`) and the action — not
/// the tenant.
pub(crate) fn count_answer(action: &str, kind: AnswerKind) {
    tracing::event!(
        name: "mcp_retry_policy.ledger.answer",
        target: TARGET,
        tracing::Level::INFO,
        monotonic_counter.mcp_retry_policy.ledger.answers = 1_u64,
        mcp_retry_policy.ledger.answer = kind.as_str(),
        mcp_retry_policy.ledger.action = action,
    );
}
