//! HTTP dates (RFC 9110 §5.6.7), as a `Retry-After` may carry one: the preferred IMF-fixdate and the two
//! obsolete formats a recipient must accept. Pure: the caller passes the instant to measure from (the rmcp face
//! reads the clock, this file never does).
//!
//! | format | example |
//! |---|---|
//! | IMF-fixdate | `Sun, 06 Nov 1994 08:49:37 GMT` |
//! | rfc850-date (obsolete) | `Sunday, 06-Nov-94 08:49:37 GMT` — a two-digit year more than 50 years ahead of `now` is the most recent past year with those digits (§5.6.7) |
//! | asctime-date (obsolete) | `Sun Nov  6 08:49:37 1994` |
//!
//! The day name must be one of the seven (short in IMF-fixdate and asctime, long in rfc850) but is not checked
//! against the date, as `Date.parse` does not check it either (the JS `parseRetryAfter`). Anything else —
//! another zone than `GMT`, a day 31 in a 30-day month, an hour 24 — is not a date: `None`.

const SHORT_DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/// Days before each month in a common year.
const BEFORE_MONTH: [u64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
/// Days from 0001-01-01 to 1970-01-01 (proleptic Gregorian).
const EPOCH_DAYS: u64 = 719_162;
const MS_PER_DAY: u64 = 86_400_000;

/// An HTTP date → milliseconds since the Unix epoch; `None` when `value` is not one of the three formats, or
/// names an instant before 1970. `now_unix_ms` is only read for an rfc850-date's two-digit year.
///
/// ```
/// use mcp_retry_policy::rmcp::http_date::parse_http_date;
///
/// let at = Some(784_111_777_000);
/// assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", 0), at); // IMF-fixdate
/// assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777_000), at); // rfc850
/// assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994", 0), at); // asctime
/// assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 CET", 0), None);
/// ```
pub fn parse_http_date(value: &str, now_unix_ms: u64) -> Option<u64> {
    let s = value.trim();
    let (day, rest) = s.split_once(' ')?;
    if let Some(short) = day.strip_suffix(',') {
        if SHORT_DAYS.contains(&short) {
            return imf_fixdate(rest);
        }
        if LONG_DAYS.contains(&short) {
            return rfc850(rest, now_unix_ms);
        }
        return None;
    }
    if SHORT_DAYS.contains(&day) {
        return asctime(rest);
    }
    None
}

/// `06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(rest: &str) -> Option<u64> {
    let mut parts = rest.split(' ');
    let day = two_digits(parts.next()?)?;
    let month = month(parts.next()?)?;
    let year = four_digits(parts.next()?)?;
    let time = time(parts.next()?)?;
    (parts.next()? == "GMT" && parts.next().is_none()).then_some(())?;
    instant(year, month, day, time)
}

/// `06-Nov-94 08:49:37 GMT`
fn rfc850(rest: &str, now_unix_ms: u64) -> Option<u64> {
    let mut parts = rest.split(' ');
    let mut date = parts.next()?.split('-');
    let day = two_digits(date.next()?)?;
    let month = month(date.next()?)?;
    let yy = two_digits(date.next()?)?;
    date.next().is_none().then_some(())?;
    let time = time(parts.next()?)?;
    (parts.next()? == "GMT" && parts.next().is_none()).then_some(())?;
    // The year of `now`, then the century that puts yy at most 50 years ahead of it.
    let this_year = year_of(now_unix_ms);
    let century = this_year.checked_div(100)?.checked_mul(100)?;
    let mut year = century.checked_add(yy)?;
    if year > this_year.checked_add(50)? {
        year = year.checked_sub(100)?;
    }
    instant(year, month, day, time)
}

/// `Nov  6 08:49:37 1994` (a one-digit day is padded with a space, so `Nov` is followed by two)
fn asctime(rest: &str) -> Option<u64> {
    let month = month(rest.get(..3)?)?;
    let rest = rest.get(3..)?.strip_prefix(' ')?;
    let (day, rest) = match rest.strip_prefix(' ') {
        Some(padded) => (one_digit(padded.get(..1)?)?, padded.get(1..)?),
        None => (two_digits(rest.get(..2)?)?, rest.get(2..)?),
    };
    let mut parts = rest.strip_prefix(' ')?.split(' ');
    let time = time(parts.next()?)?;
    let year = four_digits(parts.next()?)?;
    parts.next().is_none().then_some(())?;
    instant(year, month, day, time)
}

fn digits(s: &str, n: usize) -> Option<u64> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

fn one_digit(s: &str) -> Option<u64> {
    digits(s, 1)
}

fn two_digits(s: &str) -> Option<u64> {
    digits(s, 2)
}

fn four_digits(s: &str) -> Option<u64> {
    digits(s, 4)
}

fn month(s: &str) -> Option<u64> {
    let i = MONTHS.iter().position(|m| *m == s)?;
    u64::try_from(i).ok()?.checked_add(1)
}

/// `08:49:37` → seconds into the day (a leap second, `:60`, is accepted as the next second).
fn time(s: &str) -> Option<u64> {
    let mut parts = s.split(':');
    let h = two_digits(parts.next()?)?;
    let m = two_digits(parts.next()?)?;
    let sec = two_digits(parts.next()?)?;
    (parts.next().is_none() && h <= 23 && m <= 59 && sec <= 60).then_some(())?;
    h.checked_mul(3600)?.checked_add(m.checked_mul(60)?)?.checked_add(sec)
}

fn leap(year: u64) -> bool {
    year.checked_rem(4) == Some(0) && (year.checked_rem(100) != Some(0) || year.checked_rem(400) == Some(0))
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 0001-01-01 to the first of January of `year`.
fn days_before_year(year: u64) -> Option<u64> {
    let y = year.checked_sub(1)?;
    y.checked_mul(365)?
        .checked_add(y.checked_div(4)?)?
        .checked_sub(y.checked_div(100)?)?
        .checked_add(y.checked_div(400)?)
}

fn instant(year: u64, month: u64, day: u64, seconds: u64) -> Option<u64> {
    (year >= 1 && (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)).then_some(())?;
    let before = *BEFORE_MONTH.get(usize::try_from(month.checked_sub(1)?).ok()?)?;
    let extra = u64::from(month > 2 && leap(year));
    let days = days_before_year(year)?.checked_add(before)?.checked_add(extra)?.checked_add(day.checked_sub(1)?)?;
    let since_epoch = days.checked_sub(EPOCH_DAYS)?;
    since_epoch.checked_mul(MS_PER_DAY)?.checked_add(seconds.checked_mul(1000)?)
}

/// The (Gregorian, UTC) year an instant falls in.
fn year_of(unix_ms: u64) -> u64 {
    let days = unix_ms.checked_div(MS_PER_DAY).unwrap_or(0).saturating_add(EPOCH_DAYS);
    // A first guess from the mean year, then corrected by at most a step or two.
    let mut year = days.saturating_mul(400).checked_div(146_097).unwrap_or(0).saturating_add(1);
    while year > 1 && days_before_year(year).map_or(true, |d| d > days) {
        year = year.saturating_sub(1);
    }
    while days_before_year(year.saturating_add(1)).is_some_and(|d| d <= days) {
        year = year.saturating_add(1);
    }
    year
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1994-11-06T08:49:37Z, RFC 9110's example.
    const EXAMPLE: u64 = 784_111_777_000;
    /// 2026-12-02T00:00:00Z.
    const NOW: u64 = 1_796_169_600_000;

    #[test]
    fn the_three_formats_of_rfc_9110() {
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", NOW), Some(EXAMPLE));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", NOW), Some(EXAMPLE));
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994", NOW), Some(EXAMPLE));
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT", NOW), Some(0));
        assert_eq!(parse_http_date("Wed, 02 Dec 2026 00:00:00 GMT", NOW), Some(NOW));
        assert_eq!(parse_http_date("Wed Dec 02 00:00:00 2026", NOW), Some(NOW));
        // Leap years: 2024-02-29 exists, 2100-02-29 and 2026-02-29 do not.
        assert_eq!(parse_http_date("Thu, 29 Feb 2024 12:00:00 GMT", NOW), Some(1_709_208_000_000));
        assert_eq!(parse_http_date("Mon, 29 Feb 2100 12:00:00 GMT", NOW), None);
        assert_eq!(parse_http_date("Sun, 29 Feb 2026 12:00:00 GMT", NOW), None);
    }

    #[test]
    fn a_two_digit_year_is_never_more_than_50_years_ahead() {
        // From 2026: "76" is 2076 (50 ahead), "77" is 1977.
        let y2076 = parse_http_date("Thursday, 01-Jan-76 00:00:00 GMT", NOW);
        assert_eq!(y2076, parse_http_date("Wed, 01 Jan 2076 00:00:00 GMT", NOW));
        let y1977 = parse_http_date("Saturday, 01-Jan-77 00:00:00 GMT", NOW);
        assert_eq!(y1977, parse_http_date("Sat, 01 Jan 1977 00:00:00 GMT", NOW));
        assert_eq!(year_of(NOW), 2026);
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(1_704_067_199_999), 2023);
        assert_eq!(year_of(1_704_067_200_000), 2024);
    }

    #[test]
    fn garbage_is_not_a_date() {
        for bad in [
            "",
            "soon",
            "Wed, 21 Oct 2015 07:28:00 UTC",
            "Wed, 21 Oct 2015 07:28:00",
            "Wed, 21 Oct 2015 07:28:00 GMT extra",
            "Wed, 31 Nov 2015 07:28:00 GMT",
            "Wed, 21 Oct 2015 24:00:00 GMT",
            "Wed, 21 Oct 2015 07:60:00 GMT",
            "Wed, 1 Oct 2015 07:28:00 GMT",
            "Wed, 21 oct 2015 07:28:00 GMT",
            "Wen, 21 Oct 2015 07:28:00 GMT",
            "Wednesday, 21 Oct 2015 07:28:00 GMT",
            "Wed, 21-Oct-15 07:28:00 GMT",
            "Wed Oct 21 07:28:00 15",
            "Wed Oct 21 07:28:00 2015 GMT",
            "Thu, 31 Dec 1969 23:59:59 GMT",
            "Wed, 21 Oct 2015 07:28:00 GMT\u{0}",
            "Sun, 00 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(bad, NOW), None, "{bad:?}");
        }
    }
}
