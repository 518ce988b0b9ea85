//! The operation ledger's transitions, as pure functions: what to do with an incoming write given what
//! the ledger holds for its key, and how a record changes when the write finishes.
//!
//! | stored \ incoming | same fingerprint | other fingerprint |
//! |---|---|---|
//! | none (or expired) | **execute** (claim pending) | – |
//! | pending, lease live | **in_progress** | conflict |
//! | pending, lease expired | **reconcile** | conflict |
//! | succeeded / failed | **replay** | **conflict** |
//! | unknown | **reconcile** | conflict |
//!
//! The key is `(tenant, action, operation_id)`; the tenant comes from the authenticated request, never
//! from tool arguments. Stores make the claim atomic; this module only says what the claim is.

use core::str::FromStr;

/// How long records are kept: 24 hours (Stripe keeps idempotency keys at least that long).
pub const DEFAULT_TTL_MS: u64 = 86_400_000;
/// How long a pending claim is considered live: 60 s, the MCP SDK's default request timeout.
pub const DEFAULT_LEASE_MS: u64 = 60_000;

/// The longest wait an `in_progress` answer suggests: the running write may finish long before its lease.
pub const IN_PROGRESS_POLL_MS: u64 = 1_000;

/// Ledger settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LedgerConfig {
    /// How long a record lives after it is created.
    pub ttl_ms: u64,
    /// How long a pending claim holds before it is reconciled.
    pub lease_ms: u64,
}

impl Default for LedgerConfig {
    fn default() -> Self {
        LedgerConfig { ttl_ms: DEFAULT_TTL_MS, lease_ms: DEFAULT_LEASE_MS }
    }
}

/// A record's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordState {
    /// Claimed; the handler is (or was) running.
    Pending,
    /// The handler returned a result.
    Succeeded,
    /// The handler returned an error result (replayed like a success: the same input fails the same way).
    Failed,
    /// The handler submitted downstream and could not tell whether it committed.
    Unknown,
}

impl RecordState {
    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            RecordState::Pending => "pending",
            RecordState::Succeeded => "succeeded",
            RecordState::Failed => "failed",
            RecordState::Unknown => "unknown",
        }
    }
}

impl FromStr for RecordState {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        [RecordState::Pending, RecordState::Succeeded, RecordState::Failed, RecordState::Unknown]
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or(())
    }
}

/// What the ledger holds for one key. `result` is opaque to the core (JSON text in JS stores).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The state.
    pub state: RecordState,
    /// The input fingerprint of the write that created the record.
    pub fingerprint: String,
    /// Until when a pending claim is live.
    pub lease_until_ms: u64,
    /// When the record was created.
    pub created_ms: u64,
    /// When the record expires.
    pub expires_ms: u64,
    /// Bumped on every write; stores compare it to make updates atomic.
    pub version: u64,
}

/// What to do with an incoming write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Admission {
    /// Nothing (live) is stored: claim and run the handler.
    Execute,
    /// The same write is running now: tell the caller to check back with the same id.
    InProgress {
        /// How long until the running claim's lease ends.
        retry_after_ms: u64,
    },
    /// The write finished: return its recorded outcome.
    Replay,
    /// The id was used for other input: refuse, change nothing.
    Conflict,
    /// The outcome is not known (a lost claim, or `unknown`): ask the app's reconcile hook.
    Reconcile,
}

impl Admission {
    /// The stable snake_case name.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Admission::Execute => "execute",
            Admission::InProgress { .. } => "in_progress",
            Admission::Replay => "replay",
            Admission::Conflict => "conflict",
            Admission::Reconcile => "reconcile",
        }
    }
}

/// Decides what to do with a write of `fingerprint` at `now_ms`, given the stored record (if any).
pub fn admit(stored: Option<&Record>, fingerprint: &str, now_ms: u64) -> Admission {
    let Some(r) = stored.filter(|r| now_ms < r.expires_ms) else { return Admission::Execute };
    if r.fingerprint != fingerprint {
        return Admission::Conflict;
    }
    match r.state {
        RecordState::Pending if now_ms < r.lease_until_ms => {
            Admission::InProgress { retry_after_ms: r.lease_until_ms.saturating_sub(now_ms).min(IN_PROGRESS_POLL_MS) }
        }
        RecordState::Pending | RecordState::Unknown => Admission::Reconcile,
        RecordState::Succeeded | RecordState::Failed => Admission::Replay,
    }
}

/// The pending record that claims a key (replacing `previous`, expired or reconciled, if any).
pub fn claim(previous: Option<&Record>, fingerprint: &str, now_ms: u64, config: &LedgerConfig) -> Record {
    Record {
        state: RecordState::Pending,
        fingerprint: fingerprint.to_owned(),
        lease_until_ms: now_ms.saturating_add(config.lease_ms),
        created_ms: now_ms,
        expires_ms: now_ms.saturating_add(config.ttl_ms),
        version: previous.map_or(1, |p| p.version.saturating_add(1)),
    }
}

/// The record after the handler finished as `state` (succeeded, failed or unknown). The lease ends; the
/// expiry stays where the claim put it.
pub fn finish(claimed: &Record, state: RecordState, now_ms: u64) -> Record {
    Record { state, lease_until_ms: now_ms, version: claimed.version.saturating_add(1), ..claimed.clone() }
}

/// The longest operation id accepted.
pub const MAX_OPERATION_ID_LEN: usize = 128;
/// The shortest operation id accepted (shorter ids collide too easily).
pub const MIN_OPERATION_ID_LEN: usize = 8;

/// Whether `id` is an acceptable operation id: 8 to 128 characters of `A–Z a–z 0–9 - _ . :` — UUIDs,
/// ULIDs, KSUIDs and prefixed ids fit; whitespace, slashes, quotes and control characters do not.
pub fn valid_operation_id(id: &str) -> bool {
    (MIN_OPERATION_ID_LEN..=MAX_OPERATION_ID_LEN).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FP: &str = "aa";
    const CFG: LedgerConfig = LedgerConfig { ttl_ms: 10_000, lease_ms: 1_000 };

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
        // An expired record starts fresh, whatever it held.
        for s in [Pending, Succeeded, Failed, Unknown] {
            assert_eq!(admit(Some(&rec(s)), "bb", 10_100), Execute);
        }
    }

    #[test]
    fn claims_and_finishes() {
        let c = claim(None, FP, 100, &CFG);
        assert_eq!((c.state, c.lease_until_ms, c.expires_ms, c.version), (RecordState::Pending, 1_100, 10_100, 1));
        let f = finish(&c, RecordState::Succeeded, 300);
        assert_eq!((f.state, f.lease_until_ms, f.expires_ms, f.version), (RecordState::Succeeded, 300, 10_100, 2));
        let again = claim(Some(&f), FP, 20_000, &CFG);
        assert_eq!(again.version, 3);
        let sat = claim(None, FP, u64::MAX, &CFG);
        assert_eq!(sat.expires_ms, u64::MAX);
    }

    #[test]
    fn operation_ids() {
        for ok in
            ["0b6f8a4e-2c1d-4f3e-9a7b-1c2d3e4f5a6b", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "op_12345678", "tenant:abc.def-1"]
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
}
