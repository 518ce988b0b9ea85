//! A running handler's claim kept, as a sans-IO driver: the lease heartbeat both faces run while a write's
//! handler runs (the JS `ClaimHold`, the rmcp `OperationLedger::hold`). The face carries out each [`HoldStep`]
//! — a renewal's versioned write, a read back, a fenced transaction — and wakes the driver at
//! [`Hold::timeout`]; every choice is here: when to renew, when the claim is given up (`not_renewed`) or found
//! taken (`record_changed`), when a renewal is late, when a hung renewal stops holding the claim, what the run
//! finishes with.
//!
//! Two clocks, both handed in with every event: `now_ms`, the ledger's (wall) clock the records are written
//! by, and `mono_ms`, the process's monotonic clock, which never stops or goes back. The give-up point — past
//! it the handler must not commit — is kept on the monotonic clock, so a process that was paused, or whose
//! wall clock stopped or went back, learns it lost the claim before it commits.
//!
//! ```text
//!              ┌──────────── Timer (renewal due) ─────────► Renew ──Renewed(won)──► (held, due again)
//!   new ─► held│                                              │ Renewed(changed) ─► lost: record_changed
//!              │                                              │ Renewed(failed)  ─► again in a quarter, or
//!              │                                              │                     lost (too late to retry)
//!              │ Timer / Look past the give-up point ─► lost: not_renewed (whatever the store does)
//!              │ Commit ─► Commit(renewal) ─► Committed(won) / (changed ─► ReadBack) / (failed)
//!              └ Stop ─► Done, after the renewal in flight (or its ReadBack, once it hung past the point)
//! ```
//!
//! The driver is `Copy` and holds no record: the face keeps the claim record, and rebuilds the current one
//! from [`Hold::claim`] (a renewal changes only the lease and the version). The JS face's state crosses the
//! boundary as [`HOLD_WORDS`] numbers ([`Hold::pack`], [`Hold::unpack`]).

use super::record::{keep_alive_ms, LedgerConfig, Record, RecordState};

mod pack;
mod read;

pub use super::hold_events::{HoldAnswer, HoldEvent, HoldStep, HoldTell, LostReason, Renewal, Standing};

/// Which write is in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flight {
    None,
    Renewing,
    Committing,
    /// Reading back the renewal that hung (the run is stopping).
    ReadingRenewal,
    /// Reading back the commit the store said it refused.
    ReadingCommit,
}

/// How many numbers a hold's state is ([`Hold::pack`]).
pub const HOLD_WORDS: usize = 18;

/// A claim kept while its handler runs (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hold {
    fence: u64,
    version: u64,
    lease_until_ms: u64,
    every: u64,
    lease_ms: u64,
    /// The ledger's clock and the monotonic one, read together when the hold began.
    anchor_ms: u64,
    anchor_mono: u64,
    /// The give-up point (monotonic).
    point: u64,
    /// When the next renewal is due (monotonic).
    due: u64,
    /// The write in flight: its lease, when it was sent (monotonic), when it stops holding the claim
    /// (monotonic: its hung point).
    sent_lease_until: u64,
    sent_mono: u64,
    /// The version the write in flight replaces.
    sent_expected: u64,
    hung: u64,
    /// What was left of the lease when a late renewal answered.
    late_left: u64,
    /// A renewal left unanswered when a commit went on over it (its answer is still heard): the version it
    /// replaces, its lease, when it was sent (monotonic).
    orphan_expected: u64,
    orphan_lease: u64,
    orphan_mono: u64,
    flight: Flight,
    standing: Standing,
    stopping: bool,
    /// A commit waits for the renewal in flight.
    commit_wanted: bool,
    /// The loss was told.
    told_lost: bool,
    /// A late renewal waits to be told.
    late: bool,
    /// `orphan_*` hold a renewal still unanswered.
    orphan: bool,
}

impl Hold {
    /// The hold of `claim`, just written at `now_ms` (the ledger's clock) = `mono_ms` (the monotonic one). A
    /// claim that is not pending cannot be kept: it is lost (`not_renewed`) from the start.
    pub fn new(claim: &Record, config: &LedgerConfig, now_ms: u64, mono_ms: u64) -> Hold {
        let every = keep_alive_ms(config);
        let mut h = Hold {
            fence: claim.version,
            version: claim.version,
            lease_until_ms: claim.lease_until_ms,
            every,
            lease_ms: config.lease_ms,
            anchor_ms: now_ms,
            anchor_mono: mono_ms,
            point: 0,
            due: mono_ms.saturating_add(every),
            sent_lease_until: 0,
            sent_mono: 0,
            sent_expected: 0,
            hung: 0,
            late_left: 0,
            orphan_expected: 0,
            orphan_lease: 0,
            orphan_mono: 0,
            flight: Flight::None,
            standing: Standing::Held,
            stopping: false,
            commit_wanted: false,
            told_lost: false,
            late: false,
            orphan: false,
        };
        h.point = h.give_up_point(mono_ms, claim.lease_until_ms);
        if claim.state != RecordState::Pending {
            h.lose(LostReason::NotRenewed);
        }
        h
    }

    /// The give-up point (monotonic) of a lease ending at `lease_until_ms` written by the write sent at
    /// `sent` (monotonic): its end − a third, read against the ledger's clock once, at the hold's start (so a
    /// wall clock that stops or goes back never stretches it), and never more than two thirds of the lease
    /// after the write was sent.
    fn give_up_point(&self, sent: u64, lease_until_ms: u64) -> u64 {
        let by_lease = lease_until_ms.saturating_sub(self.anchor_ms).saturating_sub(self.every);
        let by_send = self.lease_ms.saturating_sub(self.every);
        self.anchor_mono.saturating_add(by_lease).min(sent.saturating_add(by_send))
    }

    fn lose(&mut self, reason: LostReason) {
        if self.standing == Standing::Held {
            self.standing = Standing::Lost(reason);
        }
    }

    /// Past the give-up point: lost (unless the run ended).
    fn check_clock(&mut self, mono_ms: u64) {
        if mono_ms >= self.point {
            self.lose(LostReason::NotRenewed);
        }
    }

    fn renewal(&self, now_ms: u64) -> Renewal {
        let mut lease_until_ms = now_ms.saturating_add(self.lease_ms).max(self.lease_until_ms);
        if self.orphan {
            // Never the very record of the renewal still unanswered: a read back must tell the two apart.
            lease_until_ms = lease_until_ms.max(self.orphan_lease.saturating_add(1));
        }
        Renewal { version: self.version.saturating_add(1), lease_until_ms, expected: self.version }
    }

    fn sent(&self) -> Renewal {
        Renewal {
            version: self.sent_expected.saturating_add(1),
            lease_until_ms: self.sent_lease_until,
            expected: self.sent_expected,
        }
    }

    /// `r` (sent at `sent_mono`) landed: the claim is at its version now.
    fn landed(&mut self) {
        if self.sent_expected != self.version {
            return; // the claim moved since it was sent: it cannot have landed over it
        }
        let r = self.sent();
        self.version = r.version;
        self.lease_until_ms = r.lease_until_ms;
        self.point = self.give_up_point(self.sent_mono, r.lease_until_ms);
    }

    /// Sends a write of the claim renewed at `now_ms`.
    fn send(&mut self, flight: Flight, now_ms: u64, mono_ms: u64) -> Renewal {
        let r = self.renewal(now_ms);
        self.flight = flight;
        self.sent_lease_until = r.lease_until_ms;
        self.sent_mono = mono_ms;
        self.sent_expected = r.expected;
        // A renewal in flight stops holding the claim at the give-up point on the ledger's clock too (or, past
        // it already, at the lease's end), whether or not the store has answered.
        let by_ledger = self.lease_until_ms.saturating_sub(self.every);
        let hung_ms = if now_ms >= by_ledger { self.lease_until_ms } else { by_ledger };
        self.hung = self.point.min(mono_ms.saturating_add(hung_ms.saturating_sub(now_ms)));
        r
    }

    /// One step: `event` happened at `now_ms` (the ledger's clock; unused by [`HoldEvent::Look`]) and `mono_ms`
    /// (the monotonic clock, never behind an earlier event's). Returns what the face does next; then
    /// [`Hold::tell`] what operators hear, if anything.
    pub fn step(&mut self, event: HoldEvent, now_ms: u64, mono_ms: u64) -> HoldStep {
        if self.stopping && self.flight == Flight::None {
            return self.end(mono_ms); // over: every later event only says so
        }
        self.check_clock(mono_ms);
        match event {
            HoldEvent::Look => HoldStep::Wait,
            HoldEvent::Timer => self.on_timer(now_ms, mono_ms),
            HoldEvent::Renewed(answer) => self.on_renewed(answer, now_ms, mono_ms),
            HoldEvent::Stop => {
                self.stopping = true;
                self.commit_wanted = false;
                if self.standing == Standing::Held {
                    self.standing = Standing::Ended;
                }
                match self.flight {
                    Flight::Renewing if mono_ms >= self.hung => self.read_back(mono_ms),
                    Flight::None | Flight::Committing => {
                        self.flight = Flight::None;
                        self.end(mono_ms)
                    }
                    _ => HoldStep::Wait,
                }
            }
            HoldEvent::Commit => match self.flight {
                _ if self.stopping || self.commit_wanted => HoldStep::Wait,
                Flight::None => HoldStep::Commit(self.send(Flight::Committing, now_ms, mono_ms)),
                Flight::Renewing => {
                    self.commit_wanted = true;
                    self.on_timer(now_ms, mono_ms)
                }
                _ => HoldStep::Wait, // one commit at a time
            },
            HoldEvent::Committed(answer) if self.flight == Flight::Committing => {
                self.flight = Flight::None;
                self.due = mono_ms.saturating_add(self.every);
                match answer {
                    HoldAnswer::Won => {
                        self.landed();
                        HoldStep::Wait
                    }
                    // The store could not always tell (D1: a batch whose answer was lost): the record read
                    // back says whether the commit landed after all.
                    HoldAnswer::Changed => {
                        self.flight = Flight::ReadingCommit;
                        HoldStep::ReadBack(self.sent())
                    }
                    HoldAnswer::Failed => HoldStep::Wait,
                }
            }
            HoldEvent::ReadBack(same) => match self.flight {
                Flight::ReadingRenewal => {
                    self.flight = Flight::None;
                    if same {
                        self.landed();
                    }
                    self.end(mono_ms)
                }
                Flight::ReadingCommit => {
                    self.flight = Flight::None;
                    if same {
                        self.landed();
                        HoldStep::Wait
                    } else {
                        self.lose(LostReason::RecordChanged);
                        HoldStep::Refused
                    }
                }
                _ => HoldStep::Wait,
            },
            HoldEvent::Committed(_) => HoldStep::Wait, // none in flight: a stray answer
        }
    }

    /// The run is stopping and nothing is in flight: done — after reading back the renewal a commit went on
    /// over, if it is unanswered still (it may have landed).
    fn end(&mut self, mono_ms: u64) -> HoldStep {
        if self.orphan && self.orphan_expected == self.version {
            self.orphan = false;
            self.sent_lease_until = self.orphan_lease;
            self.sent_mono = self.orphan_mono;
            self.sent_expected = self.orphan_expected;
            return self.read_back(mono_ms);
        }
        HoldStep::Done
    }

    /// Reads back the renewal sent last (the run is stopping): waited for a third of the lease at most, then the
    /// run ends with the claim as last answered.
    fn read_back(&mut self, mono_ms: u64) -> HoldStep {
        self.flight = Flight::ReadingRenewal;
        self.hung = mono_ms.saturating_add(self.every);
        HoldStep::ReadBack(self.sent())
    }

    fn on_timer(&mut self, now_ms: u64, mono_ms: u64) -> HoldStep {
        if self.flight == Flight::ReadingRenewal && mono_ms >= self.hung {
            // The read back did not answer in time: finish with the claim as last answered.
            self.flight = Flight::None;
            return self.end(mono_ms);
        }
        if self.flight == Flight::Renewing && mono_ms >= self.hung {
            // The renewal hung past the point where it may hold the claim: given up, answered or not.
            if self.standing == Standing::Ended {
                self.standing = Standing::Lost(LostReason::NotRenewed);
            }
            self.lose(LostReason::NotRenewed);
            if self.stopping {
                return self.read_back(mono_ms);
            }
            if self.commit_wanted {
                // The commit goes on over the claim as last answered; the renewal's answer is still heard (an
                // orphan), and the commit's record is never the renewal's: the store's version check decides.
                self.commit_wanted = false;
                self.orphan = true;
                self.orphan_expected = self.version;
                self.orphan_lease = self.sent_lease_until;
                self.orphan_mono = self.sent_mono;
                return HoldStep::Commit(self.send(Flight::Committing, now_ms, mono_ms));
            }
            // Lost; the renewal's answer is still heard (one that won moves the claim's version).
            return HoldStep::Wait;
        }
        if self.standing == Standing::Held && self.flight == Flight::None && !self.stopping && mono_ms >= self.due {
            return HoldStep::Renew(self.send(Flight::Renewing, now_ms, mono_ms));
        }
        HoldStep::Wait
    }

    fn on_renewed(&mut self, answer: HoldAnswer, now_ms: u64, mono_ms: u64) -> HoldStep {
        match self.flight {
            Flight::Renewing => {}
            // The renewal being read back answered first: its answer tells (a failure: the read back does).
            Flight::ReadingRenewal if answer != HoldAnswer::Failed => {
                if answer == HoldAnswer::Won {
                    self.landed();
                }
                self.flight = Flight::None;
                return self.end(mono_ms);
            }
            // The renewal a commit went on over: one that won moves the claim, if nothing moved it since.
            _ if self.orphan => {
                self.orphan = false;
                if answer == HoldAnswer::Won && self.orphan_expected == self.version {
                    self.version = self.orphan_expected.saturating_add(1);
                    self.lease_until_ms = self.orphan_lease;
                    self.point = self.give_up_point(self.orphan_mono, self.orphan_lease);
                }
                return HoldStep::Wait;
            }
            _ => return HoldStep::Wait, // none in flight: a stray answer
        }
        self.flight = Flight::None;
        let previous_lease = self.lease_until_ms;
        if answer == HoldAnswer::Won {
            // Given up on or not, a renewal that won stands: the record is at its version now.
            self.landed();
        }
        // Late: the ledger's clock, read after the answer, past the previous lease's give-up point (the process
        // stalled, or the store was slow).
        let late = now_ms >= previous_lease.saturating_sub(self.every);
        if self.standing == Standing::Held {
            match answer {
                HoldAnswer::Won if late => {
                    self.late = true;
                    self.late_left = previous_lease.saturating_sub(now_ms);
                }
                HoldAnswer::Won => {}
                HoldAnswer::Changed => self.lose(LostReason::RecordChanged),
                // Only a third of the lease left and not renewed: give up before anyone may reconcile it.
                HoldAnswer::Failed if late => self.lose(LostReason::NotRenewed),
                HoldAnswer::Failed => {}
            }
            self.due = mono_ms.saturating_add(match answer {
                HoldAnswer::Failed => (self.every / 4).max(1),
                _ => self.every,
            });
        }
        if self.stopping {
            return self.end(mono_ms);
        }
        if self.commit_wanted {
            self.commit_wanted = false;
            return HoldStep::Commit(self.send(Flight::Committing, now_ms, mono_ms));
        }
        HoldStep::Wait
    }
}
