//! `{field}` on a calendar date (`chrono::NaiveDate`, `time::Date` behind their
//! features): `yyyy-MM-dd` text, which is also the date's property form.
//!
//! A date names a day, not an instant, so it is not stored as an `Edm.DateTime` (a
//! midnight-UTC instant shows as the day before to every reader west of Greenwich).
//! The text is what .NET's `DateOnly.Parse` and Python's `date.fromisoformat` read,
//! and it sorts and compares like the date on the service: fixed width, years 0001
//! to 9999 (the years .NET and Python dates hold).

use super::encoded_range;
use crate::error::{Error, ErrorKind, Result};
use crate::key::KeyRange;

/// Bytes of a date's key and property text: `yyyy-MM-dd`.
pub const DATE_KEY_WIDTH: usize = 10;
/// The first year a stored date may have.
pub const MIN_DATE_YEAR: i32 = 1;
/// The last year a stored date may have.
pub const MAX_DATE_YEAR: i32 = 9999;

/// Day number of 9999-12-31, counting 0001-01-01 as day 0.
pub(crate) const MAX_DATE_DAY: u64 = 3_652_058;

/// Days from 0001-01-01 to the date (proleptic Gregorian), which must be valid.
pub(crate) fn day_number(year: i32, month: u32, day: u32) -> i64 {
    // Howard Hinnant's days_from_civil, shifted from 1970-01-01 to 0001-01-01.
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 306
}

/// The date `days` after 0001-01-01.
pub(crate) fn date_of_day(days: i64) -> (i32, u32, u32) {
    let z = days + 306;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // In range by construction for the days this module passes.
    (
        i32::try_from(year).unwrap_or(i32::MAX),
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

fn out_of_range(year: i32, month: u32, day: u32) -> String {
    format!(
        "the date {year}-{month:02}-{day:02} is outside {MIN_DATE_YEAR:04}-01-01..={MAX_DATE_YEAR}-12-31, the \
         dates stored as yyyy-MM-dd (and those .NET and Python dates hold)"
    )
}

/// Appends `yyyy-MM-dd`, or says why the date has no such form.
pub(crate) fn write_date_text(out: &mut String, year: i32, month: u32, day: u32) -> Result<()> {
    if !(MIN_DATE_YEAR..=MAX_DATE_YEAR).contains(&year) {
        return Err(Error::new(
            ErrorKind::InvalidValue,
            out_of_range(year, month, day),
        ));
    }
    use std::fmt::Write as _;
    // Writing into a String can't fail.
    let _ = write!(out, "{year:04}-{month:02}-{day:02}");
    Ok(())
}

/// Reads exactly `yyyy-MM-dd` (a real date, year 0001 to 9999).
pub(crate) fn parse_date_text(text: &str) -> Result<(i32, u32, u32)> {
    let bad = || {
        Error::new(
            ErrorKind::InvalidValue,
            format!("{text:?} is not a date written as yyyy-MM-dd"),
        )
    };
    let bytes = text.as_bytes();
    let digits_at = |range: std::ops::Range<usize>| {
        bytes
            .get(range.clone())
            .filter(|part| part.iter().all(u8::is_ascii_digit))
            .and_then(|_| text.get(range))
            .and_then(|part| part.parse::<u32>().ok())
    };
    if bytes.len() != DATE_KEY_WIDTH || bytes[4] != b'-' || bytes[7] != b'-' {
        return Err(bad());
    }
    let (Some(year), Some(month), Some(day)) = (digits_at(0..4), digits_at(5..7), digits_at(8..10))
    else {
        return Err(bad());
    };
    let year = i32::try_from(year).map_err(|_| bad())?;
    let valid = year >= MIN_DATE_YEAR
        && (1..=12).contains(&month)
        && day >= 1
        && date_of_day(day_number(year, month, day)) == (year, month, day);
    if valid {
        Ok((year, month, day))
    } else {
        Err(bad())
    }
}

/// The keys `prefix` + the dates of the day numbers in `domain`.
pub(crate) fn range(prefix: &str, domain: Option<(u64, u64)>) -> KeyRange {
    encoded_range(prefix, domain, MAX_DATE_DAY, |out, n| {
        let (year, month, day) = date_of_day(i64::try_from(n).unwrap_or(0));
        // Every day of the domain is in range.
        let _ = write_date_text(out, year, month, day);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::DateTime;

    #[test]
    fn day_numbers_match_known_dates() {
        assert_eq!(day_number(1, 1, 1), 0);
        assert_eq!(day_number(9999, 12, 31), MAX_DATE_DAY as i64);
        // DateTime ticks count from 0001-01-01 too.
        assert_eq!(
            day_number(1970, 1, 1) * 86_400 * DateTime::TICKS_PER_SECOND,
            DateTime::UNIX_EPOCH_TICKS
        );
        for days in [0, 58, 59, 60, 365, 730_119, 738_000, MAX_DATE_DAY as i64] {
            let (y, m, d) = date_of_day(days);
            assert_eq!(day_number(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(date_of_day(day_number(2024, 2, 29)), (2024, 2, 29));
    }

    #[test]
    fn text_is_strict_and_ranged() {
        assert_eq!(parse_date_text("2024-02-29").unwrap(), (2024, 2, 29));
        for bad in [
            "2023-02-29",
            "2024-2-29",
            "2024-13-01",
            "0000-01-01",
            "2024-01-00",
            "+024-01-01",
            "2024-01-01 ",
            "２０２４-01-01",
        ] {
            assert!(parse_date_text(bad).is_err(), "{bad}");
        }
        let mut out = String::new();
        write_date_text(&mut out, 7, 3, 9).unwrap();
        assert_eq!(out, "0007-03-09");
        assert!(write_date_text(&mut out, 0, 1, 1).is_err());
        assert!(write_date_text(&mut out, 10_000, 1, 1).is_err());
    }
}
