//! The traits a field type implements to appear in a key template.
//!
//! Which trait a placeholder needs follows from its form: `{field}` needs
//! [`KeyText`], `{field:0N}` and `{field:signed}` need [`KeyInt`], `{field:ticks}` and
//! `{field:rticks}` need [`KeyTime`].

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};

/// A type written verbatim into a key by a `{field}` placeholder.
///
/// Implemented for `String`, `uuid::Uuid` (36 characters, lowercase, hyphenated),
/// and types with `#[derive(Property)]` (unit enums and text newtypes).
#[diagnostic::on_unimplemented(
    message = "`{Self}` can't be written into a key as `{{field}}`",
    label = "used as `{{field}}` in a key template",
    note = "integers need a fixed width so keys sort like numbers: write `{{field:0N}}` \
            (N digits) or `{{field:signed}}`",
    note = "date-times need `{{field:ticks}}` or `{{field:rticks}}` (newest first)",
    note = "text keys take String, Uuid, or a type with #[derive(Property)]"
)]
pub trait KeyText: Sized {
    /// Appends the key text.
    fn write_key_text(&self, out: &mut String);

    /// Reads the value back from its key text.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when `text` is not a key text of this type.
    fn from_key_text(text: &str) -> Result<Self>;
}

impl KeyText for String {
    fn write_key_text(&self, out: &mut String) {
        out.push_str(self);
    }

    fn from_key_text(text: &str) -> Result<String> {
        Ok(text.to_owned())
    }
}

impl KeyText for uuid::Uuid {
    fn write_key_text(&self, out: &mut String) {
        let mut buffer = uuid::Uuid::encode_buffer();
        out.push_str(self.hyphenated().encode_lower(&mut buffer));
    }

    fn from_key_text(text: &str) -> Result<uuid::Uuid> {
        // Only the exact form `write_key_text` writes: anything else would give a
        // second key for the same value.
        match uuid::Uuid::try_parse(text) {
            Ok(id) if text.len() == 36 && !text.bytes().any(|b| b.is_ascii_uppercase()) => Ok(id),
            _ => Err(Error::new(
                ErrorKind::Decode,
                format!("{text:?} is not a lowercase hyphenated UUID (36 characters)"),
            )),
        }
    }
}

/// An integer written into a key as `{field:0N}` (zero-padded, non-negative) or
/// `{field:signed}` (order-preserving, 20 digits).
#[diagnostic::on_unimplemented(
    message = "`{Self}` can't be written into a key as a number (`{{field:0N}}` or `{{field:signed}}`)",
    label = "used with a numeric key form",
    note = "numeric key forms take i8..i64, u8..u64, or a #[derive(Property)] newtype of one",
    note = "text goes in as `{{field}}`, date-times as `{{field:ticks}}` or `{{field:rticks}}`"
)]
pub trait KeyInt: Sized {
    /// The value as a `u64`, `None` when negative.
    fn to_key_u64(&self) -> Option<u64>;
    /// The value as an `i64`, `None` when above `i64::MAX`.
    fn to_key_i64(&self) -> Option<i64>;
    /// The value from a `u64`, `None` when out of range.
    fn from_key_u64(value: u64) -> Option<Self>;
    /// The value from an `i64`, `None` when out of range.
    fn from_key_i64(value: i64) -> Option<Self>;
}

macro_rules! key_int {
    ($($t:ty),* $(,)?) => {$(
        impl KeyInt for $t {
            fn to_key_u64(&self) -> Option<u64> {
                u64::try_from(*self).ok()
            }
            fn to_key_i64(&self) -> Option<i64> {
                i64::try_from(*self).ok()
            }
            fn from_key_u64(value: u64) -> Option<$t> {
                <$t>::try_from(value).ok()
            }
            fn from_key_i64(value: i64) -> Option<$t> {
                <$t>::try_from(value).ok()
            }
        }
    )*};
}

key_int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// A point in time written into a key as `{field:ticks}` or `{field:rticks}`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` can't be written into a key as ticks (`{{field:ticks}}` or `{{field:rticks}}`)",
    label = "used with a ticks key form",
    note = "ticks forms take tables DateTime (and chrono/time date-times with the crate features)"
)]
pub trait KeyTime: Sized {
    /// The value as a [`DateTime`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] when it is outside the service's range
    /// (1601-01-01 to 9999-12-31).
    fn to_key_datetime(&self) -> Result<DateTime>;

    /// The value from a [`DateTime`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] when the type can't hold it.
    fn from_key_datetime(time: DateTime) -> Result<Self>;
}

impl KeyTime for DateTime {
    fn to_key_datetime(&self) -> Result<DateTime> {
        Ok(*self)
    }

    fn from_key_datetime(time: DateTime) -> Result<DateTime> {
        Ok(time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_key_text_is_canonical() {
        let id = uuid::Uuid::from_u128(0xABCD);
        let mut out = String::new();
        id.write_key_text(&mut out);
        assert_eq!(out, "00000000-0000-0000-0000-00000000abcd");
        assert_eq!(uuid::Uuid::from_key_text(&out).unwrap(), id);
        assert!(uuid::Uuid::from_key_text(&out.to_uppercase()).is_err());
        assert!(uuid::Uuid::from_key_text("0000000000000000000000000000abcd").is_err());
    }

    #[test]
    fn key_ints_refuse_what_they_cannot_hold() {
        assert_eq!((-1i32).to_key_u64(), None);
        assert_eq!(u64::MAX.to_key_i64(), None);
        assert_eq!(u8::from_key_u64(256), None);
        assert_eq!(i16::from_key_i64(-5), Some(-5));
    }
}
