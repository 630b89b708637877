//! `{field:iso}` and `{field:iso(N)}`: an instant as ISO 8601 UTC text with a fixed
//! number of fractional second digits, `yyyy-MM-ddTHH:mm:ssZ` (`iso`) or
//! `yyyy-MM-ddTHH:mm:ss.fffZ` (`iso(3)`, JavaScript's `toISOString`) up to seven
//! digits (`iso(7)`, .NET's round-trip `"o"` format): the keys other programs write.
//!
//! A fixed width sorts like the instants (years 1601 to 9999, all four digits), so
//! range reads work on such keys; a variable number of digits would not
//! (`10:00:00.5Z` sorts before `10:00:00Z`). An instant finer than the form's digits
//! is refused rather than cut, so a key always reads back as the value written.

use super::{encoded_range, key_error};
use crate::datetime::DateTime;
use crate::error::Result;
use crate::key::KeyRange;

/// The most fractional digits: the service's 100 ns.
pub const MAX_ISO_DIGITS: u8 = 7;

/// Bytes of `{field:iso(digits)}`: 20, plus the point and the digits.
pub const fn iso_key_width(digits: u8) -> usize {
    if digits == 0 {
        20
    } else {
        21 + digits as usize
    }
}

/// Ticks in one unit of the form's last digit.
fn unit(digits: u8) -> u64 {
    10u64.pow(u32::from(MAX_ISO_DIGITS.saturating_sub(digits)))
}

/// The ticks of `time` (positive in the service's range).
fn ticks_of(time: DateTime) -> u64 {
    time.ticks().unsigned_abs()
}

/// Appends `time` in the form, or says why it has none: an instant with more
/// precision than `digits` holds.
pub(crate) fn write(out: &mut String, time: DateTime, digits: u8) -> Result<()> {
    let unit = unit(digits);
    if !ticks_of(time).is_multiple_of(unit) {
        return Err(key_error(format!(
            "{time} has more precision than the {digits} fractional digits of `iso{}` hold, and a \
             key must read back as the value written; truncate the value to whole {} first, or use \
             a form with more digits",
            suffix(digits),
            unit_name(digits)
        )));
    }
    write_units(out, ticks_of(time) / unit, digits);
    Ok(())
}

/// The unit of the form's last digit, for messages.
fn unit_name(digits: u8) -> &'static str {
    match digits {
        0 => "seconds",
        1 => "tenths of a second",
        2 => "hundredths of a second",
        3 => "milliseconds",
        4 => "tenths of a millisecond",
        5 => "hundredths of a millisecond",
        6 => "microseconds",
        _ => "100 ns ticks",
    }
}

/// `(N)` of `iso(N)`, empty for `iso`.
fn suffix(digits: u8) -> String {
    if digits == 0 {
        String::new()
    } else {
        format!("({digits})")
    }
}

/// Appends the instant `units` (of the form's last digit) after 0001-01-01.
fn write_units(out: &mut String, units: u64, digits: u8) {
    use std::fmt::Write as _;
    let ticks = units * unit(digits);
    let time = i64::try_from(ticks)
        .ok()
        .and_then(DateTime::from_ticks)
        .unwrap_or(DateTime::MAX);
    let (year, month, day, hour, minute, second) = time.to_ymd_hms();
    // Writing into a String can't fail.
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}"
    );
    if digits > 0 {
        let fraction = u64::from(time.subsec_ticks()) / unit(digits);
        let _ = write!(out, ".{fraction:0width$}", width = usize::from(digits));
    }
    out.push('Z');
}

/// Reads back a key part of the form: exactly `iso_key_width(digits)` bytes of
/// `yyyy-MM-ddTHH:mm:ss[.f..]Z`, a real instant in the service's range.
///
/// # Errors
///
/// [`InvalidKey`](crate::ErrorKind::InvalidKey) naming the expected form.
pub fn decode_iso_key(text: &str, digits: u8) -> Result<DateTime> {
    let bad = || {
        key_error(format!(
            "{text:?} is not an ISO 8601 UTC instant of the form yyyy-MM-ddTHH:mm:ss{}Z",
            if digits == 0 {
                String::new()
            } else {
                format!(".{}", "f".repeat(usize::from(digits)))
            }
        ))
    };
    let bytes = text.as_bytes();
    if bytes.len() != iso_key_width(digits) || !text.is_ascii() {
        return Err(bad());
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = &text[range];
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let punctuation = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if punctuation.iter().any(|&(at, c)| bytes[at] != c) || bytes[bytes.len() - 1] != b'Z' {
        return Err(bad());
    }
    let year = number(0..4).ok_or_else(bad)?;
    let fields = (
        number(5..7),
        number(8..10),
        number(11..13),
        number(14..16),
        number(17..19),
    );
    let (Some(month), Some(day), Some(hour), Some(minute), Some(second)) = fields else {
        return Err(bad());
    };
    let fraction = if digits == 0 {
        0
    } else {
        if bytes[19] != b'.' {
            return Err(bad());
        }
        number(20..20 + usize::from(digits)).ok_or_else(bad)?
    };
    let year = i32::try_from(year).map_err(|_| bad())?;
    let whole = DateTime::from_ymd_hms(year, month, day, hour, minute, second).ok_or_else(bad)?;
    let subsec = u64::from(fraction) * unit(digits);
    whole
        .with_subsec_ticks(u32::try_from(subsec).map_err(|_| bad())?)
        .ok_or_else(bad)
}

/// The keys `prefix` + the form of every instant in `[low, high]`, each bound
/// `(time, included)` or `None` for none.
pub(crate) fn range(
    prefix: &str,
    low: Option<(DateTime, bool)>,
    high: Option<(DateTime, bool)>,
    digits: u8,
) -> KeyRange {
    let unit = unit(digits);
    let max = ticks_of(DateTime::MAX) / unit;
    let min = ticks_of(DateTime::MIN).div_ceil(unit);
    // The first and last unit inside the bounds.
    let lo = match low {
        None => Some(min),
        Some((t, true)) => Some(ticks_of(t).div_ceil(unit)),
        Some((t, false)) => (ticks_of(t) / unit).checked_add(1),
    };
    let hi = match high {
        None => Some(max),
        Some((t, true)) => Some(ticks_of(t) / unit),
        Some((t, false)) => ticks_of(t).div_ceil(unit).checked_sub(1),
    };
    let domain = match (lo, hi) {
        (Some(lo), Some(hi)) if lo.max(min) <= hi.min(max) => Some((lo.max(min), hi.min(max))),
        _ => None,
    };
    encoded_range(prefix, domain, max, |out, units| {
        write_units(out, units, digits)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime {
        text.parse().expect("a valid instant")
    }

    #[test]
    fn instants_write_and_read_back_in_each_form() {
        let t = at("2026-11-27T10:00:00.123Z");
        let mut out = String::new();
        write(&mut out, t, 3).unwrap();
        assert_eq!(out, "2026-11-27T10:00:00.123Z");
        assert_eq!(decode_iso_key(&out, 3).unwrap(), t);
        let mut seven = String::new();
        write(&mut seven, t, 7).unwrap();
        assert_eq!(seven, "2026-11-27T10:00:00.1230000Z");
        assert_eq!(seven.len(), iso_key_width(7));
        let whole = at("2026-11-27T10:00:00Z");
        let mut plain = String::new();
        write(&mut plain, whole, 0).unwrap();
        assert_eq!(plain, "2026-11-27T10:00:00Z");
        assert_eq!(decode_iso_key(&plain, 0).unwrap(), whole);
        // Finer than the form: refused, not cut.
        assert!(write(&mut String::new(), t, 0).is_err());
        assert!(write(&mut String::new(), t, 2).is_err());
    }

    #[test]
    fn other_shapes_are_refused() {
        for text in [
            "2026-11-27T10:00:00.5Z",
            "2026-11-27 10:00:00Z",
            "2026-11-27T10:00:00+00:00",
            "2026-02-30T10:00:00Z",
            "2026-11-27T24:00:00Z",
            "２026-11-27T10:00:00Z",
        ] {
            assert!(decode_iso_key(text, 0).is_err(), "{text}");
        }
    }

    #[test]
    fn ranges_cover_the_instants_between_their_bounds() {
        let from = at("2026-11-27T10:00:00.0004Z");
        let to = at("2026-11-27T11:00:00Z");
        let range = range("log_", Some((from, true)), Some((to, false)), 3);
        // The first millisecond at or after `from`, up to the last before `to`.
        assert!(!range.contains("log_2026-11-27T10:00:00.000Z"));
        assert!(range.contains("log_2026-11-27T10:00:00.001Z"));
        assert!(range.contains("log_2026-11-27T10:59:59.999Z_0001"));
        assert!(!range.contains("log_2026-11-27T11:00:00.000Z"));
        let all = range_all();
        assert!(all.contains("log_9999-12-31T23:59:59Z"));
    }

    fn range_all() -> KeyRange {
        range("log_", None, None, 0)
    }
}
