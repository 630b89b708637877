//! Order-preserving key encodings: fixed-width unsigned integers, signed integers,
//! ticks and inverted ticks (the log tail pattern of
//! <https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns>).
//!
//! Every encoding is fixed width and made of ASCII digits, so the service's ordinal
//! string order equals the numeric (or time) order, and each decodes back exactly.

use std::fmt::Write as _;

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};

/// Width of [`encode_signed`] keys: the digits of `u64::MAX`.
pub const SIGNED_KEY_WIDTH: usize = 20;

/// Width of [`ticks_key`] and [`reverse_ticks_key`]: the digits of
/// [`DateTime::MAX_TICKS`].
pub const TICKS_KEY_WIDTH: usize = 19;

const SIGN_BIT: u64 = 1 << 63;

fn key_error(message: String) -> Error {
    Error::new(ErrorKind::InvalidKey, message)
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
/// [`ErrorKind::InvalidKey`] if `value` has more than `width` digits.
pub fn pad_unsigned(value: u64, width: usize) -> Result<String> {
    let text = format!("{value:0width$}");
    if text.len() > width {
        return Err(key_error(format!(
            "{value} has {} digits and does not fit a key padded to {width} digits; widen the \
             padding",
            text.len()
        )));
    }
    Ok(text)
}

/// Reads back a key of [`pad_unsigned`]: exactly `width` ASCII digits.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] if `text` is not exactly `width` ASCII digits or its
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

/// A fixed-width (20 digit) key for a signed integer whose string order is the
/// numeric order: the value offset by 2^63, zero-padded. `i64::MIN` is
/// `"00000000000000000000"`, 0 is `"09223372036854775808"`.
///
/// ```
/// use tables_core::key::{decode_signed, encode_signed};
///
/// assert!(encode_signed(-2) < encode_signed(-1));
/// assert!(encode_signed(-1) < encode_signed(0));
/// assert_eq!(decode_signed(&encode_signed(-42))?, -42);
/// # Ok::<(), tables_core::Error>(())
/// ```
pub fn encode_signed(value: i64) -> String {
    let mut out = String::with_capacity(SIGNED_KEY_WIDTH);
    write_signed_key(&mut out, value);
    out
}

/// The unsigned number [`encode_signed`] pads: flipping the sign bit maps i64 order
/// onto u64 order.
pub(crate) fn signed_offset(value: i64) -> u64 {
    (value as u64) ^ SIGN_BIT
}

/// Appends [`encode_signed`]'s form of `value`.
pub(crate) fn write_signed_key(out: &mut String, value: i64) {
    let offset = signed_offset(value);
    // Writing into a String can't fail.
    let _ = write!(out, "{offset:0SIGNED_KEY_WIDTH$}");
}

/// Reads back a key of [`encode_signed`].
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] if `text` is not 20 ASCII digits of a value that
/// [`encode_signed`] produces.
pub fn decode_signed(text: &str) -> Result<i64> {
    let offset = parse_padded(text, SIGNED_KEY_WIDTH)?;
    Ok((offset ^ SIGN_BIT) as i64)
}

/// The instant's ticks (100 ns since 0001-01-01), zero-padded to 19 digits: keys
/// that sort oldest first.
pub fn ticks_key(time: DateTime) -> String {
    let mut out = String::with_capacity(TICKS_KEY_WIDTH);
    write_ticks_key(&mut out, time);
    out
}

/// Appends [`ticks_key`]'s form of `time`.
pub(crate) fn write_ticks_key(out: &mut String, time: DateTime) {
    let _ = write!(out, "{:0TICKS_KEY_WIDTH$}", time.ticks());
}

/// Appends [`reverse_ticks_key`]'s form of `time`.
pub(crate) fn write_reverse_ticks_key(out: &mut String, time: DateTime) {
    let _ = write!(
        out,
        "{:0TICKS_KEY_WIDTH$}",
        DateTime::MAX_TICKS - time.ticks()
    );
}

/// The inverted ticks of the log-tail pattern, `DateTime::MAX_TICKS - ticks`,
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
    write_reverse_ticks_key(&mut out, time);
    out
}

/// Reads back a key of [`ticks_key`].
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] if `text` is not 19 ASCII digits of an instant in the
/// service's range.
pub fn decode_ticks_key(text: &str) -> Result<DateTime> {
    let ticks = parse_ticks(text)?;
    DateTime::from_ticks(ticks).ok_or_else(|| out_of_range(text, "ticks"))
}

/// Reads back a key of [`reverse_ticks_key`].
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] if `text` is not 19 ASCII digits of an inverted instant
/// in the service's range.
pub fn decode_reverse_ticks_key(text: &str) -> Result<DateTime> {
    let inverted = parse_ticks(text)?;
    DateTime::MAX_TICKS
        .checked_sub(inverted)
        .and_then(DateTime::from_ticks)
        .ok_or_else(|| out_of_range(text, "inverted ticks"))
}

fn parse_ticks(text: &str) -> Result<i64> {
    let value = parse_padded(text, TICKS_KEY_WIDTH)?;
    i64::try_from(value).map_err(|_| out_of_range(text, "ticks"))
}

fn out_of_range(text: &str, what: &str) -> Error {
    key_error(format!(
        "{text:?} as {what} is outside 1601-01-01T00:00:00Z ..= 9999-12-31T23:59:59.9999999Z"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn invalid_key<T: std::fmt::Debug>(r: Result<T>) {
        assert_eq!(r.expect_err("should fail").kind(), ErrorKind::InvalidKey);
    }

    #[test]
    fn padding_edges() {
        assert_eq!(pad_unsigned(0, 1).unwrap(), "0");
        assert_eq!(pad_unsigned(999, 3).unwrap(), "999");
        invalid_key(pad_unsigned(1000, 3));
        invalid_key(pad_unsigned(0, 0));
        assert_eq!(pad_unsigned(u64::MAX, 20).unwrap(), u64::MAX.to_string());
        assert_eq!(pad_unsigned(7, 25).unwrap().len(), 25);
        assert_eq!(parse_padded("0000000000000000000000007", 25).unwrap(), 7);
        invalid_key(parse_padded("12", 3));
        invalid_key(parse_padded("1234", 3));
        invalid_key(parse_padded("+12", 3));
        invalid_key(parse_padded("1 2", 3));
        invalid_key(parse_padded("١٢٣", 3));
        invalid_key(parse_padded("18446744073709551616", 20));
    }

    #[test]
    fn signed_edges() {
        assert_eq!(encode_signed(i64::MIN), "00000000000000000000");
        assert_eq!(encode_signed(0), "09223372036854775808");
        assert_eq!(encode_signed(i64::MAX), "18446744073709551615");
        assert_eq!(decode_signed("00000000000000000000").unwrap(), i64::MIN);
        invalid_key(decode_signed("0922337203685477580"));
        invalid_key(decode_signed("-9223372036854775808"));
        invalid_key(decode_signed("99999999999999999999"));
    }

    #[test]
    fn ticks_edges() {
        assert_eq!(ticks_key(DateTime::MAX), "3155378975999999999");
        assert_eq!(ticks_key(DateTime::MIN), "0504911232000000000");
        assert_eq!(reverse_ticks_key(DateTime::MAX), "0000000000000000000");
        assert_eq!(
            reverse_ticks_key(DateTime::MIN),
            format!("{:019}", DateTime::MAX_TICKS - DateTime::MIN_TICKS)
        );
        assert_eq!(
            decode_ticks_key("3155378975999999999").unwrap(),
            DateTime::MAX
        );
        assert_eq!(
            decode_reverse_ticks_key("0000000000000000000").unwrap(),
            DateTime::MAX
        );
        // Below 1601 and above 9999.
        invalid_key(decode_ticks_key("0000000000000000000"));
        invalid_key(decode_ticks_key("3155378976000000000"));
        invalid_key(decode_ticks_key("9999999999999999999"));
        invalid_key(decode_reverse_ticks_key("9999999999999999999"));
        invalid_key(decode_reverse_ticks_key(&format!(
            "{:019}",
            DateTime::MAX_TICKS - DateTime::MIN_TICKS + 1
        )));
        invalid_key(decode_ticks_key("315537897599999999"));
        invalid_key(decode_ticks_key("3155378975999999999x"));
    }

    fn any_datetime() -> impl Strategy<Value = DateTime> {
        (DateTime::MIN_TICKS..=DateTime::MAX_TICKS).prop_map(|t| DateTime::from_ticks(t).unwrap())
    }

    proptest! {
        #[test]
        fn padded_round_trip_and_order(a: u64, b: u64, width in 20usize..32) {
            let (ka, kb) = (pad_unsigned(a, width).unwrap(), pad_unsigned(b, width).unwrap());
            prop_assert_eq!(ka.len(), width);
            prop_assert_eq!(parse_padded(&ka, width).unwrap(), a);
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        }

        #[test]
        fn padding_fails_exactly_when_too_narrow(value: u64, width in 0usize..22) {
            let digits = value.to_string().len();
            prop_assert_eq!(pad_unsigned(value, width).is_ok(), digits <= width);
        }

        #[test]
        fn signed_round_trip_and_order(a: i64, b: i64) {
            let (ka, kb) = (encode_signed(a), encode_signed(b));
            prop_assert_eq!(ka.len(), SIGNED_KEY_WIDTH);
            prop_assert_eq!(decode_signed(&ka).unwrap(), a);
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        }

        #[test]
        fn ticks_round_trip_and_order(a in any_datetime(), b in any_datetime()) {
            let (ka, kb) = (ticks_key(a), ticks_key(b));
            prop_assert_eq!(ka.len(), TICKS_KEY_WIDTH);
            prop_assert_eq!(decode_ticks_key(&ka).unwrap(), a);
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        }

        #[test]
        fn reverse_ticks_sort_newest_first(a in any_datetime(), b in any_datetime()) {
            let (ka, kb) = (reverse_ticks_key(a), reverse_ticks_key(b));
            prop_assert_eq!(ka.len(), TICKS_KEY_WIDTH);
            prop_assert_eq!(decode_reverse_ticks_key(&ka).unwrap(), a);
            prop_assert_eq!(ka.cmp(&kb), b.cmp(&a));
        }

        #[test]
        fn newest_first_listing(mut times in proptest::collection::vec(any_datetime(), 1..20)) {
            let mut keys: Vec<String> = times.iter().map(|t| reverse_ticks_key(*t)).collect();
            keys.sort();
            times.sort_by(|a, b| b.cmp(a));
            let decoded: Vec<DateTime> =
                keys.iter().map(|k| decode_reverse_ticks_key(k).unwrap()).collect();
            prop_assert_eq!(decoded, times);
        }
    }
}
