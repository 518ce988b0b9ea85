//! One write behind the ledger (`ledger::write`), natively: the sequence both faces' `with_idempotency` run.
//! Each test fails if the driver runs a handler without the store's `execute` for the key, or after a failed
//! check; answers a result the handler did not return, or a replay nobody recorded; records anything but
//! `unknown` for a run that cannot tell; collapses `unknown` into success or a refusal; answers a refusal other
//! than its check's; counts an answer as another kind; or packs to a number it does not read back.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]

use mcp_retry_policy::ledger::record::RecordState;
use mcp_retry_policy::ledger::reply::Reply;
use mcp_retry_policy::ledger::{
    Answer, AnswerKind, Begun, Ran, Validation, Write, WriteAnswer, WriteChecks, WriteEvent, WriteStep,
};
use mcp_retry_policy::retry::SplitMix64;

fn all_checks() -> Vec<WriteChecks> {
    (0..16u8)
        .map(|b| WriteChecks {
            authorize: b & 1 != 0,
            principal: b & 2 != 0,
            validate: b & 4 != 0,
            transaction: b & 8 != 0,
        })
        .collect()
}

/// Every event there is.
fn all_events() -> Vec<WriteEvent> {
    let mut e = Vec::new();
    for f in [false, true] {
        e.push(WriteEvent::OperationId { valid: f });
        e.push(WriteEvent::Tenant { present: f });
        e.push(WriteEvent::Authorized { allowed: f });
        e.push(WriteEvent::Principal { present: f });
        e.push(WriteEvent::Fingerprinted { ok: f });
        e.push(WriteEvent::Ran(Ran::Result { is_error: f }));
    }
    for v in [Validation::Ok, Validation::Problem, Validation::Threw] {
        e.push(WriteEvent::Validated(v));
    }
    for &b in &Begun::ALL {
        e.push(WriteEvent::Begun(b));
        e.push(WriteEvent::Status(b));
    }
    for r in [Ran::OutcomeUnknown, Ran::Threw, Ran::CommitRefused] {
        e.push(WriteEvent::Ran(r));
    }
    e.push(WriteEvent::Recorded);
    e
}

/// The events a face may feed back after `step` (what performing it can come to).
fn answers_to(step: WriteStep) -> Vec<WriteEvent> {
    let all = all_events();
    let fits = |e: &WriteEvent| match step {
        WriteStep::ReadOperationId => matches!(e, WriteEvent::OperationId { .. }),
        WriteStep::AskTenant => matches!(e, WriteEvent::Tenant { .. }),
        WriteStep::AskAuthorize => matches!(e, WriteEvent::Authorized { .. }),
        WriteStep::AskPrincipal => matches!(e, WriteEvent::Principal { .. }),
        WriteStep::Validate => matches!(e, WriteEvent::Validated(_)),
        WriteStep::Fingerprint => matches!(e, WriteEvent::Fingerprinted { .. }),
        WriteStep::Begin | WriteStep::RunTransaction => matches!(e, WriteEvent::Begun(_)),
        WriteStep::Run => matches!(e, WriteEvent::Ran(_)),
        WriteStep::Record(_) => matches!(e, WriteEvent::Recorded),
        WriteStep::AskStatus => matches!(e, WriteEvent::Status(_)),
        WriteStep::Answer(_) => false,
    };
    all.into_iter().filter(fits).collect()
}

/// What the rules say of one stream: checks every step against what happened before it. Returns the answer.
fn check_stream(checks: WriteChecks, events: &[WriteEvent]) -> Option<WriteAnswer> {
    let mut w = Write::new(checks);
    let mut seen: Vec<WriteEvent> = Vec::new();
    let mut answered: Option<WriteAnswer> = None;
    let mut runs = 0;
    let mut prev = WriteStep::ReadOperationId;
    for &event in events {
        let in_step = answers_to(prev).contains(&event);
        let step = w.step(event);
        prev = step;
        seen.push(event);
        // The stateless driver is the stateful one.
        assert_eq!(Write::from_code(w.code()), Some(w), "{checks:?} {seen:?}");
        let passed = |e: WriteEvent| seen.contains(&e);
        if let Some(first) = answered {
            // After its answer a write is over: anything more is out of step, and answers unknown.
            let WriteStep::Answer(a) = step else { panic!("{checks:?} stepped on after {first:?}: {seen:?}") };
            assert_eq!(a.kind, AnswerKind::Unknown, "{seen:?}");
            continue;
        }
        match step {
            WriteStep::Begin | WriteStep::RunTransaction => {
                assert_eq!(matches!(step, WriteStep::RunTransaction), checks.transaction, "{seen:?}");
                // Every check ran, and passed, before the ledger is read.
                assert!(
                    passed(WriteEvent::OperationId { valid: true }) && passed(WriteEvent::Tenant { present: true })
                );
                assert!(!checks.authorize || passed(WriteEvent::Authorized { allowed: true }), "{seen:?}");
                assert!(!checks.principal || passed(WriteEvent::Principal { present: true }), "{seen:?}");
                assert!(!checks.validate || passed(WriteEvent::Validated(Validation::Ok)), "{seen:?}");
                assert_eq!(event, WriteEvent::Fingerprinted { ok: true }, "{seen:?}");
            }
            WriteStep::Run => {
                // Only on the store's execute for this key, once, never in a transaction's write.
                assert_eq!(event, WriteEvent::Begun(Begun::Execute), "{seen:?}");
                assert!(!checks.transaction);
                runs += 1;
                assert_eq!(runs, 1);
            }
            WriteStep::Record(state) => {
                let WriteEvent::Ran(ran) = event else { panic!("recorded without a run: {seen:?}") };
                let want = match ran {
                    Ran::Result { is_error: true } => RecordState::Failed,
                    Ran::Result { is_error: false } => RecordState::Succeeded,
                    _ => RecordState::Unknown,
                };
                assert_eq!(state, want, "{seen:?}");
            }
            WriteStep::AskStatus => assert_eq!(event, WriteEvent::Ran(Ran::CommitRefused), "{seen:?}"),
            WriteStep::Answer(a) if !in_step => {
                // A face out of step: unknown, never a refusal or a result.
                answered = Some(a);
                assert_eq!(
                    a,
                    WriteAnswer {
                        with: Answer::Reply { reply: Reply::Unknown, why: false },
                        kind: AnswerKind::Unknown
                    }
                );
            }
            WriteStep::Answer(a) => {
                answered = Some(a);
                check_answer(checks, &seen, a);
            }
            _ => {}
        }
    }
    answered
}

fn check_answer(checks: WriteChecks, seen: &[WriteEvent], a: WriteAnswer) {
    let last = *seen.last().unwrap();
    let ran = seen.iter().rev().find_map(|e| if let WriteEvent::Ran(r) = e { Some(*r) } else { None });
    match a.with {
        Answer::Result => {
            assert_eq!(a.kind, AnswerKind::Execute);
            if checks.transaction {
                assert_eq!(last, WriteEvent::Begun(Begun::Execute), "{seen:?}");
            } else {
                assert_eq!(last, WriteEvent::Recorded, "{seen:?}");
                assert!(matches!(ran, Some(Ran::Result { .. })), "a result the handler did not return: {seen:?}");
            }
        }
        Answer::Replay => {
            assert_eq!(a.kind, AnswerKind::Replay);
            let from_store = last == WriteEvent::Begun(Begun::Replay);
            let after_refusal = last == WriteEvent::Status(Begun::Replay) && ran == Some(Ran::CommitRefused);
            assert!(from_store || after_refusal, "a replay nobody recorded: {seen:?}");
        }
        Answer::Reply { reply, why } => {
            assert_eq!(a.kind, AnswerKind::of(reply), "{seen:?}");
            assert_eq!(why, expected_why(seen), "{seen:?}");
            if let Some(want) = refusal_of(checks, last) {
                assert_eq!(reply, want, "{seen:?}");
            }
            // A run that cannot tell is never answered as anything but unknown.
            if matches!(ran, Some(Ran::OutcomeUnknown | Ran::Threw)) {
                assert_eq!(a.kind, AnswerKind::Unknown, "{seen:?}");
            }
        }
    }
}

/// Whether the cause is shown: the fingerprint's refusal, or an `OutcomeUnknown`'s message once recorded.
fn expected_why(seen: &[WriteEvent]) -> bool {
    let n = seen.len();
    match seen[n - 1] {
        WriteEvent::Fingerprinted { ok: false } => true,
        WriteEvent::Recorded => n >= 2 && seen[n - 2] == WriteEvent::Ran(Ran::OutcomeUnknown),
        _ => false,
    }
}

/// The refusal each failed check answers, in order (`None`: not a check's refusal).
fn refusal_of(checks: WriteChecks, last: WriteEvent) -> Option<Reply> {
    Some(match last {
        WriteEvent::OperationId { valid: false } => Reply::InvalidOperationId,
        WriteEvent::Tenant { present: false } => Reply::Unauthenticated,
        WriteEvent::Authorized { allowed: false } => Reply::Unauthorized,
        WriteEvent::Principal { present: false } => Reply::UnauthenticatedPrincipal,
        WriteEvent::Validated(Validation::Problem) => Reply::InvalidInput,
        WriteEvent::Validated(Validation::Threw) => Reply::ValidationFailed,
        WriteEvent::Fingerprinted { ok: false } => Reply::Unfingerprintable,
        WriteEvent::Begun(Begun::Conflict) if checks.principal => Reply::ConflictPrincipal,
        WriteEvent::Begun(Begun::Conflict) => Reply::Conflict,
        WriteEvent::Begun(Begun::InProgress) | WriteEvent::Status(Begun::InProgress) => Reply::InProgress,
        WriteEvent::Begun(Begun::StoreDown) => Reply::StoreDown,
        WriteEvent::Begun(Begun::RolledBack) if checks.transaction => Reply::RolledBack,
        WriteEvent::Begun(Begun::Unknown | Begun::CommitUnknown | Begun::RolledBack) => Reply::Unknown,
        _ => return None,
    })
}

/// Every stream a face can feed (each step answered by each event its action can come to), to its answer.
fn walk(checks: WriteChecks, w: Write, step: WriteStep, events: &mut Vec<WriteEvent>, streams: &mut usize) {
    if let WriteStep::Answer(_) = step {
        *streams += 1;
        assert!(check_stream(checks, events).is_some());
        return;
    }
    for e in answers_to(step) {
        let mut next = w;
        let s = next.step(e);
        events.push(e);
        walk(checks, next, s, events, streams);
        events.pop();
    }
    assert!(events.len() <= 10, "a write takes at most ten steps: {events:?}");
}

#[test]
fn every_stream_a_face_can_feed_runs_the_checks_in_order_and_answers_by_the_rules() {
    let mut streams = 0;
    for checks in all_checks() {
        let w = Write::new(checks);
        walk(checks, w, WriteStep::ReadOperationId, &mut Vec::new(), &mut streams);
    }
    // Per check set: a refusal for the id, the tenant, the fingerprint, each hook on (the validator: two), and
    // then 8 ledger ends in a transaction, or 7 plus execute's 4 recorded runs and 8 statuses after a refused
    // commit.
    let want: usize = all_checks()
        .iter()
        .map(|c| {
            let hooks = usize::from(c.authorize) + usize::from(c.principal) + 2 * usize::from(c.validate);
            3 + hooks + if c.transaction { 8 } else { 7 + 4 + 8 }
        })
        .sum();
    assert_eq!(streams, want);
}

#[test]
fn random_streams_never_run_without_execute_nor_answer_what_did_not_happen() {
    let all = all_events();
    let mut rng = SplitMix64::new(0x5eed_0001);
    let mut answered = 0;
    for i in 0..20_000 {
        let checks = all_checks()[i % 16];
        // Mostly the right answers to each step, sometimes any event at all: a face out of step.
        let mut w = Write::new(checks);
        let mut step = WriteStep::ReadOperationId;
        let mut events = Vec::new();
        for _ in 0..12 {
            let fits = answers_to(step);
            let pick = if fits.is_empty() || rng.next_u64() % 5 == 0 { &all } else { &fits };
            let e = pick[(rng.next_u64() % pick.len() as u64) as usize];
            events.push(e);
            step = w.step(e);
        }
        answered += usize::from(check_stream(checks, &events).is_some());
    }
    assert!(answered > 15_000, "{answered}");
}

#[test]
fn each_path_answers_as_both_faces_did() {
    let plain = WriteChecks::default();
    let tx = WriteChecks { transaction: true, ..plain };
    let all = WriteChecks { authorize: true, principal: true, validate: true, transaction: false };
    let run = |checks, events: &[WriteEvent]| check_stream(checks, events).unwrap();
    let reply = |reply, kind| WriteAnswer { with: Answer::Reply { reply, why: false }, kind };
    use WriteEvent as E;
    let head = [E::OperationId { valid: true }, E::Tenant { present: true }, E::Fingerprinted { ok: true }];
    let with = |rest: &[WriteEvent]| [&head[..], rest].concat();
    let executed = WriteAnswer { with: Answer::Result, kind: AnswerKind::Execute };
    let replayed = WriteAnswer { with: Answer::Replay, kind: AnswerKind::Replay };
    let ok = E::Ran(Ran::Result { is_error: false });
    assert_eq!(run(plain, &with(&[E::Begun(Begun::Execute), ok, E::Recorded])), executed);
    assert_eq!(run(plain, &with(&[E::Begun(Begun::Replay)])), replayed);
    assert_eq!(run(plain, &with(&[E::Begun(Begun::Conflict)])), reply(Reply::Conflict, AnswerKind::Conflict));
    assert_eq!(run(plain, &with(&[E::Begun(Begun::InProgress)])), reply(Reply::InProgress, AnswerKind::InProgress));
    assert_eq!(run(plain, &with(&[E::Begun(Begun::StoreDown)])), reply(Reply::StoreDown, AnswerKind::Unknown));
    let outcome_unknown = run(plain, &with(&[E::Begun(Begun::Execute), E::Ran(Ran::OutcomeUnknown), E::Recorded]));
    assert_eq!(outcome_unknown.with, Answer::Reply { reply: Reply::Unknown, why: true });
    let threw = run(plain, &with(&[E::Begun(Begun::Execute), E::Ran(Ran::Threw), E::Recorded]));
    assert_eq!(threw, reply(Reply::Unknown, AnswerKind::Unknown));
    let refused = with(&[E::Begun(Begun::Execute), E::Ran(Ran::CommitRefused)]);
    assert_eq!(run(plain, &[&refused[..], &[E::Status(Begun::Replay)]].concat()), replayed);
    assert_eq!(
        run(plain, &[&refused[..], &[E::Status(Begun::Unknown)]].concat()),
        reply(Reply::Unknown, AnswerKind::Unknown)
    );
    // The transaction: committed is the handler's result; rolled back and a commit nobody answered.
    assert_eq!(run(tx, &with(&[E::Begun(Begun::Execute)])), executed);
    assert_eq!(run(tx, &with(&[E::Begun(Begun::RolledBack)])), reply(Reply::RolledBack, AnswerKind::RolledBack));
    assert_eq!(run(tx, &with(&[E::Begun(Begun::CommitUnknown)])), reply(Reply::Unknown, AnswerKind::Unknown));
    // Outside a transaction those two cannot happen: out of step, unknown (never a refusal that invites a retry).
    assert_eq!(run(plain, &with(&[E::Begun(Begun::RolledBack)])), reply(Reply::Unknown, AnswerKind::Unknown));
    // Every check, in the JS order: id, tenant, authorize, principal, validate, fingerprint.
    let mut w = Write::new(all);
    let order: Vec<u32> = [
        E::OperationId { valid: true },
        E::Tenant { present: true },
        E::Authorized { allowed: true },
        E::Principal { present: true },
        E::Validated(Validation::Ok),
        E::Fingerprinted { ok: true },
    ]
    .iter()
    .map(|&e| w.step(e).code())
    .collect();
    let names: Vec<&str> = order.iter().map(|&c| WriteStep::NAMES[c as usize]).collect();
    assert_eq!(names, ["ask_tenant", "ask_authorize", "ask_principal", "validate", "fingerprint", "begin"]);
    let conflict = [
        &head[..2],
        &[E::Authorized { allowed: true }, E::Principal { present: true }, E::Validated(Validation::Ok)],
        &head[2..],
        &[E::Begun(Begun::Conflict)],
    ]
    .concat();
    assert_eq!(run(all, &conflict), reply(Reply::ConflictPrincipal, AnswerKind::Conflict));
}

#[test]
fn codes_read_back_and_refuse_what_no_write_packs() {
    let mut read = 0;
    for code in 0..(1u32 << 12) {
        if let Some(w) = Write::from_code(code) {
            assert_eq!(w.code(), code);
            read += 1;
        }
    }
    // 16 check sets × 11 phases × 6 run ends.
    assert_eq!(read, 16 * 11 * 6);
    assert_eq!(Write::from_code(u32::MAX), None);
    // Events: each name has a code, and an argument no event carries is refused.
    for (code, _) in WriteEvent::NAMES.iter().enumerate() {
        let code = u32::try_from(code).unwrap();
        assert!(WriteEvent::from_code(code, 0).is_some(), "{code}");
        assert_eq!(WriteEvent::from_code(code, 99), None);
    }
    assert_eq!(WriteEvent::from_code(10, 0), None);
    let decoded: Vec<WriteEvent> =
        (0..10u32).flat_map(|c| (0..9u32).filter_map(move |a| WriteEvent::from_code(c, a))).collect();
    let mut all = all_events();
    all.sort_by_key(|e| format!("{e:?}"));
    let mut got = decoded.clone();
    got.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(got, all, "every event decodes from exactly one code");
    assert_eq!(AnswerKind::NAMES.len(), 7);
    for (i, n) in AnswerKind::NAMES.iter().enumerate() {
        let kinds = [
            AnswerKind::Execute,
            AnswerKind::Replay,
            AnswerKind::Conflict,
            AnswerKind::InProgress,
            AnswerKind::Unknown,
            AnswerKind::Rejected,
            AnswerKind::RolledBack,
        ];
        assert_eq!(kinds[i].as_str(), *n);
    }
}
