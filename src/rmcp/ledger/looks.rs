//! The ledger's looks carried out: `begin`, `advance` (the core's look driver, step by step), the reconcile hook,
//! `finish`, `status`, `locate`.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Where [`OperationLedger::advance`] stopped: the look ended, or a claim is to be written.
pub(crate) enum Halt {
    /// The look is over.
    Done(LookEnd),
    /// Write this claim (insert, or replace version `expected`), then feed back whether it won.
    Claim { claim: Record, expected: Option<u64> },
}

/// What the face holds between a look's steps (the driver keeps no record).
#[derive(Default)]
pub(crate) struct Seen {
    /// The row read last.
    stored: Option<StoredRecord>,
    /// The reconcile hook's result, until it is written.
    found: Option<CallToolResult>,
    /// The result text just recorded for the hook's answer (`Some(text)`), replayed instead of the stored one.
    reconciled: Option<Option<String>>,
}

impl Seen {
    pub(crate) fn record(&self) -> Option<&Record> {
        self.stored.as_ref().map(|s| &s.record)
    }

    /// The result text a replay returns: the one just reconciled, else the stored one.
    fn result(&mut self) -> Option<String> {
        match self.reconciled.take() {
            Some(text) => text,
            None => self.stored.as_mut().and_then(|s| s.result.take()),
        }
    }

    /// `begin`'s answer for a look's end (`claim`: the one written, when it won).
    pub(crate) fn begin(&mut self, end: LookEnd, claim: Option<Record>) -> Begin {
        match (end, claim) {
            (LookEnd::Execute { .. }, Some(claim)) => Begin::Execute(claim),
            (LookEnd::Replay(state), _) => Begin::Replay { state, result: self.result() },
            (LookEnd::InProgress { retry_after_ms }, _) => Begin::InProgress { retry_after_ms },
            (LookEnd::Conflict, _) => Begin::Conflict,
            (LookEnd::Execute { .. } | LookEnd::Unknown | LookEnd::NotFound | LookEnd::NotDone, _) => Begin::Unknown,
        }
    }
}

impl OperationLedger {
    /// A live claim of this process on `key` whose handler still runs here — its renewals given up on or not —
    /// and whose record is still the one it holds (pending, at its version; the JS `ClaimHold.holds`): in
    /// progress, never reconciled. A claim another run took (a new version) is not this process's any more.
    pub(super) fn held(&self, key: &LedgerKey, record: &Record) -> Option<u64> {
        let mine = lock(&self.live).get(key).is_some_and(|live| live.version == record.version);
        (record.state == RecordState::Pending && mine).then(|| IN_PROGRESS_POLL_MS.min(keep_alive_ms(&self.config)))
    }

    /// Admits a write with input `fingerprint`: one look through the core's driver (`crate::ledger::look`), this
    /// face carrying out its steps — the store's reads and writes, the in-process guard, the reconcile hook.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::ledger::fingerprint;
    /// use mcp_retry_policy::rmcp::{Begin, LedgerKey, MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// assert!(matches!(ledger.begin(&key, &fingerprint(r#"{"amount":5}"#)?).await?, Begin::Execute(_)));
    /// // While the first runs, the same key: in progress; other input under the same id: a conflict.
    /// assert!(matches!(ledger.begin(&key, &fingerprint(r#"{"amount":5}"#)?).await?, Begin::InProgress { .. }));
    /// assert_eq!(ledger.begin(&key, &fingerprint(r#"{"amount":6}"#)?).await?, Begin::Conflict);
    /// # Ok(()) }
    /// ```
    pub async fn begin(&self, key: &LedgerKey, fingerprint: &str) -> Result<Begin, StoreError> {
        let mut look = Look::new(LookMode::Claim);
        let mut seen = Seen::default();
        let mut step = LookStep::Read;
        loop {
            match self.advance(key, fingerprint, &mut look, step, &mut seen).await? {
                Halt::Done(end) => return Ok(seen.begin(end, None)),
                Halt::Claim { claim, expected } => {
                    let won = match expected {
                        None => self.store.insert(key, &claim).await?,
                        Some(v) => self.store.replace(key, v, &claim, None).await?,
                    };
                    step = look.step(LookEvent::Wrote(won), seen.record(), fingerprint, (self.now)(), &self.config);
                    if let LookStep::Done(end) = step {
                        return Ok(seen.begin(end, Some(claim)));
                    }
                }
            }
        }
    }

    /// Carries out `look`'s steps from `step` until it ends or asks for a claim to be written (`Halt::Claim`:
    /// written here by `begin`, in the store's transaction by `execute_atomically`). `seen` keeps what the face
    /// holds between steps: the record read last and the result text it replays.
    pub(crate) async fn advance(
        &self,
        key: &LedgerKey,
        fingerprint: &str,
        look: &mut Look,
        mut step: LookStep,
        seen: &mut Seen,
    ) -> Result<Halt, StoreError> {
        loop {
            let event = match step {
                LookStep::Done(end) => return Ok(Halt::Done(end)),
                LookStep::WriteClaim { claim, expected } => return Ok(Halt::Claim { claim, expected }),
                LookStep::Read => {
                    seen.stored = self.store.get(key).await?;
                    seen.reconciled = None;
                    let same_input = seen.stored.as_ref().is_some_and(|s| s.record.fingerprint == fingerprint);
                    LookEvent::Read { same_input }
                }
                LookStep::AskHeld => LookEvent::Held(seen.record().and_then(|r| self.held(key, r))),
                LookStep::AskReconcile => LookEvent::Reconciled(self.ask_reconcile(key, seen).await),
                LookStep::WriteReconciled { record, state } => {
                    let text = seen.found.take().map(|result| self.result_text(key, state, &result));
                    let expected = seen.record().map_or(0, |r| r.version);
                    let won = self.store.replace(key, expected, &record, text.as_deref()).await?;
                    seen.reconciled = Some(text);
                    LookEvent::Wrote(won)
                }
            };
            step = look.step(event, seen.record(), fingerprint, (self.now)(), &self.config);
        }
    }

    /// Asks the reconcile hook about the record read last (none: unknown; its `Err` told, and unknown). The
    /// result of a resolved answer is kept in `seen` for the write that records it.
    async fn ask_reconcile(&self, key: &LedgerKey, seen: &mut Seen) -> ReconcileVerdict {
        let (Some(hook), Some(stored)) = (&self.reconcile, &seen.stored) else { return ReconcileVerdict::Unknown };
        let asked = ReconcileRequest { key: key.clone(), record: stored.record.clone(), result: stored.result.clone() };
        match hook.reconcile(&asked).await {
            Err(e) => {
                self.emit(LedgerEvent::ReconcileError { key: key.clone(), error: e.to_string() });
                ReconcileVerdict::Unknown
            }
            Ok(Reconciled::Unknown) => ReconcileVerdict::Unknown,
            Ok(Reconciled::NotDone) => ReconcileVerdict::NotDone,
            Ok(Reconciled::Succeeded(r)) => {
                seen.found = Some(r);
                ReconcileVerdict::Resolved(RecordState::Succeeded)
            }
            Ok(Reconciled::Failed(r)) => {
                seen.found = Some(r);
                ReconcileVerdict::Resolved(RecordState::Failed)
            }
        }
    }

    /// Records how an executed write ended (the core's `finish`); `false` when the claim was lost (another
    /// claim replaced it: this run's outcome is not written over it; told as [`LedgerEvent::LateFinish`]).
    /// A result text longer than [`max_result_bytes`](Self::max_result_bytes), or one the store refuses (an
    /// `Err` on the write: too large for it, say), is recorded as a note with the state it ended in, never
    /// left pending ([`LedgerEvent::ResultNotStored`]); an `Err` is returned only when the note's write fails
    /// too.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::ledger::record::RecordState;
    /// use mcp_retry_policy::rmcp::{Begin, LedgerKey, MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// let Begin::Execute(claim) = ledger.begin(&key, "input-fingerprint").await? else { unreachable!() };
    /// // The downstream call timed out after it was sent: not known whether it took effect.
    /// assert!(ledger.finish(&key, &claim, RecordState::Unknown, None).await?);
    /// # Ok(()) }
    /// ```
    pub async fn finish(
        &self,
        key: &LedgerKey,
        claimed: &Record,
        state: RecordState,
        result: Option<&str>,
    ) -> Result<bool, StoreError> {
        let text = result.map(|t| self.checked_text(key, state, t.to_string()));
        self.finish_text(key, claimed, state, text).await
    }

    /// [`finish`](Self::finish) with a text already checked ([`result_text`](Self::result_text)).
    pub(crate) async fn finish_text(
        &self,
        key: &LedgerKey,
        claimed: &Record,
        state: RecordState,
        text: Option<String>,
    ) -> Result<bool, StoreError> {
        let done = finish(claimed, state, (self.now)(), &self.config);
        let ok = match self.store.replace(key, claimed.version, &done, text.as_deref()).await {
            Ok(ok) => ok,
            Err(e) if text.is_some() && state != RecordState::Unknown => {
                self.emit(LedgerEvent::StoreError { during: "finish", key: Some(key.clone()), error: e.to_string() });
                // The store refused the result: the outcome is recorded with a note instead.
                let note = self.not_stored(key, state, "the store refused it".into());
                self.store.replace(key, claimed.version, &done, Some(&note)).await?
            }
            Err(e) => return Err(e),
        };
        if !ok {
            self.emit(LedgerEvent::LateFinish { key: key.clone(), version: claimed.version, state });
        }
        Ok(ok)
    }

    /// What the ledger knows about `key`, read-only (the core's `lookup`; nothing is claimed or executed):
    /// the status tool's answer — `(status, result, retry_after_ms)`. An outcome not known is asked of the
    /// reconcile hook (its resolved answer is recorded; `not_done` is answered, nothing recorded); without
    /// one, or while it cannot tell, `unknown`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{LedgerKey, MemoryLedgerStore, OperationLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let key = LedgerKey { tenant: "alice".into(), action: "pay".into(), operation_id: "op-0001-abcd".into() };
    /// let (status, result, retry_after_ms) = ledger.status(&key).await?;
    /// assert_eq!((status, result, retry_after_ms), ("not_found", None, None));
    /// # Ok(()) }
    /// ```
    pub async fn status(&self, key: &LedgerKey) -> Result<(&'static str, Option<String>, Option<u64>), StoreError> {
        let mut look = Look::new(LookMode::Status);
        let mut seen = Seen::default();
        let end = match self.advance(key, "", &mut look, LookStep::Read, &mut seen).await? {
            Halt::Done(end) => end,
            Halt::Claim { .. } => LookEnd::Unknown, // a status look never claims (the driver's tests)
        };
        Ok(match end {
            LookEnd::Replay(state) => (state.as_str(), seen.result(), None),
            LookEnd::InProgress { retry_after_ms } => ("in_progress", None, Some(retry_after_ms)),
            LookEnd::NotFound => (Lookup::NotFound.as_str(), None, None),
            LookEnd::NotDone => (Lookup::NotDone.as_str(), None, None),
            LookEnd::Execute { .. } | LookEnd::Conflict | LookEnd::Unknown => ("unknown", None, None),
        })
    }

    pub(super) fn add_action(&self, action: &str) {
        let mut a = lock(&self.actions);
        if !a.iter().any(|x| x == action) {
            a.push(action.to_string());
        }
    }

    /// The action `operation_id` is recorded under for `tenant`: the asked one, else the one registered action
    /// that holds it; `Err(())` when several do (ambiguous).
    pub(crate) async fn locate(
        &self,
        tenant: &str,
        action: &str,
        operation_id: &str,
    ) -> Result<Option<Result<String, ()>>, StoreError> {
        let key = |a: &str| LedgerKey { tenant: tenant.into(), action: a.into(), operation_id: operation_id.into() };
        if self.store.get(&key(action)).await?.is_some() {
            return Ok(Some(Ok(action.to_string())));
        }
        let actions = lock(&self.actions).clone();
        let mut found = Vec::new();
        for a in actions.iter().filter(|a| *a != action) {
            if self.store.get(&key(a)).await?.is_some() {
                found.push(a.clone());
            }
        }
        Ok(match found.len() {
            0 => None,
            1 => found.pop().map(Ok),
            _ => Some(Err(())),
        })
    }
}
