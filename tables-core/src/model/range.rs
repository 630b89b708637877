//! [`KeyRange`]: a range of PartitionKeys or RowKeys, and the helpers that turn a range
//! of field values into one (generated range helpers call them).

use std::cmp::Ordering;
use std::ops::{Bound, RangeBounds};

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::filter::{Column, Filter};
use crate::key::{cmp_ordinal, prefix_range, signed_offset};
use crate::model::date::{date_of_day, day_number, write_date_text, MAX_DATE_DAY};
use crate::model::date::{MAX_DATE_YEAR, MIN_DATE_YEAR};
use crate::model::keypart::{KeyDateCodec, KeyIntCodec, KeyText, KeyTextCodec, KeyTimeCodec};
use crate::model::reader::write_text;

/// A range of keys in the service's (ordinal) order, e.g. the RowKeys of employees
/// 100 to 199: `RowKey ge 'empid_000100' and RowKey lt 'empid_000200'`.
///
/// Derived entities generate helpers that build ranges from field values
/// (`Employee::employee_id_range(100..200)`); [`KeyRange::prefix`] is a
/// "starts with", which the service's filters can only say as a range.
///
/// ```
/// use tables_core::model::KeyRange;
///
/// let emails_a = KeyRange::prefix("email_a");
/// assert!(emails_a.contains("email_anne@contoso.com"));
/// assert!(!emails_a.contains("email_bob@contoso.com"));
/// assert_eq!(
///     emails_a.row_key_filter().to_odata(),
///     "RowKey ge 'email_a' and RowKey lt 'email_b'"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyRange {
    /// The lower bound.
    pub start: Bound<String>,
    /// The upper bound.
    pub end: Bound<String>,
}

impl KeyRange {
    /// The keys between two bounds.
    pub fn new(start: Bound<String>, end: Bound<String>) -> KeyRange {
        KeyRange { start, end }
    }

    /// Every key.
    pub fn all() -> KeyRange {
        KeyRange::new(Bound::Unbounded, Bound::Unbounded)
    }

    /// The keys starting with `prefix`.
    pub fn prefix(prefix: &str) -> KeyRange {
        let (ge, lt) = prefix_range(prefix);
        KeyRange::new(
            Bound::Included(ge),
            lt.map_or(Bound::Unbounded, Bound::Excluded),
        )
    }

    /// A range that holds no key.
    pub fn empty() -> KeyRange {
        KeyRange::new(
            Bound::Excluded(String::new()),
            Bound::Excluded(String::new()),
        )
    }

    /// Whether `key` is in the range.
    pub fn contains(&self, key: &str) -> bool {
        let above = match &self.start {
            Bound::Included(s) => cmp_ordinal(key, s) != Ordering::Less,
            Bound::Excluded(s) => cmp_ordinal(key, s) == Ordering::Greater,
            Bound::Unbounded => true,
        };
        let below = match &self.end {
            Bound::Included(e) => cmp_ordinal(key, e) != Ordering::Greater,
            Bound::Excluded(e) => cmp_ordinal(key, e) == Ordering::Less,
            Bound::Unbounded => true,
        };
        above && below
    }

    /// Whether the range holds no key at all.
    pub fn is_empty(&self) -> bool {
        let (start, start_inclusive) = match &self.start {
            Bound::Included(s) => (s, true),
            Bound::Excluded(s) => (s, false),
            Bound::Unbounded => return false,
        };
        let (end, end_inclusive) = match &self.end {
            Bound::Included(e) => (e, true),
            Bound::Excluded(e) => (e, false),
            Bound::Unbounded => return false,
        };
        match cmp_ordinal(start, end) {
            Ordering::Greater => true,
            Ordering::Equal => !(start_inclusive && end_inclusive),
            // Nothing lies strictly between `s` and `s` + U+0000, but U+0000 can't be
            // in a key; the range is then empty only if it excludes both ends.
            Ordering::Less => false,
        }
    }

    /// The filter `column` within the range (`ge`/`gt` and `le`/`lt` comparisons). A
    /// range with no bounds gives `column ge ''`, which every key satisfies.
    pub fn filter_on(&self, column: &Column) -> Filter {
        let low = match &self.start {
            Bound::Included(s) => Some(column.ge(s.as_str())),
            Bound::Excluded(s) => Some(column.gt(s.as_str())),
            Bound::Unbounded => None,
        };
        let high = match &self.end {
            Bound::Included(e) => Some(column.le(e.as_str())),
            Bound::Excluded(e) => Some(column.lt(e.as_str())),
            Bound::Unbounded => None,
        };
        match (low, high) {
            (Some(low), Some(high)) => low.and(high),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => column.ge(""),
        }
    }

    /// The filter on `RowKey`.
    pub fn row_key_filter(&self) -> Filter {
        self.filter_on(&Column::row_key())
    }

    /// The filter on `PartitionKey`.
    pub fn partition_key_filter(&self) -> Filter {
        self.filter_on(&Column::partition_key())
    }
}

fn range_error(field: &str, message: String) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("range of `{field}`: {message}"),
    )
}

/// Turns bounds over `T` into an inclusive `[lo, hi]` over a `u64` encoding domain
/// `[0, max]`, through `encode` (which must be monotone, increasing or decreasing as
/// `reverse` says). `None` when the range holds nothing.
fn inclusive_domain<T>(
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

/// Where a bound value falls in the encoding domain.
enum Encoded {
    /// Below every encodable value (a negative number for a padded key).
    Below,
    /// At this encoding.
    At(u64),
    /// Above every encodable value.
    Above,
}

/// The key range `[prefix + enc(lo), prefix + enc(hi + 1))`, where everything after a
/// key's `prefix + enc(value)` (later template parts) stays inside the range.
fn encoded_range(
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
        match prefix_range(prefix).1 {
            Some(after) => Bound::Excluded(after),
            None => Bound::Unbounded,
        }
    } else {
        let mut end = String::from(prefix);
        write(&mut end, hi + 1);
        Bound::Excluded(end)
    };
    KeyRange::new(Bound::Included(start), end)
}

fn pad_into(out: &mut String, value: u64, width: usize) {
    use std::fmt::Write as _;
    // Writing into a String can't fail.
    let _ = write!(out, "{value:0width$}");
}

/// The RowKeys of a `{field:0N}` placeholder over `range`, after `prefix`.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`] for a width outside 1..=20.
pub fn range_padded<T>(
    prefix: String,
    codec: &KeyIntCodec<T>,
    range: impl RangeBounds<T>,
    width: usize,
    field: &'static str,
) -> Result<KeyRange> {
    if !(1..=20).contains(&width) {
        return Err(range_error(
            field,
            format!("width {width} is not in 1..=20"),
        ));
    }
    let max = u32::try_from(width)
        .ok()
        .and_then(|w| 10u64.checked_pow(w))
        .map_or(u64::MAX, |p| p - 1);
    let domain = inclusive_domain(&range, max, false, |v: &T| {
        Ok(match (codec.to_u64)(v) {
            Some(n) if n > max => Encoded::Above,
            Some(n) => Encoded::At(n),
            None => Encoded::Below,
        })
    })?;
    Ok(encoded_range(&prefix, domain, max, |out, n| {
        pad_into(out, n, width)
    }))
}

/// The RowKeys of a `{field:signed}` placeholder over `range`, after `prefix`.
///
/// # Errors
///
/// None today; `Result` for symmetry with the other range helpers.
pub fn range_signed<T>(
    prefix: String,
    codec: &KeyIntCodec<T>,
    range: impl RangeBounds<T>,
    field: &'static str,
) -> Result<KeyRange> {
    let _ = field;
    let domain = inclusive_domain(&range, u64::MAX, false, |v: &T| {
        Ok(match (codec.to_i64)(v) {
            Some(n) => Encoded::At(signed_offset(n)),
            None => Encoded::Above,
        })
    })?;
    Ok(encoded_range(&prefix, domain, u64::MAX, |out, n| {
        pad_into(out, n, crate::key::SIGNED_KEY_WIDTH)
    }))
}

fn ticks_of<T>(codec: &KeyTimeCodec<T>, value: &T, field: &str) -> Result<u64> {
    let time = (codec.to)(value).map_err(|e| range_error(field, e.message().to_owned()))?;
    // Ticks of the service's range are positive.
    Ok(time.ticks().unsigned_abs())
}

/// The RowKeys of a `{field:ticks}` placeholder over `range`, after `prefix`.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`] for a bound outside the service's date range.
pub fn range_ticks<T>(
    prefix: String,
    codec: &KeyTimeCodec<T>,
    range: impl RangeBounds<T>,
    field: &'static str,
) -> Result<KeyRange> {
    let max = DateTime::MAX_TICKS.unsigned_abs();
    let domain = inclusive_domain(&range, max, false, |v: &T| {
        Ok(Encoded::At(ticks_of(codec, v, field)?))
    })?;
    Ok(encoded_range(&prefix, domain, max, |out, n| {
        pad_into(out, n, crate::key::TICKS_KEY_WIDTH)
    }))
}

/// The RowKeys of a `{field:rticks}` placeholder over `range` (a range of times; the
/// keys run newest first), after `prefix`.
///
/// # Errors
///
/// As [`range_ticks`].
pub fn range_rticks<T>(
    prefix: String,
    codec: &KeyTimeCodec<T>,
    range: impl RangeBounds<T>,
    field: &'static str,
) -> Result<KeyRange> {
    let max = DateTime::MAX_TICKS.unsigned_abs();
    let domain = inclusive_domain(&range, max, true, |v: &T| {
        Ok(Encoded::At(max - ticks_of(codec, v, field)?))
    })?;
    Ok(encoded_range(&prefix, domain, max, |out, n| {
        pad_into(out, n, crate::key::TICKS_KEY_WIDTH)
    }))
}

/// The RowKeys of a `{field}` placeholder on a calendar date over `range`, after
/// `prefix` (bounds outside 0001..=9999 clamp: no key lies beyond them).
///
/// # Errors
///
/// None today; `Result` for symmetry with the other range helpers.
pub fn range_date<T>(
    prefix: String,
    codec: &KeyDateCodec<T>,
    range: impl RangeBounds<T>,
    field: &'static str,
) -> Result<KeyRange> {
    let _ = field;
    let domain = inclusive_domain(&range, MAX_DATE_DAY, false, |v: &T| {
        let (year, month, day) = (codec.to)(v);
        Ok(if year < MIN_DATE_YEAR {
            Encoded::Below
        } else if year > MAX_DATE_YEAR {
            Encoded::Above
        } else {
            Encoded::At(day_number(year, month, day).unsigned_abs())
        })
    })?;
    Ok(encoded_range(&prefix, domain, MAX_DATE_DAY, |out, n| {
        let (year, month, day) = date_of_day(i64::try_from(n).unwrap_or(0));
        // Every day of the domain is in range.
        let _ = write_date_text(out, year, month, day);
    }))
}

/// The RowKeys of a `{field}` placeholder on a `Uuid` over `range`, after `prefix`
/// (lowercase hex sorts like the 128-bit number).
///
/// # Errors
///
/// None today; `Result` for symmetry with the other range helpers.
pub fn range_uuid(prefix: String, range: impl RangeBounds<uuid::Uuid>) -> Result<KeyRange> {
    let encode = |n: u128| {
        let mut out = prefix.clone();
        uuid::Uuid::from_u128(n).write_key_text(&mut out);
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
        return Ok(KeyRange::empty());
    };
    if lo > hi {
        return Ok(KeyRange::empty());
    }
    let end = match hi.checked_add(1) {
        Some(next) => Bound::Excluded(encode(next)),
        None => prefix_range(&prefix)
            .1
            .map_or(Bound::Unbounded, Bound::Excluded),
    };
    Ok(KeyRange::new(Bound::Included(encode(lo)), end))
}

/// The RowKeys of a trailing `{field}` text placeholder over `range`, after `prefix`.
///
/// # Errors
///
/// None today; `Result` for symmetry with the other range helpers.
pub fn range_str<'r>(
    prefix: String,
    range: impl RangeBounds<&'r str>,
    field: &'static str,
) -> Result<KeyRange> {
    let _ = field;
    let join = |text: &str| format!("{prefix}{text}");
    let start = match range.start_bound() {
        Bound::Included(v) => Bound::Included(join(v)),
        Bound::Excluded(v) => Bound::Excluded(join(v)),
        Bound::Unbounded => Bound::Included(prefix.clone()),
    };
    let end = match range.end_bound() {
        Bound::Included(v) => Bound::Included(join(v)),
        Bound::Excluded(v) => Bound::Excluded(join(v)),
        Bound::Unbounded => prefix_range(&prefix)
            .1
            .map_or(Bound::Unbounded, Bound::Excluded),
    };
    Ok(KeyRange::new(start, end))
}

/// The RowKeys whose trailing `{field}` text placeholder starts with `text_prefix`.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] when `text_prefix` holds a character keys can't hold.
pub fn prefix_str(prefix: String, text_prefix: &str, field: &'static str) -> Result<KeyRange> {
    let mut full = prefix;
    write_text(
        &mut full,
        &KeyTextCodec::<String>::new(),
        &text_prefix.to_owned(),
        field,
    )?;
    Ok(KeyRange::prefix(&full))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_range_is_the_guides_example() {
        let r = range_padded(
            "empid_".to_owned(),
            &KeyIntCodec::new(),
            100u32..200,
            6,
            "employee_id",
        )
        .unwrap();
        assert_eq!(
            r.row_key_filter().to_odata(),
            "RowKey ge 'empid_000100' and RowKey lt 'empid_000200'"
        );
        let r = range_padded(
            "empid_".to_owned(),
            &KeyIntCodec::new(),
            123u32..=123,
            6,
            "employee_id",
        )
        .unwrap();
        assert!(r.contains("empid_000123_2012"));
        assert!(!r.contains("empid_000124_2012"));
        assert!(!r.contains("empid_000122_2012"));
    }

    #[test]
    fn padded_range_edges() {
        let all = range_padded::<u8>("p".to_owned(), &KeyIntCodec::new(), .., 2, "f").unwrap();
        assert_eq!(
            all,
            KeyRange::new(Bound::Included("p00".into()), Bound::Excluded("q".into()))
        );
        assert!(
            range_padded("p".to_owned(), &KeyIntCodec::new(), 5u8..5, 2, "f")
                .unwrap()
                .is_empty()
        );
        assert!(
            range_padded("p".to_owned(), &KeyIntCodec::new(), 100u32.., 2, "f")
                .unwrap()
                .is_empty()
        );
        let negative = range_padded("p".to_owned(), &KeyIntCodec::new(), -5i32..3, 2, "f").unwrap();
        assert!(negative.contains("p00") && negative.contains("p02") && !negative.contains("p03"));
        assert!(
            range_padded("p".to_owned(), &KeyIntCodec::new(), ..0i32, 2, "f")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn signed_and_tick_ranges_keep_order() {
        let r = range_signed(String::new(), &KeyIntCodec::new(), -3i64..3, "n").unwrap();
        assert!(r.contains(&crate::key::encode_signed(-3)));
        assert!(r.contains(&crate::key::encode_signed(2)));
        assert!(!r.contains(&crate::key::encode_signed(3)));
        assert!(!r.contains(&crate::key::encode_signed(-4)));

        let t = |y| DateTime::from_ymd_hms(y, 1, 1, 0, 0, 0).unwrap();
        let r = range_rticks(String::new(), &KeyTimeCodec::new(), t(2020)..t(2022), "at").unwrap();
        assert!(r.contains(&crate::key::reverse_ticks_key(t(2020))));
        assert!(r.contains(&crate::key::reverse_ticks_key(t(2021))));
        assert!(!r.contains(&crate::key::reverse_ticks_key(t(2022))));
        assert!(!r.contains(&crate::key::reverse_ticks_key(t(2019))));
        let r = range_ticks(String::new(), &KeyTimeCodec::new(), t(2020)..=t(2022), "at").unwrap();
        assert!(r.contains(&crate::key::ticks_key(t(2022))));
        assert!(!r.contains(&crate::key::ticks_key(t(2023))));
    }

    #[test]
    fn text_ranges_and_prefixes() {
        let r = prefix_str("email_".to_owned(), "a", "email").unwrap();
        assert_eq!(r, KeyRange::prefix("email_a"));
        assert!(prefix_str("x".to_owned(), "a/", "email").is_err());
        let r = range_str("email_".to_owned(), "a".."c", "email").unwrap();
        assert!(r.contains("email_bob") && !r.contains("email_c") && !r.contains("empid_1"));
        let r = range_str("email_".to_owned(), .., "email").unwrap();
        assert!(r.contains("email_") && !r.contains("emaim"));
    }

    #[test]
    fn uuid_ranges_follow_the_number() {
        let lo = uuid::Uuid::from_u128(10);
        let hi = uuid::Uuid::from_u128(0xab);
        let r = range_uuid("x_".to_owned(), lo..hi).unwrap();
        let key = |n: u128| {
            let mut s = "x_".to_owned();
            uuid::Uuid::from_u128(n).write_key_text(&mut s);
            s
        };
        assert!(r.contains(&key(10)) && r.contains(&key(0xaa)) && !r.contains(&key(0xab)));
        assert!(range_uuid(String::new(), uuid::Uuid::max()..)
            .unwrap()
            .contains(&key_max()));
        fn key_max() -> String {
            let mut s = String::new();
            uuid::Uuid::max().write_key_text(&mut s);
            s
        }
    }
}
