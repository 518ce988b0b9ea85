//! Backoff delays: `d = min(cap, base · 2^n)`, jittered, with a server-given floor.
//!
//! Jitter spreads the retries of many clients that failed together so they do not return together
//! ("Exponential Backoff And Jitter", AWS Architecture Blog, 2015). Full jitter is the default: it has the
//! lowest total work of the variants there measured. All arithmetic saturates: no input overflows, and
//! `0 ≤ delay ≤ max(cap, clamped retry-after)` holds for every input (property-tested).

use core::str::FromStr;

/// How the exponential delay is randomized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Jitter {
    /// Uniform in `[0, d]`.
    #[default]
    Full,
    /// `d/2` plus uniform in `[0, d/2]`.
    Equal,
    /// AWS's "decorrelated jitter", as the AWS Architecture Blog defines it:
    /// `sleep = min(cap, random_between(base, sleep · 3))` — the draw first, the cap after (so delays that
    /// would pass the cap sit at the cap). Ignores the attempt number.
    Decorrelated,
    /// Exactly `d`.
    None,
}

impl Jitter {
    /// Every strategy, in code order.
    pub const ALL: [Jitter; 4] = [Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::None];

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::None => "none",
        }
    }
}

impl FromStr for Jitter {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        [Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::None]
            .into_iter()
            .find(|j| j.as_str() == s)
            .ok_or(())
    }
}

/// A uniform draw in `[lo, hi]` (inclusive) from 64 random bits, by multiply-shift (no division, no
/// overflow: the product fits in 128 bits). Returns `lo` when `hi < lo`.
pub fn uniform(random: u64, lo: u64, hi: u64) -> u64 {
    let Some(width) = hi.checked_sub(lo) else { return lo };
    let span = u128::from(width).saturating_add(1);
    let offset = (u128::from(random).saturating_mul(span) >> 64) as u64;
    lo.saturating_add(offset)
}

/// The un-jittered delay before retry number `retry` (0 for the first retry): `min(cap, base · 2^retry)`.
pub fn exponential(base_ms: u64, cap_ms: u64, retry: u32) -> u64 {
    base_ms.saturating_mul(2u64.saturating_pow(retry)).min(cap_ms)
}

/// The jittered delay before retry number `retry`. `previous_ms` is the last delay (used by
/// [`Jitter::Decorrelated`]; 0 before the first retry).
pub fn delay(base_ms: u64, cap_ms: u64, jitter: Jitter, retry: u32, previous_ms: u64, random: u64) -> u64 {
    let d = exponential(base_ms, cap_ms, retry);
    match jitter {
        Jitter::None => d,
        Jitter::Full => uniform(random, 0, d),
        Jitter::Equal => {
            let half = d / 2;
            uniform(random, half, d)
        }
        // AWS: sleep = min(cap, random_between(base, sleep * 3)); the first sleep is `base`.
        Jitter::Decorrelated => uniform(random, base_ms, previous_ms.max(base_ms).saturating_mul(3)).min(cap_ms),
    }
}

/// Raises `delay_ms` to a server-given wait, clamped to `max_ms`: `max(delay, min(retry_after, max))`.
pub fn with_floor(delay_ms: u64, retry_after_ms: Option<u64>, max_ms: u64) -> u64 {
    match retry_after_ms {
        Some(ra) => delay_ms.max(ra.min(max_ms)),
        None => delay_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_saturates_and_caps() {
        assert_eq!(exponential(100, 10_000, 0), 100);
        assert_eq!(exponential(100, 10_000, 3), 800);
        assert_eq!(exponential(100, 10_000, 7), 10_000);
        assert_eq!(exponential(u64::MAX, u64::MAX, u32::MAX), u64::MAX);
        assert_eq!(exponential(1, 5, 200), 5);
    }

    #[test]
    fn uniform_covers_its_ends() {
        assert_eq!(uniform(0, 10, 20), 10);
        assert_eq!(uniform(u64::MAX, 10, 20), 20);
        assert_eq!(uniform(u64::MAX, 0, u64::MAX), u64::MAX);
        assert_eq!(uniform(123, 7, 7), 7);
        assert_eq!(uniform(123, 9, 7), 9);
        // The middle of the bits lands in the middle of the range.
        assert_eq!(uniform(1 << 63, 0, 100), 50);
    }

    #[test]
    fn jitter_shapes() {
        let (b, c) = (100, 10_000);
        assert_eq!(delay(b, c, Jitter::None, 2, 0, 0), 400);
        assert_eq!(delay(b, c, Jitter::Full, 2, 0, 0), 0);
        assert_eq!(delay(b, c, Jitter::Full, 2, 0, u64::MAX), 400);
        assert_eq!(delay(b, c, Jitter::Equal, 2, 0, 0), 200);
        assert_eq!(delay(b, c, Jitter::Equal, 2, 0, u64::MAX), 400);
        assert_eq!(delay(b, c, Jitter::Decorrelated, 9, 0, 0), 100);
        assert_eq!(delay(b, c, Jitter::Decorrelated, 0, 1000, u64::MAX), 3000);
        assert_eq!(delay(b, c, Jitter::Decorrelated, 0, 9000, u64::MAX), 10_000);
        // AWS's order: draw in [base, 3·9000], then cap. A middle draw (≈ 13 550) sits at the cap; capping
        // before the draw would have given ≈ 5 050.
        assert_eq!(delay(b, c, Jitter::Decorrelated, 0, 9000, u64::MAX / 2), 10_000);
        assert_eq!(delay(b, c, Jitter::Decorrelated, 0, 9000, u64::MAX / 4), 6_825);
    }

    #[test]
    fn floor_is_clamped() {
        assert_eq!(with_floor(100, None, 1000), 100);
        assert_eq!(with_floor(100, Some(500), 1000), 500);
        assert_eq!(with_floor(100, Some(5000), 1000), 1000);
        assert_eq!(with_floor(2000, Some(500), 1000), 2000);
    }

    #[test]
    fn names_round_trip() {
        for j in [Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::None] {
            assert_eq!(j.as_str().parse::<Jitter>(), Ok(j));
        }
    }
}
