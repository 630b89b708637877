//! The helpers that turn a range of field values into a [`KeyRange`] (generated range
//! helpers call them): the glue between a field's codec and its key form in
//! [`crate::key::form`].

use std::ops::{Bound, RangeBounds};

use crate::error::{Error, ErrorKind, Result};
use crate::key::form::{self, date, inclusive_domain, iso, padded, signed, text, ticks, Encoded};
use crate::key::KeyRange;
use crate::model::keypart::{KeyDateCodec, KeyIntCodec, KeyTextCodec, KeyTimeCodec};
use crate::model::reader::write_text;

fn range_error(field: &str, message: String) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("range of `{field}`: {message}"),
    )
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
    if !(1..=padded::MAX_PADDED_WIDTH).contains(&width) {
        return Err(range_error(
            field,
            format!("width {width} is not in 1..={}", padded::MAX_PADDED_WIDTH),
        ));
    }
    let max = padded::max_value(width);
    let domain = inclusive_domain(&range, max, false, |v: &T| {
        Ok(match (codec.to_u64)(v) {
            Some(n) if n > max => Encoded::Above,
            Some(n) => Encoded::At(n),
            None => Encoded::Below,
        })
    })?;
    Ok(padded::range(&prefix, domain, width))
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
            Some(n) => Encoded::At(signed::offset(n)),
            None => Encoded::Above,
        })
    })?;
    Ok(signed::range(&prefix, domain))
}

fn ticks_of<T>(codec: &KeyTimeCodec<T>, value: &T, field: &str) -> Result<u64> {
    let time = (codec.to)(value).map_err(|e| range_error(field, e.message().to_owned()))?;
    Ok(ticks::of(time))
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
    let domain = inclusive_domain(&range, ticks::MAX, false, |v: &T| {
        Ok(Encoded::At(ticks_of(codec, v, field)?))
    })?;
    Ok(ticks::range(&prefix, domain))
}

/// The RowKeys of a `{field:iso(N)}` placeholder over `range`, after `prefix`: the
/// instants of the range the form can write (to its `digits`).
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`] for a bound outside the service's date range.
pub fn range_iso<T>(
    prefix: String,
    codec: &KeyTimeCodec<T>,
    range: impl RangeBounds<T>,
    digits: u8,
    field: &'static str,
) -> Result<KeyRange> {
    let time = |v: &T| (codec.to)(v).map_err(|e| range_error(field, e.message().to_owned()));
    let bound = |bound: std::ops::Bound<&T>| -> Result<Option<(crate::DateTime, bool)>> {
        Ok(match bound {
            std::ops::Bound::Included(v) => Some((time(v)?, true)),
            std::ops::Bound::Excluded(v) => Some((time(v)?, false)),
            std::ops::Bound::Unbounded => None,
        })
    };
    let low = bound(range.start_bound())?;
    let high = bound(range.end_bound())?;
    Ok(iso::range(&prefix, low, high, digits))
}

/// The RowKeys of a `{field:rticks}` (reverse ticks) placeholder over `range` (a
/// range of times; the keys run newest first), after `prefix`.
///
/// # Errors
///
/// As [`range_ticks`].
pub fn range_reverse_ticks<T>(
    prefix: String,
    codec: &KeyTimeCodec<T>,
    range: impl RangeBounds<T>,
    field: &'static str,
) -> Result<KeyRange> {
    let domain = inclusive_domain(&range, ticks::MAX, true, |v: &T| {
        Ok(Encoded::At(ticks::reverse(ticks_of(codec, v, field)?)))
    })?;
    Ok(ticks::range(&prefix, domain))
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
    let domain = inclusive_domain(&range, date::MAX_DATE_DAY, false, |v: &T| {
        let (year, month, day) = (codec.to)(v);
        Ok(if year < date::MIN_DATE_YEAR {
            Encoded::Below
        } else if year > date::MAX_DATE_YEAR {
            Encoded::Above
        } else {
            Encoded::At(date::day_number(year, month, day).unsigned_abs())
        })
    })?;
    Ok(date::range(&prefix, domain))
}

/// The RowKeys of a `{field}` placeholder on a `Uuid` over `range`, after `prefix`
/// (lowercase hex sorts like the 128-bit number).
///
/// # Errors
///
/// None today; `Result` for symmetry with the other range helpers.
pub fn range_uuid(prefix: String, range: impl RangeBounds<uuid::Uuid>) -> Result<KeyRange> {
    Ok(form::uuid::range(&prefix, range))
}

/// The RowKeys of a trailing `{field}` text placeholder over `range`, after `prefix`.
///
/// # Errors
///
/// None today; `Result` for symmetry with the other range helpers.
pub fn range_str(prefix: String, range: impl TextRange, field: &'static str) -> Result<KeyRange> {
    let _ = field;
    Ok(text::range(&prefix, range.text_bounds()))
}

/// A range of text for a text placeholder's range helper: any range of `&str`,
/// `String` or other `AsRef<str>` values (`"a".."k"`, `from..=to` over `String`s,
/// `..`).
pub trait TextRange {
    /// The bounds, as text.
    fn text_bounds(&self) -> (Bound<&str>, Bound<&str>);
}

fn text_bound<S: AsRef<str>>(bound: Bound<&S>) -> Bound<&str> {
    match bound {
        Bound::Included(s) => Bound::Included(s.as_ref()),
        Bound::Excluded(s) => Bound::Excluded(s.as_ref()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl TextRange for std::ops::RangeFull {
    fn text_bounds(&self) -> (Bound<&str>, Bound<&str>) {
        (Bound::Unbounded, Bound::Unbounded)
    }
}

macro_rules! text_range {
    ($($range:ident),* $(,)?) => {$(
        impl<S: AsRef<str>> TextRange for std::ops::$range<S> {
            fn text_bounds(&self) -> (Bound<&str>, Bound<&str>) {
                (text_bound(self.start_bound()), text_bound(self.end_bound()))
            }
        }
    )*};
}

text_range!(Range, RangeInclusive, RangeFrom, RangeTo, RangeToInclusive);

impl<S: AsRef<str>> TextRange for (Bound<S>, Bound<S>) {
    fn text_bounds(&self) -> (Bound<&str>, Bound<&str>) {
        (text_bound(self.0.as_ref()), text_bound(self.1.as_ref()))
    }
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
    use crate::datetime::DateTime;
    use crate::model::KeyText;
    use std::ops::Bound;

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
        let r = range_reverse_ticks(String::new(), &KeyTimeCodec::new(), t(2020)..t(2022), "at")
            .unwrap();
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
