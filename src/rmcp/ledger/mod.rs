//! The server face over rmcp: an operation ledger for tool handlers, so that a replayed write returns its first
//! outcome — the Rust twin of the npm package's `OperationLedger` + `withIdempotency` (the status tool:
//! [`StatusTool`](super::status::StatusTool)). Every
//! rule (admit, claim, finish, lookup) is the core's ([`crate::ledger::record`]); the fingerprint is the core's
//! RFC 8785 + SHA-256 ([`mod@crate::ledger::fingerprint`]), byte for byte the JS ledger's; the stores keep the JS
//! stores' table, so both ledgers can share one database.
//!
//! A running handler's claim is renewed every third of its lease ([`OperationLedger::hold`]; a claim that cannot
//! be kept is told, `lease_lost`). A result too large to keep is recorded as a note with the state it ended in
//! ([`OperationLedgerBuilder::max_result_bytes`]). When an outcome is
//! not known — a claim whose lease ran out (its process died), or an `unknown` record ([`crate::ledger::Admission::Reconcile`])
//! — the ledger asks your reconcile hook ([`OperationLedgerBuilder::reconcile`], the JS `reconcile` option) and
//! records its answer with a version check; without a hook, or while the hook cannot tell, the record is
//! answered `unknown` and never executed again. An operator's [`release`](OperationLedger::release) (module
//! [`operators`](super::operators)) lets the key run again. A handler whose writes live in the ledger's own
//! database can commit them with its record in one transaction ([`with_idempotency_atomic`](super::transaction::with_idempotency_atomic)).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use ::rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject};
use serde_json::{json, Map, Value};

use super::client::BoxError;
pub use super::lease::HandlerClaim;
use super::lease::LiveClaims;
use super::operators::{fold_counts, UnresolvedCount, UnresolvedFilter, UnresolvedRecord};
use super::telemetry::TARGET;
use crate::ledger::fingerprint::fingerprint;
use crate::ledger::look::{Look, LookEnd, LookEvent, LookMode, LookStep, ReconcileVerdict};
use crate::ledger::record::{
    finish, keep_alive_ms, valid_operation_id, LedgerConfig, Lookup, Record, RecordState, IN_PROGRESS_POLL_MS,
};
use crate::ledger::reply::{Fill, Reply};
use crate::vocab::LEDGER_META_KEY;

mod builder;
mod events;
mod idempotency;
mod looks;
mod store;
mod write;

use builder::checked_max_result_bytes;
pub use builder::OperationLedgerBuilder;
pub use events::{LedgerEvent, Reconcile, ReconcileFuture, ReconcileRequest, Reconciled};
use idempotency::MAX_RESULT_BYTES_LIMIT;
pub(crate) use idempotency::{ledger_reply, store_down, unknown_reply};
pub use idempotency::{
    unstored_result, with_idempotency, with_idempotency_claimed, IdempotencyOptions, MaxResultBytesError,
    OutcomeUnknown, DEFAULT_MAX_RESULT_BYTES, RESULT_NOT_STORED, STATUS_TOOL_NAME,
};
pub(crate) use looks::{Halt, Seen};
pub(crate) use store::lock;
pub use store::{purgeable, ready, LedgerKey, LedgerStore, MemoryLedgerStore, StoreError, StoreFuture, StoredRecord};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use store::{sql_int, sql_uint};
pub(crate) use write::{atomic, count_answer};

type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

type Observer = Arc<dyn Fn(&LedgerEvent) + Send + Sync>;

/// The operation ledger over a store.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{with_idempotency, IdempotencyOptions, MemoryLedgerStore, OperationLedger};
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // One ledger per server (cheap to clone: clones share the store and what this process holds).
/// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).build()?;
/// let args = serde_json::json!({ "title": "Printer on fire", "operation_id": "op-0001-abcd" });
/// let answer = with_idempotency(&ledger, &IdempotencyOptions::new("create_ticket"), Some("alice"), args.as_object().unwrap(), || async {
///     Ok(CallToolResult::success(vec![ContentBlock::text("opened T-1")]))
/// })
/// .await;
/// assert_ne!(answer.is_error, Some(true));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OperationLedger {
    store: Arc<dyn LedgerStore>,
    config: LedgerConfig,
    now: Clock,
    actions: Arc<Mutex<Vec<String>>>,
    reconcile: Option<Arc<dyn Reconcile>>,
    observer: Option<Observer>,
    max_result_bytes: usize,
    // The claims this process holds now (`hold`, until its handler returns): the in-process guard — never
    // reconciled here. Each key's entry is the hold that listed it (the JS `live` map's `ClaimHold`).
    pub(super) live: Arc<LiveClaims>,
}

/// What the ledger made of a write ([`OperationLedger::begin`]).
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::ledger::fingerprint;
/// use mcp_retry_policy::ledger::record::RecordState;
/// use mcp_retry_policy::rmcp::{Begin, LedgerKey, MemoryLedgerStore, OperationLedger};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
/// let input = fingerprint(r#"{"amount":5}"#)?;
/// match ledger.begin(&key, &input).await? {
///     Begin::Execute(claim) => {
///         // Run the write, then record how it ended (with the claim, its fence).
///         ledger.finish(&key, &claim, RecordState::Succeeded, Some(r#"{"content":[]}"#)).await?;
///     }
///     Begin::Replay { result, .. } => println!("the first outcome again: {result:?}"),
///     Begin::InProgress { retry_after_ms } => println!("running: check back in {retry_after_ms} ms"),
///     Begin::Conflict => println!("this id was used with other input"),
///     Begin::Unknown => println!("not known whether it happened: never run again"),
/// }
/// // The same key and input again: its first outcome.
/// assert!(matches!(ledger.begin(&key, &input).await?, Begin::Replay { state: RecordState::Succeeded, .. }));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Begin {
    /// Run it: this claim is yours; [`OperationLedger::finish`] with it.
    Execute(Record),
    /// Its first outcome, to return again (or the one the reconcile hook found).
    Replay {
        /// How it ended.
        state: RecordState,
        /// The stored result text.
        result: Option<String>,
    },
    /// The same operation is running now.
    InProgress {
        /// When to check back.
        retry_after_ms: u64,
    },
    /// The id was used with other input.
    Conflict,
    /// Its outcome is not known (an `unknown` record, or a claim whose lease ran out) and the reconcile hook
    /// (if any) could not tell: never run again here.
    Unknown,
}

fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl OperationLedger {
    /// A ledger over `store` with the defaults: the core's TTL (24 h) and lease (60 s), the wall clock, no
    /// reconcile hook, no event observer, results kept up to 1 MiB. Anything else: [`OperationLedger::builder`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, DEFAULT_MAX_RESULT_BYTES};
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// assert_eq!(ledger.max_result_bytes(), DEFAULT_MAX_RESULT_BYTES);
    /// assert_eq!(ledger.config().lease_ms, 60_000);
    /// ```
    pub fn new(store: Arc<dyn LedgerStore>) -> Self {
        OperationLedger::builder(store).assemble()
    }

    /// A builder for a ledger over `store` with other settings (the JS `new OperationLedger({ … })`'s options):
    /// each setter takes and returns the builder, and [`build`](OperationLedgerBuilder::build) checks them all
    /// at once.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::ledger::record::LedgerConfig;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, ReconcileRequest, Reconciled};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
    ///     .config(LedgerConfig::new(7 * 86_400_000, 30_000)?) // keep results a week, a 30 s lease
    ///     // Asked about a write whose outcome is not known: look it up where it would have landed.
    ///     .reconcile(|_asked: ReconcileRequest| std::future::ready(Ok(Reconciled::Unknown)))
    ///     .on_event(|e| eprintln!("ledger: {}", e.kind()))
    ///     .max_result_bytes(64 * 1024)
    ///     .build()?;
    /// assert_eq!(ledger.max_result_bytes(), 65_536);
    /// # Ok(()) }
    /// ```
    pub fn builder(store: Arc<dyn LedgerStore>) -> OperationLedgerBuilder {
        OperationLedgerBuilder {
            store,
            config: LedgerConfig::default(),
            now: Arc::new(wall_ms),
            reconcile: None,
            observer: None,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
        }
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`config`](OperationLedgerBuilder::config)`(config)`.
    #[deprecated(note = "use `OperationLedger::builder(store).config(config).build()`")]
    pub fn with_config(mut self, config: LedgerConfig) -> Self {
        self.config = config;
        self
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`clock`](OperationLedgerBuilder::clock)`(now)`.
    #[deprecated(note = "use `OperationLedger::builder(store).clock(now).build()`")]
    pub fn with_clock(mut self, now: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        self.now = Arc::new(now);
        self
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`reconcile`](OperationLedgerBuilder::reconcile)`(hook)`.
    #[deprecated(note = "use `OperationLedger::builder(store).reconcile(hook).build()`")]
    pub fn with_reconcile(mut self, hook: impl Reconcile + 'static) -> Self {
        self.reconcile = Some(Arc::new(hook));
        self
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`on_event`](OperationLedgerBuilder::on_event)`(observer)`.
    #[deprecated(note = "use `OperationLedger::builder(store).on_event(observer).build()`")]
    pub fn on_event(mut self, observer: impl Fn(&LedgerEvent) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Deprecated: [`OperationLedger::builder`]`(store).`[`max_result_bytes`](OperationLedgerBuilder::max_result_bytes)`(bytes)`,
    /// checked by [`build`](OperationLedgerBuilder::build) (this one's `Result` broke the chain).
    #[deprecated(note = "use `OperationLedger::builder(store).max_result_bytes(bytes).build()`")]
    pub fn with_max_result_bytes(mut self, bytes: usize) -> Result<Self, MaxResultBytesError> {
        self.max_result_bytes = checked_max_result_bytes(bytes)?;
        Ok(self)
    }

    /// The largest result text a record keeps ([`OperationLedgerBuilder::max_result_bytes`]).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(4096).build()?;
    /// assert_eq!(ledger.max_result_bytes(), 4096);
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn max_result_bytes(&self) -> usize {
        self.max_result_bytes
    }

    /// The text to store for `result`, which ended in `state`: its JSON, or — when it cannot be encoded or is
    /// longer than [`max_result_bytes`](Self::max_result_bytes) — a note saying so and why (told as
    /// [`LedgerEvent::ResultNotStored`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::ledger::record::RecordState;
    /// use mcp_retry_policy::rmcp::{LedgerKey, MemoryLedgerStore, OperationLedger};
    /// use rmcp::model::{CallToolResult, ContentBlock};
    ///
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(100).build()?;
    /// let key = LedgerKey { tenant: "t".into(), action: "report".into(), operation_id: "op-0001-abcd".into() };
    /// let big = CallToolResult::success(vec![ContentBlock::text("x".repeat(500))]);
    /// let text = ledger.result_text(&key, RecordState::Succeeded, &big);
    /// assert!(text.contains("result_not_stored")); // the note, in place of 500 bytes
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn result_text(&self, key: &LedgerKey, state: RecordState, result: &CallToolResult) -> String {
        match serde_json::to_string(result) {
            Ok(text) => self.checked_text(key, state, text),
            Err(e) => self.not_stored(key, state, format!("encoding it failed: {e}")),
        }
    }

    /// `text` if it fits [`max_result_bytes`](Self::max_result_bytes), else the note.
    fn checked_text(&self, key: &LedgerKey, state: RecordState, text: String) -> String {
        if text.len() <= self.max_result_bytes {
            return text;
        }
        let why = format!("it is longer than the ledger's max_result_bytes, {} bytes", self.max_result_bytes);
        self.not_stored(key, state, why)
    }

    fn not_stored(&self, key: &LedgerKey, state: RecordState, why: String) -> String {
        let note = unstored_result(state, &key.operation_id, &why);
        self.emit(LedgerEvent::ResultNotStored { key: key.clone(), state, why });
        serde_json::to_string(&note).unwrap_or_default()
    }

    /// The store.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let purged = ledger.store().purge(ledger.now_ms()).await?;
    /// assert_eq!(purged, 0);
    /// # Ok(()) }
    /// ```
    pub fn store(&self) -> &Arc<dyn LedgerStore> {
        &self.store
    }

    /// The settings.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// assert_eq!((ledger.config().ttl_ms, ledger.config().lease_ms), (86_400_000, 60_000));
    /// ```
    pub fn config(&self) -> &LedgerConfig {
        &self.config
    }

    /// The ledger's clock, now.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// assert!(ledger.now_ms() > 1_700_000_000_000); // the wall clock, ms since the Unix epoch
    /// ```
    pub fn now_ms(&self) -> u64 {
        (self.now)()
    }

    /// Tells the observer, and counts the incident through [`tracing`] (the JS `mcp_retry_policy.ledger.incidents`
    /// counter): an event `mcp_retry_policy.ledger.incident` with `monotonic_counter.mcp_retry_policy.ledger.incidents`,
    /// the event's kind and its action (not the tenant, not the error text).
    pub(crate) fn emit(&self, event: LedgerEvent) {
        tracing::event!(
            name: "mcp_retry_policy.ledger.incident",
            target: TARGET,
            tracing::Level::WARN,
            monotonic_counter.mcp_retry_policy.ledger.incidents = 1_u64,
            mcp_retry_policy.ledger.incident = event.kind(),
            mcp_retry_policy.ledger.action = event.key().map(|k| k.action.as_str()),
        );
        if let Some(o) = &self.observer {
            o(&event);
        }
    }
}
