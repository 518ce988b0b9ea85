//! The running claim's hold, in parity with the JS `lease.js`: a claim whose renewals were given up on stays this
//! process's while its handler runs (a repeat hears `in_progress`, never the reconcile hook), and the handler's
//! claim is told lost once the local monotonic clock passes the give-up point (the lease's end − a third),
//! whether or not a renewal failed.

use super::*;
use mcp_retry_policy::rmcp::{with_idempotency_claimed, HandlerClaim};

type Timed = Arc<Mutex<Vec<(u64, LedgerEvent)>>>;

/// A ledger on `store` with a 300 ms lease (renewed every 100 ms, given up at 200 ms unrenewed) on `clock`, a
/// reconcile hook that answers `not_done` (it would let a repeat run) and counts its questions, and the events
/// with the monotonic ms they came at.
fn lease_ledger(
    store: Arc<dyn LedgerStore>,
    clock: impl Fn() -> u64 + Send + Sync + 'static,
    since: tokio::time::Instant,
) -> (OperationLedger, Arc<AtomicU32>, Timed) {
    let asked = Arc::new(AtomicU32::new(0));
    let events: Timed = Arc::default();
    let (a, ev) = (asked.clone(), events.clone());
    let ledger = OperationLedger::builder(store)
        .config(LedgerConfig::new(60_000, 300).unwrap())
        .clock(clock)
        .reconcile(move |_req: ReconcileRequest| {
            a.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok::<_, BoxError>(Reconciled::NotDone))
        })
        .on_event(move |e| ev.lock().unwrap().push((ms_since(since), e.clone())))
        .build()
        .unwrap();
    (ledger, asked, events)
}

fn ms_since(since: tokio::time::Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap()
}

fn timed_kinds(events: &Timed) -> Vec<&'static str> {
    events.lock().unwrap().iter().map(|(_, e)| e.kind()).collect()
}

#[tokio::test(start_paused = true)]
async fn a_claim_given_up_on_stays_in_progress_while_its_handler_runs() {
    let ms = std::time::Duration::from_millis;
    let file = temp("given-up");
    let store = Arc::new(SqliteLedgerStore::open(&file).unwrap());
    // Every renewal fails (a real SQLite refusing it, by a trigger: a renewal keeps the claim's created_ms, a
    // claim takes its own): at 200 ms the claim is given up (lease_lost, not_renewed); its lease ends at 300 ms.
    let admin = rusqlite::Connection::open(&file).unwrap();
    admin
        .execute_batch(
            "CREATE TRIGGER sick BEFORE UPDATE ON mcp_operation_ledger
             WHEN NEW.state = 'pending' AND NEW.created_ms = OLD.created_ms
             BEGIN SELECT RAISE(ABORT, 'disk is sick'); END",
        )
        .unwrap();
    let start = tokio::time::Instant::now();
    let (ledger, asked, events) = lease_ledger(store.clone(), move || 1_000_000 + ms_since(start), start);
    let opts = IdempotencyOptions::new("slow");
    let a1 = args(json!({ "operation_id": "op-given-up-1" }));
    let runs = Arc::new(AtomicU32::new(0));
    let run = |text: &'static str| {
        let runs = runs.clone();
        move || async move {
            runs.fetch_add(1, Ordering::SeqCst);
            // The handler is never cancelled: it runs on for a second, past its lease.
            tokio::time::sleep(ms(1_000)).await;
            Ok(ticket(text))
        }
    };
    let first = with_idempotency(&ledger, &opts, Some("t"), &a1, run("done once"));
    let repeat = async {
        // Past the lease's end: the record reads as a stale claim from outside, but its handler still runs here.
        tokio::time::sleep(ms(500)).await;
        let r = with_idempotency(&ledger, &opts, Some("t"), &a1, run("ran twice")).await;
        (r, ledger.status(&key_of("slow", "op-given-up-1")).await.unwrap())
    };
    let (r1, (r2, status)) = tokio::join!(first, repeat);
    assert_eq!(ledger_status(&r2).as_deref(), Some("in_progress"), "{r2:?}");
    assert_eq!(status.0, "in_progress", "{status:?}");
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the hook is never asked while the handler runs here");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "never run twice");
    assert_eq!(text_of(&r1), "done once");
    let lost: Vec<_> = events.lock().unwrap().iter().filter(|(_, e)| e.kind() == "lease_lost").cloned().collect();
    assert_eq!(lost.len(), 1, "{:?}", timed_kinds(&events));
    assert_eq!(lost[0].0, 200, "given up at the give-up point");

    // A claim lost because another run took the key is no longer this process's, its handler running or not:
    // once the other run's lease ran out too, a repeat is asked of the hook (and runs, as it answers not_done).
    let a2 = args(json!({ "operation_id": "op-given-up-2" }));
    let k2 = key_of("slow", "op-given-up-2");
    let first = with_idempotency(&ledger, &opts, Some("t"), &a2, run("the first run"));
    let takeover = async {
        tokio::time::sleep(ms(50)).await;
        let now = store.get(&k2).await.unwrap().unwrap().record;
        // Another process's claim (its own created_ms), whose lease ends at once: that process died.
        let at = ledger.now_ms();
        let theirs = Record { version: 100, created_ms: at, lease_until_ms: at + 10, ..now.clone() };
        assert!(store.replace(&k2, now.version, &theirs, None).await.unwrap());
        // The first run's renewal (at 100 ms) finds the record changed: lost, its handler still running.
        tokio::time::sleep(ms(150)).await;
        with_idempotency(&ledger, &opts, Some("t"), &a2, || async { Ok(ticket("the repeat")) }).await
    };
    let (_, r) = tokio::join!(first, takeover);
    assert_eq!(text_of(&r), "the repeat", "{r:?}");
    assert_eq!(asked.load(Ordering::SeqCst), 1, "the other run's stale claim is reconciled");
}

fn key_of(action: &str, op: &str) -> LedgerKey {
    LedgerKey { tenant: "t".into(), action: action.into(), operation_id: op.into() }
}

/// What the handler saw of its claim: when `until_lost` resolved (monotonic ms) and why.
type Heard = Arc<Mutex<Option<(u64, &'static str)>>>;

#[tokio::test(start_paused = true)]
async fn a_handler_hears_its_claim_lost_at_the_give_up_point_even_when_every_renewal_succeeds() {
    let ms = std::time::Duration::from_millis;
    // The process's wall clock stands still (skewed: stopped, or set back), so every renewal succeeds — the
    // version check holds — but writes the same lease end: read on every other process's clock, the lease ends
    // 300 ms after the claim. The local monotonic clock passes the give-up point at 200 ms.
    let start = tokio::time::Instant::now();
    let store = Arc::new(SqliteLedgerStore::open(temp("skewed")).unwrap());
    let (ledger, _, events) = lease_ledger(store.clone(), || 1_000_000, start);
    let opts = IdempotencyOptions::new("transfer");
    let a = args(json!({ "amount": 5, "operation_id": "op-skewed-01" }));
    let heard: Heard = Arc::default();
    let h = heard.clone();
    let r = with_idempotency_claimed(&ledger, &opts, Some("t"), &a, |claim: HandlerClaim| async move {
        assert_eq!(claim.lost(), None, "held at first");
        tokio::select! {
            reason = claim.until_lost() => {
                *h.lock().unwrap() = Some((ms_since(start), reason));
                assert_eq!(claim.lost(), Some(reason));
                Err(OutcomeUnknown(format!("stopped before committing ({reason})")))
            }
            () = tokio::time::sleep(ms(2_000)) => Ok(ticket("committed")),
        }
    })
    .await;
    assert_eq!(*heard.lock().unwrap(), Some((200, "not_renewed")), "told at the give-up point: {r:?}");
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"));
    let told = timed_kinds(&events);
    assert!(!told.contains(&"store_error"), "no renewal failed: {told:?}");
    assert_eq!(told.iter().filter(|k| **k == "lease_lost").count(), 1, "{told:?}");
}

#[tokio::test]
async fn a_paused_process_learns_its_claim_is_lost_before_it_commits() {
    // The runtime is stalled (a blocking call on its only thread: nothing else runs, no renewal either) past the
    // give-up point; when the handler resumes, its claim says lost before it commits — no renewal had to fail.
    let store = Arc::new(SqliteLedgerStore::open(temp("paused")).unwrap());
    let wall =
        || u64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis());
    let (ledger, _, _) = lease_ledger(store, move || wall().unwrap(), tokio::time::Instant::now());
    let opts = IdempotencyOptions::new("transfer");
    let a = args(json!({ "amount": 5, "operation_id": "op-paused-01" }));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let r = with_idempotency_claimed(&ledger, &opts, Some("t"), &a, |claim: HandlerClaim| async move {
        s.lock().unwrap().push(claim.lost());
        // 350 ms without yielding: past the give-up point (200 ms after the claim) however loaded the machine.
        std::thread::sleep(std::time::Duration::from_millis(350));
        let lost = claim.lost();
        s.lock().unwrap().push(lost);
        match lost {
            Some(reason) => Err(OutcomeUnknown(format!("not committed: the claim was lost ({reason})"))),
            None => Ok(ticket("committed")),
        }
    })
    .await;
    assert_eq!(*seen.lock().unwrap(), [None, Some("not_renewed")], "{r:?}");
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"));
}
