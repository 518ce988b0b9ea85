//! Properties of the core, over arbitrary inputs (proptest): the delay bounds, the deadline, the gate,
//! the budget, the breaker's transitions, its shedding and its short open time, and determinism.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::retry::backoff::{delay, with_floor};
use mcp_retry_policy::retry::policy::{BreakerOptions, BudgetOptions, Section};
use mcp_retry_policy::retry::{
    classify, decide, AttemptOutcome, BreakerConfig, BreakerState, CallState, Decision, DecisionInput, Delivery,
    Engine, FinalStatus, Jitter, LedgerStatus, Policy, PolicyErrorKind, PolicyOptions, Recover, ResultType, Revision,
    Safety, Sent, SplitMix64, Verdict,
};
use proptest::prelude::*;

fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![Just(Jitter::Full), Just(Jitter::Equal), Just(Jitter::Decorrelated), Just(Jitter::None)]
}

fn revision() -> impl Strategy<Value = Revision> {
    prop_oneof![Just(Revision::V2025_06_18), Just(Revision::V2025_11_25), Just(Revision::V2026_07_28)]
}

fn safety() -> impl Strategy<Value = Safety> {
    prop_oneof![Just(Safety::ReadOnly), Just(Safety::Idempotent), Just(Safety::Keyed), Just(Safety::Unsafe)]
}

fn sent() -> impl Strategy<Value = Sent> {
    prop_oneof![Just(Sent::No), Just(Sent::Maybe)]
}

fn ms() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![Just(None), (0u64..120_000).prop_map(Some), any::<u64>().prop_map(Some)]
}

fn outcome() -> impl Strategy<Value = AttemptOutcome> {
    let codes = prop_oneof![-32700i64..=-32600, -32100i64..=-31990, Just(408i64), Just(32600i64), any::<i64>(),];
    let statuses = prop_oneof![
        prop::sample::select(vec![200u16, 202, 400, 401, 403, 404, 405, 408, 409, 413, 429, 500, 502, 503, 504]),
        100u16..1000
    ];
    prop_oneof![
        (
            any::<bool>(),
            prop_oneof![Just(ResultType::Complete), Just(ResultType::InputRequired), Just(ResultType::Task)]
        )
            .prop_map(|(is_error, result_type)| AttemptOutcome::Result { is_error, result_type }),
        (codes, any::<bool>())
            .prop_map(|(code, mismatch_confirmed)| AttemptOutcome::JsonRpcError { code, mismatch_confirmed }),
        (statuses, ms(), any::<bool>(), proptest::option::of(-33_000i64..33_000), any::<bool>()).prop_map(
            |(status, retry_after_ms, had_session, jsonrpc_code, mismatch_confirmed)| AttemptOutcome::Http {
                status,
                retry_after_ms,
                had_session,
                jsonrpc_code,
                mismatch_confirmed,
            },
        ),
        sent().prop_map(|sent| AttemptOutcome::Network { sent }),
        Just(AttemptOutcome::Timeout),
        (any::<bool>(), ms())
            .prop_map(|(event_id_seen, retry_ms)| AttemptOutcome::StreamBroken { event_id_seen, retry_ms }),
        sent().prop_map(|sent| AttemptOutcome::Aborted { sent }),
        (
            prop_oneof![
                Just(LedgerStatus::InProgress),
                Just(LedgerStatus::Unknown),
                Just(LedgerStatus::Conflict),
                Just(LedgerStatus::Rejected)
            ],
            ms()
        )
            .prop_map(|(status, retry_after_ms)| AttemptOutcome::Ledger { status, retry_after_ms }),
        sent().prop_map(|sent| AttemptOutcome::ProcessExited { sent }),
        Just(AttemptOutcome::ProcessUnresponsive),
        Just(AttemptOutcome::Withheld),
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    (
        1u32..8,
        0u64..5_000,
        0u64..60_000,
        jitter(),
        1u64..400_000,
        0u64..100_000,
        prop_oneof![
            Just(Section::Off),
            Just(Section::Default),
            (0u64..5_000).prop_map(|c| Section::On(BudgetOptions { capacity_milli: Some(c), ..Default::default() }))
        ],
        prop_oneof![
            Just(Section::Off),
            Just(Section::Default),
            (1u32..4).prop_map(|n| Section::On(BreakerOptions {
                consecutive_failures: Some(n),
                open_ms: Some(1000),
                ..Default::default()
            }))
        ],
    )
        .prop_map(|(attempts, base, extra, jitter, total, max_ra, budget, breaker)| {
            Policy::new(&PolicyOptions {
                max_attempts: Some(attempts),
                base_delay_ms: Some(base),
                max_delay_ms: Some(base + extra),
                jitter: Some(jitter),
                total_timeout_ms: Some(total),
                max_retry_after_ms: Some(max_ra),
                budget,
                breaker,
                ..Default::default()
            })
            .unwrap()
        })
}

fn call_state() -> impl Strategy<Value = CallState> {
    (0u64..1_000_000, 1u64..500_000, 1u32..10, 0u32..70, any::<bool>(), 0u64..100_000, any::<u8>()).prop_map(
        |(started, span, attempts, retries, maybe, prev, used)| CallState {
            started_ms: started,
            deadline_ms: started + span,
            attempts,
            retries,
            maybe_delivered: maybe,
            previous_delay_ms: prev,
            used_recover: used,
            ..CallState::default()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// 0 ≤ delay ≤ max(cap, clamped retry-after), for every input, with saturating arithmetic.
    #[test]
    fn delay_is_bounded(base in any::<u64>(), cap in any::<u64>(), j in jitter(), retry in any::<u32>(),
                        prev in any::<u64>(), random in any::<u64>(), ra in ms(), max_ra in any::<u64>()) {
        let base = base.min(cap);
        let d = with_floor(delay(base, cap, j, retry, prev, random), ra, max_ra);
        let clamped = ra.map_or(0, |ra| ra.min(max_ra));
        prop_assert!(d <= cap.max(clamped), "d={d} cap={cap} ra={clamped}");
        if ra.is_some() {
            prop_assert!(d >= clamped);
        }
    }

    /// The decision never waits past the deadline, never re-sends an unsafe tool after a possible delivery,
    /// and stops as `unknown` whenever a delivery may have happened and the tool did not answer.
    #[test]
    fn decide_respects_the_gate_and_the_deadline(p in policy(), call in call_state(), o in outcome(), rev in revision(),
                                                  s in safety(), offset in 0u64..600_000, random in any::<u64>(),
                                                  breaker_open in prop::option::of(0u64..700_000), tokens in prop::option::of(0u64..20_000)) {
        let c = classify(&o, rev);
        let now = call.started_ms + offset;
        let d = decide(&DecisionInput { policy: &p, call: &call, classification: &c, safety: s, now_ms: now,
                                        random, breaker_open_until_ms: breaker_open, budget_milli: tokens });
        let ambiguous = c.delivery == Delivery::Unknown || call.maybe_delivered;
        match d {
            Decision::Retry { delay_ms, recover, .. } => {
                prop_assert!(now + delay_ms < call.deadline_ms, "retry past the deadline: {d:?}");
                if s == Safety::Unsafe && ambiguous {
                    prop_assert!(matches!(recover, Some(Recover::ResumeStream | Recover::ContinueInput)),
                                 "an unsafe tool re-sent after a possible delivery: {d:?} {c:?}");
                }
                if recover.is_none() || recover == Some(Recover::ResumeStream) {
                    prop_assert!(call.attempts < p.max_attempts);
                    // Held by an open breaker: never before it lets a probe go.
                    if let Some(until) = breaker_open {
                        prop_assert!(now + delay_ms >= until, "a held retry before the probe: {d:?}");
                    }
                }
            }
            Decision::Stop { status, .. } => {
                let tool_answered = matches!(c.verdict, Verdict::Success | Verdict::ToolError)
                    || c.recover == Some(Recover::PollTask);
                let still_running = c.cause == mcp_retry_policy::retry::Cause::LedgerInProgress;
                if ambiguous && !tool_answered && !still_running {
                    prop_assert_eq!(status, FinalStatus::Unknown);
                }
                if still_running {
                    prop_assert_eq!(status, FinalStatus::Pending);
                }
                if !ambiguous {
                    prop_assert_ne!(status, FinalStatus::Unknown);
                }
            }
        }
    }

    /// Whole calls through the engine: they end, the budget stays within [0, capacity], every breaker
    /// transition is a legal one, and the same seed gives the same run.
    #[test]
    fn engine_runs_end_and_stay_legal(p in policy(), outcomes in prop::collection::vec(outcome(), 1..40),
                                      rev in revision(), s in safety(), seed in any::<u64>()) {
        let run = |seed: u64| {
            let mut e = Engine::new(p);
            let mut rng = SplitMix64::new(seed);
            let mut now = 0u64;
            let mut log = Vec::new();
            let mut sends = 0;
            for o in &outcomes {
                let mut call = e.begin(now);
                loop {
                    match e.admit(&mut call, now) {
                        Err(d) => { log.push(d); break; }
                        Ok(adm) => {
                            if let Some(t) = adm.breaker { check_transition(t.from, t.to); }
                        }
                    }
                    sends += 1;
                    assert!(sends < 10_000, "a call did not end");
                    now += 7;
                    let step = e.record(&mut call, o, s, rev, now, rng.next_u64());
                    if let Some(t) = step.breaker { check_transition(t.from, t.to); }
                    if let (Some(left), Some(b)) = (e.budget_milli(), p.budget) {
                        assert!(left <= b.capacity_milli);
                    }
                    log.push(step.decision);
                    match step.decision {
                        Decision::Stop { status, .. } => {
                            if call.maybe_delivered && !matches!(o, AttemptOutcome::Result { .. } | AttemptOutcome::Ledger { status: LedgerStatus::InProgress, .. }) {
                                assert_eq!(status, FinalStatus::Unknown);
                            }
                            break;
                        }
                        Decision::Retry { delay_ms, .. } => now += delay_ms,
                    }
                }
                now += 1000;
            }
            log
        };
        let a = run(seed);
        prop_assert_eq!(&a, &run(seed));
    }

    /// While every attempt fails at the transport level, the breaker sheds: once it has opened, failed
    /// attempts are at least `open_ms` apart (one probe per open time; a cancelled probe frees its slot but
    /// moves nothing). And once the server answers, the first attempt asked for `open_ms` after the last
    /// failure goes through and closes it: calls are never held back longer than the open time.
    #[test]
    fn the_breaker_sheds_an_outage_and_lets_calls_through_after_open_ms(
        steps in prop::collection::vec((1u64..3_000, any::<bool>()), 20..200), open_ms in 1u64..5_000,
        consecutive in 1u32..6,
    ) {
        let cfg = BreakerConfig { consecutive_failures: consecutive, open_ms, ..BreakerConfig::default() };
        let mut e = Engine::new(Policy { breaker: Some(cfg), budget: None, max_attempts: 1, ..Policy::default() });
        let down = AttemptOutcome::Http { status: 503, retry_after_ms: None, had_session: false, jsonrpc_code: None, mismatch_confirmed: false };
        let cancelled = AttemptOutcome::Aborted { sent: Sent::No };
        let (mut now, mut opened, mut last_failure) = (0u64, false, None::<u64>);
        for (gap, cancel) in steps {
            now += gap;
            let mut call = e.begin(now);
            let Ok(adm) = e.admit(&mut call, now) else { continue };
            if let Some(t) = adm.breaker { check_transition(t.from, t.to); }
            if cancel {
                let before = e.breaker_state();
                let step = e.record(&mut call, &cancelled, Safety::ReadOnly, Revision::LATEST, now, 0);
                prop_assert_eq!(step.breaker, None, "a cancel moved the breaker");
                prop_assert_eq!(e.breaker_state(), before);
                continue;
            }
            if let (true, Some(last)) = (opened, last_failure) {
                prop_assert!(now - last >= open_ms, "failed attempts {} ms apart after opening (open_ms {})", now - last, open_ms);
            }
            let step = e.record(&mut call, &down, Safety::ReadOnly, Revision::LATEST, now, 0);
            if let Some(t) = step.breaker { check_transition(t.from, t.to); }
            opened |= matches!(e.breaker_state(), Some(BreakerState::Open { .. }));
            last_failure = Some(now);
        }
        // The server is back: the first attempt asked for open_ms after the last failure goes through.
        let t = now + open_ms;
        let mut call = e.begin(t);
        prop_assert!(e.admit(&mut call, t).is_ok(), "not let through {} ms after the last failure", open_ms);
        let ok = AttemptOutcome::Result { is_error: false, result_type: ResultType::Complete };
        e.record(&mut call, &ok, Safety::ReadOnly, Revision::LATEST, t, 0);
        prop_assert_eq!(e.breaker_state(), Some(BreakerState::Closed));
    }

    /// Without a known revision, no outcome is read as more certain than under any known revision; and no
    /// 5xx, and no 429/503 without `Retry-After`, is ever "not processed" (an intermediary may have forwarded).
    #[test]
    fn unknown_revision_is_conservative_and_5xx_is_never_proof(o in outcome()) {
        let none = mcp_retry_policy::retry::classify_under(&o, None);
        // A request that carried a session id can only have met a revision with sessions.
        let with_session = matches!(o, AttemptOutcome::Http { had_session: true, .. });
        for rev in Revision::ALL {
            let c = classify(&o, rev);
            if with_session && !rev.has_sessions() {
                continue;
            }
            prop_assert!(none.delivery.uncertainty() >= c.delivery.uncertainty(), "{:?} under {}", o, rev);
            if let AttemptOutcome::Http { status, retry_after_ms, jsonrpc_code, .. } = o {
                let unproven = (500..=599).contains(&status) && !(status == 503 && retry_after_ms.is_some())
                    || (status == 429 && retry_after_ms.is_none());
                // A JSON-RPC code in the body with a meaning of its own decides instead of the status.
                let code_decides = jsonrpc_code
                    .is_some_and(|code| {
                        classify(&AttemptOutcome::JsonRpcError { code, mismatch_confirmed: false }, rev).cause.is_specific()
                    });
                if unproven && !code_decides {
                    prop_assert_eq!(c.delivery, Delivery::Unknown, "{:?} under {}", o, rev);
                }
            }
        }
    }

    /// Policy validation is total: any integer in any field gives a policy or an error naming that field,
    /// never a panic; and an accepted policy keeps its invariants.
    #[test]
    fn policy_validation_is_total(v in prop_oneof![any::<u64>(), 0u64..3, Just(u64::MAX), Just(86_400_001u64)],
                                  field in 0usize..11) {
        let mut o = PolicyOptions::default();
        let mut b = BreakerOptions::default();
        let count = u32::try_from(v).unwrap_or(u32::MAX);
        match field {
            0 => o.max_attempts = Some(count),
            1 => o.base_delay_ms = Some(v),
            2 => o.max_delay_ms = Some(v),
            3 => o.attempt_timeout_ms = Some(v),
            4 => o.total_timeout_ms = Some(v),
            5 => o.max_retry_after_ms = Some(v),
            6 => o.budget = Section::On(BudgetOptions { capacity_milli: Some(v), ..Default::default() }),
            7 => b.failure_ratio_permille = Some(count),
            8 => b.consecutive_failures = Some(count),
            9 => b.open_ms = Some(v),
            _ => b.window_ms = Some(v),
        }
        if field >= 7 { o.breaker = Section::On(b); }
        match Policy::new(&o) {
            Ok(p) => prop_assert!(p.max_attempts >= 1 && p.base_delay_ms <= p.max_delay_ms),
            Err(e) => {
                let (min, max) = e.field.range();
                prop_assert!(!e.to_string().is_empty());
                match e.kind {
                    PolicyErrorKind::TooSmall { value, .. } => prop_assert!(value < min),
                    PolicyErrorKind::TooLarge { value, .. } => prop_assert!(value > max),
                    PolicyErrorKind::BaseExceedsCap { base, cap } => prop_assert!(base > cap),
                }
            }
        }
    }
}

fn check_transition(from: BreakerState, to: BreakerState) {
    let legal = matches!(
        (from, to),
        (BreakerState::Closed, BreakerState::Open { .. })
            | (BreakerState::Open { .. }, BreakerState::HalfOpen { .. })
            | (BreakerState::HalfOpen { .. }, BreakerState::Closed)
            | (BreakerState::HalfOpen { .. }, BreakerState::Open { .. })
    );
    assert!(legal, "illegal breaker transition {from:?} → {to:?}");
}

#[test]
fn breaker_never_opens_on_tool_errors() {
    let mut e = Engine::new(Policy {
        breaker: Some(BreakerConfig { consecutive_failures: 1, ..BreakerConfig::default() }),
        ..Policy::default()
    });
    for i in 0..100 {
        let mut call = e.begin(i);
        e.admit(&mut call, i).unwrap();
        let o = if i % 2 == 0 {
            AttemptOutcome::Result { is_error: true, result_type: ResultType::Complete }
        } else {
            AttemptOutcome::Aborted { sent: Sent::Maybe }
        };
        let step = e.record(&mut call, &o, Safety::Unsafe, Revision::LATEST, i, 0);
        assert_eq!(step.breaker, None);
    }
    assert_eq!(e.breaker_state(), Some(BreakerState::Closed));
}
