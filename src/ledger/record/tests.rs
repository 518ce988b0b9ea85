//! The record transitions' own tests: each row of the table, the lease, release, finish.

use super::*;

const FP: &str = "aa";
const CFG: LedgerConfig = LedgerConfig { ttl_ms: 10_000, lease_ms: 1_000 };

#[test]
fn codes_index_the_name_tables() {
    let admissions = [
        Admission::Execute,
        Admission::InProgress { retry_after_ms: 1 },
        Admission::Replay,
        Admission::Conflict,
        Admission::Reconcile,
    ];
    for a in admissions {
        assert_eq!(Admission::NAMES.get(a.code() as usize), Some(&a.as_str()));
    }
    let lookups = [
        Lookup::NotFound,
        Lookup::NotDone,
        Lookup::InProgress { retry_after_ms: 1 },
        Lookup::Resolved(RecordState::Succeeded),
        Lookup::Resolved(RecordState::Failed),
        Lookup::Reconcile,
    ];
    for l in lookups {
        assert_eq!(Lookup::NAMES.get(l.code() as usize), Some(&l.as_str()));
    }
    let refusals = [
        ReleaseRefusal::Resolved(RecordState::Failed),
        ReleaseRefusal::LeaseLive { retry_after_ms: 1 },
        ReleaseRefusal::AlreadyReleased,
    ];
    for r in refusals {
        assert_eq!(ReleaseRefusal::NAMES.get(r.index() as usize), Some(&r.code()));
    }
    let r = rec(RecordState::Succeeded);
    assert_eq!(admit_matching(Some(&r), true, 200), admit(Some(&r), FP, 200));
    assert_eq!(admit_matching(Some(&r), false, 200), Admission::Conflict);
}

fn rec(state: RecordState) -> Record {
    Record { state, ..claim(None, FP, 100, &CFG) }
}

#[test]
fn the_ledger_table() {
    use Admission::*;
    use RecordState::*;
    assert_eq!(admit(None, FP, 0), Execute);
    assert_eq!(admit(Some(&rec(Pending)), FP, 600), InProgress { retry_after_ms: 500 });
    let long = Record { lease_until_ms: 60_000, ..rec(Pending) };
    assert_eq!(admit(Some(&long), FP, 600), InProgress { retry_after_ms: IN_PROGRESS_POLL_MS });
    assert_eq!(admit(Some(&rec(Pending)), "bb", 600), Conflict);
    assert_eq!(admit(Some(&rec(Pending)), FP, 1_100), Reconcile);
    assert_eq!(admit(Some(&rec(Pending)), "bb", 1_100), Conflict);
    assert_eq!(admit(Some(&rec(Succeeded)), FP, 2_000), Replay);
    assert_eq!(admit(Some(&rec(Failed)), FP, 2_000), Replay);
    assert_eq!(admit(Some(&rec(Succeeded)), "bb", 2_000), Conflict);
    assert_eq!(admit(Some(&rec(Failed)), "bb", 2_000), Conflict);
    assert_eq!(admit(Some(&rec(Unknown)), FP, 2_000), Reconcile);
    assert_eq!(admit(Some(&rec(Unknown)), "bb", 2_000), Conflict);
    // A resolved record past its TTL starts fresh, whatever the input.
    for s in [Succeeded, Failed] {
        assert_eq!(admit(Some(&rec(s)), FP, 10_100), Execute);
        assert_eq!(admit(Some(&rec(s)), "bb", 10_100), Execute);
    }
    // A released record: the next write executes, whatever the input.
    assert_eq!(admit(Some(&rec(Released)), FP, 200), Execute);
    assert_eq!(admit(Some(&rec(Released)), "bb", 200), Execute);
}

#[test]
fn an_unresolved_record_never_expires_into_execute() {
    use Admission::*;
    use RecordState::*;
    // Past the TTL, long past it, and at the end of time: reconcile (or conflict), never execute.
    for now in [10_100, 10_101, 1_000_000, u64::MAX] {
        assert_eq!(admit(Some(&rec(Pending)), FP, now), Reconcile, "pending at {now}");
        assert_eq!(admit(Some(&rec(Unknown)), FP, now), Reconcile, "unknown at {now}");
        assert_eq!(admit(Some(&rec(Pending)), "bb", now), Conflict, "pending, other input, at {now}");
        assert_eq!(admit(Some(&rec(Unknown)), "bb", now), Conflict, "unknown, other input, at {now}");
    }
    // A live lease on a record whose TTL passed (settings changed between processes): still in progress.
    let odd = Record { lease_until_ms: 50_000, expires_ms: 20_000, ..rec(Pending) };
    assert_eq!(admit(Some(&odd), FP, 30_000), InProgress { retry_after_ms: IN_PROGRESS_POLL_MS });
    assert!(Pending.is_unresolved() && Unknown.is_unresolved());
    assert!(!Succeeded.is_unresolved() && !Failed.is_unresolved() && !Released.is_unresolved());
}

#[test]
fn a_ttl_shorter_than_the_lease_is_refused() {
    assert_eq!(LedgerConfig::new(999, 1_000), Err(LedgerConfigError::TtlBelowLease { ttl_ms: 999, lease_ms: 1_000 }));
    let e = LedgerConfig::new(1, 2).err();
    assert_eq!(e.map(|e| e.code()), Some("ttl_below_lease"));
    assert!(e.is_some_and(|e| e.to_string().contains("ttlMs (1) must be at least leaseMs (2)")));
    assert_eq!(LedgerConfig::new(1_000, 1_000), Ok(LedgerConfig { ttl_ms: 1_000, lease_ms: 1_000 }));
    assert_eq!(LedgerConfig::new(DEFAULT_TTL_MS, DEFAULT_LEASE_MS), Ok(LedgerConfig::default()));
}

#[test]
fn an_outcome_found_after_the_ttl_is_replayed_for_a_ttl() {
    // Claimed at 100 (expires 10_100), reconciled as succeeded at 50_000: replayed until 60_000.
    let c = claim(None, FP, 100, &CFG);
    let late = finish(&c, RecordState::Succeeded, 50_000, &CFG);
    assert_eq!(late.expires_ms, 60_000);
    assert_eq!(admit(Some(&late), FP, 59_999), Admission::Replay);
    assert_eq!(admit(Some(&late), FP, 60_000), Admission::Execute);
}

#[test]
fn lookup_reads_without_claiming() {
    use RecordState::*;
    assert_eq!(lookup(None, 5), Lookup::NotFound);
    assert_eq!(lookup(Some(&rec(Pending)), 600), Lookup::InProgress { retry_after_ms: 500 });
    assert_eq!(lookup(Some(&rec(Pending)), 1_100), Lookup::Reconcile, "the lease ran out");
    assert_eq!(lookup(Some(&rec(Unknown)), 600), Lookup::Reconcile);
    assert_eq!(lookup(Some(&rec(Succeeded)), 600), Lookup::Resolved(Succeeded));
    assert_eq!(lookup(Some(&rec(Failed)), u64::MAX), Lookup::Resolved(Failed), "past its TTL: still true");
    assert_eq!(lookup(Some(&rec(Released)), 600), Lookup::NotDone);
    assert_eq!(Lookup::Resolved(Failed).as_str(), "failed");
    let all = [
        Lookup::NotFound,
        Lookup::NotDone,
        Lookup::InProgress { retry_after_ms: 1 },
        Lookup::Resolved(Succeeded),
        Lookup::Resolved(Failed),
        Lookup::Reconcile,
    ];
    assert_eq!(all.map(|l| l.as_str()), Lookup::NAMES, "the names the JS tables are rendered from");
}

#[test]
fn release_frees_only_an_unresolved_record() {
    use RecordState::*;
    let unknown = rec(Unknown);
    let r = release(&unknown, 500, &CFG);
    assert_eq!(r.as_ref().map(|r| (r.state, r.version, r.lease_until_ms)), Ok((Released, 2, 500)));
    let released = r.unwrap_or(unknown);
    assert_eq!(admit(Some(&released), FP, 600), Admission::Execute);
    assert_eq!(claim(Some(&released), FP, 600, &CFG).version, 3, "the version keeps counting");
    // A pending claim only once its lease ran out (100 + 1_000).
    assert_eq!(release(&rec(Pending), 600, &CFG), Err(ReleaseRefusal::LeaseLive { retry_after_ms: 500 }));
    assert_eq!(release(&rec(Pending), 1_100, &CFG).map(|r| r.state), Ok(Released));
    assert_eq!(release(&rec(Pending), u64::MAX, &CFG).map(|r| r.state), Ok(Released));
    for s in [Succeeded, Failed] {
        assert_eq!(release(&rec(s), 20_000, &CFG), Err(ReleaseRefusal::Resolved(s)));
    }
    assert_eq!(release(&rec(Released), 600, &CFG), Err(ReleaseRefusal::AlreadyReleased));
    assert_eq!(
        [
            ReleaseRefusal::Resolved(Failed),
            ReleaseRefusal::LeaseLive { retry_after_ms: 1 },
            ReleaseRefusal::AlreadyReleased
        ]
        .map(|r| r.code()),
        ["resolved", "lease_live", "already_released"]
    );
    assert_eq!("released".parse(), Ok(Released));
}

#[test]
fn a_renewed_claim_is_never_reconciled_while_its_run_goes_on() {
    // Issue 18's case: lease 200 ms, a handler that runs 700 ms, renewed every third of the lease.
    let cfg = LedgerConfig { ttl_ms: 10_000, lease_ms: 200 };
    assert_eq!(keep_alive_ms(&cfg), 66);
    let every = keep_alive_ms(&cfg);
    let mut held = claim(None, FP, 0, &cfg);
    let fence = held.version;
    let mut next_renewal = every;
    for now in 0..=700_u64 {
        if now == next_renewal {
            let renewed = renew(&held, now, &cfg);
            assert_eq!(renewed.as_ref().map(|r| r.version), Some(held.version.saturating_add(1)));
            held = renewed.unwrap_or(held);
            next_renewal = next_renewal.saturating_add(every);
        }
        // Every look while the run goes on: in progress (never reconcile, so never the hook).
        assert!(matches!(admit(Some(&held), FP, now), Admission::InProgress { .. }), "admit at {now}");
        assert!(matches!(lookup(Some(&held), now), Lookup::InProgress { .. }), "lookup at {now}");
        assert!(release(&held, now, &cfg).is_err(), "release at {now}");
        // At least two thirds of the lease are left on the owner's clock.
        assert!(held.lease_until_ms.saturating_sub(now) > every.saturating_mul(2), "lease left at {now}");
    }
    let done = finish(&held, RecordState::Succeeded, 700, &cfg);
    assert_eq!(done.state, RecordState::Succeeded);
    // Without renewals the same run's claim is reconciled at 200 ms: what issue 18 measured.
    let unrenewed = claim(None, FP, 0, &cfg);
    assert_eq!(admit(Some(&unrenewed), FP, 200), Admission::Reconcile);
    // A later claim of the key (after release) is fenced above every renewal of this one.
    let released = release(&Record { state: RecordState::Unknown, ..held.clone() }, 800, &cfg);
    let later = claim(released.as_ref().ok(), FP, 900, &cfg);
    assert!(later.version > held.version && held.version > fence);
    // Only a pending record renews; a renewal never shortens the lease.
    assert_eq!(renew(&done, 701, &cfg), None);
    assert_eq!(renew(&rec(RecordState::Unknown), 701, &cfg), None);
    let long = Record { lease_until_ms: 5_000, ..claim(None, FP, 0, &cfg) };
    assert_eq!(renew(&long, 10, &cfg).map(|r| r.lease_until_ms), Some(5_000));
    assert_eq!(keep_alive_ms(&LedgerConfig { ttl_ms: 2, lease_ms: 2 }), 1);
}

#[test]
fn the_owner_gives_up_a_third_of_the_lease_before_it_ends() {
    let cfg = LedgerConfig { ttl_ms: 10_000, lease_ms: 1_500 };
    let held = claim(None, FP, 1_000, &cfg);
    assert_eq!(held.lease_until_ms, 2_500);
    assert_eq!(give_up_at_ms(&held, &cfg), 2_000, "lease end − a third");
    // A renewal moves it with the lease; the owner always has two thirds of the lease before it.
    let renewed = renew(&held, 1_500, &cfg).unwrap_or(held.clone());
    assert_eq!(give_up_at_ms(&renewed, &cfg), 2_500);
    // The smallest lease: a millisecond before its end; never below zero.
    let tiny = LedgerConfig { ttl_ms: 2, lease_ms: 2 };
    assert_eq!(give_up_at_ms(&claim(None, FP, 0, &tiny), &tiny), 1);
    assert_eq!(give_up_at_ms(&Record { lease_until_ms: 0, ..held }, &cfg), 0);
}

#[test]
fn claims_and_finishes() {
    let c = claim(None, FP, 100, &CFG);
    assert_eq!((c.state, c.lease_until_ms, c.expires_ms, c.version), (RecordState::Pending, 1_100, 10_100, 1));
    let f = finish(&c, RecordState::Succeeded, 300, &CFG);
    // The TTL counts from the outcome: 300 + 10_000.
    assert_eq!((f.state, f.lease_until_ms, f.expires_ms, f.version), (RecordState::Succeeded, 300, 10_300, 2));
    let again = claim(Some(&f), FP, 20_000, &CFG);
    assert_eq!(again.version, 3);
    let sat = claim(None, FP, u64::MAX, &CFG);
    assert_eq!(sat.expires_ms, u64::MAX);
}

#[test]
fn operation_ids() {
    for ok in ["0b6f8a4e-2c1d-4f3e-9a7b-1c2d3e4f5a6b", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "op_12345678", "tenant:abc.def-1"]
    {
        assert!(valid_operation_id(ok), "{ok}");
    }
    for bad in [
        "",
        "short",
        "has space in it",
        "slash/es/here",
        "quote\"here1",
        "tab\there123",
        &"x".repeat(129),
        "ümlaut-id-1",
    ] {
        assert!(!valid_operation_id(bad), "{bad}");
    }
}
