//! `{field}` on a `Uuid`: 36 characters, lowercase and hyphenated. Lowercase hex
//! sorts like the 128-bit number.

use std::ops::{Bound, RangeBounds};

use crate::error::{Error, ErrorKind, Result};
use crate::key::{prefix_range, KeyRange};

/// Width of a UUID in a key.
pub const UUID_KEY_WIDTH: usize = 36;

/// Appends the lowercase hyphenated form of `id`.
pub(crate) fn write(out: &mut String, id: &uuid::Uuid) {
    let mut buffer = uuid::Uuid::encode_buffer();
    out.push_str(id.hyphenated().encode_lower(&mut buffer));
}

/// Reads back what [`write`] writes, and only that: any other spelling would give
/// a second key for the same value.
///
/// # Errors
///
/// [`ErrorKind::Decode`] for anything but a lowercase hyphenated UUID.
pub(crate) fn read(text: &str) -> Result<uuid::Uuid> {
    match uuid::Uuid::try_parse(text) {
        Ok(id) if text.len() == UUID_KEY_WIDTH && !text.bytes().any(|b| b.is_ascii_uppercase()) => {
            Ok(id)
        }
        _ => Err(Error::new(
            ErrorKind::Decode,
            format!("{text:?} is not a lowercase hyphenated UUID ({UUID_KEY_WIDTH} characters)"),
        )),
    }
}

/// The keys `prefix` + the UUIDs of `range`.
pub(crate) fn range(prefix: &str, range: impl RangeBounds<uuid::Uuid>) -> KeyRange {
    let encode = |n: u128| {
        let mut out = prefix.to_owned();
        write(&mut out, &uuid::Uuid::from_u128(n));
        out
    };
    let lo = match range.start_bound() {
        Bound::Included(v) => Some(v.as_u128()),
        Bound::Excluded(v) => v.as_u128().checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let hi = match range.end_bound() {
        Bound::Included(v) => Some(v.as_u128()),
        Bound::Excluded(v) => v.as_u128().checked_sub(1),
        Bound::Unbounded => Some(u128::MAX),
    };
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return KeyRange::empty();
    };
    if lo > hi {
        return KeyRange::empty();
    }
    let end = match hi.checked_add(1) {
        Some(next) => Bound::Excluded(encode(next)),
        None => prefix_range(prefix).end,
    };
    KeyRange::new(Bound::Included(encode(lo)), end)
}
