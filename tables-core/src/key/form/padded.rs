//! `{field:0N}`: an unsigned number in decimal, zero-padded on the left to N digits.
//! Padded keys of one width sort like the numbers.

use std::fmt::Write as _;

use super::{encoded_range, key_error};
use crate::error::Result;
use crate::key::KeyRange;

/// The widest padding: `u64::MAX` has 20 digits.
pub const MAX_PADDED_WIDTH: usize = 20;

/// The largest number `width` digits hold (`u64::MAX` from 20 digits on).
pub(crate) fn max_value(width: usize) -> u64 {
    u32::try_from(width)
        .ok()
        .and_then(|w| 10u64.checked_pow(w))
        .map_or(u64::MAX, |p| p - 1)
}

/// Appends `value` zero-padded to `width` digits, or appends nothing and returns
/// `false` when it has more digits than that.
pub(crate) fn write(out: &mut String, value: u64, width: usize) -> bool {
    if value > max_value(width) || width == 0 {
        return false;
    }
    // Writing into a String can't fail.
    let _ = write!(out, "{value:0width$}");
    true
}

/// `value` in decimal, zero-padded on the left to `width` digits (`123`, 8 →
/// `"00000123"`). Padded keys of one width sort like the numbers.
///
/// ```
/// use tables_core::key::{pad_unsigned, parse_padded};
///
/// assert_eq!(pad_unsigned(223, 6)?, "000223");
/// assert_eq!(parse_padded("000223", 6)?, 223);
/// assert!(pad_unsigned(1_000_000, 6).is_err());
/// # Ok::<(), tables_core::Error>(())
/// ```
///
/// # Errors
///
/// [`InvalidKey`](crate::ErrorKind::InvalidKey) if `value` has more than `width` digits.
pub fn pad_unsigned(value: u64, width: usize) -> Result<String> {
    let mut text = String::with_capacity(width);
    if write(&mut text, value, width) {
        return Ok(text);
    }
    Err(key_error(format!(
        "{value} has {} digits and does not fit a key padded to {width} digits; widen the \
         padding",
        value.to_string().len()
    )))
}

/// Reads back a key of [`pad_unsigned`]: exactly `width` ASCII digits.
///
/// # Errors
///
/// [`InvalidKey`](crate::ErrorKind::InvalidKey) if `text` is not exactly `width` ASCII digits or its
/// value exceeds `u64::MAX`.
pub fn parse_padded(text: &str, width: usize) -> Result<u64> {
    if text.len() != width || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(key_error(format!(
            "{text:?} is not a padded number: expected exactly {width} ASCII digits"
        )));
    }
    text.parse::<u64>().map_err(|_| {
        key_error(format!(
            "{text:?} is larger than the largest unsigned 64-bit number"
        ))
    })
}

/// The keys `prefix` + the numbers of `domain` padded to `width` (see
/// [`super::inclusive_domain`]).
pub(crate) fn range(prefix: &str, domain: Option<(u64, u64)>, width: usize) -> KeyRange {
    encoded_range(prefix, domain, max_value(width), |out, n| {
        let _ = write(out, n, width);
    })
}
