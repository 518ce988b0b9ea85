//! The gate's own tests.

use super::*;

#[test]
fn code_tables_follow_declaration_order() {
    for (i, r) in Reason::ALL.iter().enumerate() {
        assert_eq!(*r as usize, i, "{r:?}");
    }
    for (i, s) in FinalStatus::ALL.iter().enumerate() {
        assert_eq!(*s as usize, i, "{s:?}");
    }
    for (i, r) in Recover::ALL.iter().enumerate() {
        assert_eq!(*r as usize, i, "{r:?}");
    }
    for (i, v) in crate::retry::Verdict::ALL.iter().enumerate() {
        assert_eq!(*v as usize, i, "{v:?}");
    }
    for (i, d) in Delivery::ALL.iter().enumerate() {
        assert_eq!(*d as usize, i, "{d:?}");
    }
    for (i, c) in crate::retry::Cause::ALL.iter().enumerate() {
        assert_eq!(*c as usize, i, "{c:?}");
    }
    assert!(crate::retry::Cause::ALL.len() <= 64 && Reason::ALL.len() <= 32);
}

fn recovering(action: Recover) -> Classification {
    let cause = *crate::retry::Cause::ALL.iter().find(|c| c.recover() == Some(action)).unwrap_or(&Cause::Timeout);
    Classification {
        verdict: Verdict::Recover,
        delivery: Delivery::NotProcessed,
        recover: Some(action),
        retry_after_ms: None,
        cause,
    }
}

fn input<'a>(policy: &'a Policy, call: &'a CallState, c: &'a Classification) -> DecisionInput<'a> {
    DecisionInput {
        policy,
        call,
        classification: c,
        safety: Safety::Unsafe,
        now_ms: 0,
        random: 0,
        breaker_open_until_ms: None,
        budget_milli: None,
    }
}

/// `Recover::is_one_shot` is the one definition: `decide` re-sends exactly those at once and once, and
/// the engine (`admit`, `record`) counts exactly those as not attempts.
#[test]
fn one_shot_actions_are_one_definition() {
    let policy = Policy::default();
    let call = CallState { deadline_ms: 1_000, ..CallState::default() };
    for action in Recover::ALL {
        let c = recovering(action);
        let first = decide(&input(&policy, &call, &c));
        let at_once = first == Decision::Retry { delay_ms: 0, recover: Some(action), reason: Reason::Recover };
        let used = CallState { used_recover: recover_bit(action), ..call };
        let again = decide(&input(&policy, &used, &c)).reason() == Reason::RecoverExhausted;
        assert_eq!(at_once && again, action.is_one_shot(), "{action:?}");
    }
}

#[test]
fn a_caller_that_cannot_answer_input_stops_in_the_core() {
    let policy = Policy::default();
    let c = recovering(Recover::ContinueInput);
    let call = CallState { deadline_ms: 1_000, cannot_answer_input: true, ..CallState::default() };
    assert_eq!(decide(&input(&policy, &call, &c)), Decision::stop(FinalStatus::Failed, Reason::InputRequiredUnhandled));
    let maybe = CallState { maybe_delivered: true, ..call };
    assert_eq!(
        decide(&input(&policy, &maybe, &c)),
        Decision::stop(FinalStatus::Unknown, Reason::InputRequiredUnhandled)
    );
    let answers = CallState { cannot_answer_input: false, ..call };
    assert_eq!(decide(&input(&policy, &answers, &c)).reason(), Reason::ContinueInput);
}
