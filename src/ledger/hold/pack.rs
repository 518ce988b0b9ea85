//! A hold's state as numbers ([`HOLD_WORDS`] of them): what the JS face keeps between steps.

use super::{Flight, Hold, Standing, HOLD_WORDS};

const FLIGHTS: [Flight; 5] =
    [Flight::None, Flight::Renewing, Flight::Committing, Flight::ReadingRenewal, Flight::ReadingCommit];

impl Hold {
    /// The state as [`HOLD_WORDS`] numbers (each at most `u64::MAX`; the JS face keeps them between steps).
    pub fn pack(&self) -> [u64; HOLD_WORDS] {
        let flight = FLIGHTS.iter().position(|f| *f == self.flight).unwrap_or(0) as u64;
        let standing = u64::from(self.standing.code());
        let flags = flight
            | standing << 3
            | u64::from(self.stopping) << 5
            | u64::from(self.commit_wanted) << 6
            | u64::from(self.told_lost) << 7
            | u64::from(self.late) << 8
            | u64::from(self.orphan) << 9;
        [
            self.fence,
            self.version,
            self.lease_until_ms,
            self.every,
            self.lease_ms,
            self.anchor_ms,
            self.anchor_mono,
            self.point,
            self.due,
            self.sent_lease_until,
            self.sent_mono,
            self.sent_expected,
            self.hung,
            self.late_left,
            self.orphan_expected,
            self.orphan_lease,
            self.orphan_mono,
            flags,
        ]
    }

    /// The state [`Hold::pack`] gave, or `None` for numbers no hold packs (flags out of range, a period of 0).
    pub fn unpack(w: [u64; HOLD_WORDS]) -> Option<Hold> {
        let flags = w[17];
        if flags >> 10 != 0 || w[3] == 0 || w[3] > w[4].max(1) {
            return None;
        }
        let flight = *FLIGHTS.get((flags & 7) as usize)?;
        let standing = Standing::from_code((flags >> 3) & 3)?;
        Some(Hold {
            fence: w[0],
            version: w[1],
            lease_until_ms: w[2],
            every: w[3],
            lease_ms: w[4],
            anchor_ms: w[5],
            anchor_mono: w[6],
            point: w[7],
            due: w[8],
            sent_lease_until: w[9],
            sent_mono: w[10],
            sent_expected: w[11],
            hung: w[12],
            late_left: w[13],
            orphan_expected: w[14],
            orphan_lease: w[15],
            orphan_mono: w[16],
            flight,
            standing,
            stopping: flags >> 5 & 1 == 1,
            commit_wanted: flags >> 6 & 1 == 1,
            told_lost: flags >> 7 & 1 == 1,
            late: flags >> 8 & 1 == 1,
            orphan: flags >> 9 & 1 == 1,
        })
    }
}
