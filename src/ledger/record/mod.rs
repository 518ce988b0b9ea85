//! The operation ledger's transitions, as pure functions: what to do with an incoming write given what
//! the ledger holds for its key, and how a record changes when the write finishes.
//!
//! | stored \ incoming | same fingerprint | other fingerprint |
//! |---|---|---|
//! | none (or succeeded / failed past its TTL, or released) | **execute** (claim pending) | – |
//! | pending, lease live | **in_progress** | conflict |
//! | pending, lease expired | **reconcile** | conflict |
//! | succeeded / failed | **replay** | **conflict** |
//! | unknown | **reconcile** | conflict |
//!
//! The key is `(tenant, action, operation_id)`; the tenant comes from the authenticated request, never
//! from tool arguments. Stores make the claim atomic; this module only says what the claim is.
//!
//! **An unresolved write is never executed again on its own.** A `pending` or `unknown` record does not
//! expire: its TTL is not looked at. It stays unresolved until the app's reconcile hook answers (found it:
//! succeeded/failed; provably not done: claim again) or an operator [`release`]s it after checking by hand.
//! The TTL (and any purging) applies to resolved records only, counted from when they were resolved
//! ([`finish`]). A released record is a tombstone: the next write of the key executes, and its version keeps
//! counting, so a late `finish` of the released claim cannot overwrite the claim that follows.

use core::str::FromStr;

/// How long records are kept: 24 hours (Stripe keeps idempotency keys at least that long).
pub const DEFAULT_TTL_MS: u64 = 86_400_000;
/// How long a pending claim is considered live: 60 s, the MCP SDK's default request timeout.
pub const DEFAULT_LEASE_MS: u64 = 60_000;

/// The longest wait an `in_progress` answer suggests: the running write may finish long before its lease.
pub const IN_PROGRESS_POLL_MS: u64 = 1_000;
mod config;

pub use config::{LedgerConfig, LedgerConfigError};

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
    /// An operator released an unresolved record after checking that it did not happen: the next write of
    /// the key executes (a tombstone that keeps the version counting).
    Released,
}

impl RecordState {
    /// Every state, in declaration order.
    pub const ALL: [RecordState; 5] = [
        RecordState::Pending,
        RecordState::Succeeded,
        RecordState::Failed,
        RecordState::Unknown,
        RecordState::Released,
    ];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            RecordState::Pending => "pending",
            RecordState::Succeeded => "succeeded",
            RecordState::Failed => "failed",
            RecordState::Unknown => "unknown",
            RecordState::Released => "released",
        }
    }

    /// Whether the outcome is not known yet (`pending` or `unknown`): such a record never expires and is
    /// never executed again without the reconcile hook or an operator's [`release`].
    pub const fn is_unresolved(self) -> bool {
        matches!(self, RecordState::Pending | RecordState::Unknown)
    }
}

impl FromStr for RecordState {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        RecordState::ALL.into_iter().find(|v| v.as_str() == s).ok_or(())
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
    /// When the record expires — for a resolved record only; unresolved records never expire.
    pub expires_ms: u64,
    /// Bumped on every write; stores compare it to make updates atomic.
    pub version: u64,
}

/// What to do with an incoming write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Admission {
    /// Nothing is stored (or a resolved record past its TTL, or a released one): claim and run the handler.
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
    /// Every admission, by name, in the order of [`Admission::code`].
    pub const NAMES: [&'static str; 5] = ["execute", "in_progress", "replay", "conflict", "reconcile"];

    /// Its index in [`Admission::NAMES`].
    pub const fn code(&self) -> u32 {
        match self {
            Admission::Execute => 0,
            Admission::InProgress { .. } => 1,
            Admission::Replay => 2,
            Admission::Conflict => 3,
            Admission::Reconcile => 4,
        }
    }

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
///
/// Only a resolved record (succeeded/failed) expires; a pending or unknown one is never executed again
/// here, however old: it is in progress or reconciled.
pub fn admit(stored: Option<&Record>, fingerprint: &str, now_ms: u64) -> Admission {
    admit_matching(stored, stored.is_some_and(|r| r.fingerprint == fingerprint), now_ms)
}

/// [`admit`], told whether the write's input fingerprint equals the stored record's (`same_input`) instead
/// of comparing them: what the numbers-only binding uses (the strings stay in JS).
pub fn admit_matching(stored: Option<&Record>, same_input: bool, now_ms: u64) -> Admission {
    let Some(r) = stored else { return Admission::Execute };
    match r.state {
        RecordState::Released => return Admission::Execute,
        RecordState::Succeeded | RecordState::Failed if now_ms >= r.expires_ms => return Admission::Execute,
        _ => {}
    }
    if !same_input {
        return Admission::Conflict;
    }
    match r.state {
        RecordState::Pending if now_ms < r.lease_until_ms => {
            Admission::InProgress { retry_after_ms: r.lease_until_ms.saturating_sub(now_ms).min(IN_PROGRESS_POLL_MS) }
        }
        RecordState::Pending | RecordState::Unknown => Admission::Reconcile,
        RecordState::Succeeded | RecordState::Failed => Admission::Replay,
        // Returned above; kept here so that the match names every state.
        RecordState::Released => Admission::Execute,
    }
}

/// What a status lookup finds for a key (read-only: nothing is claimed, nothing changes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lookup {
    /// No record: never received, or a resolved record already purged. Not proof that it did not happen
    /// (a request may still be on its way); a call with the same id executes it at most once.
    NotFound,
    /// An operator released it after checking it did not take effect: the next call with the id executes.
    NotDone,
    /// A live claim: the operation is running now.
    InProgress {
        /// How long until its lease ends (at most the in-progress poll interval).
        retry_after_ms: u64,
    },
    /// Its outcome is recorded (`Succeeded` or `Failed`): the recorded result is what a replay returns.
    Resolved(RecordState),
    /// Pending past its lease, or `unknown`: ask the app's reconcile hook.
    Reconcile,
}

/// What the status tool answers about an operation: a [`Lookup`] after the reconcile hook had its say
/// (`reconcile` becomes the hook's answer, or `unknown`).
pub const OPERATION_STATUSES: [&str; 6] = ["not_found", "not_done", "in_progress", "succeeded", "failed", "unknown"];

impl Lookup {
    /// Every lookup, by name (`InProgress` and `Resolved` stand for all their values).
    pub const NAMES: [&'static str; 6] = ["not_found", "not_done", "in_progress", "succeeded", "failed", "reconcile"];

    /// Its index in [`Lookup::NAMES`].
    pub const fn code(&self) -> u32 {
        match self {
            Lookup::NotFound => 0,
            Lookup::NotDone => 1,
            Lookup::InProgress { .. } => 2,
            Lookup::Resolved(RecordState::Failed) => 4,
            Lookup::Resolved(_) => 3,
            Lookup::Reconcile => 5,
        }
    }

    /// The stable snake_case name.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Lookup::NotFound => "not_found",
            Lookup::NotDone => "not_done",
            Lookup::InProgress { .. } => "in_progress",
            Lookup::Resolved(RecordState::Failed) => "failed",
            Lookup::Resolved(_) => "succeeded",
            Lookup::Reconcile => "reconcile",
        }
    }
}

/// What is known about a key at `now_ms`, for a status lookup. A resolved record is reported as recorded
/// even past its TTL (the outcome is true; only its replay to a new call has ended).
pub fn lookup(stored: Option<&Record>, now_ms: u64) -> Lookup {
    let Some(r) = stored else { return Lookup::NotFound };
    match r.state {
        RecordState::Released => Lookup::NotDone,
        RecordState::Succeeded | RecordState::Failed => Lookup::Resolved(r.state),
        RecordState::Pending if now_ms < r.lease_until_ms => {
            Lookup::InProgress { retry_after_ms: r.lease_until_ms.saturating_sub(now_ms).min(IN_PROGRESS_POLL_MS) }
        }
        RecordState::Pending | RecordState::Unknown => Lookup::Reconcile,
    }
}

/// The pending record that claims a key (replacing `previous` — a resolved record past its TTL, a
/// released one, or one reconciled as not done — if any).
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

/// The record after the handler finished as `state` (succeeded, failed or unknown). The lease ends; a
/// resolved record is kept for the TTL from now (never less than the claim gave it), so that an outcome
/// found late by the reconcile hook is replayed, not executed again.
pub fn finish(claimed: &Record, state: RecordState, now_ms: u64, config: &LedgerConfig) -> Record {
    Record {
        state,
        lease_until_ms: now_ms,
        expires_ms: claimed.expires_ms.max(now_ms.saturating_add(config.ttl_ms)),
        version: claimed.version.saturating_add(1),
        ..claimed.clone()
    }
}

/// How often a running handler's claim is renewed, and how long before its lease ends its owner gives up
/// when renewals fail: a third of the lease (at least 1 ms).
///
/// The owner renews every third of the lease, so a live run's lease, read on the owner's clock, always has
/// at least two thirds of the lease left. When renewals fail (the store is down, the process was paused),
/// the owner tells its handler to stop (an `AbortSignal`) once only a third is left, and refuses to record a
/// late outcome under a claim it no longer holds. Another process may reconcile the record only after the
/// lease ended on *its* clock, so clocks that differ by less than a third of the lease never let the reconcile
/// hook be asked while the owner still believes its run may commit.
pub const fn keep_alive_ms(config: &LedgerConfig) -> u64 {
    let third = config.lease_ms / 3;
    if third == 0 {
        1
    } else {
        third
    }
}

/// When the owner of `claimed` gives up on it: a third of the lease before the lease ends
/// ([`keep_alive_ms`]), on the clock the record was written by.
///
/// Read on the owner's *local monotonic* clock (the time elapsed since the record was written added to the
/// `now_ms` it was written at), this is the point past which the owner's run must not commit any more, even
/// when no renewal has failed: a process paused past it (a stopped VM, a long GC pause) may find its claim
/// taken over when it resumes, and a peer whose clock runs ahead by up to a third of the lease may reconcile
/// the record from here on. Its signal fires here.
pub const fn give_up_at_ms(claimed: &Record, config: &LedgerConfig) -> u64 {
    claimed.lease_until_ms.saturating_sub(keep_alive_ms(config))
}

/// The claim renewed at `now_ms` by the run that holds it (heartbeat): a new lease from now, the next
/// version (the store's compare-and-swap on the previous one refuses a renewal of a claim that changed
/// hands). The claim's *fence* — the version it was claimed with, handed to the handler as a fencing token —
/// does not change: every later claim of the key has a higher version than any renewal of this one. `None`
/// for a record that is not pending (nothing to renew).
pub fn renew(claimed: &Record, now_ms: u64, config: &LedgerConfig) -> Option<Record> {
    if claimed.state != RecordState::Pending {
        return None;
    }
    Some(Record {
        lease_until_ms: now_ms.saturating_add(config.lease_ms).max(claimed.lease_until_ms),
        version: claimed.version.saturating_add(1),
        ..claimed.clone()
    })
}

/// Why [`release`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReleaseRefusal {
    /// The record is resolved (succeeded or failed): its outcome is known and is replayed.
    Resolved(RecordState),
    /// The claim's lease is live: the handler may be running now. Release after the lease ends.
    LeaseLive {
        /// How long until the lease ends.
        retry_after_ms: u64,
    },
    /// The record is already released.
    AlreadyReleased,
}

impl ReleaseRefusal {
    /// Every refusal, by code, in the order of [`ReleaseRefusal::index`].
    pub const NAMES: [&'static str; 3] = ["resolved", "lease_live", "already_released"];

    /// Its index in [`ReleaseRefusal::NAMES`].
    pub const fn index(&self) -> u32 {
        match self {
            ReleaseRefusal::Resolved(_) => 0,
            ReleaseRefusal::LeaseLive { .. } => 1,
            ReleaseRefusal::AlreadyReleased => 2,
        }
    }

    /// The stable snake_case code.
    pub const fn code(&self) -> &'static str {
        match self {
            ReleaseRefusal::Resolved(_) => "resolved",
            ReleaseRefusal::LeaseLive { .. } => "lease_live",
            ReleaseRefusal::AlreadyReleased => "already_released",
        }
    }
}

/// An operator's release of an unresolved record (`unknown`, or `pending` whose lease ran out) after they
/// checked that the write did not happen: the record becomes `released`, and the next write of the key
/// executes. A resolved record, a live lease and a released record are refused.
pub fn release(stored: &Record, now_ms: u64, config: &LedgerConfig) -> Result<Record, ReleaseRefusal> {
    match stored.state {
        RecordState::Succeeded | RecordState::Failed => Err(ReleaseRefusal::Resolved(stored.state)),
        RecordState::Released => Err(ReleaseRefusal::AlreadyReleased),
        RecordState::Pending if now_ms < stored.lease_until_ms => {
            Err(ReleaseRefusal::LeaseLive { retry_after_ms: stored.lease_until_ms.saturating_sub(now_ms) })
        }
        RecordState::Pending | RecordState::Unknown => Ok(Record {
            state: RecordState::Released,
            lease_until_ms: now_ms,
            expires_ms: stored.expires_ms.max(now_ms.saturating_add(config.ttl_ms)),
            version: stored.version.saturating_add(1),
            ..stored.clone()
        }),
    }
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
mod tests;
