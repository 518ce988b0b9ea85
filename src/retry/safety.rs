//! How safe it is to send a tool call again, from what the server says and what the app trusts.
//!
//! The spec's defaults are the pessimistic ones (`readOnlyHint: false`, `destructiveHint: true`,
//! `idempotentHint: false`), and "clients MUST consider tool annotations to be untrusted unless they come
//! from trusted servers" (2025-11-25 `server/tools.mdx`). So a tool is [`Safety::Unsafe`] unless the app
//! marked its server trusted and the server said otherwise, or the app overrode the tool itself.

use core::str::FromStr;

/// How safe a re-send of a tool call is after its first delivery became unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Safety {
    /// Changes nothing (`readOnlyHint: true`).
    ReadOnly,
    /// Calling it again with the same arguments has no additional effect (`idempotentHint: true`).
    Idempotent,
    /// Takes an operation id that the server dedupes: a re-send with the same id is harmless.
    Keyed,
    /// Anything else: a re-send after an unknown delivery may act twice.
    #[default]
    Unsafe,
}

impl Safety {
    /// Every safety, in declaration order (the order of the packed codes).
    pub const ALL: [Safety; 4] = [Safety::ReadOnly, Safety::Idempotent, Safety::Keyed, Safety::Unsafe];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Safety::ReadOnly => "read_only",
            Safety::Idempotent => "idempotent",
            Safety::Keyed => "keyed",
            Safety::Unsafe => "unsafe",
        }
    }

    /// Whether a re-send is allowed after an attempt whose delivery is unknown.
    pub const fn retry_after_unknown(self) -> bool {
        !matches!(self, Safety::Unsafe)
    }
}

impl FromStr for Safety {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Safety::ALL.into_iter().find(|v| v.as_str() == s).ok_or(())
    }
}

/// What a server declared about a tool: its annotations (absent = the spec's default) and whether its
/// input schema declares the operation-id argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ToolFacts {
    /// `annotations.readOnlyHint`.
    pub read_only_hint: Option<bool>,
    /// `annotations.destructiveHint` (meaningful only when not read-only).
    pub destructive_hint: Option<bool>,
    /// `annotations.idempotentHint` (meaningful only when not read-only).
    pub idempotent_hint: Option<bool>,
    /// The input schema declares the operation-id argument (default name `operation_id`).
    pub declares_operation_id: bool,
}

/// The safety of a tool. `override_` (the app's per-tool setting) wins; otherwise the server's word counts
/// only when `trusted`; otherwise [`Safety::Unsafe`].
pub fn safety(facts: &ToolFacts, trusted: bool, override_: Option<Safety>) -> Safety {
    if let Some(s) = override_ {
        return s;
    }
    if !trusted {
        return Safety::Unsafe;
    }
    if facts.read_only_hint == Some(true) {
        Safety::ReadOnly
    } else if facts.idempotent_hint == Some(true) {
        Safety::Idempotent
    } else if facts.declares_operation_id {
        Safety::Keyed
    } else {
        Safety::Unsafe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_specs() {
        assert_eq!(safety(&ToolFacts::default(), true, None), Safety::Unsafe);
        assert_eq!(safety(&ToolFacts::default(), false, None), Safety::Unsafe);
    }

    #[test]
    fn untrusted_annotations_are_ignored() {
        let liar = ToolFacts {
            read_only_hint: Some(true),
            idempotent_hint: Some(true),
            declares_operation_id: true,
            ..Default::default()
        };
        assert_eq!(safety(&liar, false, None), Safety::Unsafe);
        assert_eq!(safety(&liar, true, None), Safety::ReadOnly);
    }

    #[test]
    fn trusted_order_and_overrides() {
        let idem = ToolFacts { idempotent_hint: Some(true), declares_operation_id: true, ..Default::default() };
        assert_eq!(safety(&idem, true, None), Safety::Idempotent);
        let keyed = ToolFacts { declares_operation_id: true, destructive_hint: Some(true), ..Default::default() };
        assert_eq!(safety(&keyed, true, None), Safety::Keyed);
        let not_ro = ToolFacts { read_only_hint: Some(false), ..Default::default() };
        assert_eq!(safety(&not_ro, true, None), Safety::Unsafe);
        assert_eq!(safety(&not_ro, false, Some(Safety::ReadOnly)), Safety::ReadOnly);
        assert_eq!(safety(&idem, true, Some(Safety::Unsafe)), Safety::Unsafe);
    }

    #[test]
    fn names_round_trip() {
        for s in Safety::ALL {
            assert_eq!(s.as_str().parse::<Safety>(), Ok(s));
        }
        assert!("readOnly".parse::<Safety>().is_err());
    }
}
