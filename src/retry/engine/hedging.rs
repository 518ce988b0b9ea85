//! Hedged reads on the engine: whether a copy of a read may race the attempt in flight, and what its end does to
//! the call. See [`hedge`](mod@crate::retry::hedge).

#[allow(clippy::wildcard_imports)]
use super::*;

impl Engine {
    /// Turns hedged reads on with `config` (`None`: off, the default). See [`hedge`](mod@crate::retry::hedge).
    pub fn set_hedging(&mut self, config: Option<HedgeConfig>) {
        self.hedging.config = config;
    }

    /// The hedging settings, or `None` when off.
    pub const fn hedging(&self) -> Option<HedgeConfig> {
        self.hedging.config
    }

    /// Hedges sent, and hedges that won, since the engine began.
    pub const fn hedge_counts(&self) -> (u64, u64) {
        (self.hedging.hedges_sent, self.hedging.hedges_won)
    }

    /// Asks to send a hedge (a concurrent copy) of `call`'s attempt in flight at `now_ms`. Allowed only for a
    /// `read_only` or `idempotent` tool, within `max_hedges` and the call's deadline, with the breaker closed,
    /// the retry budget able to pay a retry's cost (it is spent, like a retry's) and hedges in flight under
    /// max(3, 20 % of requests in flight). `Err` names the rule that refused; nothing is spent then.
    /// Where outgoing requests were counted at the attempt's admission, [`Engine::hedge_within`] with what
    /// the engine counted since.
    pub fn hedge(&mut self, call: &mut CallState, safety: Safety, now_ms: u64) -> Result<HedgeAdmission, HedgeRefusal> {
        self.hedge_within(call, safety, now_ms, None)
    }

    /// [`Engine::hedge`] where outgoing requests are counted (a Worker's subrequests): a hedge costs
    /// [`HEDGE_SUBREQUESTS`] (its request, and the `notifications/cancelled` for the copy that loses), paid
    /// from the smaller of `room` (what the call may still make now; `None`: not given) and the call's room
    /// as the engine counted it since the attempt's admission ([`CallState::room`]). When that cannot pay
    /// the hedge is refused ([`HedgeRefusal::SubrequestBudget`]) and the attempt in flight goes on alone.
    pub fn hedge_within(
        &mut self,
        call: &mut CallState,
        safety: Safety,
        now_ms: u64,
        room: Option<u32>,
    ) -> Result<HedgeAdmission, HedgeRefusal> {
        let room = match (call.room, room) {
            (Some(counted), Some(given)) => Some(counted.min(given)),
            (counted, given) => counted.or(given),
        };
        let closed = self.breaker_state().is_none() || self.breaker_state() == Some(BreakerState::Closed);
        self.hedging.check(call, safety, now_ms, closed, room)?;
        let cost = self.policy.budget.map_or(0, |b| b.retry_cost_milli);
        if let Some(b) = self.budget.as_mut() {
            b.refill(now_ms);
            if !b.try_withdraw(cost) {
                return Err(HedgeRefusal::Budget);
            }
            call.spent_milli = call.spent_milli.saturating_add(cost);
        }
        call.hedges = call.hedges.saturating_add(1);
        call.hedges_in_flight = call.hedges_in_flight.saturating_add(1);
        self.hedging.hedges_in_flight = self.hedging.hedges_in_flight.saturating_add(1);
        self.hedging.requests_in_flight = self.hedging.requests_in_flight.saturating_add(1);
        self.hedging.hedges_sent = self.hedging.hedges_sent.saturating_add(1);
        call.room = room.map(|room| room.saturating_sub(HEDGE_SUBREQUESTS));
        let timeout_ms = self.policy.attempt_timeout_ms.min(call.deadline_ms.saturating_sub(now_ms));
        Ok(HedgeAdmission { hedge: call.hedges, timeout_ms })
    }

    /// One hedge of `call` ended: `won` when its answer is the call's (the caller records that outcome with
    /// [`Engine::record`], as the attempt's), else it lost, failed or was cancelled. A call with no hedge in
    /// flight changes nothing.
    pub fn hedge_ended(&mut self, call: &mut CallState, won: bool) {
        if call.hedges_in_flight == 0 {
            return;
        }
        call.hedges_in_flight = call.hedges_in_flight.saturating_sub(1);
        self.hedging.hedges_in_flight = self.hedging.hedges_in_flight.saturating_sub(1);
        self.hedging.requests_in_flight = self.hedging.requests_in_flight.saturating_sub(1);
        if won {
            self.hedging.hedges_won = self.hedging.hedges_won.saturating_add(1);
        }
    }

    /// Attempts and hedges of this engine in flight, and of them the hedges.
    pub const fn in_flight(&self) -> (u32, u32) {
        (self.hedging.requests_in_flight, self.hedging.hedges_in_flight)
    }
}
