//! `DateTime`: an instant in UTC with the service's 100 ns precision and range.
//!
//! The civil-date arithmetic (days from a proleptic Gregorian date and back) is the
//! classic era-based algorithm; no calendar crate is needed for a UTC-only type.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, ErrorKind, Result};

const TICKS_PER_SECOND: i64 = 10_000_000;
const TICKS_PER_DAY: i64 = 86_400 * TICKS_PER_SECOND;
const NANOS_PER_TICK: i128 = 100;
const NANOS_PER_SECOND: u128 = 1_000_000_000;

/// The wire form, for error messages.
const FORMAT_HINT: &str = "expected YYYY-MM-DDTHH:MM:SS[.f up to 7 digits] followed by `Z`, \
    `+HH:MM`, `-HH:MM` or nothing (UTC), e.g. 2013-08-02T17:37:43.9004348Z";

/// An instant in UTC, counted in 100 ns ticks since 0001-01-01T00:00:00Z (the .NET
/// tick epoch the log-tail pattern of the table design patterns uses,
/// <https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns>), restricted to the range the
/// service stores: 1601-01-01T00:00:00Z through 9999-12-31T23:59:59.9999999Z.
///
/// `Display` gives the wire form, ISO 8601 in UTC with exactly seven fractional
/// digits; `FromStr` reads it back (and also accepts fewer digits, an offset, or no
/// zone at all, which means UTC).
///
/// ```
/// use tables_core::DateTime;
///
/// let t: DateTime = "2013-08-02T17:37:43.9004348Z".parse()?;
/// assert_eq!(t.to_string(), "2013-08-02T17:37:43.9004348Z");
/// let same: DateTime = "2013-08-02T19:37:43.9004348+02:00".parse()?;
/// assert_eq!(t, same);
/// assert_eq!(DateTime::from_ymd_hms(2013, 8, 2, 17, 37, 43)
///     .and_then(|d| d.with_subsec_ticks(9_004_348)), Some(t));
/// # Ok::<(), tables_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    ticks: i64,
}

impl DateTime {
    /// Ticks of 9999-12-31T23:59:59.9999999Z (the guide's `MaxTicks`).
    pub const MAX_TICKS: i64 = 3_155_378_975_999_999_999;
    /// Ticks of 1601-01-01T00:00:00Z, the earliest instant the service stores.
    pub const MIN_TICKS: i64 = 504_911_232_000_000_000;
    /// Ticks of the Unix epoch, 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH_TICKS: i64 = 621_355_968_000_000_000;
    /// Ticks in one second.
    pub const TICKS_PER_SECOND: i64 = TICKS_PER_SECOND;

    /// The earliest instant: 1601-01-01T00:00:00Z.
    pub const MIN: DateTime = DateTime {
        ticks: Self::MIN_TICKS,
    };
    /// The latest instant: 9999-12-31T23:59:59.9999999Z.
    pub const MAX: DateTime = DateTime {
        ticks: Self::MAX_TICKS,
    };

    /// The instant `ticks` 100 ns intervals after 0001-01-01T00:00:00Z, or `None` if
    /// outside the service's range.
    pub const fn from_ticks(ticks: i64) -> Option<DateTime> {
        if ticks < Self::MIN_TICKS || ticks > Self::MAX_TICKS {
            None
        } else {
            Some(DateTime { ticks })
        }
    }

    /// 100 ns intervals since 0001-01-01T00:00:00Z.
    pub const fn ticks(self) -> i64 {
        self.ticks
    }

    /// The current time from the system clock, truncated to 100 ns.
    ///
    /// A system clock outside the service's range (before 1601 or after 9999) is
    /// clamped to [`DateTime::MIN`] or [`DateTime::MAX`].
    pub fn now() -> DateTime {
        let nanos = system_time_to_unix_nanos(SystemTime::now());
        DateTime::from_unix_nanos(nanos).unwrap_or(if nanos < 0 {
            DateTime::MIN
        } else {
            DateTime::MAX
        })
    }

    /// The instant `nanos` nanoseconds after the Unix epoch (negative: before it),
    /// truncated to 100 ns towards the past, or `None` if outside the service's range.
    ///
    /// ```
    /// use tables_core::DateTime;
    ///
    /// let t = DateTime::from_unix_nanos(1_234_567_891).unwrap();
    /// assert_eq!(t.to_string(), "1970-01-01T00:00:01.2345678Z");
    /// assert_eq!(t.to_unix_nanos(), 1_234_567_800);
    /// ```
    pub fn from_unix_nanos(nanos: i128) -> Option<DateTime> {
        let ticks = nanos.div_euclid(NANOS_PER_TICK) + i128::from(Self::UNIX_EPOCH_TICKS);
        i64::try_from(ticks).ok().and_then(DateTime::from_ticks)
    }

    /// The instant `nanos` after the Unix epoch, which must be whole ticks (a
    /// multiple of 100 ns): what the service stores, so a value finer than that is
    /// refused rather than read back different.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] for an instant
    /// finer than 100 ns (the message says how to truncate it) or outside 1601–9999.
    pub fn from_unix_nanos_exact(nanos: i128) -> Result<DateTime> {
        let below = nanos.rem_euclid(NANOS_PER_TICK);
        if below != 0 {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                format!(
                    "the date-time has {below} ns below the 100 ns ticks Edm.DateTime stores, so it \
                     would read back different; truncate it to whole ticks first \
                     (TruncateToTicks::truncated_to_ticks)"
                ),
            ));
        }
        DateTime::from_unix_nanos(nanos).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidValue,
                "the date-time is outside the service's range (1601-01-01 to 9999-12-31)",
            )
        })
    }

    /// Nanoseconds since the Unix epoch (negative before it); always a multiple of 100.
    pub fn to_unix_nanos(self) -> i128 {
        i128::from(self.ticks - Self::UNIX_EPOCH_TICKS) * NANOS_PER_TICK
    }

    /// The instant at a whole second of a UTC calendar date, or `None` if the date or
    /// time does not exist (month 13, February 30, hour 24, second 60, ...) or lies
    /// outside 1601–9999.
    pub fn from_ymd_hms(
        year: i32,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
    ) -> Option<DateTime> {
        let ticks = civil_to_ticks(i64::from(year), month, day, hour, minute, second)?;
        DateTime::from_ticks(ticks)
    }

    /// The calendar date and time of day in UTC: `(year, month, day, hour, minute,
    /// second)`. The fraction of the second is [`DateTime::subsec_ticks`].
    pub fn to_ymd_hms(self) -> (i32, u32, u32, u32, u32, u32) {
        let days = self.ticks.div_euclid(TICKS_PER_DAY);
        let in_day = self.ticks.rem_euclid(TICKS_PER_DAY) / TICKS_PER_SECOND;
        let (year, month, day) = civil_from_days(days - Self::UNIX_EPOCH_TICKS / TICKS_PER_DAY);
        // The range 1601..=9999 keeps every component small; the casts cannot truncate.
        (
            year as i32,
            month,
            day,
            (in_day / 3600) as u32,
            (in_day / 60 % 60) as u32,
            (in_day % 60) as u32,
        )
    }

    /// The 100 ns ticks within the second, `0..10_000_000`.
    pub fn subsec_ticks(self) -> u32 {
        // rem_euclid by 10^7 is in 0..10^7, which fits a u32.
        self.ticks.rem_euclid(TICKS_PER_SECOND) as u32
    }

    /// The same second with its fraction replaced by `subsec` ticks of 100 ns, or
    /// `None` if `subsec` is 10,000,000 or more.
    pub fn with_subsec_ticks(self, subsec: u32) -> Option<DateTime> {
        if i64::from(subsec) >= TICKS_PER_SECOND {
            return None;
        }
        DateTime::from_ticks(
            self.ticks - self.ticks.rem_euclid(TICKS_PER_SECOND) + i64::from(subsec),
        )
    }

    /// The instant `delta` ticks of 100 ns later (earlier if negative), or `None` if
    /// that leaves the service's range.
    pub fn checked_add_ticks(self, delta: i64) -> Option<DateTime> {
        self.ticks.checked_add(delta).and_then(DateTime::from_ticks)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month and day unchecked).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date `days` days after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    // Both are small positive numbers (1..=31 and 1..=12).
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Ticks since 0001-01-01 of a validated calendar date and time, without range check.
fn civil_to_ticks(
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
) -> Option<i64> {
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
        || !(0..=9999).contains(&year)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second);
    Some(DateTime::UNIX_EPOCH_TICKS + days * TICKS_PER_DAY + seconds * TICKS_PER_SECOND)
}

fn system_time_to_unix_nanos(time: SystemTime) -> i128 {
    let (nanos, negative) = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => (after.as_nanos(), false),
        Err(before) => (before.duration().as_nanos(), true),
    };
    // A SystemTime spans far less than i128 nanoseconds on every platform.
    let nanos = i128::try_from(nanos).unwrap_or(i128::MAX);
    if negative {
        -nanos
    } else {
        nanos
    }
}

impl From<DateTime> for SystemTime {
    /// The same instant as a `SystemTime`.
    ///
    /// Every tier-1 platform's `SystemTime` covers 1601–9999; on a platform whose
    /// `SystemTime` could not hold the instant, the result is the Unix epoch.
    fn from(time: DateTime) -> SystemTime {
        let nanos = time.to_unix_nanos();
        let magnitude = nanos.unsigned_abs();
        // At most ~2.5e11 seconds: fits a u64; the remainder fits a u32.
        let offset = Duration::new(
            (magnitude / NANOS_PER_SECOND) as u64,
            (magnitude % NANOS_PER_SECOND) as u32,
        );
        let shifted = if nanos >= 0 {
            UNIX_EPOCH.checked_add(offset)
        } else {
            UNIX_EPOCH.checked_sub(offset)
        };
        shifted.unwrap_or(UNIX_EPOCH)
    }
}

impl TryFrom<SystemTime> for DateTime {
    type Error = Error;

    /// The same instant truncated to 100 ns.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] if the time is before 1601 or after 9999.
    fn try_from(time: SystemTime) -> Result<DateTime> {
        let nanos = system_time_to_unix_nanos(time);
        DateTime::from_unix_nanos(nanos).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidValue,
                format!(
                    "the time {nanos} ns from the Unix epoch is outside the range the service \
                     stores (1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z)"
                ),
            )
        })
    }
}

impl DateTime {
    /// Appends the wire form (as [`Display`](fmt::Display) writes it) to `out`
    /// without going through `fmt`: for encoders that write every row's Timestamp.
    pub(crate) fn push_iso(self, out: &mut Vec<u8>) {
        let (bytes, len) = self.iso_bytes(b":");
        out.extend_from_slice(&bytes[..len]);
    }

    /// The ISO 8601 text in a buffer, and its length: `time_separator` (at most 3
    /// bytes) between hours, minutes and seconds (`:` for the value, `%3A` inside an
    /// ETag).
    pub(crate) fn iso_bytes(self, time_separator: &[u8]) -> ([u8; 34], usize) {
        let (year, month, day, hour, minute, second) = self.to_ymd_hms();
        // Fixed-width digits written by hand: this runs for every DateTime property
        // sent and every ETag formatted, and `write!` with padding is several times
        // slower. The year is 1601..=9999, so always four digits.
        let mut buf = [0u8; 34];
        push_digits(&mut buf[0..4], year.unsigned_abs());
        buf[4] = b'-';
        push_digits(&mut buf[5..7], month);
        buf[7] = b'-';
        push_digits(&mut buf[8..10], day);
        buf[10] = b'T';
        let separator = &time_separator[..time_separator.len().min(3)];
        let mut at = 11;
        for (i, value) in [hour, minute, second].into_iter().enumerate() {
            if i > 0 {
                buf[at..at + separator.len()].copy_from_slice(separator);
                at += separator.len();
            }
            push_digits(&mut buf[at..at + 2], value);
            at += 2;
        }
        buf[at] = b'.';
        push_digits(&mut buf[at + 1..at + 8], self.subsec_ticks());
        buf[at + 8] = b'Z';
        (buf, at + 9)
    }
}

/// Bytes written by [`push_digits`] (ASCII digits and `-`) as text.
fn text(bytes: &[u8]) -> Result<&str, fmt::Error> {
    std::str::from_utf8(bytes).map_err(|_| fmt::Error)
}

/// Writes the last `out.len()` decimal digits of `value`, zero-padded, into `out`.
fn push_digits(out: &mut [u8], mut value: u32) {
    for slot in out.iter_mut().rev() {
        // `value % 10` is below 10, so the cast cannot truncate.
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

impl fmt::Display for DateTime {
    /// The wire form: ISO 8601 in UTC with seven fractional digits and `Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (bytes, len) = self.iso_bytes(b":");
        f.write_str(text(&bytes[..len])?)
    }
}

impl fmt::Debug for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DateTime({self})")
    }
}

impl FromStr for DateTime {
    type Err = Error;

    /// Parses `YYYY-MM-DDTHH:MM:SS[.f{1,7}]` followed by `Z`, `±HH:MM`, or nothing
    /// (UTC, as Azurite reads a zone-less value).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] if the text is not of that form, names a date or time
    /// that does not exist, has more than seven fractional digits, or lies outside
    /// 1601-01-01T00:00:00Z ..= 9999-12-31T23:59:59.9999999Z.
    fn from_str(text: &str) -> Result<DateTime> {
        parse(text).map_err(|why| {
            Error::new(
                ErrorKind::InvalidValue,
                format!("invalid Edm.DateTime {text:?}: {why}"),
            )
        })
    }
}

/// A cursor over the ASCII bytes of a timestamp.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn digits(&mut self, count: usize, what: &str) -> std::result::Result<u32, String> {
        let mut value = 0u32;
        for _ in 0..count {
            match self.peek() {
                Some(b @ b'0'..=b'9') => {
                    value = value * 10 + u32::from(b - b'0');
                    self.pos += 1;
                }
                _ => return Err(format!("expected {count} digits of {what}; {FORMAT_HINT}")),
            }
        }
        Ok(value)
    }

    fn expect(&mut self, accepted: &[u8], what: &str) -> std::result::Result<u8, String> {
        match self.peek() {
            Some(b) if accepted.contains(&b) => {
                self.pos += 1;
                Ok(b)
            }
            _ => Err(format!(
                "expected {what} at byte {}; {FORMAT_HINT}",
                self.pos
            )),
        }
    }
}

fn parse(text: &str) -> std::result::Result<DateTime, String> {
    match parse_service_form(text.as_bytes()) {
        Some(time) => Ok(time),
        None => parse_general(text),
    }
}

/// The form the service and this crate write, `YYYY-MM-DDTHH:MM:SS.fffffffZ` (every
/// `Timestamp` of every entity a page holds), read at fixed places. `None` for
/// anything else, valid or not: [`parse_general`] then reads it, or says what is
/// wrong.
fn parse_service_form(text: &[u8]) -> Option<DateTime> {
    let b: &[u8; 28] = text.try_into().ok()?;
    if [b[4], b[7], b[10], b[13], b[16], b[19], b[27]] != *b"--T::.Z" {
        return None;
    }
    let number = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0u32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let local = civil_to_ticks(
        i64::from(number(0, 4)?),
        number(5, 7)?,
        number(8, 10)?,
        number(11, 13)?,
        number(14, 16)?,
        number(17, 19)?,
    )?;
    DateTime::from_ticks(local + i64::from(number(20, 27)?))
}

/// Every form [`DateTime`]'s `FromStr` accepts.
fn parse_general(text: &str) -> std::result::Result<DateTime, String> {
    let mut c = Cursor {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let year = c.digits(4, "the year")?;
    c.expect(b"-", "`-`")?;
    let month = c.digits(2, "the month")?;
    c.expect(b"-", "`-`")?;
    let day = c.digits(2, "the day")?;
    c.expect(b"Tt", "`T`")?;
    let hour = c.digits(2, "the hour")?;
    c.expect(b":", "`:`")?;
    let minute = c.digits(2, "the minutes")?;
    c.expect(b":", "`:`")?;
    let second = c.digits(2, "the seconds")?;
    let mut fraction = 0i64;
    if c.peek() == Some(b'.') {
        c.pos += 1;
        let mut count = 0;
        while let Some(b @ b'0'..=b'9') = c.peek() {
            count += 1;
            if count > 7 {
                return Err("more than 7 fractional digits; the service keeps 100 ns \
                            (7 digits), so round or truncate the value first"
                    .to_owned());
            }
            fraction = fraction * 10 + i64::from(b - b'0');
            c.pos += 1;
        }
        if count == 0 {
            return Err(format!("expected digits after `.`; {FORMAT_HINT}"));
        }
        for _ in count..7 {
            fraction *= 10;
        }
    }
    let offset_ticks = match c.peek() {
        None => 0,
        Some(b'Z' | b'z') => {
            c.pos += 1;
            0
        }
        Some(b'+' | b'-') => {
            let sign = if c.expect(b"+-", "`+` or `-`")? == b'-' {
                -1
            } else {
                1
            };
            let hours = c.digits(2, "the offset hours")?;
            c.expect(b":", "`:` in the offset")?;
            let minutes = c.digits(2, "the offset minutes")?;
            if hours > 23 || minutes > 59 {
                return Err(format!("the offset {hours:02}:{minutes:02} does not exist"));
            }
            sign * (i64::from(hours) * 3600 + i64::from(minutes) * 60) * TICKS_PER_SECOND
        }
        Some(_) => return Err(format!("unexpected text at byte {}; {FORMAT_HINT}", c.pos)),
    };
    if c.pos != c.bytes.len() {
        return Err(format!("unexpected text at byte {}; {FORMAT_HINT}", c.pos));
    }
    let local =
        civil_to_ticks(i64::from(year), month, day, hour, minute, second).ok_or_else(|| {
            "the date or time does not exist (month 1-12, day within the month, hour 0-23, \
         minute and second 0-59)"
                .to_owned()
        })?;
    DateTime::from_ticks(local + fraction - offset_ticks).ok_or_else(|| {
        "outside the range the service stores (1601-01-01T00:00:00Z to \
         9999-12-31T23:59:59.9999999Z)"
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_ok(text: &str) -> DateTime {
        text.parse()
            .unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
    }

    #[test]
    fn constants_match_their_calendar_dates() {
        assert_eq!(
            DateTime::from_ymd_hms(1601, 1, 1, 0, 0, 0),
            Some(DateTime::MIN)
        );
        let last_second = DateTime::from_ymd_hms(9999, 12, 31, 23, 59, 59).unwrap();
        assert_eq!(
            last_second.with_subsec_ticks(9_999_999),
            Some(DateTime::MAX)
        );
        let epoch = DateTime::from_ymd_hms(1970, 1, 1, 0, 0, 0).unwrap();
        assert_eq!(epoch.ticks(), DateTime::UNIX_EPOCH_TICKS);
        assert_eq!(epoch.to_unix_nanos(), 0);
        assert_eq!(DateTime::MIN.to_string(), "1601-01-01T00:00:00.0000000Z");
        assert_eq!(DateTime::MAX.to_string(), "9999-12-31T23:59:59.9999999Z");
    }

    #[test]
    fn range_is_enforced() {
        assert_eq!(DateTime::from_ticks(DateTime::MIN_TICKS - 1), None);
        assert_eq!(DateTime::from_ticks(DateTime::MAX_TICKS + 1), None);
        assert_eq!(DateTime::from_ymd_hms(1600, 12, 31, 23, 59, 59), None);
        assert_eq!(DateTime::MAX.checked_add_ticks(1), None);
        assert_eq!(DateTime::MIN.checked_add_ticks(-1), None);
        assert_eq!(DateTime::MIN.checked_add_ticks(i64::MAX), None);
        assert_eq!(
            DateTime::MIN.checked_add_ticks(10).map(DateTime::ticks),
            Some(DateTime::MIN_TICKS + 10)
        );
    }

    #[test]
    fn calendar_validation() {
        assert!(DateTime::from_ymd_hms(2024, 2, 29, 0, 0, 0).is_some());
        assert!(DateTime::from_ymd_hms(2023, 2, 29, 0, 0, 0).is_none());
        assert!(DateTime::from_ymd_hms(2000, 2, 29, 0, 0, 0).is_some());
        assert!(DateTime::from_ymd_hms(1900, 2, 29, 0, 0, 0).is_none());
        assert!(DateTime::from_ymd_hms(2024, 4, 31, 0, 0, 0).is_none());
        assert!(DateTime::from_ymd_hms(2024, 13, 1, 0, 0, 0).is_none());
        assert!(DateTime::from_ymd_hms(2024, 1, 0, 0, 0, 0).is_none());
        assert!(DateTime::from_ymd_hms(2024, 1, 1, 24, 0, 0).is_none());
        assert!(DateTime::from_ymd_hms(2024, 1, 1, 0, 60, 0).is_none());
        assert!(DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 60).is_none());
    }

    #[test]
    fn display_is_the_wire_form() {
        let t = DateTime::from_ymd_hms(2013, 8, 2, 17, 37, 43)
            .and_then(|t| t.with_subsec_ticks(9_004_348))
            .unwrap();
        assert_eq!(t.to_string(), "2013-08-02T17:37:43.9004348Z");
        assert_eq!(format!("{t:?}"), "DateTime(2013-08-02T17:37:43.9004348Z)");
        let whole = DateTime::from_ymd_hms(2024, 1, 2, 3, 4, 5).unwrap();
        assert_eq!(whole.to_string(), "2024-01-02T03:04:05.0000000Z");
        assert_eq!(whole.to_ymd_hms(), (2024, 1, 2, 3, 4, 5));
        assert_eq!(t.subsec_ticks(), 9_004_348);
        assert_eq!(t.with_subsec_ticks(10_000_000), None);
    }

    #[test]
    fn parses_fraction_zone_and_offset_forms() {
        let t = parse_ok("2024-01-02T03:04:05.1234567Z");
        assert_eq!(t.subsec_ticks(), 1_234_567);
        assert_eq!(parse_ok("2024-01-02T03:04:05.1Z").subsec_ticks(), 1_000_000);
        assert_eq!(
            parse_ok("2024-01-02T03:04:05.123Z").subsec_ticks(),
            1_230_000
        );
        // No zone means UTC, as Azurite reads it.
        assert_eq!(
            parse_ok("2024-01-02T03:04:05"),
            DateTime::from_ymd_hms(2024, 1, 2, 3, 4, 5).unwrap()
        );
        assert_eq!(
            parse_ok("2024-01-02T05:34:05+02:30"),
            parse_ok("2024-01-02T03:04:05Z")
        );
        assert_eq!(
            parse_ok("2024-01-01T22:04:05-05:00"),
            parse_ok("2024-01-02T03:04:05Z")
        );
        assert_eq!(
            parse_ok("2024-01-02t03:04:05z"),
            parse_ok("2024-01-02T03:04:05Z")
        );
    }

    #[test]
    fn rejects_malformed_and_out_of_range_text() {
        for bad in [
            "",
            "2024-01-02",
            "2024-01-02 03:04:05Z",
            "24-01-02T03:04:05Z",
            "2024-1-02T03:04:05Z",
            "2024-01-02T03:04:05.Z",
            "2024-01-02T03:04:05.12345678Z",
            "2024-01-02T03:04:05ZZ",
            "2024-01-02T03:04:05+0200",
            "2024-01-02T03:04:05+24:00",
            "2024-02-30T03:04:05Z",
            "2024-01-02T24:00:00Z",
            "2024-01-02T23:59:60Z",
            "1600-12-31T23:59:59.9999999Z",
            "1601-01-01T00:30:00+01:00",
            "9999-12-31T23:59:59.9999999-00:01",
            "２024-01-02T03:04:05Z",
        ] {
            let err = bad.parse::<DateTime>().expect_err(bad);
            assert_eq!(err.kind(), ErrorKind::InvalidValue, "{bad}");
        }
        // The edges themselves parse.
        assert_eq!(parse_ok("1601-01-01T00:00:00Z"), DateTime::MIN);
        assert_eq!(parse_ok("9999-12-31T23:59:59.9999999Z"), DateTime::MAX);
        assert_eq!(parse_ok("1601-01-01T01:00:00+01:00"), DateTime::MIN);
    }

    #[test]
    fn unix_nanos_truncate_towards_the_past() {
        let t = DateTime::from_unix_nanos(-1).unwrap();
        assert_eq!(t.to_unix_nanos(), -100);
        assert_eq!(t.to_string(), "1969-12-31T23:59:59.9999999Z");
        assert_eq!(DateTime::from_unix_nanos(199).unwrap().to_unix_nanos(), 100);
        assert_eq!(DateTime::from_unix_nanos(i128::MAX), None);
        assert_eq!(DateTime::from_unix_nanos(i128::MIN), None);
        assert_eq!(
            DateTime::from_unix_nanos(DateTime::MIN.to_unix_nanos() - 1),
            None
        );
    }

    #[test]
    fn system_time_conversions() {
        let t = parse_ok("2024-01-02T03:04:05.1234567Z");
        let system = SystemTime::from(t);
        assert_eq!(DateTime::try_from(system).unwrap(), t);
        let before_epoch = parse_ok("1700-06-01T12:00:00.0000001Z");
        assert_eq!(
            DateTime::try_from(SystemTime::from(before_epoch)).unwrap(),
            before_epoch
        );
        let far = UNIX_EPOCH + Duration::from_secs(300_000_000_000);
        assert_eq!(
            DateTime::try_from(far).unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
    }

    #[test]
    fn now_is_near_the_system_clock() {
        let before = DateTime::try_from(SystemTime::now()).unwrap();
        let now = DateTime::now();
        let after = DateTime::try_from(SystemTime::now()).unwrap();
        assert!(before <= now && now <= after);
        assert!(now > parse_ok("2020-01-01T00:00:00Z"));
    }

    fn any_datetime() -> impl Strategy<Value = DateTime> {
        (DateTime::MIN_TICKS..=DateTime::MAX_TICKS).prop_map(|t| DateTime::from_ticks(t).unwrap())
    }

    #[test]
    fn service_form_refuses_what_does_not_exist() {
        for text in [
            "2024-00-10T00:00:00.0000000Z",
            "2024-13-10T00:00:00.0000000Z",
            "2024-01-00T00:00:00.0000000Z",
            "2024-01-32T00:00:00.0000000Z",
            "2023-02-29T00:00:00.0000000Z",
            "2024-01-10T24:00:00.0000000Z",
            "2024-01-10T00:60:00.0000000Z",
            "2024-01-10T00:00:60.0000000Z",
            "1600-12-31T23:59:59.9999999Z",
            "2024-01-10T00:00:0x.0000000Z",
            "2024-01-10T00:00:00.000000xZ",
        ] {
            assert_eq!(parse_service_form(text.as_bytes()), None, "{text}");
            assert!(text.parse::<DateTime>().is_err(), "{text}");
        }
        let leap = "2024-02-29T23:59:59.9999999Z";
        assert_eq!(parse_service_form(leap.as_bytes()), Some(parse_ok(leap)));
        // Other spellings are the general parser's.
        assert_eq!(parse_service_form(b"2024-02-29t00:00:00.0000000z"), None);
        assert_eq!(
            parse_ok("2024-02-29t00:00:00.0000000z"),
            parse_ok("2024-02-29T00:00:00Z")
        );
    }

    proptest! {
        #[test]
        fn display_parse_round_trip(t in any_datetime()) {
            let text = t.to_string();
            prop_assert_eq!(text.len(), 28);
            prop_assert_eq!(text.parse::<DateTime>().unwrap(), t);
        }

        /// The fixed-place reader for the service's form agrees with the general
        /// parser on every text of that shape: the same time, or both refuse.
        #[test]
        fn service_form_reads_as_the_general_parser_does(
            text in "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{7}Z",
        ) {
            prop_assert_eq!(parse_service_form(text.as_bytes()), parse_general(&text).ok());
        }

        #[test]
        fn service_form_of_any_time_reads_back(t in any_datetime()) {
            let text = t.to_string();
            prop_assert_eq!(parse_service_form(text.as_bytes()), Some(t));
        }

        #[test]
        fn display_order_is_time_order(a in any_datetime(), b in any_datetime()) {
            prop_assert_eq!(a.cmp(&b), a.to_string().cmp(&b.to_string()));
        }

        #[test]
        fn civil_round_trip(t in any_datetime()) {
            let (y, mo, d, h, mi, s) = t.to_ymd_hms();
            let back = DateTime::from_ymd_hms(y, mo, d, h, mi, s)
                .and_then(|w| w.with_subsec_ticks(t.subsec_ticks()));
            prop_assert_eq!(back, Some(t));
        }

        #[test]
        fn civil_days_round_trip(days in -200_000i64..3_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert!((1..=12).contains(&m));
            prop_assert!(d >= 1 && d <= days_in_month(y, m));
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }

        #[test]
        fn unix_nanos_round_trip(t in any_datetime()) {
            prop_assert_eq!(DateTime::from_unix_nanos(t.to_unix_nanos()), Some(t));
            prop_assert_eq!(DateTime::try_from(SystemTime::from(t)).ok(), Some(t));
        }

        #[test]
        fn offsets_shift_the_instant(
            t in (DateTime::MIN_TICKS + TICKS_PER_DAY..DateTime::MAX_TICKS - TICKS_PER_DAY)
                .prop_map(|x| DateTime::from_ticks(x).unwrap()),
            hours in 0u32..24,
            minutes in 0u32..60,
        ) {
            let shift = (i64::from(hours) * 3600 + i64::from(minutes) * 60) * TICKS_PER_SECOND;
            let local = t.checked_add_ticks(shift).unwrap().to_string();
            let text = format!("{}+{hours:02}:{minutes:02}", &local[..local.len() - 1]);
            prop_assert_eq!(text.parse::<DateTime>().unwrap(), t);
        }
    }
}
