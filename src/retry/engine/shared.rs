//! The engine's side of a breaker and budget shared by the processes calling one server: what it hands out,
//! and the newest state it takes in. It still decides every attempt from its own state.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Engine {
    /// The breaker's state to share with other processes calling this server (`None` without a breaker).
    pub fn breaker_snapshot(&self) -> Option<BreakerSnapshot> {
        self.breaker.as_ref().map(Breaker::snapshot)
    }

    /// Whether the next admission at `now_ms` would send the breaker's probe (a process sharing its breaker asks
    /// for the probe lease first; see [`Breaker::probe_due`]). `false` without a breaker.
    pub fn breaker_probe_due(&self, now_ms: u64) -> bool {
        self.breaker.as_ref().is_some_and(|b| b.probe_due(now_ms))
    }

    /// The breaker's failures in a row while closed (0 without a breaker), to share.
    pub fn breaker_failures(&self) -> u32 {
        self.breaker.as_ref().map_or(0, Breaker::consecutive_failures)
    }

    /// Adopts the failures in a row the processes sharing this breaker counted ([`Breaker::adopt_failures`]: they
    /// count toward the next trip, which a failure of this engine's own makes).
    pub fn adopt_failures(&mut self, failures: u32) {
        if let Some(b) = self.breaker.as_mut() {
            b.adopt_failures(failures);
        }
    }

    /// Adopts what other processes shared: a breaker snapshot ([`Breaker::adopt`]: the newer state wins) and a
    /// budget's tokens in thousandths ([`RetryBudget::adopt`]: only ever lowers this one). Either is ignored
    /// when this engine has no breaker or no budget. Returns the breaker's transition, if its state changed.
    /// The engine still decides every attempt from its own state.
    pub fn adopt(&mut self, breaker: Option<BreakerSnapshot>, budget_milli: Option<u64>) -> Option<Transition> {
        if let (Some(b), Some(milli)) = (self.budget.as_mut(), budget_milli) {
            b.adopt(milli);
        }
        match (self.breaker.as_mut(), breaker) {
            (Some(b), Some(s)) => b.adopt(s),
            _ => None,
        }
    }
}
