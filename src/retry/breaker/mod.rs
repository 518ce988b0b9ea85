//! The circuit breaker: stop sending to a server that keeps failing, then probe it.
//!
//! Fed only by transport-level failures ([`Classification::is_transport_failure`](super::Classification::is_transport_failure)):
//! a tool that answers `isError: true` is a healthy server saying no and never opens the breaker. It
//! trips on `consecutive_failures` in a row, or when at least `minimum_calls` in the current window failed
//! at `failure_ratio` or more (Hystrix-style). After `open_ms` it lets exactly one probe through
//! (half-open); the probe's outcome closes or re-opens it. A probe that never reports back is replaced
//! once its own time is up (the probe timeout: the engine's per-attempt timeout, at least `open_ms`), so a
//! server that hangs gets one probe at a time, not one per `open_ms`; a probe whose call was cancelled frees
//! its slot at once. Time is `now_ms`, passed in; a clock that goes backwards is treated as standing still.
//!
//! The open time is short (2 s) on purpose: each client learns that the server is back only from a probe, so
//! the open time is how long calls stay shed after the server recovers. While the server stays down, a
//! client sends at most one attempt per `open_ms` plus its next call's wait (at one call a second, one
//! attempt in three). Client-side adaptive throttling (the SRE book's `(requests − K·accepts)/(requests + 1)`)
//! was measured in the storm simulator and lost on both axes at these rates: a random admission leaves a
//! long tail of clients that have not yet sent the one call that would tell them the server is back.

/// Breaker settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BreakerConfig {
    /// Failures in a row that open the breaker.
    pub consecutive_failures: u32,
    /// The failure share (thousandths) that opens the breaker once `minimum_calls` were seen in a window.
    pub failure_ratio_permille: u32,
    /// Calls a window needs before the ratio counts.
    pub minimum_calls: u32,
    /// The length of one counting window.
    pub window_ms: u64,
    /// How long the breaker stays open before a probe: the longest calls stay shed after the server is back.
    pub open_ms: u64,
}

impl Default for BreakerConfig {
    /// 5 failures in a row (cockatiel's `ConsecutiveBreaker(5)`, Envoy's `consecutive_5xx: 5`), or half of
    /// at least 10 calls in a 10 s window (Hystrix's 50 % over a 10 s rolling window); open for 2 s (the
    /// DESIGN's "within a second or two of the server's recovery"; Envoy's outlier ejection starts at 30 s,
    /// cockatiel's `halfOpenAfter` at 10 s, both measured in the storm simulator as what costs recovery).
    fn default() -> Self {
        BreakerConfig {
            consecutive_failures: 5,
            failure_ratio_permille: 500,
            minimum_calls: 10,
            window_ms: 10_000,
            open_ms: 2_000,
        }
    }
}

/// Where the breaker stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BreakerState {
    /// Calls go through.
    Closed,
    /// Calls fail fast until `until_ms`.
    Open {
        /// When a probe may go.
        until_ms: u64,
    },
    /// One probe is out; others fail fast.
    HalfOpen {
        /// When the probe went.
        probe_ms: u64,
    },
}

impl BreakerState {
    /// The stable snake_case name.
    pub const fn as_str(&self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open { .. } => "open",
            BreakerState::HalfOpen { .. } => "half_open",
        }
    }
}

/// A state change, for events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transition {
    /// The state before.
    pub from: BreakerState,
    /// The state after.
    pub to: BreakerState,
}

/// A circuit breaker for one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breaker {
    config: BreakerConfig,
    state: BreakerState,
    consecutive: u32,
    window_start_ms: u64,
    window_calls: u32,
    window_failures: u32,
    probe_timeout_ms: u64,
    probe_out: bool,
    since_ms: u64,
    seen: bool,
    /// How many times it has opened (wrapping): a held call compares it to learn that a probe failed meanwhile.
    openings: u32,
}

/// A breaker's state as it is shared with other processes (other isolates, other Node instances calling the same
/// server): which state, and since when. Stored elsewhere (a Durable Object), never decided there: each process's
/// own breaker decides, after [`Breaker::adopt`]ing the newest snapshot it was handed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BreakerSnapshot {
    /// The state's kind; its times are the snapshot's `since_ms` (an open breaker's `until_ms` is
    /// `since_ms + open_ms` of the breaker that adopts it).
    pub state: SharedState,
    /// When the state began: when it opened, when its probe went, when it closed.
    pub since_ms: u64,
}

impl BreakerSnapshot {
    /// The snapshot as of `now_ms` on the adopting process's clock: a state that began later (a snapshot from the
    /// future: a clock ahead, a store that trusted one, a bad report) is taken as begun now. Adopted as it was, an
    /// open one would shed calls until its `since_ms + open_ms`, however far ahead, and every honest snapshot after
    /// it would be older and refused; taken at `now_ms`, it sheds at most `open_ms` and the next report wins.
    #[must_use]
    pub const fn no_later_than(self, now_ms: u64) -> Self {
        let since_ms = if self.since_ms > now_ms { now_ms } else { self.since_ms };
        BreakerSnapshot { state: self.state, since_ms }
    }
}

/// The kind of a [`BreakerSnapshot`] (the [`BreakerState`] names, without their times).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SharedState {
    /// Calls go through.
    Closed,
    /// Calls fail fast until `since_ms + open_ms`.
    Open,
    /// A probe went at `since_ms` (from any process): the others fail fast until it reports or its time is up.
    HalfOpen,
}

impl SharedState {
    /// Every kind, by code (the [`BreakerState`] order).
    pub const ALL: [SharedState; 3] = [SharedState::Closed, SharedState::Open, SharedState::HalfOpen];
}

impl Breaker {
    /// A closed breaker. A probe that never reports back is replaced after `open_ms` (see
    /// [`Breaker::with_probe_timeout`]).
    pub const fn new(config: BreakerConfig) -> Self {
        Breaker {
            config,
            state: BreakerState::Closed,
            consecutive: 0,
            window_start_ms: 0,
            window_calls: 0,
            window_failures: 0,
            probe_timeout_ms: config.open_ms,
            probe_out: false,
            since_ms: 0,
            seen: false,
            openings: 0,
        }
    }

    /// Waits `probe_timeout_ms` (at least `open_ms`) before replacing a probe that never reported back: the
    /// engine passes its per-attempt timeout, so a probe still in flight is never doubled.
    #[must_use]
    pub const fn with_probe_timeout(mut self, probe_timeout_ms: u64) -> Self {
        self.probe_timeout_ms =
            if probe_timeout_ms > self.config.open_ms { probe_timeout_ms } else { self.config.open_ms };
        self
    }

    /// The current state (as last changed; an open breaker whose time is up turns half-open at the
    /// next [`Breaker::admit`]).
    pub const fn state(&self) -> BreakerState {
        self.state
    }

    /// The settings.
    pub const fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// Asks to send one attempt at `now_ms`. Returns whether it may go, and the transition it caused.
    pub fn admit(&mut self, now_ms: u64) -> (bool, Option<Transition>) {
        match self.state {
            BreakerState::Closed => (true, None),
            BreakerState::Open { until_ms } if now_ms >= until_ms => {
                self.probe_out = true;
                (true, self.move_to(BreakerState::HalfOpen { probe_ms: now_ms }, now_ms))
            }
            BreakerState::Open { .. } => (false, None),
            BreakerState::HalfOpen { probe_ms }
                if !self.probe_out || now_ms >= probe_ms.saturating_add(self.probe_timeout_ms) =>
            {
                // The probe was cancelled, or never reported back: let another one go.
                self.probe_out = true;
                self.state = BreakerState::HalfOpen { probe_ms: now_ms };
                self.since_ms = now_ms;
                (true, None)
            }
            BreakerState::HalfOpen { .. } => (false, None),
        }
    }

    /// How many times it has opened (wrapping), by its own failures or by adopting a shared state.
    pub const fn openings(&self) -> u32 {
        self.openings
    }

    /// When an open breaker will next admit a probe (`None` when closed or half-open).
    pub const fn open_until(&self) -> Option<u64> {
        match self.state {
            BreakerState::Open { until_ms } => Some(until_ms),
            _ => None,
        }
    }

    /// Records that an attempt was cancelled (it says nothing about the server). A half-open breaker's probe
    /// slot is freed, so that the next attempt probes at once instead of after the probe timeout.
    pub fn cancel(&mut self) {
        if matches!(self.state, BreakerState::HalfOpen { .. }) {
            self.probe_out = false;
        }
    }

    /// Records an attempt's result: `failure` is a transport-level failure. Returns the transition.
    pub fn record(&mut self, now_ms: u64, failure: bool) -> Option<Transition> {
        self.seen = true;
        match self.state {
            BreakerState::HalfOpen { .. } => {
                self.probe_out = false;
                if failure {
                    self.open(now_ms)
                } else {
                    self.reset_counts(now_ms);
                    self.move_to(BreakerState::Closed, now_ms)
                }
            }
            // Late answers to attempts admitted before the breaker opened change nothing.
            BreakerState::Open { .. } => None,
            BreakerState::Closed => {
                if now_ms >= self.window_start_ms.saturating_add(self.config.window_ms) {
                    self.window_start_ms = now_ms;
                    self.window_calls = 0;
                    self.window_failures = 0;
                }
                self.window_calls = self.window_calls.saturating_add(1);
                if failure {
                    self.window_failures = self.window_failures.saturating_add(1);
                    self.consecutive = self.consecutive.saturating_add(1);
                } else {
                    self.consecutive = 0;
                }
                let by_run = self.consecutive >= self.config.consecutive_failures;
                let by_ratio = self.window_calls >= self.config.minimum_calls
                    && u64::from(self.window_failures).saturating_mul(1000)
                        >= u64::from(self.window_calls).saturating_mul(u64::from(self.config.failure_ratio_permille));
                if failure && (by_run || by_ratio) {
                    self.open(now_ms)
                } else {
                    None
                }
            }
        }
    }

    fn open(&mut self, now_ms: u64) -> Option<Transition> {
        self.reset_counts(now_ms);
        self.move_to(BreakerState::Open { until_ms: now_ms.saturating_add(self.config.open_ms) }, now_ms)
    }

    fn reset_counts(&mut self, now_ms: u64) {
        self.consecutive = 0;
        self.window_calls = 0;
        self.window_failures = 0;
        self.window_start_ms = now_ms;
    }

    fn move_to(&mut self, to: BreakerState, since_ms: u64) -> Option<Transition> {
        let from = self.state;
        if matches!(to, BreakerState::Open { .. }) {
            self.openings = self.openings.wrapping_add(1);
        }
        self.state = to;
        self.since_ms = since_ms;
        Some(Transition { from, to })
    }

    /// Whether the next [`Breaker::admit`] at `now_ms` would send a probe (an open breaker whose time is up, or a
    /// half-open one whose probe was cancelled or never reported back). A process that shares its breaker asks
    /// for the probe lease first (one process probes at a time), and adopts the holder's half-open state if
    /// another has it.
    pub const fn probe_due(&self, now_ms: u64) -> bool {
        match self.state {
            BreakerState::Closed => false,
            BreakerState::Open { until_ms } => now_ms >= until_ms,
            BreakerState::HalfOpen { probe_ms } => {
                !self.probe_out || now_ms >= probe_ms.saturating_add(self.probe_timeout_ms)
            }
        }
    }

    /// Failures in a row while closed (what a process shares so that the fleet counts toward a trip together).
    pub const fn consecutive_failures(&self) -> u32 {
        self.consecutive
    }

    /// Takes over the failures in a row the fleet counted (the processes sharing this breaker, as last synced):
    /// while closed, this breaker's own count becomes at least `failures`. It does not open here: the next failure
    /// of its own is what trips it (so a process that has just been answered never opens on the others' word).
    pub fn adopt_failures(&mut self, failures: u32) {
        if self.state == BreakerState::Closed {
            self.consecutive = self.consecutive.max(failures);
        }
    }

    /// The state to share: its kind and when it began.
    pub const fn snapshot(&self) -> BreakerSnapshot {
        let state = match self.state {
            BreakerState::Closed => SharedState::Closed,
            BreakerState::Open { .. } => SharedState::Open,
            BreakerState::HalfOpen { .. } => SharedState::HalfOpen,
        };
        BreakerSnapshot { state, since_ms: self.since_ms }
    }

    /// Takes over a snapshot another process shared, when it is newer than this breaker's own state (it began
    /// later; an equal or older one changes nothing, so adopting is idempotent and the newest report wins
    /// everywhere). Open: fail fast until `since_ms + open_ms` (this breaker's `open_ms`). Half-open: another
    /// process's probe is out, so this one sends none until that probe's time is up. Closed: the server answered
    /// a probe, so the counts start again. Returns the transition, when the state's kind changed.
    ///
    /// A closed breaker takes a shedding state (open, half-open) only if its own last attempt failed, or it has
    /// seen none yet (a fresh process: the fleet knows more than it does). One process's bad luck in a brownout
    /// (five failures in a row at 20 % failures) then does not shed every other process's calls: measured in the
    /// storm simulator, adopting every open cost a tenth of the calls answered in the long brownout.
    pub fn adopt(&mut self, snapshot: BreakerSnapshot) -> Option<Transition> {
        let since = snapshot.since_ms;
        if since <= self.since_ms {
            return None;
        }
        let shedding = snapshot.state != SharedState::Closed;
        if shedding && self.state == BreakerState::Closed && self.seen && self.consecutive == 0 {
            return None;
        }
        let from = self.state;
        match snapshot.state {
            SharedState::Closed if from == BreakerState::Closed => {
                // Already closed: the newer report says nothing about this process's own counts.
                self.since_ms = since;
                return None;
            }
            SharedState::Closed => {
                self.probe_out = false;
                self.reset_counts(since);
                self.move_to(BreakerState::Closed, since);
            }
            SharedState::Open => {
                self.probe_out = false;
                self.reset_counts(since);
                self.move_to(BreakerState::Open { until_ms: since.saturating_add(self.config.open_ms) }, since);
            }
            SharedState::HalfOpen => {
                self.probe_out = true;
                self.move_to(BreakerState::HalfOpen { probe_ms: since }, since);
            }
        }
        (from.as_str() != self.state.as_str()).then_some(Transition { from, to: self.state })
    }
}

#[cfg(test)]
mod tests;
