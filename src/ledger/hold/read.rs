//! What a hold tells its face: what operators hear, when to wake it, where the claim stands, the claim itself.

use super::{Flight, Hold, HoldTell, Record, Standing};

impl Hold {
    /// What operators hear now, once each: the loss, then a late renewal.
    pub fn tell(&mut self) -> Option<HoldTell> {
        if let (Standing::Lost(reason), false) = (self.standing, self.told_lost) {
            self.told_lost = true;
            return Some(HoldTell::Lost(reason));
        }
        if self.late {
            self.late = false;
            return Some(HoldTell::Late { left_ms: self.late_left });
        }
        None
    }

    /// When to wake the driver ([`HoldEvent::Timer`](super::HoldEvent::Timer)), on the monotonic clock: the next renewal, the give-up
    /// point, the point a renewal in flight stops holding the claim — whichever comes first. `None`: only an
    /// answer, or the handler, moves it on.
    pub fn timeout(&self) -> Option<u64> {
        let held = self.standing == Standing::Held;
        let renewing = self.flight == Flight::Renewing;
        let due = (held && self.flight == Flight::None && !self.stopping).then_some(self.due);
        let point = held.then_some(self.point);
        // Once the claim is lost, a renewal in flight is only waited for — unless the run waits on it; a read
        // back is waited for until its own deadline.
        let hung = ((renewing && (held || self.stopping || self.commit_wanted))
            || self.flight == Flight::ReadingRenewal)
            .then_some(self.hung);
        [due, point, hung].into_iter().flatten().min()
    }

    /// Where the claim stands (as of the last event: step [`HoldEvent::Look`](super::HoldEvent::Look) first to read the clock).
    pub fn standing(&self) -> Standing {
        self.standing
    }

    /// The fencing token: the version the claim was made with.
    pub fn fence(&self) -> u64 {
        self.fence
    }

    /// The claim as last written: its version and its lease's end (`Renewal::record`'s fields).
    pub fn claim(&self) -> (u64, u64) {
        (self.version, self.lease_until_ms)
    }

    /// The claim as a record: `claimed` (the record the hold began with) at the current version and lease.
    pub fn record(&self, claimed: &Record) -> Record {
        Record { lease_until_ms: self.lease_until_ms, version: self.version, ..claimed.clone() }
    }

    /// Whether the stored record at `version` is this hold's while its handler still runs here: the in-process
    /// guard (a repeat hears `in_progress`, never the reconcile hook) — also after the claim was given up on,
    /// as long as nobody claimed the record since.
    pub fn holds(&self, version: u64) -> bool {
        !self.stopping && version == self.version
    }

    /// The give-up point (monotonic): past it the claim is lost unless a renewal moved it.
    pub fn give_up_point_mono(&self) -> u64 {
        self.point
    }
}
