//! What the ledger answers in place of a write's own result — a refusal before any claim, a conflict, a write
//! still running, an outcome nobody knows — as both faces answer it: its `status` (under the ledger's `_meta`
//! key), its `reason`, and the sentence the model reads. The JS `withIdempotency` and status tool read them from
//! the generated `names.js` (`LEDGER_REPLIES`), the Rust ones from here: one text, two faces.
//!
//! A sentence is a template: `{arg}` stands for the operation-id argument's name, `{id}` for the operation id,
//! `{why}` for a cause in parentheses (` (…)`, or nothing), `{problem}` for what the app's validator said. A
//! template is filled in one pass ([`fill`]): what is filled in is never read as a placeholder again.

/// A reply of the ledger's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The operation id is missing or malformed (`rejected`).
    InvalidOperationId,
    /// No authenticated tenant (`rejected`).
    Unauthenticated,
    /// No authenticated principal, where the principal is bound into the fingerprint (`rejected`).
    UnauthenticatedPrincipal,
    /// The app's `authorize` hook refused (`rejected`).
    Unauthorized,
    /// The app's validator failed (threw): nothing was done (`rejected`).
    ValidationFailed,
    /// The app's validator found a problem: `{problem}` (`rejected`).
    InvalidInput,
    /// The input cannot be fingerprinted (too large, not JSON): `{why}` (`rejected`, reason `invalid_input`).
    Unfingerprintable,
    /// The handler ran and failed inside the store's transaction, which undid its writes (`rejected`).
    RolledBack,
    /// The id was already used for other input (`conflict`).
    Conflict,
    /// The id was already used for other input, or by another caller (`conflict`, with a principal).
    ConflictPrincipal,
    /// The operation is running now (`in_progress`).
    InProgress,
    /// Nobody knows whether it took effect: `{why}` (`unknown`).
    Unknown,
    /// The ledger's store failed before anything ran (`unknown`, reason `store_unavailable`).
    StoreDown,
    /// The status tool's `action` is missing (`rejected`).
    StatusInvalidAction,
    /// The status tool's `operation_id` is missing or malformed (`rejected`).
    StatusInvalidOperationId,
    /// The status tool's request has no authenticated tenant (`rejected`).
    StatusUnauthenticated,
}

impl Reply {
    /// Every reply, by code.
    pub const ALL: [Reply; 16] = [
        Reply::InvalidOperationId,
        Reply::Unauthenticated,
        Reply::UnauthenticatedPrincipal,
        Reply::Unauthorized,
        Reply::ValidationFailed,
        Reply::InvalidInput,
        Reply::Unfingerprintable,
        Reply::RolledBack,
        Reply::Conflict,
        Reply::ConflictPrincipal,
        Reply::InProgress,
        Reply::Unknown,
        Reply::StoreDown,
        Reply::StatusInvalidAction,
        Reply::StatusInvalidOperationId,
        Reply::StatusUnauthenticated,
    ];

    /// The reply's stable name (the key of `LEDGER_REPLIES`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Reply::InvalidOperationId => "invalid_operation_id",
            Reply::Unauthenticated => "unauthenticated",
            Reply::UnauthenticatedPrincipal => "unauthenticated_principal",
            Reply::Unauthorized => "unauthorized",
            Reply::ValidationFailed => "validation_failed",
            Reply::InvalidInput => "invalid_input",
            Reply::Unfingerprintable => "unfingerprintable",
            Reply::RolledBack => "rolled_back",
            Reply::Conflict => "conflict",
            Reply::ConflictPrincipal => "conflict_principal",
            Reply::InProgress => "in_progress",
            Reply::Unknown => "unknown",
            Reply::StoreDown => "store_down",
            Reply::StatusInvalidAction => "status_invalid_action",
            Reply::StatusInvalidOperationId => "status_invalid_operation_id",
            Reply::StatusUnauthenticated => "status_unauthenticated",
        }
    }

    /// The `status` it carries under the ledger's `_meta` key: one of the names the client core reads there
    /// (its `LedgerStatus`; `tests/names.rs` holds the two together — the server core does not import the
    /// client's).
    pub const fn status(self) -> &'static str {
        match self {
            Reply::Conflict | Reply::ConflictPrincipal => "conflict",
            Reply::InProgress => "in_progress",
            Reply::Unknown | Reply::StoreDown => "unknown",
            _ => "rejected",
        }
    }

    /// The `reason` it carries beside its status, if any (every `rejected` has one; clients read `rejected`
    /// as permanent, `rolled_back` as "may be called again").
    pub const fn reason(self) -> Option<&'static str> {
        Some(match self {
            Reply::InvalidOperationId | Reply::StatusInvalidOperationId => "invalid_operation_id",
            Reply::Unauthenticated | Reply::UnauthenticatedPrincipal | Reply::StatusUnauthenticated => {
                "unauthenticated"
            }
            Reply::Unauthorized => "unauthorized",
            Reply::ValidationFailed => "validation_failed",
            Reply::InvalidInput | Reply::Unfingerprintable => "invalid_input",
            Reply::RolledBack => "rolled_back",
            Reply::StoreDown => "store_unavailable",
            Reply::StatusInvalidAction => "invalid_arguments",
            Reply::Conflict | Reply::ConflictPrincipal | Reply::InProgress | Reply::Unknown => return None,
        })
    }

    /// What the model reads, as a template (see the module docs).
    pub const fn template(self) -> &'static str {
        match self {
            Reply::InvalidOperationId => {
                "{arg} must be 8–128 characters of A–Z a–z 0–9 - _ . : (a UUID works); nothing was done."
            }
            Reply::Unauthenticated => "This request has no authenticated tenant; nothing was done.",
            Reply::UnauthenticatedPrincipal => "This request has no authenticated principal; nothing was done.",
            Reply::Unauthorized => "This caller is not allowed to make this call; nothing was done.",
            Reply::ValidationFailed => {
                "The input could not be validated just now; nothing was done. Call again with the same {arg}."
            }
            Reply::InvalidInput => "{problem} (nothing was done; fix the input and call again)",
            Reply::Unfingerprintable => "The input cannot be fingerprinted{why}; nothing was done.",
            Reply::RolledBack => {
                "The operation ran and failed; the server's transaction undid its database writes, but anything it \
                 did outside that transaction (a message sent, a call to another service) may stand. It may be \
                 called again with the same {arg}."
            }
            Reply::Conflict => {
                "{arg} {id} was already used for a different request; nothing was done. Use a new {arg} for a new \
                 request."
            }
            Reply::ConflictPrincipal => {
                "{arg} {id} was already used for a different request (other input, or another caller); nothing was \
                 done. Use a new {arg} for a new request."
            }
            Reply::InProgress => {
                "This operation ({arg} {id}) is still running. Check back with the same {arg}; do not use a new one."
            }
            Reply::Unknown => {
                "The outcome of this operation ({arg} {id}) is unknown{why}: it may or may not have taken effect. Do \
                 not use a new {arg}; check whether it happened, or call again with the same {arg} later."
            }
            Reply::StoreDown => {
                "The server could not check its operation ledger just now; this call did nothing. Whether an earlier \
                 call with {arg} {id} took effect is not known: call again with the same {arg} in a moment; do not \
                 use a new one."
            }
            Reply::StatusInvalidAction => "action must be the name of the tool the operation was sent to.",
            Reply::StatusInvalidOperationId => {
                "operation_id must be 8–128 characters of A–Z a–z 0–9 - _ . : (a UUID works)."
            }
            Reply::StatusUnauthenticated => "This request has no authenticated tenant.",
        }
    }

    /// The sentence, filled in ([`fill`]).
    pub fn words(self, fill_in: &Fill<'_>) -> String {
        fill(self.template(), fill_in)
    }
}

/// What a template's placeholders stand for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fill<'a> {
    /// `{arg}`: the operation-id argument's name.
    pub arg: &'a str,
    /// `{id}`: the operation id.
    pub id: &'a str,
    /// `{why}`: the cause, shown in parentheses after a space (nothing when empty).
    pub why: &'a str,
    /// `{problem}`: what the validator said.
    pub problem: &'a str,
}

/// `template` with its placeholders filled in, in one pass: an unknown `{…}` is kept as written, and what is
/// filled in is never read as a placeholder again.
pub fn fill(template: &str, f: &Fill<'_>) -> String {
    let mut out = String::with_capacity(template.len().saturating_add(f.problem.len()));
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(rest.get(..open).unwrap_or_default());
        let tail = rest.get(open..).unwrap_or_default();
        let named = |name: &str| tail.starts_with(name);
        let (taken, with) = if named("{arg}") {
            (5, f.arg.to_owned())
        } else if named("{id}") {
            (4, f.id.to_owned())
        } else if named("{why}") {
            (5, if f.why.is_empty() { String::new() } else { format!(" ({})", f.why) })
        } else if named("{problem}") {
            (9, f.problem.to_owned())
        } else {
            (1, "{".to_owned())
        };
        out.push_str(&with);
        rest = tail.get(taken..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reply_has_its_own_words_and_a_rejection_always_a_reason() {
        for (i, r) in Reply::ALL.iter().enumerate() {
            assert!(Reply::ALL.iter().skip(i + 1).all(|o| o.template() != r.template() && o.as_str() != r.as_str()));
            if r.status() == "rejected" {
                assert!(r.reason().is_some(), "{r:?}");
            }
        }
    }

    #[test]
    fn a_template_is_filled_in_one_pass() {
        let f = Fill { arg: "operation_id", id: "op-{arg}", why: "", problem: "{id} bad" };
        assert_eq!(Reply::InvalidInput.words(&f), "{id} bad (nothing was done; fix the input and call again)");
        assert_eq!(
            Reply::Conflict.words(&f),
            "operation_id op-{arg} was already used for a different request; nothing was done. Use a new operation_id for a new request."
        );
        assert_eq!(fill("a {why}{x} b", &Fill { why: "it", ..Fill::default() }), "a  (it){x} b");
        assert_eq!(fill("{", &Fill::default()), "{");
    }
}
