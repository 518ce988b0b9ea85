//! The engine's own wiring, natively: each test fails if one wire is cut — the budget never spent, "maybe
//! delivered" never set, jitter drawn as 0, a retry's cost refunded on success, the breaker not shedding
//! during an outage or holding calls back long after it.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::retry::{
    AttemptOutcome as O, BudgetConfig, Decision, Engine, FinalStatus, Policy, Reason, ResultType, Revision, Safety,
    Sent, SplitMix64,
};

/// The default policy with a budget that refills only on success (the gRPC bucket alone).
fn no_time_refill(p: Policy) -> Policy {
    Policy { budget: Some(BudgetConfig { refill_per_second_milli: 0, ..BudgetConfig::default() }), ..p }
}

const OK: O = O::Result { is_error: false, result_type: ResultType::Complete };
const NOT_SENT: O = O::Network { sent: Sent::No };
const BAD_REQUEST: O =
    O::Http { status: 400, retry_after_ms: None, had_session: false, jsonrpc_code: None, mismatch_confirmed: false };
const REV: Revision = Revision::LATEST;
/// A 503 without `Retry-After`: a transport failure that may have been delivered.
const DOWN: O =
    O::Http { status: 503, retry_after_ms: None, had_session: false, jsonrpc_code: None, mismatch_confirmed: false };

/// One attempt: admit, then record `outcome` at `now`.
fn attempt(
    e: &mut Engine,
    call: &mut mcp_retry_policy::retry::CallState,
    outcome: &O,
    safety: Safety,
    now: u64,
    random: u64,
) -> Decision {
    match e.admit(call, now) {
        Ok(_) => e.record(call, outcome, safety, REV, now, random).decision,
        Err(stop) => stop,
    }
}

#[test]
fn a_retry_spends_budget_tokens_and_a_timeout_spends_more() {
    let mut e = Engine::new(no_time_refill(Policy::default()));
    let full = e.budget_milli().unwrap();
    let mut call = e.begin(0);
    assert!(attempt(&mut e, &mut call, &NOT_SENT, Safety::ReadOnly, 0, 7).is_retry());
    assert_eq!(e.budget_milli().unwrap(), full - 1_000, "a retry after a transient failure costs one token");
    assert!(attempt(&mut e, &mut call, &O::Timeout, Safety::ReadOnly, 10, 7).is_retry());
    assert_eq!(e.budget_milli().unwrap(), full - 3_000, "a retry after a timeout costs two");
}

#[test]
fn a_retry_that_succeeds_is_not_refunded() {
    // gRPC-style throttling: the cost of a retry stays spent; a success returns 0.1 token.
    let mut e = Engine::new(no_time_refill(Policy { breaker: None, ..Policy::default() }));
    let full = e.budget_milli().unwrap();
    let mut call = e.begin(0);
    assert!(attempt(&mut e, &mut call, &NOT_SENT, Safety::Unsafe, 0, 7).is_retry());
    let end = attempt(&mut e, &mut call, &OK, Safety::Unsafe, 10, 7);
    assert_eq!(end, Decision::stop(FinalStatus::Succeeded, Reason::Succeeded));
    assert_eq!(e.budget_milli().unwrap(), full - 900, "the retry is not refunded; the success returns 0.1");
    // Fail-then-succeed forever: the budget runs dry after capacity / (cost - refill) calls and binds.
    let mut retried = 0;
    for i in 0..100u64 {
        let mut call = e.begin(i * 1_000);
        if attempt(&mut e, &mut call, &NOT_SENT, Safety::Unsafe, i * 1_000, 7).is_retry() {
            retried += 1;
            attempt(&mut e, &mut call, &OK, Safety::Unsafe, i * 1_000 + 1, 7);
        }
    }
    assert!(retried < 15, "the budget must bind under a brownout: {retried} of 100 calls retried");
}

#[test]
fn an_empty_budget_with_no_time_refill_stops_the_retry() {
    // No breaker, so that only the budget can stop these retries.
    let mut e = Engine::new(no_time_refill(Policy { breaker: None, ..Policy::default() }));
    let mut stops = 0;
    for i in 0..30u64 {
        let mut call = e.begin(i * 100_000);
        let d = attempt(&mut e, &mut call, &NOT_SENT, Safety::ReadOnly, i * 100_000, 7);
        if d == Decision::stop(FinalStatus::Failed, Reason::BudgetExhausted) {
            stops += 1;
        }
    }
    assert_eq!(stops, 20, "10 tokens, 1 per retry: calls 11..30 stop on the budget");
}

#[test]
fn once_maybe_delivered_every_later_stop_is_unknown() {
    // Attempt 1 times out (maybe delivered); attempt 2 is refused before dispatch. The call is unknown, not
    // failed: attempt 1 may have acted.
    let mut e = Engine::new(Policy::default());
    let mut call = e.begin(0);
    assert!(attempt(&mut e, &mut call, &O::Timeout, Safety::Idempotent, 0, 7).is_retry());
    assert!(call.maybe_delivered);
    let d = attempt(&mut e, &mut call, &BAD_REQUEST, Safety::Idempotent, 10, 7);
    assert_eq!(d, Decision::stop(FinalStatus::Unknown, Reason::Permanent));
    // Same for running out of attempts on not-sent failures after a maybe-delivered one.
    let mut call = e.begin(0);
    attempt(&mut e, &mut call, &O::Timeout, Safety::Keyed, 0, 7);
    attempt(&mut e, &mut call, &NOT_SENT, Safety::Keyed, 10, 7);
    let d = attempt(&mut e, &mut call, &NOT_SENT, Safety::Keyed, 20, 7);
    assert_eq!(d, Decision::stop(FinalStatus::Unknown, Reason::MaxAttempts));
    // And an unsafe tool is not re-sent after a not-sent failure that follows a maybe-delivered one.
    let mut call = e.begin(0);
    let first = attempt(&mut e, &mut call, &O::Network { sent: Sent::Maybe }, Safety::Unsafe, 0, 7);
    assert_eq!(first, Decision::stop(FinalStatus::Unknown, Reason::UnsafeAfterUnknown));
}

#[test]
fn jitter_uses_the_random_bits() {
    // Full jitter: delay = random share of base·2^n. Random bits of all ones give (nearly) the whole step;
    // different bits give different delays. An engine that drew jitter as 0 would return 0 every time.
    let mut delays = Vec::new();
    for random in [u64::MAX, u64::MAX / 2, u64::MAX / 3, 12_345_678_901_234_567] {
        let mut e = Engine::new(Policy::default());
        let mut call = e.begin(0);
        match attempt(&mut e, &mut call, &NOT_SENT, Safety::ReadOnly, 0, random) {
            Decision::Retry { delay_ms, .. } => delays.push(delay_ms),
            d => panic!("expected a retry, got {d:?}"),
        }
    }
    assert!(delays[0] >= 190 && delays[0] <= 200, "all-ones random bits give the whole first step: {delays:?}");
    let mut distinct = delays.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), delays.len(), "different random bits, different delays: {delays:?}");
}

/// One client of the storm simulator, natively: a call a second from `phase`, every attempt during
/// `[0, outage_end)` a 503, the server fine after. Returns, per call, (start, attempts sent, first attempt
/// admitted and answered).
fn storm_client(policy: Policy, phase: u64, outage_end: u64, until: u64, seed: u64) -> Vec<(u64, u32, bool)> {
    let mut e = Engine::new(policy);
    let mut rng = SplitMix64::new(seed);
    let down = DOWN;
    let mut calls = Vec::new();
    let mut start = phase;
    while start < until {
        let mut call = e.begin(start);
        let (mut t, mut sent, mut first_ok) = (start, 0, false);
        // A held call (`Err(Retry)`, or a `BreakerHold`/`BudgetHold` retry) is not followed here: this model runs the
        // calls one after another, and a held one would run ahead of those after it (the engine would see time go
        // back). The event-driven simulator (www/sim.js) follows held calls; so does `held_calls_ride_out_a_blip`.
        while e.admit(&mut call, t).is_ok() {
            sent += 1;
            let answered = t >= outage_end;
            first_ok |= sent == 1 && answered;
            let step =
                e.record(&mut call, if answered { &OK } else { &down }, Safety::ReadOnly, REV, t + 20, rng.next_u64());
            match step.decision {
                Decision::Retry { reason: Reason::BreakerHold | Reason::BudgetHold, .. } => break, // held: see above
                Decision::Retry { delay_ms, .. } => t += 20 + delay_ms,
                Decision::Stop { .. } => break,
            }
        }
        calls.push((start, sent, first_ok));
        start += 1_000;
    }
    calls
}

#[test]
fn the_breaker_sheds_a_full_outage() {
    // 60 s down at a call a second: 60 calls. Unchecked, each sends 3 attempts (180); the budget alone
    // allows 60 + 10. The breaker opens after 5 failing calls in a row (a call's own retries count once): the
    // first four send 3 attempts each, the fifth one, then one probe per open time (2 s, so one call in
    // three): about 12 + 1 + 55 / 3 ≈ 31 attempts. A breaker that never sheds fails this.
    for phase in [0, 137, 500, 999] {
        let calls = storm_client(Policy::default(), phase, 60_000, 60_000, phase + 1);
        let sent: u32 = calls.iter().map(|c| c.1).sum();
        assert!(sent <= 33, "phase {phase}: {sent} attempts for 60 calls into a full outage");
        let shed = calls.iter().filter(|c| c.1 == 0).count();
        assert!(shed >= 36, "phase {phase}: only {shed} of 60 calls shed");
    }
}

#[test]
fn one_calls_own_retries_never_open_the_breaker_but_five_failing_calls_do() {
    // A read-only call allowed ten attempts during a short outage: its own jittered retries (waits of a few
    // ms) used to open the breaker after five, so the attempts the caller allowed were never made.
    let policy = Policy { max_attempts: 10, ..Policy::default() };
    let mut e = Engine::new(policy);
    let down = DOWN;
    let mut call = e.begin(0);
    let (mut t, mut sent) = (0, 0);
    let last = loop {
        match e.admit(&mut call, t) {
            Ok(_) => sent += 1,
            Err(stop) => break stop,
        }
        match e.record(&mut call, &down, Safety::ReadOnly, REV, t, 0).decision {
            Decision::Retry { delay_ms, .. } => t += 1 + delay_ms,
            stop @ Decision::Stop { .. } => break stop,
        }
    };
    assert_eq!(sent, 10, "every attempt the caller allowed was made");
    assert_eq!(last, Decision::stop(FinalStatus::Unknown, Reason::MaxAttempts));
    assert_eq!(e.breaker_state().map(|s| s.as_str()), Some("closed"));
    // Across calls the breaker still protects the server: four more calls that fail (five in a row) open it.
    for n in 1..5u64 {
        let mut c = e.begin(t + n);
        e.admit(&mut c, t + n).unwrap();
        e.record(&mut c, &down, Safety::ReadOnly, REV, t + n, 0);
    }
    assert_eq!(e.breaker_state().map(|s| s.as_str()), Some("open"));
    let mut next = e.begin(t + 10);
    assert_eq!(e.admit(&mut next, t + 10), Err(Decision::stop(FinalStatus::Failed, Reason::BreakerOpen)));
}

#[test]
fn calls_go_through_within_two_seconds_of_the_recovery() {
    // After the outage, the first probe goes at most open_ms (2 s) after the last failure, and closes the
    // breaker: from then on every call goes through at its first attempt. At a call a second, the third
    // call after the recovery is through whatever the phase and the outage length. A breaker open for
    // cockatiel's 10 s fails this.
    for outage_end in [57_000, 60_000, 60_400, 61_000, 63_700] {
        for phase in [0, 137, 500, 999] {
            let calls = storm_client(Policy::default(), phase, outage_end, outage_end + 20_000, phase + 7);
            let late: Vec<_> = calls.iter().filter(|c| c.0 >= outage_end + 2_000).collect();
            assert!(!late.is_empty());
            for c in late {
                assert!(c.2, "end {outage_end}, phase {phase}: the call at {} was not through at once", c.0);
            }
        }
    }
}

#[test]
fn a_probe_in_flight_is_not_doubled_until_its_attempt_timeout_and_a_cancelled_one_frees_its_slot() {
    // With a 2 s open time, a hanging server would otherwise get a new probe every 2 s, each hanging for
    // the whole attempt timeout (60 s): thirty at once. The engine waits for the probe's attempt timeout.
    let mut e = Engine::new(Policy::default());
    let down = DOWN;
    for t in 0..5 {
        let mut call = e.begin(t);
        e.admit(&mut call, t).unwrap();
        e.record(&mut call, &down, Safety::ReadOnly, REV, t, 7);
    }
    let mut probe = e.begin(2_004);
    assert!(e.admit(&mut probe, 2_004).is_ok(), "the probe, 2 s after opening");
    let mut other = e.begin(5_000);
    assert_eq!(e.admit(&mut other, 5_000), Err(Decision::stop(FinalStatus::Failed, Reason::BreakerOpen)));
    assert!(e.admit(&mut other, 62_003).is_err(), "still within the probe's 60 s attempt timeout");
    // The probe's caller gives up: the slot is free at once.
    e.record(&mut probe, &O::Aborted { sent: Sent::Maybe }, Safety::ReadOnly, REV, 6_000, 7);
    let mut next = e.begin(6_001);
    assert!(e.admit(&mut next, 6_001).is_ok(), "a cancelled probe frees its slot");
}

/// A fleet of `n` engines calling one server, each a call a second from its own phase; every attempt during
/// `[0, outage_end)` a 503. `shared`: each engine adopts a shared store's snapshot every `sync_ms` and reports its
/// breaker's transitions to it at once, and each failure its breaker counted (and the first answer after
/// failures), adopting the fleet's failures in a row; a due probe asks the store's lease first (one prober at a
/// time). The store here is the Durable Object's rule in miniature (the newest report wins; the failures in a row
/// counted together while closed; one lease holder). Returns the
/// attempts sent during the outage, those of them sent after the first breaker opened (the probes, and what the
/// others sent before they knew), and, per engine, when its first call after the outage got through.
fn fleet(n: u64, shared: bool, outage_end: u64, until: u64, sync_ms: u64) -> (u32, u32, Vec<u64>) {
    use mcp_retry_policy::retry::{BreakerSnapshot, SharedState};
    let down = DOWN;
    let mut engines: Vec<Engine> = (0..n).map(|_| Engine::new(Policy::default())).collect();
    let mut synced = vec![0u64; n as usize];
    let mut store = BreakerSnapshot { state: SharedState::Closed, since_ms: 0 };
    let mut lease: Option<(u64, u64)> = None; // (holder, until)
    let mut fleet_failures = 0u32;
    let mut mine = vec![0u32; n as usize]; // each engine's failures in a row, as last reported
    let mut rng = SplitMix64::new(3);
    let mut sent_in_outage = 0;
    let mut after_open = 0;
    let mut first_open = u64::MAX;
    let mut through = vec![u64::MAX; n as usize];
    // Calls in time order: (start, engine).
    let mut starts: Vec<(u64, u64)> =
        (0..n).flat_map(|i| (0..until / 1_000).map(move |k| (k * 1_000 + i * 997 % 1_000, i))).collect();
    starts.sort_unstable();
    for (start, i) in starts {
        let e = &mut engines[i as usize];
        let report = |e: &Engine, store: &mut BreakerSnapshot, lease: &mut Option<(u64, u64)>, failures: &mut u32| {
            let s = e.breaker_snapshot().unwrap();
            if s.since_ms > store.since_ms {
                *store = s;
                *failures = 0;
                if s.state != SharedState::HalfOpen {
                    *lease = None;
                }
            }
        };
        if shared && start >= synced[i as usize] + sync_ms {
            e.adopt(Some(store), None);
            e.adopt_failures(fleet_failures);
            mine[i as usize] = e.breaker_failures();
            synced[i as usize] = start;
        }
        let mut call = e.begin(start);
        let mut t = start;
        loop {
            if shared && e.breaker_probe_due(t) {
                match lease {
                    Some((holder, lease_until)) if holder != i && t < lease_until => {
                        e.adopt(Some(BreakerSnapshot { state: SharedState::HalfOpen, since_ms: store.since_ms }), None);
                    }
                    _ => {
                        lease = Some((i, t + 60_000));
                        store = BreakerSnapshot { state: SharedState::HalfOpen, since_ms: t };
                    }
                }
            }
            // A held call (`Err(Retry)`) is not followed here: this model runs the calls one after another, and a
            // held one would run ahead of those after it. The event-driven simulator (www/sim.js) follows them.
            if e.admit(&mut call, t).is_err() {
                break;
            }
            let answered = t >= outage_end;
            if !answered {
                sent_in_outage += 1;
                after_open += u32::from(t >= first_open);
            }
            let step =
                e.record(&mut call, if answered { &OK } else { &down }, Safety::ReadOnly, REV, t + 20, rng.next_u64());
            if step.breaker.is_some_and(|b| b.to.as_str() == "open") {
                first_open = first_open.min(t + 20);
            }
            if shared {
                let own = e.breaker_failures();
                let before = std::mem::replace(&mut mine[i as usize], own);
                if step.breaker.is_some() {
                    report(e, &mut store, &mut lease, &mut fleet_failures);
                } else if own > before && store.state == SharedState::Closed {
                    fleet_failures += 1; // a failure the breaker counted
                } else if own == 0 && (before > 0 || fleet_failures > 0) {
                    fleet_failures = 0; // the first answer after failures
                }
                e.adopt(Some(store), None);
                e.adopt_failures(fleet_failures);
                mine[i as usize] = e.breaker_failures();
            }
            if answered {
                through[i as usize] = through[i as usize].min(start);
            }
            match step.decision {
                Decision::Retry { reason: Reason::BreakerHold | Reason::BudgetHold, .. } => break, // held: see above
                Decision::Retry { delay_ms, .. } => t += 20 + delay_ms,
                Decision::Stop { .. } => break,
            }
        }
    }
    (sent_in_outage, after_open, through)
}

#[test]
fn a_shared_breaker_sends_fewer_attempts_into_an_outage_and_recovers_as_fast() {
    // Ten engines (ten isolates), a 60 s outage (measured: 310 attempts into it alone, 54 shared; 189 and 23 after
    // the first open). Alone, each learns of the outage by its own five failing calls
    // and probes every 2 s; shared, they learn it from the first to open (within a sync) and probe one at a time.
    // Shared, the fleet's failures in a row count together: it trips on the fifth failing call of all ten, not on
    // each engine's own fifth; after that the probes are what sharing saves.
    let (alone, alone_probes, alone_through) = fleet(10, false, 60_000, 80_000, 1_000);
    let (shared, shared_probes, shared_through) = fleet(10, true, 60_000, 80_000, 1_000);
    assert!(shared * 5 < alone, "shared {shared} attempts into the outage, independent {alone}");
    assert!(
        shared_probes * 3 < alone_probes,
        "after the first open: shared {shared_probes}, independent {alone_probes}"
    );
    // Recovery: every engine's first call after the outage is through within 3 s either way.
    for through in [&alone_through, &shared_through] {
        for (i, t) in through.iter().enumerate() {
            assert!(*t < 63_000, "engine {i} first through at {t}");
        }
    }
    let last = |v: &[u64]| *v.iter().max().unwrap();
    assert!(last(&shared_through) <= last(&alone_through) + 1_000, "{shared_through:?} vs {alone_through:?}");
}

#[test]
fn adopt_is_ignored_without_a_breaker_or_budget_and_only_lowers_the_budget() {
    use mcp_retry_policy::retry::{BreakerSnapshot, SharedState};
    let open = BreakerSnapshot { state: SharedState::Open, since_ms: 10 };
    let mut off = Engine::new(Policy { breaker: None, budget: None, ..Policy::default() });
    assert_eq!(off.adopt(Some(open), Some(0)), None);
    assert_eq!((off.breaker_snapshot(), off.budget_milli(), off.breaker_probe_due(99)), (None, None, false));
    let mut e = Engine::new(Policy::default());
    assert_eq!(e.adopt(None, Some(3_000)), None);
    assert_eq!(e.budget_milli(), Some(3_000));
    assert_eq!(e.adopt(Some(open), Some(8_000)).map(|t| t.to.as_str()), Some("open"));
    assert_eq!(e.budget_milli(), Some(3_000));
    assert_eq!(e.breaker_snapshot(), Some(open));
    let mut call = e.begin(11);
    assert_eq!(e.admit(&mut call, 11), Err(Decision::stop(FinalStatus::Failed, Reason::BreakerOpen)));
    assert!(e.breaker_probe_due(2_010));
}

// ── Polling a running operation (a task, a write in progress): looks, not retries ──────────────────────

#[test]
fn a_poll_waits_at_least_the_servers_hint_and_at_most_a_tenth_more() {
    let e = Engine::new(Policy::default());
    let mut call = e.begin(0);
    for random in [0, 1, 7, 99, u64::MAX] {
        match e.poll(&mut call, Some(1_000), 0, random) {
            Decision::Retry { delay_ms, recover: None, reason: Reason::StillRunning } => {
                assert!((1_000..=1_100).contains(&delay_ms), "{delay_ms}");
            }
            other => panic!("{other:?}"),
        }
    }
    let spread: std::collections::BTreeSet<u64> = (0..50u64)
        .map(|r| match e.poll(&mut call, Some(1_000), 0, SplitMix64::new(r).next_u64()) {
            Decision::Retry { delay_ms, .. } => delay_ms,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(spread.len() > 10, "clients polling one server drift apart: {spread:?}");
    // A hint of 0 is raised to the floor: no busy loop against the server.
    assert!(matches!(e.poll(&mut call, Some(0), 0, 0), Decision::Retry { delay_ms: 50, .. }));
}

#[test]
fn without_a_hint_polls_back_off_from_the_base_delay_to_the_cap() {
    let policy = Policy::default();
    let e = Engine::new(policy);
    let mut call = e.begin(0);
    let delays: Vec<u64> = (0..12)
        .map(|_| match e.poll(&mut call, None, 0, 0) {
            Decision::Retry { delay_ms, .. } => delay_ms,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(delays[0], policy.base_delay_ms.max(50));
    assert!(delays.windows(2).all(|w| w[1] >= w[0]), "{delays:?}");
    assert_eq!(*delays.last().unwrap(), policy.max_delay_ms, "{delays:?}");
    assert_eq!(call.polls, 12);
}

#[test]
fn a_poll_is_not_a_retry_no_budget_no_attempt_and_it_ends_pending_at_the_deadline() {
    let mut e = Engine::new(Policy::default());
    let full = e.budget_milli().unwrap();
    let mut call = e.begin(0);
    assert!(e.admit(&mut call, 0).is_ok());
    let created = O::Result { is_error: false, result_type: ResultType::Task };
    let step = e.record(&mut call, &created, Safety::Unsafe, REV, 0, 0);
    assert_eq!(step.decision, Decision::Stop { status: FinalStatus::Pending, reason: Reason::TaskPending });
    let mut now = 0;
    let mut looks = 0;
    let stop = loop {
        match e.poll(&mut call, Some(5_000), now, 3) {
            Decision::Retry { delay_ms, .. } => {
                now += delay_ms;
                looks += 1;
            }
            stop => break stop,
        }
    };
    assert_eq!(
        stop,
        Decision::Stop { status: FinalStatus::Pending, reason: Reason::Deadline },
        "the operation is still running"
    );
    assert!(now < call.deadline_ms && looks >= 30, "{looks} looks until {now}");
    assert_eq!(e.budget_milli().unwrap(), full, "looks spend no budget");
    assert_eq!(call.attempts, 1, "looks are not attempts");
    assert_eq!(call.polls, looks);
}

#[test]
fn after_a_created_task_no_later_outcome_reads_as_not_delivered() {
    // A created task is the server's proof that it took the call in: a later outcome that says "not sent" (a
    // follow-up request that never left, an abort before anything went out) is about that request, not the
    // call. The call is never `failed` from then on, and an unsafe tool is never sent again.
    for safety in [Safety::Unsafe, Safety::ReadOnly] {
        let mut e = Engine::new(Policy::default());
        let mut call = e.begin(0);
        assert!(e.admit(&mut call, 0).is_ok());
        let created = O::Result { is_error: false, result_type: ResultType::Task };
        e.record(&mut call, &created, safety, REV, 0, 0);
        assert!(call.maybe_delivered, "{safety:?}: a created task means the call was delivered");
        let later = e.record(&mut call, &O::Aborted { sent: Sent::No }, safety, REV, 10, 0);
        assert!(!later.decision.is_retry() || safety != Safety::Unsafe, "{safety:?}: {:?}", later.decision);
        if let Decision::Stop { status, .. } = later.decision {
            assert_eq!(status, FinalStatus::Unknown, "{safety:?}: never failed after a created task");
        }
        let d = attempt(&mut e, &mut call, &NOT_SENT, safety, 20, 0);
        if let Decision::Stop { status, .. } = d {
            assert_ne!(status, FinalStatus::Failed, "{safety:?}");
        }
    }
}

#[test]
fn polls_end_after_max_polls() {
    use mcp_retry_policy::retry::MAX_POLLS;
    let policy = Policy::new(&mcp_retry_policy::retry::PolicyOptions {
        total_timeout_ms: Some(86_400_000),
        attempt_timeout_ms: Some(60_000),
        ..Default::default()
    })
    .unwrap();
    let e = Engine::new(policy);
    let mut call = e.begin(0);
    for _ in 0..MAX_POLLS {
        assert!(e.poll(&mut call, Some(50), 0, 0).is_retry());
    }
    assert_eq!(
        e.poll(&mut call, Some(50), 0, 0),
        Decision::Stop { status: FinalStatus::Pending, reason: Reason::PollsExhausted }
    );
}

const INPUT: O = O::Result { is_error: false, result_type: ResultType::InputRequired };

/// 2026-07-28 input rounds (basic/utilities/mrtr): a first round answered `input_required` and walked away
/// from is `failed` (the server was told nothing it may act on); once the server answered a round that carried
/// the caller's input by asking again, it has taken that input in, and every stop after that is `unknown`.
#[test]
fn input_rounds_a_stop_after_the_server_took_input_in_is_unknown() {
    let mut e = Engine::new(Policy::default());
    let rev = Revision::V2026_07_28;
    // Round 1 asks; the caller's handler fails: failed, nothing sent.
    let mut call = e.begin(0);
    assert!(e.admit(&mut call, 0).is_ok());
    let d = e.record(&mut call, &INPUT, Safety::Unsafe, rev, 0, 1).decision;
    assert_eq!(d.reason(), Reason::ContinueInput);
    assert_eq!(e.input_unanswered(&mut call, false), Decision::stop(FinalStatus::Failed, Reason::InputNotGiven));
    // No handler for what the server asked: input_required_unhandled, by the same rule.
    let mut call = e.begin(0);
    assert!(e.admit(&mut call, 0).is_ok());
    e.record(&mut call, &INPUT, Safety::Unsafe, rev, 0, 1);
    assert_eq!(
        e.input_unanswered(&mut call, true),
        Decision::stop(FinalStatus::Failed, Reason::InputRequiredUnhandled)
    );
    // Round 2 (carrying input) is answered by another input request; round 3 is provably not sent, and the
    // attempts run out: unknown, not failed — the server took round 2's input in.
    let mut e = Engine::new(Policy { max_attempts: 1, ..Policy::default() });
    let mut call = e.begin(0);
    assert!(e.admit(&mut call, 0).is_ok());
    e.record(&mut call, &INPUT, Safety::Unsafe, rev, 0, 1);
    assert!(!call.input_processed, "a first round that asks is not input taken in");
    assert!(e.admit(&mut call, 1).is_ok());
    e.record(&mut call, &INPUT, Safety::Unsafe, rev, 1, 1);
    assert!(call.input_processed);
    assert!(e.admit(&mut call, 2).is_ok());
    let d = e.record(&mut call, &NOT_SENT, Safety::Unsafe, rev, 2, 1).decision;
    assert_eq!(d, Decision::stop(FinalStatus::Unknown, Reason::MaxAttempts));
    assert_eq!(e.input_unanswered(&mut call, false), Decision::stop(FinalStatus::Unknown, Reason::InputNotGiven));
    // The deadline passing while the caller gathers input, after the server took input in: unknown too.
    let deadline = call.deadline_ms;
    assert_eq!(e.admit(&mut call, deadline).unwrap_err(), Decision::stop(FinalStatus::Unknown, Reason::Deadline));
}

/// A continuation round whose answer is lost (a broken stream, a reset after sending) on an unsafe tool is
/// not sent again — not as a new call, not as the same round; a keyed one is (same operation id).
#[test]
fn input_rounds_a_lost_continuation_is_unknown_for_an_unsafe_tool_and_resent_for_a_keyed_one() {
    let rev = Revision::V2026_07_28;
    let broken = O::StreamBroken { event_id_seen: false, retry_ms: None };
    for (safety, retried) in [(Safety::Unsafe, false), (Safety::Keyed, true)] {
        let mut e = Engine::new(Policy::default());
        let mut call = e.begin(0);
        assert!(e.admit(&mut call, 0).is_ok());
        e.record(&mut call, &INPUT, safety, rev, 0, 1);
        assert!(e.admit(&mut call, 1).is_ok());
        let d = e.record(&mut call, &broken, safety, rev, 1, 1).decision;
        assert_eq!(d.is_retry(), retried, "{safety:?}: {d:?}");
        if !retried {
            assert_eq!(d, Decision::stop(FinalStatus::Unknown, Reason::UnsafeAfterUnknown));
        }
    }
}

#[test]
fn an_attempt_the_invocation_cannot_pay_for_is_never_started() {
    // Subrequests counted (a Worker's limit): an attempt costs its request and the cancellation the SDK sends
    // if it times out (ATTEMPT_REQUESTS), plus the recovery it follows.
    let lost_session =
        O::Http { status: 404, retry_after_ms: None, had_session: true, jsonrpc_code: None, mismatch_confirmed: false };
    let mut e = Engine::new(Policy::default());
    let mut call = e.begin(0);
    for room in [0, 1] {
        assert_eq!(
            e.admit_within(&mut call, 0, Some(room)),
            Err(Decision::stop(FinalStatus::Failed, Reason::SubrequestBudget)),
            "room {room}: not enough for the request and its cancellation: failed, nothing was sent"
        );
    }
    assert_eq!(call.attempts, 0, "the refused attempt is not counted");
    assert!(e.admit_within(&mut call, 0, Some(2)).is_ok());
    let d = e.record(&mut call, &lost_session, Safety::Unsafe, Revision::V2025_11_25, 1, 7).decision;
    assert!(d.is_retry(), "a lost session: re-initialize, then re-send");
    assert_eq!(
        e.admit_within(&mut call, 2, Some(4)),
        Err(Decision::stop(FinalStatus::Failed, Reason::SubrequestBudget)),
        "re-initializing is three requests before the re-send and its cancellation: four left is not enough"
    );
    assert!(e.admit_within(&mut call, 2, Some(5)).is_ok(), "five is");
    // Once an attempt may have been delivered, running out of room is unknown.
    let mut call = e.begin(0);
    assert!(attempt(&mut e, &mut call, &O::Timeout, Safety::ReadOnly, 0, 7).is_retry());
    assert_eq!(
        e.admit_within(&mut call, 10, Some(1)),
        Err(Decision::stop(FinalStatus::Unknown, Reason::SubrequestBudget))
    );
    // Uncounted (`None`) is `admit`.
    let mut call = e.begin(0);
    assert!(e.admit_within(&mut call, 0, None).is_ok());
    // A look at a running operation is a request too: without room the call ends pending, the operation left
    // running; with room it is the ordinary poll.
    let mut call = e.begin(0);
    assert_eq!(
        e.poll_within(&mut call, Some(50), 0, 0, Some(0)),
        Decision::stop(FinalStatus::Pending, Reason::SubrequestBudget)
    );
    assert_eq!(call.polls, 0);
    assert!(e.poll_within(&mut call, Some(50), 0, 0, Some(1)).is_retry());
}

/// Calls in flight together, event by event: `(start, safety)` each; an attempt is answered 100 ms after it was
/// sent, and every attempt sent during `[0, down_until)` is reset then instead (delivery unknown). Returns each
/// call's final decision, and when each attempt was sent.
fn in_flight(policy: Policy, calls: &[(u64, Safety)], down_until: u64) -> (Vec<Decision>, Vec<u64>) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut e = Engine::new(policy);
    let mut rng = SplitMix64::new(11);
    let mut states: Vec<_> = calls.iter().map(|&(start, _)| e.begin(start)).collect();
    let mut ends = vec![None; calls.len()];
    let mut sends = Vec::new();
    // (time, answered when sent (u64::MAX: an admission), call)
    let mut q: BinaryHeap<Reverse<(u64, u64, usize)>> =
        calls.iter().enumerate().map(|(i, c)| Reverse((c.0, u64::MAX, i))).collect();
    let reset = O::Network { sent: Sent::Maybe };
    while let Some(Reverse((t, sent_at, i))) = q.pop() {
        if sent_at != u64::MAX {
            let outcome = if sent_at < down_until { &reset } else { &OK };
            match e.record(&mut states[i], outcome, calls[i].1, REV, t, rng.next_u64()).decision {
                Decision::Retry { delay_ms, .. } => q.push(Reverse((t + delay_ms, u64::MAX, i))),
                stop => ends[i] = Some(stop),
            }
            continue;
        }
        match e.admit_with(&mut states[i], t, rng.next_u64(), None) {
            Ok(_) => {
                sends.push(t);
                q.push(Reverse((t + 100, t, i)));
            }
            Err(Decision::Retry { delay_ms, .. }) => q.push(Reverse((t + delay_ms, u64::MAX, i))), // held: ask again
            Err(stop) => ends[i] = Some(stop),
        }
    }
    (ends.into_iter().map(|d| d.unwrap()).collect(), sends)
}

#[test]
fn held_calls_ride_out_a_blip() {
    // A 1.2 s blip with 30 calls in flight (20 keyed writes, 10 reads), `maxAttempts: 6`, `totalTimeoutMs: 20 000`:
    // the breaker opens, the budget runs dry, and every call that may be re-sent waits for the probe and the
    // budget instead of ending `unknown (breaker_open)`. An unsafe write in flight still stops at once, and a call
    // that starts while the breaker is open fails fast (nothing was sent).
    let policy = Policy { max_attempts: 6, total_timeout_ms: 20_000, ..Policy::default() };
    let mut calls: Vec<(u64, Safety)> =
        (0..30).map(|i| (i * 3, if i % 3 == 0 { Safety::ReadOnly } else { Safety::Keyed })).collect();
    calls.push((5, Safety::Unsafe));
    calls.push((400, Safety::ReadOnly)); // starts once the breaker is open (the answers came at 100–190 ms)
    let (ends, sends) = in_flight(policy, &calls, 1_200);
    let ok = Decision::stop(FinalStatus::Succeeded, Reason::Succeeded);
    for (i, d) in ends.iter().take(30).enumerate() {
        assert_eq!(*d, ok, "call {i} ({:?})", calls[i].1);
    }
    assert_eq!(ends[30], Decision::stop(FinalStatus::Unknown, Reason::UnsafeAfterUnknown), "the unsafe write");
    assert_eq!(ends[31], Decision::stop(FinalStatus::Failed, Reason::BreakerOpen), "nothing sent: fails fast");
    // Released with jitter and at a bounded rate, never all at once: after the blip, no 100 ms holds more than a
    // third of the held calls' sends.
    let after: Vec<u64> = sends.iter().copied().filter(|&t| t >= 1_200).collect();
    assert_eq!(after.len(), 30, "one answered send each after the blip");
    let most = after.iter().map(|&a| after.iter().filter(|&&b| b >= a && b < a + 100).count()).max().unwrap();
    assert!(most <= 10, "{most} of 30 sends in one 100 ms: {after:?}");
}

#[test]
fn a_held_call_ends_at_its_deadline_with_what_held_it() {
    // The server never comes back: a held read ends at its deadline, `unknown` (its attempts may have landed),
    // named by the breaker; its probes count as its attempts, so it never waits past `maxAttempts` failed probes.
    let policy = Policy { total_timeout_ms: 60_000, ..Policy::default() };
    let calls: Vec<(u64, Safety)> = (0..6).map(|i| (i, Safety::ReadOnly)).collect();
    let (ends, sends) = in_flight(policy, &calls, u64::MAX);
    for d in &ends {
        match *d {
            Decision::Stop { status: FinalStatus::Unknown, reason: Reason::BreakerOpen | Reason::MaxAttempts } => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(ends.contains(&Decision::stop(FinalStatus::Unknown, Reason::BreakerOpen)), "{ends:?}");
    assert!(sends.len() <= 6 * 3, "{} attempts: held calls never send past their attempts", sends.len());
}

#[test]
fn a_429_never_moves_the_breaker() {
    // One tenant's bursts rate-limited: a throttled answer is this caller told to slow down, not a failing server.
    let mut e = Engine::new(Policy::default());
    let throttled = O::Http {
        status: 429,
        retry_after_ms: None,
        had_session: false,
        jsonrpc_code: None,
        mismatch_confirmed: false,
    };
    for i in 0..50u64 {
        let mut call = e.begin(i);
        let _ = attempt(&mut e, &mut call, &throttled, Safety::ReadOnly, i, 7);
    }
    assert_eq!(e.breaker_state().map(|s| s.as_str()), Some("closed"));
    let mut quiet = e.begin(100);
    assert!(e.admit(&mut quiet, 100).is_ok(), "another caller's call goes through");
}

#[test]
fn the_budget_refills_with_time() {
    // No success at all (a full outage, no breaker): the gRPC bucket alone would stay empty forever; the refill
    // with time gives a quiet client a retry a second.
    let mut e = Engine::new(Policy { breaker: None, ..Policy::default() });
    for i in 0..10u64 {
        let mut call = e.begin(i);
        assert!(attempt(&mut e, &mut call, &NOT_SENT, Safety::ReadOnly, i, 7).is_retry());
    }
    assert!(e.budget_milli().unwrap() < 1_000, "ten retries spent it");
    let mut call = e.begin(20);
    match attempt(&mut e, &mut call, &NOT_SENT, Safety::ReadOnly, 20, 7) {
        Decision::Retry { reason: Reason::BudgetHold, delay_ms, .. } => assert!(delay_ms >= 900, "{delay_ms}"),
        d => panic!("{d:?}"),
    }
    assert_eq!(call.owed_milli, 1_000, "held: the cost is paid when it goes");
    assert!(e.admit(&mut call, 300).is_err(), "too early: held again");
    assert!(e.admit(&mut call, 1_100).is_ok(), "a token later it goes");
    assert_eq!(call.owed_milli, 0);
}

#[test]
fn behind_a_retrying_proxy_a_replicas_refusal_proves_nothing() {
    // A proxy that re-sends a POST to another replica (Envoy/Istio's retry policy, nginx `non_idempotent`): the
    // lost session, the 404/400 and the 429/503 with Retry-After may be the second replica's answer after the
    // first one ran the request. Still recovered from (a read re-initializes and is re-sent); an unsafe tool is not
    // sent again. Without the setting, the same answers re-send it (they prove "not processed").
    let answers = [
        (
            O::Http {
                status: 404,
                retry_after_ms: None,
                had_session: true,
                jsonrpc_code: None,
                mismatch_confirmed: false,
            },
            Revision::V2025_11_25,
        ),
        (
            O::Http {
                status: 400,
                retry_after_ms: None,
                had_session: true,
                jsonrpc_code: Some(-32000),
                mismatch_confirmed: false,
            },
            Revision::V2025_11_25,
        ),
        (
            O::Http {
                status: 503,
                retry_after_ms: Some(1_000),
                had_session: false,
                jsonrpc_code: None,
                mismatch_confirmed: false,
            },
            REV,
        ),
        (
            O::Http {
                status: 429,
                retry_after_ms: Some(1_000),
                had_session: false,
                jsonrpc_code: None,
                mismatch_confirmed: false,
            },
            REV,
        ),
        (BAD_REQUEST, Revision::V2025_11_25),
    ];
    for (answer, rev) in answers {
        for proxied in [false, true] {
            let mut e = Engine::new(Policy::default());
            e.set_behind_retrying_proxy(proxied);
            assert_eq!(e.behind_retrying_proxy(), proxied);
            let mut call = e.begin(0);
            assert!(e.admit(&mut call, 0).is_ok());
            let step = e.record(&mut call, &answer, Safety::Unsafe, rev, 1, 7);
            if BAD_REQUEST == answer {
                // A permanent refusal: failed without the setting (not processed), unknown with it.
                let status = if proxied { FinalStatus::Unknown } else { FinalStatus::Failed };
                assert_eq!(step.decision, Decision::stop(status, Reason::Permanent), "{answer:?} proxied {proxied}");
                continue;
            }
            if proxied {
                assert_eq!(step.classification.delivery, mcp_retry_policy::retry::Delivery::Unknown, "{answer:?}");
                assert_eq!(
                    step.decision,
                    Decision::stop(FinalStatus::Unknown, Reason::UnsafeAfterUnknown),
                    "{answer:?}"
                );
            } else {
                assert!(step.decision.is_retry(), "{answer:?}: not processed, an unsafe tool is re-sent");
            }
            // A read is recovered and re-sent either way.
            let mut read = e.begin(0);
            assert!(e.admit(&mut read, 0).is_ok());
            assert!(e.record(&mut read, &answer, Safety::ReadOnly, rev, 1, 7).decision.is_retry(), "{answer:?}");
        }
    }
    // What every copy of the request meets alike stands: a failed connect from this client.
    let mut e = Engine::new(Policy::default());
    e.set_behind_retrying_proxy(true);
    let mut call = e.begin(0);
    assert!(attempt(&mut e, &mut call, &NOT_SENT, Safety::Unsafe, 0, 7).is_retry());
}

#[test]
fn a_withheld_probe_frees_its_slot_and_moves_nothing() {
    // A held call's broken stream cannot be resumed on the session in use now (re-initialized since): the client
    // sends nothing. At a half-open breaker that attempt was the probe; it must not re-open the breaker (nothing
    // was heard from the server), and the next call may probe. Before, it was a `network`/`not sent` failure: the
    // breaker re-opened and the held keyed calls of a blip ended unknown (breaker_open).
    let down = DOWN;
    let mut e = Engine::new(Policy::default());
    for i in 0..5u64 {
        let mut call = e.begin(i);
        let _ = attempt(&mut e, &mut call, &down, Safety::ReadOnly, i, 7);
    }
    assert_eq!(e.breaker_state().map(|s| s.as_str()), Some("open"));
    let later = 10_000;
    let mut probe = e.begin(later);
    assert!(e.admit(&mut probe, later).is_ok(), "half-open: one probe");
    let mut other = e.begin(later);
    assert!(e.admit(&mut other, later).is_err(), "one probe at a time");
    let step = e.record(&mut probe, &O::Withheld, Safety::Unsafe, REV, later + 1, 7);
    assert_eq!(step.breaker, None, "the breaker did not move");
    assert_ne!(e.breaker_state().map(|s| s.as_str()), Some("open"));
    assert!(e.admit(&mut other, later + 2).is_ok(), "the slot is free: another call probes");
    let _ = e.record(&mut other, &OK, Safety::ReadOnly, REV, later + 3, 7);
    assert_eq!(e.breaker_state().map(|s| s.as_str()), Some("closed"), "the real probe closed it");
    // Nothing was sent: a read goes again; after a lost answer an unsafe tool stays unknown.
    let mut read = e.begin(later);
    assert!(e.admit(&mut read, later + 4).is_ok());
    assert!(e.record(&mut read, &O::Withheld, Safety::ReadOnly, REV, later + 5, 7).decision.is_retry());
    let mut write = e.begin(later);
    assert!(e.admit(&mut write, later + 4).is_ok());
    let _ = e.record(&mut write, &O::Timeout, Safety::Unsafe, REV, later + 5, 7);
    let d = e.record(&mut write, &O::Withheld, Safety::Unsafe, REV, later + 6, 7).decision;
    assert_eq!(d, Decision::stop(FinalStatus::Unknown, Reason::UnsafeAfterUnknown));
}
