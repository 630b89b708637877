//! `{field:ticks}` and `{field:rticks}`: an instant as its ticks (100 ns since
//! 0001-01-01) in 19 digits, oldest first; or as its reverse ticks
//! (`DateTime::MAX_TICKS - ticks`), newest first: the log-tail pattern, where
//! `$top=n` returns the n most recent entities.

use super::{encoded_range, key_error, padded};
use crate::datetime::DateTime;
use crate::error::{Error, Result};
use crate::key::KeyRange;

/// Width of [`ticks_key`] and [`reverse_ticks_key`]: the digits of
/// [`DateTime::MAX_TICKS`].
pub const TICKS_KEY_WIDTH: usize = 19;

/// The largest ticks of the service's range, the top of the encoding domain.
pub(crate) const MAX: u64 = DateTime::MAX_TICKS.unsigned_abs();

/// The ticks of `time` (positive in the service's range).
pub(crate) fn of(time: DateTime) -> u64 {
    time.ticks().unsigned_abs()
}

/// Reverse ticks: `MAX - ticks`. Its own inverse (reverse ticks back to ticks).
pub(crate) fn reverse(ticks: u64) -> u64 {
    MAX.saturating_sub(ticks)
}

/// Appends 19 digits of `n` (ticks or reverse ticks).
pub(crate) fn write_number(out: &mut String, n: u64) {
    // Every tick count of the domain has at most 19 digits.
    let _ = padded::write(out, n, TICKS_KEY_WIDTH);
}

/// Appends [`ticks_key`]'s form of `time`.
pub(crate) fn write(out: &mut String, time: DateTime) {
    write_number(out, of(time));
}

/// Appends [`reverse_ticks_key`]'s form of `time`.
pub(crate) fn write_reverse(out: &mut String, time: DateTime) {
    write_number(out, reverse(of(time)));
}

/// The instant's ticks (100 ns since 0001-01-01), zero-padded to 19 digits: keys
/// that sort oldest first.
pub fn ticks_key(time: DateTime) -> String {
    let mut out = String::with_capacity(TICKS_KEY_WIDTH);
    write(&mut out, time);
    out
}

/// The reverse ticks of the log-tail pattern, `DateTime::MAX_TICKS - ticks`,
/// zero-padded to 19 digits: keys that sort newest first, so `$top=n` returns the n
/// most recent entities.
///
/// ```
/// use tables_core::key::{decode_reverse_ticks_key, reverse_ticks_key};
/// use tables_core::DateTime;
///
/// let old: DateTime = "2020-01-01T00:00:00Z".parse()?;
/// let new: DateTime = "2024-01-01T00:00:00Z".parse()?;
/// assert!(reverse_ticks_key(new) < reverse_ticks_key(old));
/// assert_eq!(reverse_ticks_key(DateTime::MAX), "0000000000000000000");
/// assert_eq!(decode_reverse_ticks_key(&reverse_ticks_key(old))?, old);
/// # Ok::<(), tables_core::Error>(())
/// ```
pub fn reverse_ticks_key(time: DateTime) -> String {
    let mut out = String::with_capacity(TICKS_KEY_WIDTH);
    write_reverse(&mut out, time);
    out
}

/// Reads back a key of [`ticks_key`].
///
/// # Errors
///
/// [`InvalidKey`](crate::ErrorKind::InvalidKey) if `text` is not 19 ASCII digits of
/// an instant in the service's range.
pub fn decode_ticks_key(text: &str) -> Result<DateTime> {
    let ticks = padded::parse_padded(text, TICKS_KEY_WIDTH)?;
    from_ticks(ticks).ok_or_else(|| out_of_range(text, "ticks"))
}

/// Reads back a key of [`reverse_ticks_key`].
///
/// # Errors
///
/// [`InvalidKey`](crate::ErrorKind::InvalidKey) if `text` is not 19 ASCII digits of
/// reverse ticks of an instant in the service's range.
pub fn decode_reverse_ticks_key(text: &str) -> Result<DateTime> {
    let reversed = padded::parse_padded(text, TICKS_KEY_WIDTH)?;
    (reversed <= MAX)
        .then(|| from_ticks(reverse(reversed)))
        .flatten()
        .ok_or_else(|| out_of_range(text, "reverse ticks"))
}

fn from_ticks(ticks: u64) -> Option<DateTime> {
    i64::try_from(ticks).ok().and_then(DateTime::from_ticks)
}

fn out_of_range(text: &str, what: &str) -> Error {
    key_error(format!(
        "{text:?} as {what} is outside 1601-01-01T00:00:00Z ..= 9999-12-31T23:59:59.9999999Z"
    ))
}

/// The keys `prefix` + the 19-digit numbers of `domain` (ticks, or reverse ticks for
/// a domain built with `reverse`).
pub(crate) fn range(prefix: &str, domain: Option<(u64, u64)>) -> KeyRange {
    encoded_range(prefix, domain, MAX, write_number)
}
