//! Key forms: how one value is written into a PartitionKey or RowKey so that the
//! service's ordinal string order is the value's order. One module per form owns
//! its width, its writer, its reader and how a range of values becomes a range of
//! keys; the derive's generated code and the public encoders both go through them.
//!
//! | form | template | width | module |
//! | --- | --- | --- | --- |
//! | zero-padded unsigned | `{field:0N}` | N (1..=20) | [`padded`] |
//! | signed | `{field:signed}` | 20 | [`signed`] |
//! | ticks, oldest first | `{field:ticks}` | 19 | [`ticks`] |
//! | reverse ticks, newest first | `{field:rticks}` | 19 | [`ticks`] |
//! | ISO 8601 UTC, oldest first | `{field:iso}`, `{field:iso(N)}` | 20, 21 + N | [`iso`] |
//! | calendar date | `{field}` on a date | 10 | [`date`] |
//! | UUID | `{field}` on a `Uuid` | 36 | [`uuid`] |
//! | text | `{field}` on text | variable | [`text`] |
//! | hashed shard bucket | `{field:shard(N)}` on text | digits of N-1 | [`shard`] |

use std::ops::{Bound, RangeBounds};

use crate::error::{Error, ErrorKind, Result};
use crate::key::{prefix_range, KeyRange};

pub mod date;
pub mod iso;
pub mod padded;
pub mod shard;
pub mod signed;
#[cfg(test)]
mod tests;
pub mod text;
pub mod ticks;
pub mod uuid;

/// An [`ErrorKind::InvalidKey`] error.
pub(crate) fn key_error(message: String) -> Error {
    Error::new(ErrorKind::InvalidKey, message)
}

/// Where a bound value falls in a form's `u64` encoding domain `[0, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoded {
    /// Below every encodable value (a negative number for a padded key).
    Below,
    /// At this encoding.
    At(u64),
    /// Above every encodable value.
    Above,
}

/// Turns bounds over `T` into an inclusive `[lo, hi]` over a `u64` encoding domain
/// `[0, max]`, through `encode` (which must be monotone, increasing or decreasing as
/// `reverse` says). `None` when the range holds nothing.
pub(crate) fn inclusive_domain<T>(
    range: &impl RangeBounds<T>,
    max: u64,
    reverse: bool,
    encode: impl Fn(&T) -> Result<Encoded>,
) -> Result<Option<(u64, u64)>> {
    // Lower value bound -> lowest encoding (or highest, reversed).
    let low = match range.start_bound() {
        Bound::Included(v) => Some((encode(v)?, true)),
        Bound::Excluded(v) => Some((encode(v)?, false)),
        Bound::Unbounded => None,
    };
    let high = match range.end_bound() {
        Bound::Included(v) => Some((encode(v)?, true)),
        Bound::Excluded(v) => Some((encode(v)?, false)),
        Bound::Unbounded => None,
    };
    let (low, high) = if reverse { (high, low) } else { (low, high) };
    let lo = match low {
        None => 0,
        Some((Encoded::Below, _)) => 0,
        Some((Encoded::Above, _)) => return Ok(None),
        Some((Encoded::At(v), true)) => v,
        Some((Encoded::At(v), false)) => match v.checked_add(1) {
            Some(next) => next,
            None => return Ok(None),
        },
    };
    let hi = match high {
        None => max,
        Some((Encoded::Above, _)) => max,
        Some((Encoded::Below, _)) => return Ok(None),
        Some((Encoded::At(v), true)) => v,
        Some((Encoded::At(v), false)) => match v.checked_sub(1) {
            Some(previous) => previous,
            None => return Ok(None),
        },
    };
    let hi = hi.min(max);
    Ok((lo <= hi).then_some((lo, hi)))
}

/// The key range `[prefix + enc(lo), prefix + enc(hi + 1))`, where everything after a
/// key's `prefix + enc(value)` (later template parts) stays inside the range.
pub(crate) fn encoded_range(
    prefix: &str,
    domain: Option<(u64, u64)>,
    max: u64,
    write: impl Fn(&mut String, u64),
) -> KeyRange {
    let Some((lo, hi)) = domain else {
        return KeyRange::empty();
    };
    let mut start = String::from(prefix);
    write(&mut start, lo);
    let end = if hi >= max {
        prefix_range(prefix).end
    } else {
        let mut end = String::from(prefix);
        write(&mut end, hi + 1);
        Bound::Excluded(end)
    };
    KeyRange::new(Bound::Included(start), end)
}
