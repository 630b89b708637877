//! `{field:signed}`: a signed integer as 20 digits whose string order is the
//! numeric order (the value offset by 2^63, zero-padded).

use super::{encoded_range, padded};
use crate::error::Result;
use crate::key::KeyRange;

/// Width of [`encode_signed`] keys: the digits of `u64::MAX`.
pub const SIGNED_KEY_WIDTH: usize = 20;

const SIGN_BIT: u64 = 1 << 63;

/// The unsigned number the key pads: flipping the sign bit maps i64 order onto u64
/// order.
pub(crate) fn offset(value: i64) -> u64 {
    (value as u64) ^ SIGN_BIT
}

/// Appends [`encode_signed`]'s form of `value`.
pub(crate) fn write(out: &mut String, value: i64) {
    // 20 digits hold every u64.
    let _ = padded::write(out, offset(value), SIGNED_KEY_WIDTH);
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
    write(&mut out, value);
    out
}

/// Reads back a key of [`encode_signed`].
///
/// # Errors
///
/// [`InvalidKey`](crate::ErrorKind::InvalidKey) if `text` is not 20 ASCII digits of
/// a value that [`encode_signed`] produces.
pub fn decode_signed(text: &str) -> Result<i64> {
    let offset = padded::parse_padded(text, SIGNED_KEY_WIDTH)?;
    Ok((offset ^ SIGN_BIT) as i64)
}

/// The keys `prefix` + the signed keys of the offsets in `domain`.
pub(crate) fn range(prefix: &str, domain: Option<(u64, u64)>) -> KeyRange {
    encoded_range(prefix, domain, u64::MAX, |out, n| {
        let _ = padded::write(out, n, SIGNED_KEY_WIDTH);
    })
}
