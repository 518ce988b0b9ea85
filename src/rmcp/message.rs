//! What the model is told when a call did not simply succeed — the Rust twin of the npm package's
//! `client/messages.js`. Every phrase is the core's own ([`Reason::words`], [`Reason::next_step`],
//! [`Cause::words`], [`Cause::next_step`]); this file only puts them together with the call's values, in the
//! same order and with the same punctuation as the JS layer, so a model reads the same sentence from either.

use crate::retry::{Cause, FinalStatus, Reason};

/// The values a message is made of.
///
/// ```
/// use mcp_retry_policy::retry::{FinalStatus, Reason};
/// use mcp_retry_policy::rmcp::{message_for, MessageParts};
///
/// let parts = MessageParts {
///     tool: "create_ticket",
///     status: FinalStatus::Unknown,
///     reason: Reason::UnsafeAfterUnknown,
///     cause: None,
///     operation_id: None,
///     operation_id_argument: "operation_id",
///     breaker_open_for_ms: None,
/// };
/// assert!(message_for(&parts).starts_with("create_ticket may or may not have taken effect"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MessageParts<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The call's final status.
    pub status: FinalStatus,
    /// Why it ended so.
    pub reason: Reason,
    /// The row of the classification table that applied to the last attempt, if there was one.
    pub cause: Option<Cause>,
    /// The call's operation id (keyed tools).
    pub operation_id: Option<&'a str>,
    /// The operation-id argument's name.
    pub operation_id_argument: &'a str,
    /// How long the server's circuit breaker stays open, for a `breaker_open` stop.
    pub breaker_open_for_ms: Option<u64>,
}

/// The sentence for the model.
///
/// ```
/// use mcp_retry_policy::retry::{FinalStatus, Reason};
/// use mcp_retry_policy::rmcp::{message_for, MessageParts};
///
/// let words = message_for(&MessageParts {
///     tool: "create_ticket",
///     status: FinalStatus::Succeeded,
///     reason: Reason::Succeeded,
///     cause: None,
///     operation_id: None,
///     operation_id_argument: "operation_id",
///     breaker_open_for_ms: None,
/// });
/// assert_eq!(words, "create_ticket succeeded.");
/// ```
pub fn message_for(p: &MessageParts<'_>) -> String {
    let tool = p.tool;
    let arg = p.operation_id_argument;
    let id = p.operation_id.map(|op| format!(" ({arg} {op})")).unwrap_or_default();
    match p.status {
        FinalStatus::Succeeded => format!("{tool} succeeded."),
        FinalStatus::ToolError => format!("{tool} ran and reported an error; the result is the tool's own answer."),
        FinalStatus::Pending => match p.operation_id {
            Some(_) => format!(
                "{tool} is still in progress{id}. Check its status with the same {arg}; do not call it again with a new one."
            ),
            None => format!("{tool} is still in progress. Check its status instead of calling it again."),
        },
        FinalStatus::Unknown => {
            let why = explain(p.reason, p.cause);
            match p.operation_id {
                Some(op) => format!(
                    "{tool} may or may not have taken effect{id}: {why}. Do not call it again with a new {arg}. Check whether it happened, or call again with the same {arg} {op} so the server can return the first outcome."
                ),
                None => {
                    let next = p.cause.and_then(|c| c.next_step(true)).unwrap_or(
                        "Calling it again may do it twice. Check whether it happened before calling it again.",
                    );
                    format!("{tool} may or may not have taken effect: {why}. {next}")
                }
            }
        }
        FinalStatus::Failed => {
            format!(
                "{tool} did not take effect: {}. {}",
                explain(p.reason, p.cause),
                next_step(p.reason, p.cause, p.breaker_open_for_ms)
            )
        }
    }
}

/// The reasons after which the row that applied says more than the reason does (messages.js `CAUSE_SPEAKS`).
fn cause_speaks(reason: Reason) -> bool {
    matches!(reason, Reason::UnsafeAfterUnknown | Reason::Permanent | Reason::MaxAttempts)
}

fn explain(reason: Reason, cause: Option<Cause>) -> &'static str {
    match cause.and_then(Cause::words) {
        Some(words) if cause_speaks(reason) => words,
        _ => reason.words(),
    }
}

fn next_step(reason: Reason, cause: Option<Cause>, breaker_open_for_ms: Option<u64>) -> String {
    if let Some(step) = cause.and_then(|c| c.next_step(false)).or(reason.next_step()) {
        return step.to_string();
    }
    match breaker_open_for_ms {
        Some(ms) if reason == Reason::BreakerOpen && ms > 0 => {
            // Math.max(1, Math.round(ms / 1000)), in integers.
            let s = ms.saturating_add(500).checked_div(1000).unwrap_or(0).max(1);
            format!("It is safe to call it again later, in about {s} s.")
        }
        _ => "It is safe to call it again later.".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(status: FinalStatus, reason: Reason, cause: Option<Cause>, op: Option<&str>) -> String {
        message_for(&MessageParts {
            tool: "create_ticket",
            status,
            reason,
            cause,
            operation_id: op,
            operation_id_argument: "operation_id",
            breaker_open_for_ms: None,
        })
    }

    #[test]
    fn unknown_is_said_as_unknown() {
        let m = parts(FinalStatus::Unknown, Reason::UnsafeAfterUnknown, Some(Cause::MaybeSent), None);
        assert!(m.starts_with("create_ticket may or may not have taken effect: "), "{m}");
        assert!(m.contains(Reason::UnsafeAfterUnknown.words()), "{m}");
        assert!(m.ends_with("Check whether it happened before calling it again."), "{m}");
        let m = parts(FinalStatus::Unknown, Reason::Deadline, Some(Cause::Timeout), Some("op-1"));
        assert!(m.contains("(operation_id op-1)") && m.contains("same operation_id op-1"), "{m}");
    }

    #[test]
    fn failed_uses_the_core_tables() {
        let m = parts(FinalStatus::Failed, Reason::Permanent, Some(Cause::HttpBadRequest), None);
        assert_eq!(
            m,
            format!(
                "create_ticket did not take effect: {}. {}",
                Reason::Permanent.words(),
                Reason::Permanent.next_step().unwrap_or_default()
            )
        );
        let m = message_for(&MessageParts {
            tool: "t",
            status: FinalStatus::Failed,
            reason: Reason::BreakerOpen,
            cause: None,
            operation_id: None,
            operation_id_argument: "operation_id",
            breaker_open_for_ms: Some(1_400),
        });
        assert!(m.ends_with("in about 1 s."), "{m}");
    }
}
