//! The ledger's settings: how long resolved records are kept, how long a claim's lease lasts.

use super::{DEFAULT_LEASE_MS, DEFAULT_TTL_MS};

/// Ledger settings. Build them with [`LedgerConfig::new`], which refuses a TTL shorter than the lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LedgerConfig {
    /// How long a resolved (succeeded/failed) record is kept after it was resolved; never less than
    /// `lease_ms`. Unresolved records do not expire.
    pub ttl_ms: u64,
    /// How long a pending claim holds before it is reconciled.
    pub lease_ms: u64,
}

impl Default for LedgerConfig {
    fn default() -> Self {
        LedgerConfig { ttl_ms: DEFAULT_TTL_MS, lease_ms: DEFAULT_LEASE_MS }
    }
}

/// Settings [`LedgerConfig::new`] refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LedgerConfigError {
    /// The TTL is shorter than the lease: a record would be gone while its claim is still live.
    TtlBelowLease {
        /// The TTL asked for.
        ttl_ms: u64,
        /// The lease asked for.
        lease_ms: u64,
    },
}

impl LedgerConfigError {
    /// The stable snake_case code.
    pub const fn code(&self) -> &'static str {
        match self {
            LedgerConfigError::TtlBelowLease { .. } => "ttl_below_lease",
        }
    }
}

impl core::fmt::Display for LedgerConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LedgerConfigError::TtlBelowLease { ttl_ms, lease_ms } => write!(
                f,
                "ttlMs ({ttl_ms}) must be at least leaseMs ({lease_ms}): a record must outlive the lease of its claim"
            ),
        }
    }
}

impl std::error::Error for LedgerConfigError {}

impl LedgerConfig {
    /// Settings with `ttl_ms ≥ lease_ms`, or the error that names the problem.
    pub const fn new(ttl_ms: u64, lease_ms: u64) -> Result<LedgerConfig, LedgerConfigError> {
        if ttl_ms < lease_ms {
            return Err(LedgerConfigError::TtlBelowLease { ttl_ms, lease_ms });
        }
        Ok(LedgerConfig { ttl_ms, lease_ms })
    }
}
