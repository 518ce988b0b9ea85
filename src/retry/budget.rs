//! The retry budget: a token bucket per server, so that retries cannot multiply an outage.
//!
//! ## Why a budget and not only max attempts?
//! Max attempts bounds one call; it does not bound a fleet. With 3 attempts, a server that fails every
//! request receives 3× its normal load exactly when it can least take it. A budget bounds retries across
//! *all* calls to one server: every retry spends tokens, every success earns a few back (AWS SDK "standard"
//! retry mode: 500 tokens, a retry costs 5, a timeout 10, a first-try success returns 1; gRPC retry
//! throttling: every failure costs a token, every success pays back a fraction). When the bucket is empty,
//! failures are reported at once instead of retried. In a full outage there are no successes, so the
//! retries one client adds are at most `capacity / retry_cost` in total, however long the outage lasts.
//!
//! ## Which semantics, and why
//! AWS standard mode refunds a retry's cost when the retry succeeds; under a brownout where most first
//! attempts fail and most retries succeed, that refund keeps the bucket full and the budget never binds
//! (our storm benchmark showed "defaults" equal to "no budget"). We follow gRPC's throttling instead: a
//! retry's cost is never refunded; an attempt the tool answered returns `success_refill` (0.1 token). So in
//! steady state **retries ≤ capacity + successes / 10**, which is what the README promises.
//!
//! ## A floor that grows with time
//! A bucket that refills only on success stays empty through an outage with no success at all, so after a
//! one-second blip every call still in flight would be refused its retry. The bucket also refills with time:
//! `refill_per_second_milli` thousandths of a token a second, up to its capacity (Finagle's `RetryBudget`: a
//! share of requests plus `minRetriesPerSec`; Envoy's retry budget: at least three concurrent retries). So a quiet
//! client can always retry a few, and **retries ≤ capacity + successes / 10 + refill × seconds** over any window.
//!
//! Tokens are kept in thousandths, in integers: no float drift, no overflow (saturating), never negative.

/// Budget settings, in thousandths of a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BudgetConfig {
    /// Tokens the bucket holds, and starts with.
    pub capacity_milli: u64,
    /// Tokens one retry after a transient failure costs.
    pub retry_cost_milli: u64,
    /// Tokens one retry after a timeout costs (a timeout holds server resources longer).
    pub timeout_cost_milli: u64,
    /// Tokens a success returns.
    pub success_refill_milli: u64,
    /// Tokens the bucket regains each second, whatever happens (0: only successes refill it).
    pub refill_per_second_milli: u64,
}

impl Default for BudgetConfig {
    /// 10 tokens, a retry costs 1, a retry after a timeout 2, a success returns 0.1, and one token comes back
    /// a second: into a full outage at most 10 retries per client and one a second after that, and in steady
    /// state one retry per ten successes plus one a second.
    fn default() -> Self {
        BudgetConfig {
            capacity_milli: 10_000,
            retry_cost_milli: 1_000,
            timeout_cost_milli: 2_000,
            success_refill_milli: 100,
            refill_per_second_milli: DEFAULT_REFILL_PER_SECOND_MILLI,
        }
    }
}

/// The default refill with time, in thousandths of a token a second.
pub const DEFAULT_REFILL_PER_SECOND_MILLI: u64 = 1_000;

/// A token bucket. Starts full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryBudget {
    config: BudgetConfig,
    tokens_milli: u64,
    /// When the refill with time was last counted (`None`: never; the first [`RetryBudget::refill`] starts it).
    refilled_ms: Option<u64>,
}

impl RetryBudget {
    /// A full bucket.
    pub const fn new(config: BudgetConfig) -> Self {
        RetryBudget { config, tokens_milli: config.capacity_milli, refilled_ms: None }
    }

    /// Counts the refill with time up to `now_ms` (capped at capacity). A clock that goes back refills nothing.
    /// Less than a thousandth of a token is carried to the next count, never lost.
    pub fn refill(&mut self, now_ms: u64) {
        let rate = self.config.refill_per_second_milli;
        let Some(since) = self.refilled_ms else {
            self.refilled_ms = Some(now_ms);
            return;
        };
        if rate == 0 || now_ms <= since {
            self.refilled_ms = Some(since.max(now_ms));
            return;
        }
        let elapsed = now_ms.saturating_sub(since);
        // Saturating: a product past u64 is far above any capacity, which caps it below.
        let gained = elapsed.saturating_mul(rate).checked_div(1000).unwrap_or(0);
        if gained == 0 {
            return; // keep `since`: the time accrues until it is worth a thousandth
        }
        self.tokens_milli = self.tokens_milli.saturating_add(gained).min(self.config.capacity_milli);
        self.refilled_ms = Some(now_ms);
    }

    /// How long from the last [`RetryBudget::refill`] until the bucket holds `cost_milli`: `Some(0)` when it does
    /// now, `None` when it never will by time (no refill with time, or a cost above capacity).
    pub fn wait_ms(&self, cost_milli: u64) -> Option<u64> {
        if self.tokens_milli >= cost_milli {
            return Some(0);
        }
        let rate = self.config.refill_per_second_milli;
        if rate == 0 || cost_milli > self.config.capacity_milli {
            return None;
        }
        let missing = cost_milli.saturating_sub(self.tokens_milli);
        // ceil(missing * 1000 / rate), rate > 0 (missing ≤ capacity ≤ 10⁹: no overflow).
        missing.saturating_mul(1000).checked_div(rate).map(|ms| {
            let exact = ms.saturating_mul(rate) == missing.saturating_mul(1000);
            if exact {
                ms
            } else {
                ms.saturating_add(1)
            }
        })
    }

    /// The tokens left, in thousandths.
    pub const fn tokens_milli(&self) -> u64 {
        self.tokens_milli
    }

    /// The settings.
    pub const fn config(&self) -> &BudgetConfig {
        &self.config
    }

    /// Spends `cost_milli` if the bucket holds that much; returns whether it did. Never goes below zero.
    pub fn try_withdraw(&mut self, cost_milli: u64) -> bool {
        match self.tokens_milli.checked_sub(cost_milli) {
            Some(left) => {
                self.tokens_milli = left;
                true
            }
            None => false,
        }
    }

    /// Takes over a token count another process shared (the fleet's last report): the bucket only goes down
    /// to it, never up (a process refills by its own successes). Returns the tokens left.
    pub fn adopt(&mut self, shared_milli: u64) -> u64 {
        self.tokens_milli = self.tokens_milli.min(shared_milli);
        self.tokens_milli
    }

    /// An attempt got an answer from the tool: returns the success refill, up to capacity. What the call's
    /// own retries spent is **not** refunded (gRPC retry throttling, not AWS standard mode): a retry that
    /// succeeded still added load, and refunding it would let a server that fails every first attempt
    /// draw one retry per call forever. In steady state this allows one retry per
    /// `retry_cost / success_refill` successes (10 with the defaults).
    pub fn on_success(&mut self) {
        self.tokens_milli =
            self.tokens_milli.saturating_add(self.config.success_refill_milli).min(self.config.capacity_milli);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_and_refills_within_bounds() {
        let mut b = RetryBudget::new(BudgetConfig::default());
        let mut n = 0;
        while b.try_withdraw(1_000) {
            n += 1;
        }
        assert_eq!(n, 10);
        assert_eq!(b.tokens_milli(), 0);
        assert!(!b.try_withdraw(1));
        for _ in 0..9 {
            b.on_success();
        }
        assert_eq!(b.tokens_milli(), 900);
        assert!(!b.try_withdraw(1_000));
        b.on_success();
        assert!(b.try_withdraw(1_000));
        for _ in 0..200 {
            b.on_success();
        }
        assert_eq!(b.tokens_milli(), 10_000);
    }

    #[test]
    fn time_refills_the_bucket_up_to_capacity() {
        let mut b = RetryBudget::new(BudgetConfig::default());
        b.refill(1_000);
        while b.try_withdraw(1_000) {}
        assert_eq!(b.wait_ms(1_000), Some(1_000), "one token a second");
        assert_eq!(b.wait_ms(2_000), Some(2_000));
        b.refill(1_000);
        assert_eq!(b.tokens_milli(), 0, "no time passed");
        b.refill(1_500);
        assert_eq!(b.tokens_milli(), 500);
        for t in 1_501..=1_999 {
            b.refill(t); // many small steps lose nothing
        }
        b.refill(2_000);
        assert_eq!(b.tokens_milli(), 1_000);
        b.refill(900);
        assert_eq!(b.tokens_milli(), 1_000, "a clock that goes back refills nothing");
        b.refill(3_000_000);
        assert_eq!(b.tokens_milli(), 10_000, "capped at capacity");
        assert_eq!(b.wait_ms(10_001), None, "above capacity: never");
        let mut off = RetryBudget::new(BudgetConfig { refill_per_second_milli: 0, ..BudgetConfig::default() });
        off.refill(0);
        while off.try_withdraw(1_000) {}
        off.refill(u64::MAX);
        assert_eq!((off.tokens_milli(), off.wait_ms(1)), (0, None), "off: only successes refill");
    }

    #[test]
    fn adopting_a_shared_count_only_lowers_the_bucket() {
        let mut b = RetryBudget::new(BudgetConfig::default());
        assert_eq!(b.adopt(4_000), 4_000);
        assert_eq!(b.adopt(9_000), 4_000, "a higher count never refills this bucket");
        b.on_success();
        assert_eq!(b.tokens_milli(), 4_100);
        assert_eq!(b.adopt(0), 0);
        assert!(!b.try_withdraw(1));
    }
}
