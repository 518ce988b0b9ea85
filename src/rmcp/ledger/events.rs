//! What the ledger asks (the reconcile hook) and tells (`LedgerEvent`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// What the reconcile hook is asked about: a record whose outcome is not known (a `pending` claim whose lease
/// ran out, or `unknown`), with its key and whatever result text the row holds.
///
/// ```
/// use mcp_retry_policy::rmcp::{BoxError, ReconcileRequest, Reconciled};
///
/// // A hook: the downstream system is asked by the operation id the write carried.
/// async fn reconcile(asked: ReconcileRequest) -> Result<Reconciled, BoxError> {
///     println!("{} {} {} ended {}?", asked.key.tenant, asked.key.action, asked.key.operation_id, asked.record.state.as_str());
///     Ok(Reconciled::Unknown)
/// }
/// # let _ = reconcile;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconcileRequest {
    /// Where it lives (tenant, action, operation id).
    pub key: LedgerKey,
    /// The stored record (`pending` past its lease, or `unknown`).
    pub record: Record,
    /// The stored result text, if any.
    pub result: Option<String>,
}

/// The reconcile hook's answer (the JS hook's `{ status, result? }`).
///
/// ```
/// use mcp_retry_policy::rmcp::Reconciled;
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// fn answer(found: Option<&str>, still_possible: bool) -> Reconciled {
///     match (found, still_possible) {
///         (Some(ticket), _) => Reconciled::Succeeded(CallToolResult::success(vec![ContentBlock::text(ticket)])),
///         (None, false) => Reconciled::NotDone, // provably not done, and it cannot happen any more: run it
///         (None, true) => Reconciled::Unknown,  // cannot tell yet: never run again, answered unknown
///     }
/// }
/// assert_eq!(answer(None, true), Reconciled::Unknown);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Reconciled {
    /// It took effect: this result is recorded (`succeeded`) and replayed from now on.
    Succeeded(CallToolResult),
    /// It ran and failed: this error result is recorded (`failed`) and replayed from now on.
    Failed(CallToolResult),
    /// It provably did not happen and cannot happen any more: nothing is recorded, and the call that asked
    /// claims the key and executes it (the only way an unresolved record runs again, besides an operator's
    /// release).
    NotDone,
    /// The hook cannot tell (yet): the record stays as it is, answered `unknown`.
    Unknown,
}

/// What a reconcile hook returns: a boxed future (so that the hook can be a trait object).
///
/// ```
/// use mcp_retry_policy::rmcp::{Reconcile, ReconcileFuture, ReconcileRequest, Reconciled};
///
/// struct Nothing;
///
/// impl Reconcile for Nothing {
///     fn reconcile<'a>(&'a self, _asked: &'a ReconcileRequest) -> ReconcileFuture<'a> {
///         Box::pin(async { Ok(Reconciled::Unknown) })
///     }
/// }
/// # let _ = Nothing;
/// ```
pub type ReconcileFuture<'a> = Pin<Box<dyn Future<Output = Result<Reconciled, BoxError>> + Send + 'a>>;

/// The reconcile hook ([`OperationLedgerBuilder::reconcile`]): asked when an outcome is not known. An `Err` is
/// told to the event observer (`reconcile_error`) and counts as [`Reconciled::Unknown`]. A closure
/// `Fn(ReconcileRequest) -> impl Future<Output = Result<Reconciled, BoxError>>` is one.
///
/// A hook with state of its own (a client of the downstream API), as a type:
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, Reconcile, ReconcileFuture, ReconcileRequest, Reconciled};
///
/// struct AskTheBank {
///     base_url: String,
/// }
///
/// impl Reconcile for AskTheBank {
///     fn reconcile<'a>(&'a self, asked: &'a ReconcileRequest) -> ReconcileFuture<'a> {
///         Box::pin(async move {
///             // e.g. GET {base_url}/transfers?idempotency_key={operation_id}
///             let _ = (&self.base_url, &asked.key.operation_id);
///             Ok(Reconciled::Unknown)
///         })
///     }
/// }
///
/// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
///     .reconcile(AskTheBank { base_url: "https://bank.example.com".into() })
///     .build()?;
/// # let _ = ledger;
/// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
/// ```
pub trait Reconcile: Send + Sync {
    /// Finds out what happened to `asked`'s operation.
    fn reconcile<'a>(&'a self, asked: &'a ReconcileRequest) -> ReconcileFuture<'a>;
}

impl<F, Fut> Reconcile for F
where
    F: Fn(ReconcileRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Reconciled, BoxError>> + Send + 'static,
{
    fn reconcile<'a>(&'a self, asked: &'a ReconcileRequest) -> ReconcileFuture<'a> {
        Box::pin(self(asked.clone()))
    }
}

/// What operators must know (the JS `onEvent` events this face has), told to [`OperationLedgerBuilder::on_event`].
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{LedgerEvent, MemoryLedgerStore, OperationLedger};
///
/// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
///     .on_event(|event| match event {
///         LedgerEvent::LeaseLost { key, reason, .. } => eprintln!("{}: claim lost ({reason})", key.operation_id),
///         other => eprintln!("ledger: {} {:?}", other.kind(), other.key()),
///     })
///     .build()?;
/// # let _ = ledger;
/// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LedgerEvent {
    /// The reconcile hook failed (`Err`): answered as if it said `unknown`.
    ReconcileError {
        /// The key asked about.
        key: LedgerKey,
        /// The hook's error, as text.
        error: String,
    },
    /// A finish found its claim no longer the record's (its lease was lost and the record changed hands):
    /// the outcome was not recorded.
    LateFinish {
        /// The key.
        key: LedgerKey,
        /// The claim's version.
        version: u64,
        /// The state that was not recorded.
        state: RecordState,
    },
    /// The store failed during `during`: `begin` (the admission: a read or the claim), `renew` (a running
    /// claim's renewal), `finish`, `status`, `transaction` (before the handler ran) or `commit` (no answer: it
    /// may have committed).
    StoreError {
        /// The step.
        during: &'static str,
        /// The key, if one.
        key: Option<LedgerKey>,
        /// The store's error, as text.
        error: String,
    },
    /// A result was not stored (it could not be encoded, it is longer than the ledger's
    /// [`max_result_bytes`](OperationLedgerBuilder::max_result_bytes), or the store refused it): the record ends
    /// in `state` with a note in place of the result (a `result_not_stored` answer), never left pending.
    ResultNotStored {
        /// The key.
        key: LedgerKey,
        /// The state the record ended in.
        state: RecordState,
        /// Why the result was not stored.
        why: String,
    },
    /// A running handler's claim could not be kept ([`OperationLedger::hold`]): `reason` is `record_changed`
    /// (another run claimed the key after the lease ended) or `not_renewed` (no renewal won before the give-up
    /// point, a third of the lease before its end, on the local monotonic clock: the store failed or hung, the
    /// process was paused, its wall clock stopped). Another run may take over; if one does, this run's finish is
    /// refused (`late_finish`). Until the handler returns, a repeat in this process still hears `in_progress`.
    LeaseLost {
        /// The key.
        key: LedgerKey,
        /// The fencing token: the version the claim was made with.
        fence: u64,
        /// `record_changed` or `not_renewed`.
        reason: &'static str,
    },
    /// A renewal came late (past two thirds of the lease: the process stalled) but still held the claim: the
    /// lease is too short for this process.
    LeaseLate {
        /// The key.
        key: LedgerKey,
        /// The fencing token.
        fence: u64,
        /// How much of the lease was left when the renewal was made (0: none).
        left_ms: u64,
    },
    /// The status tool's [`Authorize`](crate::rmcp::status::Authorize) hook failed: answered as a refusal
    /// (`not_found`).
    AuthorizeError {
        /// The key asked about.
        key: LedgerKey,
        /// The hook's error, as text.
        error: String,
    },
    /// A handler failed inside its transaction (`during`: `transaction`): everything was rolled back.
    HandlerError {
        /// The step.
        during: &'static str,
        /// The key.
        key: LedgerKey,
        /// The handler's error, as text.
        error: String,
    },
}

impl LedgerEvent {
    /// The key the event is about, if one.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::{LedgerEvent, LedgerKey};
    ///
    /// let key = LedgerKey { tenant: "t".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// let event = LedgerEvent::ReconcileError { key: key.clone(), error: "timeout".into() };
    /// assert_eq!(event.key(), Some(&key));
    /// ```
    pub fn key(&self) -> Option<&LedgerKey> {
        match self {
            LedgerEvent::ReconcileError { key, .. }
            | LedgerEvent::LateFinish { key, .. }
            | LedgerEvent::ResultNotStored { key, .. }
            | LedgerEvent::LeaseLost { key, .. }
            | LedgerEvent::LeaseLate { key, .. }
            | LedgerEvent::AuthorizeError { key, .. }
            | LedgerEvent::HandlerError { key, .. } => Some(key),
            LedgerEvent::StoreError { key, .. } => key.as_ref(),
        }
    }

    /// The JS event's `type`: `reconcile_error`, `late_finish`, `store_error`, `result_not_stored`,
    /// `lease_lost`, `lease_late`, `authorize_error`, `handler_error`.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::LedgerEvent;
    ///
    /// let event = LedgerEvent::StoreError { during: "finish", key: None, error: "disk full".into() };
    /// assert_eq!(event.kind(), "store_error");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            LedgerEvent::ResultNotStored { .. } => "result_not_stored",
            LedgerEvent::LeaseLost { .. } => "lease_lost",
            LedgerEvent::LeaseLate { .. } => "lease_late",
            LedgerEvent::AuthorizeError { .. } => "authorize_error",
            LedgerEvent::ReconcileError { .. } => "reconcile_error",
            LedgerEvent::LateFinish { .. } => "late_finish",
            LedgerEvent::StoreError { .. } => "store_error",
            LedgerEvent::HandlerError { .. } => "handler_error",
        }
    }
}
