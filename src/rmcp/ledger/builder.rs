//! `OperationLedgerBuilder`: the ledger's settings, checked once at `build()`.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Builds an [`OperationLedger`] ([`OperationLedger::builder`]; the JS `new OperationLedger({ … })`'s options):
/// every setter takes the builder and returns it, and [`build`](Self::build) checks the settings once, at the
/// end — a setting out of range never breaks the chain.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
///
/// let too_small = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(0).build();
/// assert_eq!(too_small.err().map(|e| e.bytes), Some(0)); // the error names the refused value
/// ```
#[must_use = "a builder does nothing until `build()`"]
pub struct OperationLedgerBuilder {
    pub(super) store: Arc<dyn LedgerStore>,
    pub(super) config: LedgerConfig,
    pub(super) now: Clock,
    pub(super) reconcile: Option<Arc<dyn Reconcile>>,
    pub(super) observer: Option<Observer>,
    pub(super) max_result_bytes: usize,
}

impl fmt::Debug for OperationLedgerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OperationLedgerBuilder")
            .field("config", &self.config)
            .field("reconcile", &self.reconcile.is_some())
            .field("on_event", &self.observer.is_some())
            .field("max_result_bytes", &self.max_result_bytes)
            .finish_non_exhaustive()
    }
}

impl OperationLedgerBuilder {
    /// The TTL of a resolved record and the lease of a claim ([`LedgerConfig::new`] checks that the TTL is at
    /// least the lease; default 24 h and 60 s).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use mcp_retry_policy::ledger::record::LedgerConfig;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
    ///     .config(LedgerConfig::new(3_600_000, 10_000)?) // an hour's replays, a 10 s lease renewed every ~3 s
    ///     .build()?;
    /// assert_eq!(ledger.config().ttl_ms, 3_600_000);
    /// # Ok(()) }
    /// ```
    pub fn config(mut self, config: LedgerConfig) -> Self {
        self.config = config;
        self
    }

    /// Another clock (ms since the Unix epoch; default the wall clock), e.g. a fixed one in tests.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).clock(|| 1_000_000).build()?;
    /// assert_eq!(ledger.now_ms(), 1_000_000);
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn clock(mut self, now: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        self.now = Arc::new(now);
        self
    }

    /// The reconcile hook (the JS `reconcile` option): asked when an outcome is not known — a claim whose
    /// lease ran out (its run's renewals stopped), or an `unknown` record — by a call of the same key
    /// ([`begin`](OperationLedger::begin)) and by the status lookup ([`status`](OperationLedger::status));
    /// never while this process holds a live claim on the key. Its answer is recorded with a version check
    /// (the record changed meanwhile → look again): [`Reconciled::Succeeded`] / [`Reconciled::Failed`] are
    /// recorded and replayed, [`Reconciled::NotDone`] lets the asking call execute, [`Reconciled::Unknown`]
    /// (or an `Err`) changes nothing.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{BoxError, MemoryLedgerStore, OperationLedger, ReconcileRequest, Reconciled};
    /// use rmcp::model::{CallToolResult, ContentBlock};
    ///
    /// // Where the write would have landed: here, a set of the operation ids the ticket system holds.
    /// let tickets: Arc<std::collections::HashSet<String>> = Arc::new(["0b6f3c1e-8d2a".to_string()].into());
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
    ///     .reconcile(move |asked: ReconcileRequest| {
    ///         let found = tickets.contains(&asked.key.operation_id);
    ///         std::future::ready(Ok::<_, BoxError>(if found {
    ///             Reconciled::Succeeded(CallToolResult::success(vec![ContentBlock::text("opened")]))
    ///         } else {
    ///             Reconciled::Unknown // no proof either way: it is never run again
    ///         }))
    ///     })
    ///     .build()?;
    /// # let _ = ledger;
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn reconcile(mut self, hook: impl Reconcile + 'static) -> Self {
        self.reconcile = Some(Arc::new(hook));
        self
    }

    /// An observer of what operators must know ([`LedgerEvent`]; the JS `onEvent`). Each event is also counted
    /// through `tracing`, with or without an observer.
    ///
    /// ```
    /// # use std::sync::{Arc, Mutex};
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
    ///     .on_event(move |e| log.lock().unwrap().push(e.kind()))
    ///     .build()?;
    /// # let _ = ledger;
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn on_event(mut self, observer: impl Fn(&LedgerEvent) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// The largest result text (UTF-8 bytes, 1 … 1 GiB; default 1 MiB) a record keeps (the JS
    /// `maxResultBytes`): a longer one is recorded as a note saying so, with the state the operation ended in
    /// ([`LedgerEvent::ResultNotStored`]). Checked by [`build`](Self::build).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).max_result_bytes(256 * 1024).build()?;
    /// assert_eq!(ledger.max_result_bytes(), 262_144);
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// The ledger, or what is out of range ([`max_result_bytes`](Self::max_result_bytes) outside 1 … 1 GiB:
    /// the error names the value).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger};
    /// let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new())).build()?;
    /// # let _ = ledger;
    /// # Ok::<(), mcp_retry_policy::rmcp::MaxResultBytesError>(())
    /// ```
    pub fn build(self) -> Result<OperationLedger, MaxResultBytesError> {
        checked_max_result_bytes(self.max_result_bytes)?;
        Ok(self.assemble())
    }

    /// The ledger, the settings taken as they are (the defaults are valid).
    pub(super) fn assemble(self) -> OperationLedger {
        OperationLedger {
            store: self.store,
            config: self.config,
            now: self.now,
            actions: Arc::default(),
            reconcile: self.reconcile,
            observer: self.observer,
            max_result_bytes: self.max_result_bytes,
            live: Arc::default(),
        }
    }
}

pub(super) fn checked_max_result_bytes(bytes: usize) -> Result<usize, MaxResultBytesError> {
    if (1..=MAX_RESULT_BYTES_LIMIT).contains(&bytes) {
        Ok(bytes)
    } else {
        Err(MaxResultBytesError { bytes })
    }
}
