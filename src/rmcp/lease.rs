//! A running handler's claim kept (the Rust twin of the npm package's `lease.js`): [`OperationLedger::hold`]
//! renews it every third of its lease alongside the handler, and [`HandlerClaim`] is what the handler knows of
//! it. The claim stays this process's — a repeat hears `in_progress`, never the reconcile hook — until its
//! handler returns, also after its renewals were given up on (the handler is never cancelled); and the handler
//! hears it lost once the local monotonic clock passes the give-up point (the lease's end − a third), whether or
//! not a renewal failed: a process that was paused, or whose wall clock stopped or went back, learns it before
//! it commits.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::OptionFuture;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

use super::ledger::{lock, LedgerEvent, LedgerKey, OperationLedger};
use crate::ledger::hold::{Hold, HoldAnswer, HoldEvent, HoldStep, HoldTell, Standing};
use crate::ledger::record::Record;

/// A claim this process holds while its handler runs (an entry of the ledger's live claims).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Live {
    /// The hold's fence (the version it claimed with): a hold unlists only its own entry.
    fence: u64,
    /// The record's version while it is this hold's (it moves with each renewal that won).
    pub(super) version: u64,
}

/// The claims this process holds now, by key.
pub(super) type LiveClaims = Mutex<HashMap<LedgerKey, Live>>;

/// A claim's hold — the core's driver ([`Hold`]) — shared by the loop that carries it out and its handler's
/// [`HandlerClaim`]s (which only look: past the give-up point, a look finds it lost). The monotonic clock is
/// the milliseconds since `anchor`; `changed` wakes the handler's waiters after each step.
#[derive(Debug)]
pub(super) struct ClaimStanding {
    hold: Mutex<Hold>,
    anchor: Instant,
    changed: watch::Sender<()>,
}

impl ClaimStanding {
    /// The monotonic clock the hold keeps its points on (ms since the hold began).
    fn mono(&self) -> u64 {
        u64::try_from(self.anchor.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// `ms` on the hold's monotonic clock, as an instant.
    fn instant(&self, ms: u64) -> Instant {
        at(self.anchor, ms)
    }

    /// Why the claim was lost; a claim past its give-up point is lost now (`not_renewed`); and the give-up
    /// point while it is held.
    fn look(&self) -> (Standing, u64) {
        let mut hold = lock(&self.hold);
        let _ = hold.step(HoldEvent::Look, 0, self.mono());
        (hold.standing(), hold.give_up_point_mono())
    }

    fn lost(&self) -> Option<&'static str> {
        match self.look().0 {
            Standing::Lost(reason) => Some(reason.as_str()),
            Standing::Held | Standing::Ended => None,
        }
    }
}

/// What a running handler knows of its claim ([`with_idempotency_claimed`](super::with_idempotency_claimed);
/// the JS `claimOf(extra)`): read-only, without the hold's own controls.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{with_idempotency_claimed, HandlerClaim, IdempotencyOptions, MemoryLedgerStore, OperationLedger, OutcomeUnknown};
/// use rmcp::model::{CallToolResult, ContentBlock};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
/// let answer = with_idempotency_claimed(&ledger, &IdempotencyOptions::new("pay"), Some("alice"), args.as_object().unwrap(), |claim: HandlerClaim| async move {
///     let work = async { Ok(CallToolResult::success(vec![ContentBlock::text("paid")])) };
///     // Stop as soon as another run may take over.
///     tokio::select! {
///         reason = claim.until_lost() => Err(OutcomeUnknown(format!("stopped: the claim was lost ({reason})"))),
///         done = work => done,
///     }
/// })
/// .await;
/// assert_ne!(answer.is_error, Some(true));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct HandlerClaim {
    key: LedgerKey,
    fence: u64,
    standing: Arc<ClaimStanding>,
}

impl HandlerClaim {
    pub(super) fn new(key: LedgerKey, fence: u64, standing: Arc<ClaimStanding>) -> Self {
        HandlerClaim { key, fence, standing }
    }

    /// The key (tenant, action, operation id).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{with_idempotency_claimed, HandlerClaim, IdempotencyOptions, MemoryLedgerStore, OperationLedger};
    /// use rmcp::model::CallToolResult;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// with_idempotency_claimed(&ledger, &IdempotencyOptions::new("pay"), Some("alice"), args.as_object().unwrap(), |claim: HandlerClaim| async move {
    ///     assert_eq!((claim.key().tenant.as_str(), claim.key().operation_id.as_str()), ("alice", "op-0001-abcd"));
    ///     Ok(CallToolResult::success(vec![]))
    /// })
    /// .await;
    /// # Ok(()) }
    /// ```
    pub fn key(&self) -> &LedgerKey {
        &self.key
    }

    /// The fencing token: the version the claim was made with. Every later claim of the key has a higher one,
    /// so a downstream that keeps the highest token it saw can refuse a stale writer.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{with_idempotency_claimed, HandlerClaim, IdempotencyOptions, MemoryLedgerStore, OperationLedger};
    /// use rmcp::model::CallToolResult;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// with_idempotency_claimed(&ledger, &IdempotencyOptions::new("pay"), Some("alice"), args.as_object().unwrap(), |claim: HandlerClaim| async move {
    ///     // e.g. UPDATE accounts SET …, fence = $fence WHERE id = $id AND fence < $fence
    ///     let fence = claim.fence();
    ///     assert!(fence >= 1);
    ///     Ok(CallToolResult::success(vec![]))
    /// })
    /// .await;
    /// # Ok(()) }
    /// ```
    pub fn fence(&self) -> u64 {
        self.fence
    }

    /// Why the claim was lost (`record_changed`, `not_renewed`), or `None` while it holds. Read on the local
    /// monotonic clock: past the give-up point of its last lease (a third of the lease before it ends) the
    /// claim is lost (`not_renewed`), whether or not the hold has run since — ask just before committing.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{with_idempotency_claimed, HandlerClaim, IdempotencyOptions, MemoryLedgerStore, OperationLedger, OutcomeUnknown};
    /// use rmcp::model::CallToolResult;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// with_idempotency_claimed(&ledger, &IdempotencyOptions::new("pay"), Some("alice"), args.as_object().unwrap(), |claim: HandlerClaim| async move {
    ///     // … the slow part of the work …
    ///     if let Some(reason) = claim.lost() {
    ///         // Just before committing: another run may have taken over.
    ///         return Err(OutcomeUnknown(format!("not committed: {reason}")));
    ///     }
    ///     Ok(CallToolResult::success(vec![]))
    /// })
    /// .await;
    /// # Ok(()) }
    /// ```
    pub fn lost(&self) -> Option<&'static str> {
        self.standing.lost()
    }

    /// Resolves when the claim is lost, with the reason (never, if the run ends first): race the handler's
    /// work against it to stop once another run may take over. It resolves at the give-up point at the latest,
    /// a renewal failed or not.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use mcp_retry_policy::rmcp::{with_idempotency_claimed, HandlerClaim, IdempotencyOptions, MemoryLedgerStore, OperationLedger, OutcomeUnknown};
    /// use rmcp::model::CallToolResult;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// # let args = serde_json::json!({ "amount": 5, "operation_id": "op-0001-abcd" });
    /// with_idempotency_claimed(&ledger, &IdempotencyOptions::new("pay"), Some("alice"), args.as_object().unwrap(), |claim: HandlerClaim| async move {
    ///     tokio::select! {
    ///         reason = claim.until_lost() => Err(OutcomeUnknown(format!("stopped: {reason}"))),
    ///         () = tokio::time::sleep(Duration::from_millis(10)) => Ok(CallToolResult::success(vec![])),
    ///     }
    /// })
    /// .await;
    /// # Ok(()) }
    /// ```
    pub async fn until_lost(&self) -> &'static str {
        let mut seen = self.standing.changed.subscribe();
        loop {
            seen.mark_unchanged();
            match self.standing.look() {
                (Standing::Lost(reason), _) => return reason.as_str(),
                (Standing::Ended, _) => return std::future::pending().await,
                (Standing::Held, point) => {
                    tokio::select! {
                        // (The sender lives in `standing`: `changed` never fails.)
                        _ = seen.changed() => {}
                        () = sleep_until(self.standing.instant(point)) => {}
                    }
                }
            }
        }
    }
}

/// `ms` after `from` (a day after, if that overflows: never "already due").
fn at(from: Instant, ms: u64) -> Instant {
    let later = |d| from.checked_add(d);
    later(Duration::from_millis(ms)).or_else(|| later(Duration::from_secs(86_400))).unwrap_or(from)
}

/// Removes a key from the live claims when its hold ends (or is dropped) — only while the entry is its own
/// (its fence): a later hold of the same key (this one lost it) stays listed.
struct LiveGuard<'a> {
    live: &'a LiveClaims,
    key: &'a LedgerKey,
    fence: u64,
}

impl LiveGuard<'_> {
    /// The record is at `version` (a renewal of this hold won).
    fn moved(&self, version: u64) {
        if let Some(live) = lock(self.live).get_mut(self.key).filter(|l| l.fence == self.fence) {
            live.version = version;
        }
    }
}

impl Drop for LiveGuard<'_> {
    fn drop(&mut self) {
        let mut live = lock(self.live);
        if live.get(self.key).is_some_and(|l| l.fence == self.fence) {
            live.remove(self.key);
        }
    }
}

impl OperationLedger {
    /// Runs `work` while keeping `claimed` alive: its lease is renewed every third of it (the core's [`Hold`]
    /// driver, carried out here: each renewal a compare-and-set on the version), so that no other process — a
    /// JS ledger's reconcile hook on the same table included — takes the key over while the handler runs; and
    /// until `work` returns this ledger answers a repeat `in_progress` and never asks its own reconcile hook
    /// about the key (a live claim of this process, while the record is still at its version) — also after the
    /// renewals were given up on. Returns the work's output and the claim to finish with (the last renewal
    /// that won).
    ///
    /// A renewal that finds the version changed stops renewing: the claim was lost ([`LedgerEvent::LeaseLost`],
    /// `record_changed`), and [`OperationLedger::finish`] then refuses to write over the new owner's record. A
    /// renewal the store fails is told (`store_error`, `renew`) and tried again after a quarter of the period.
    /// The claim is given up (`lease_lost`, `not_renewed`) before anyone may reconcile it: when the local
    /// monotonic clock passes the give-up point of its last lease (its end − a third, the lease read from the
    /// hold's start, so a wall clock that stops or goes back never stretches it; at most two thirds of the
    /// lease after a renewal was sent), whether or not a renewal failed or is still in flight; or when a
    /// renewal fails, or hangs, past the give-up point on the ledger's clock. A renewal that answers late on
    /// the ledger's clock and still holds is told as [`LedgerEvent::LeaseLate`]. A renewal runs alongside the
    /// work: the handler is polled all along. (The handler is not cancelled: dropping it mid-write would be
    /// worse.) When the work returns while a renewal is in flight, the hold waits for its answer (until the
    /// give-up point at most; unanswered by then, the record read back tells whether it landed), so the claim
    /// it hands back is the one the store holds.
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
    /// // The claim is renewed while the work runs; finish with the claim `hold` hands back.
    /// let (paid, claim) = ledger.hold(&key, claim, async { "paid" }).await;
    /// ledger.finish(&key, &claim, RecordState::Succeeded, Some(r#"{"content":[]}"#)).await?;
    /// assert_eq!(paid, "paid");
    /// # Ok(()) }
    /// ```
    pub async fn hold<T>(&self, key: &LedgerKey, claimed: Record, work: impl Future<Output = T>) -> (T, Record) {
        self.hold_with(key, claimed, |_| work).await
    }

    /// [`hold`](Self::hold), handing the claim's standing to `work` (a [`HandlerClaim`]'s). One loop carries
    /// out the core's [`Hold`] driver: the handler, the driver's timer and the store write in flight are each
    /// a branch, so the handler is polled all along.
    pub(super) async fn hold_with<T, W, F>(&self, key: &LedgerKey, claimed: Record, work: W) -> (T, Record)
    where
        W: FnOnce(Arc<ClaimStanding>) -> F,
        F: Future<Output = T>,
    {
        let fence = claimed.version;
        let standing = Arc::new(ClaimStanding {
            hold: Mutex::new(Hold::new(&claimed, self.config(), self.now_ms(), 0)),
            anchor: Instant::now(),
            changed: watch::Sender::new(()),
        });
        lock(&self.live).insert(key.clone(), Live { fence, version: fence });
        let guard = LiveGuard { live: &self.live, key, fence };
        let mut work = std::pin::pin!(work(standing.clone()));
        let mut out = None;
        // The renewal in flight and a read back, each its own branch: a renewal that answers while it is read
        // back is heard.
        let mut write: Option<Pin<Box<dyn Future<Output = HoldEvent> + Send + '_>>> = None;
        let mut reading: Option<Pin<Box<dyn Future<Output = HoldEvent> + Send + '_>>> = None;
        loop {
            let timeout = lock(&standing.hold).timeout();
            // In order: a claim past its give-up point is lost before anything else is heard.
            let event = tokio::select! {
                biased;
                () = sleep_until(standing.instant(timeout.unwrap_or(0))), if timeout.is_some() => HoldEvent::Timer,
                done = &mut work, if out.is_none() => {
                    out = Some(done);
                    HoldEvent::Stop
                }
                Some(heard) = OptionFuture::from(write.as_mut()), if write.is_some() => {
                    write = None;
                    heard
                }
                Some(heard) = OptionFuture::from(reading.as_mut()), if reading.is_some() => {
                    reading = None;
                    heard
                }
            };
            let (step, version, tells) = {
                let mut hold = lock(&standing.hold);
                let step = hold.step(event, self.now_ms(), standing.mono());
                let tells = [hold.tell(), hold.tell()];
                (step, hold.claim().0, tells)
            };
            guard.moved(version);
            standing.changed.send_replace(());
            for tell in tells.into_iter().flatten() {
                self.emit(match tell {
                    HoldTell::Lost(reason) => {
                        LedgerEvent::LeaseLost { key: key.clone(), fence, reason: reason.as_str() }
                    }
                    HoldTell::Late { left_ms } => LedgerEvent::LeaseLate { key: key.clone(), fence, left_ms },
                });
            }
            match step {
                HoldStep::Renew(r) => {
                    let (store, next) = (self.store().clone(), r.record(&claimed));
                    write = Some(Box::pin(async move {
                        let answer = store.replace(key, r.expected, &next, None).await;
                        match answer {
                            Ok(true) => HoldEvent::Renewed(HoldAnswer::Won),
                            Ok(false) => HoldEvent::Renewed(HoldAnswer::Changed),
                            Err(e) => {
                                self.emit(LedgerEvent::StoreError {
                                    during: "renew",
                                    key: Some(key.clone()),
                                    error: e.to_string(),
                                });
                                HoldEvent::Renewed(HoldAnswer::Failed)
                            }
                        }
                    }));
                }
                HoldStep::ReadBack(r) => {
                    // Unanswered by the give-up point: the renewal may have landed. The record read back
                    // tells — exactly the renewal this claim sent (another run's claim has its own creation
                    // time and lease) or not; a read that fails tells nothing (finish over the last answer).
                    let (store, sent) = (self.store().clone(), r.record(&claimed));
                    reading = Some(Box::pin(async move {
                        let back = store.get(key).await;
                        HoldEvent::ReadBack(matches!(back, Ok(Some(s)) if s.record == sent))
                    }));
                }
                HoldStep::Done => {
                    if let Some(done) = out {
                        let current = lock(&standing.hold).record(&claimed);
                        drop(guard);
                        return (done, current);
                    }
                }
                // The rmcp face feeds no fenced commit (its transactions claim inside the store's own).
                HoldStep::Wait | HoldStep::Commit(_) | HoldStep::Refused => {}
            }
        }
    }
}
