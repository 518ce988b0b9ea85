//! A running handler's claim kept (the Rust twin of the npm package's `lease.js`): [`OperationLedger::hold`]
//! renews it every third of its lease alongside the handler, and [`HandlerClaim`] is what the handler knows of
//! it. The claim stays this process's — a repeat hears `in_progress`, never the reconcile hook — until its
//! handler returns, also after its renewals were given up on (the handler is never cancelled); and the handler
//! hears it lost once the local monotonic clock passes the give-up point (the lease's end − a third), whether or
//! not a renewal failed: a process that was paused, or whose wall clock stopped or went back, learns it before
//! it commits.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::OptionFuture;
use tokio::sync::watch;
use tokio::time::{sleep, sleep_until, Instant};

use super::ledger::{lock, LedgerEvent, LedgerKey, OperationLedger, StoreError};
use crate::ledger::record::{keep_alive_ms, renew, Record};

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

/// `not_renewed`: the claim was not renewed in time.
const NOT_RENEWED: &str = "not_renewed";

/// Where a claim stands, shared by its hold and its handler's [`HandlerClaim`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Standing {
    /// Held until this point of the local monotonic clock (the give-up point of its last lease).
    Until(Instant),
    /// Lost, and why (`record_changed`, `not_renewed`).
    Lost(&'static str),
    /// The run ended with the claim kept.
    Ended,
}

/// The claim's standing: written by its hold, read (and, once its give-up point has passed, marked lost) by
/// the handler's claim — one lock, so that a handler that was told lost is never told held again.
#[derive(Debug)]
pub(super) struct ClaimStanding(watch::Sender<Standing>);

impl ClaimStanding {
    fn new(until: Instant) -> Arc<Self> {
        Arc::new(ClaimStanding(watch::Sender::new(Standing::Until(until))))
    }

    /// Why the claim was lost; a claim past its give-up point is lost now (`not_renewed`).
    fn lost(&self) -> Option<&'static str> {
        let mut lost = None;
        self.0.send_if_modified(|s| match *s {
            Standing::Lost(reason) => {
                lost = Some(reason);
                false
            }
            Standing::Until(at) if Instant::now() >= at => {
                *s = Standing::Lost(NOT_RENEWED);
                lost = Some(NOT_RENEWED);
                true
            }
            Standing::Until(_) | Standing::Ended => false,
        });
        lost
    }

    /// Moves the give-up point to `until` (a renewal won); `false` if the claim is lost already — its give-up
    /// point passed first.
    fn extend(&self, until: Instant) -> bool {
        let mut kept = false;
        // No wake-up for a point that moved later: a waiter wakes at the old point and reads the new one.
        self.0.send_if_modified(|s| {
            if matches!(*s, Standing::Until(at) if Instant::now() < at) {
                *s = Standing::Until(until);
                kept = true;
            }
            false
        });
        kept
    }

    fn lose(&self, reason: &'static str) {
        self.0.send_if_modified(|s| {
            let held = matches!(*s, Standing::Until(_));
            if held {
                *s = Standing::Lost(reason);
            }
            held
        });
    }

    fn end(&self) {
        self.0.send_if_modified(|s| {
            let held = matches!(*s, Standing::Until(_));
            if held {
                *s = Standing::Ended;
            }
            held
        });
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
        let mut seen = self.standing.0.subscribe();
        loop {
            let now = *seen.borrow_and_update();
            match now {
                Standing::Lost(reason) => return reason,
                Standing::Ended => return std::future::pending().await,
                Standing::Until(at) => {
                    tokio::select! {
                        // (The hold's sender lives in `standing`: `changed` never fails.)
                        _ = seen.changed() => {}
                        () = sleep_until(at) => {}
                    }
                }
            }
            if let Some(reason) = self.standing.lost() {
                return reason;
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
    /// Runs `work` while keeping `claimed` alive: its lease is renewed every third of it (the core's
    /// [`keep_alive_ms`] and [`renew`], each a compare-and-set on the version), so that no other process — a
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
    /// worse.)
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

    /// [`hold`](Self::hold), handing the claim's standing to `work` (a [`HandlerClaim`]'s).
    pub(super) async fn hold_with<T, W, F>(&self, key: &LedgerKey, claimed: Record, work: W) -> (T, Record)
    where
        W: FnOnce(Arc<ClaimStanding>) -> F,
        F: Future<Output = T>,
    {
        let every = keep_alive_ms(self.config());
        let lease_ms = self.config().lease_ms;
        let fence = claimed.version;
        // The lease on the local monotonic clock, from here (the claim was just made): its end read against the
        // ledger's clock once, now; and never past two thirds of the lease after the renewal that wrote it.
        let (anchor, anchor_ms) = (Instant::now(), self.now_ms());
        let give_up_point = |sent: Instant, r: &Record| {
            let by_lease = r.lease_until_ms.saturating_sub(anchor_ms).saturating_sub(every);
            at(anchor, by_lease).min(at(sent, lease_ms.saturating_sub(every)))
        };
        let mut point = give_up_point(anchor, &claimed);
        let standing = ClaimStanding::new(point);
        lock(&self.live).insert(key.clone(), Live { fence, version: fence });
        let guard = LiveGuard { live: &self.live, key, fence };
        let mut current = claimed;
        let mut kept = true;
        let mut work = std::pin::pin!(work(standing.clone()));
        let mut tick = std::pin::pin!(sleep(Duration::from_millis(every)));
        let mut give_up = std::pin::pin!(sleep_until(point));
        let mut renewal = None;
        let lose = |reason: &'static str, kept: &mut bool| {
            *kept = false;
            standing.lose(reason);
            self.emit(LedgerEvent::LeaseLost { key: key.clone(), fence, reason });
        };
        let out = loop {
            // The handler is polled all along, a renewal in flight or not: each is its own branch. In order: a
            // claim past its give-up point is lost before anything else is heard.
            tokio::select! {
                biased;
                () = &mut give_up, if kept => lose(NOT_RENEWED, &mut kept),
                out = &mut work => break out,
                Some((sent, next, answer)) = OptionFuture::from(renewal.as_mut()), if renewal.is_some() => {
                    renewal = None;
                    let (next, previous, answer): (Record, Record, Result<bool, StoreError>) = (next, current.clone(), answer);
                    if matches!(answer, Ok(true)) {
                        // Given up on or not, a renewal that won stands: the record is at its version now.
                        guard.moved(next.version);
                        current = next;
                    }
                    if !kept {
                        continue; // given up while it was in flight: the claim stays lost
                    }
                    // The ledger's clock read after the renewal answered: a store that took long counts. Late:
                    // past two thirds of the lease (the process stalled, or the store was slow). Still renewed
                    // if nobody took the claim — the version check proves that — but operators hear the lease
                    // is too short.
                    let now = self.now_ms();
                    let late = now >= previous.lease_until_ms.saturating_sub(every);
                    match answer {
                        Ok(true) => {
                            point = give_up_point(sent, &current);
                            give_up.as_mut().reset(point);
                            if !standing.extend(point) {
                                lose(NOT_RENEWED, &mut kept); // the handler saw it lost first
                                continue;
                            }
                            if late {
                                let left_ms = previous.lease_until_ms.saturating_sub(now);
                                self.emit(LedgerEvent::LeaseLate { key: key.clone(), fence, left_ms });
                            }
                            tick.as_mut().reset(at(Instant::now(), every));
                        }
                        Ok(false) => lose("record_changed", &mut kept),
                        Err(e) => {
                            self.emit(LedgerEvent::StoreError { during: "renew", key: Some(key.clone()), error: e.to_string() });
                            give_up.as_mut().reset(point);
                            if late {
                                // Only a third of the lease left and not renewed: give up before anyone may
                                // reconcile it.
                                lose(NOT_RENEWED, &mut kept);
                            } else {
                                tick.as_mut().reset(at(Instant::now(), (every / 4).max(1)));
                            }
                        }
                    }
                }
                () = &mut tick, if kept && renewal.is_none() => {
                    let now = self.now_ms();
                    let Some(next) = renew(&current, now, self.config()) else {
                        lose(NOT_RENEWED, &mut kept); // not a pending claim: nothing to renew
                        continue;
                    };
                    // While it is in flight, the claim is also given up at the give-up point on the ledger's
                    // clock (or, already past it, at the lease's end), whether or not the store has answered.
                    let sent = Instant::now();
                    let until = current.lease_until_ms.saturating_sub(every);
                    let hung = if now >= until { current.lease_until_ms } else { until };
                    give_up.as_mut().reset(point.min(at(sent, hung.saturating_sub(now))));
                    let (store, version) = (self.store(), current.version);
                    renewal = Some(Box::pin(async move {
                        let answer = store.replace(key, version, &next, None).await;
                        (sent, next, answer)
                    }));
                }
            }
        };
        standing.end();
        drop(guard);
        (out, current)
    }
}
