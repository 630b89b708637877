//! The traits a field type implements to appear in a key template.
//!
//! Which trait a placeholder needs follows from its form: `{field}` needs
//! [`KeyText`] (or [`KeyDate`] for a calendar date), `{field:0N}` and `{field:signed}`
//! need [`KeyInt`], `{field:ticks}` and `{field:rticks}` need [`KeyTime`].

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};

/// A type written verbatim into a key by a `{field}` placeholder.
///
/// Implemented for `String`, `Box<str>`, `Arc<str>`, `Cow<'static, str>`, `char` (the
/// character itself), `uuid::Uuid` (36 characters, lowercase, hyphenated), and types
/// with `#[derive(Property)]` (unit enums and text newtypes).
///
/// Keys sort by UTF-16 code units (the service's order): text and `char` keys sort
/// like the Rust values except that U+E000..=U+FFFF sort after the supplementary
/// characters (U+10000 and above). `{field:07}` writes a `char` as its code point,
/// which sorts exactly like `char`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` can't be written into a key as `{{field}}`",
    label = "used as `{{field}}` in a key template",
    note = "integers need a fixed width so keys sort like numbers: write `{{field:0N}}` \
            (N digits) or `{{field:signed}}`",
    note = "date-times need `{{field:ticks}}` or `{{field:rticks}}` (newest first)",
    note = "text keys take String, Box<str>, Arc<str>, Cow<'static, str>, char, Uuid, or a type with \
            #[derive(Property)]; calendar dates (chrono::NaiveDate, time::Date) are written `yyyy-MM-dd`"
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

macro_rules! key_text_via_str {
    ($($t:ty),* $(,)?) => {$(
        impl KeyText for $t {
            fn write_key_text(&self, out: &mut String) {
                out.push_str(self);
            }

            fn from_key_text(text: &str) -> Result<$t> {
                Ok(<$t>::from(text.to_owned()))
            }
        }
    )*};
}

key_text_via_str!(
    Box<str>,
    std::sync::Arc<str>,
    std::borrow::Cow<'static, str>
);

impl KeyText for char {
    fn write_key_text(&self, out: &mut String) {
        out.push(*self);
    }

    fn from_key_text(text: &str) -> Result<char> {
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(Error::new(
                ErrorKind::Decode,
                format!("{text:?} is not one character"),
            )),
        }
    }
}

impl KeyText for uuid::Uuid {
    fn write_key_text(&self, out: &mut String) {
        crate::key::form::uuid::write(out, self);
    }

    fn from_key_text(text: &str) -> Result<uuid::Uuid> {
        crate::key::form::uuid::read(text)
    }
}

/// An integer written into a key as `{field:0N}` (zero-padded, non-negative) or
/// `{field:signed}` (order-preserving, 20 digits).
#[diagnostic::on_unimplemented(
    message = "`{Self}` can't be written into a key as a number (`{{field:0N}}` or `{{field:signed}}`)",
    label = "used with a numeric key form",
    note = "numeric key forms take i8..i64, u8..u64, char (its code point), or a #[derive(Property)] newtype \
            of one",
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

/// A `char` as its code point (`{field:07}` holds every one): keys then sort exactly
/// like the characters.
impl KeyInt for char {
    fn to_key_u64(&self) -> Option<u64> {
        Some(u64::from(u32::from(*self)))
    }
    fn to_key_i64(&self) -> Option<i64> {
        Some(i64::from(u32::from(*self)))
    }
    fn from_key_u64(value: u64) -> Option<char> {
        u32::try_from(value).ok().and_then(char::from_u32)
    }
    fn from_key_i64(value: i64) -> Option<char> {
        u32::try_from(value).ok().and_then(char::from_u32)
    }
}

/// A calendar date written into a key as `{field}`: `yyyy-MM-dd`, ten characters that
/// sort like the dates (years 0001 to 9999).
///
/// Implemented for `chrono::NaiveDate` and `time::Date` (features `chrono`, `time`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` can't be written into a key as a date (`yyyy-MM-dd`)",
    label = "used as a date key part",
    note = "date key parts take chrono::NaiveDate and time::Date (features `chrono` and `time`)"
)]
pub trait KeyDate: Sized {
    /// The date's year, month (1..=12) and day (1..=31), proleptic Gregorian.
    fn to_key_ymd(&self) -> (i32, u32, u32);

    /// The date from its year, month and day; `None` when the type can't hold it.
    fn from_key_ymd(year: i32, month: u32, day: u32) -> Option<Self>;
}

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

/// A type's [`KeyText`] functions, taken once per key field where the derive
/// checks the type (see [`FieldCodec`](crate::__private::FieldCodec)): a type that
/// can't be a text key part is reported once, however many templates use it.
pub struct KeyTextCodec<T> {
    pub(crate) write: fn(&T, &mut String),
    pub(crate) read: fn(&str) -> Result<T>,
}

impl<T> std::fmt::Debug for KeyTextCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyTextCodec").finish_non_exhaustive()
    }
}

impl<T> KeyTextCodec<T> {
    /// The codec of `T`.
    pub const fn new() -> KeyTextCodec<T>
    where
        T: KeyText,
    {
        KeyTextCodec {
            write: T::write_key_text,
            read: T::from_key_text,
        }
    }
}

/// A type's [`KeyInt`] functions (see [`KeyTextCodec`]).
pub struct KeyIntCodec<T> {
    pub(crate) to_u64: fn(&T) -> Option<u64>,
    pub(crate) to_i64: fn(&T) -> Option<i64>,
    pub(crate) from_u64: fn(u64) -> Option<T>,
    pub(crate) from_i64: fn(i64) -> Option<T>,
}

impl<T> std::fmt::Debug for KeyIntCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyIntCodec").finish_non_exhaustive()
    }
}

impl<T> KeyIntCodec<T> {
    /// The codec of `T`.
    pub const fn new() -> KeyIntCodec<T>
    where
        T: KeyInt,
    {
        KeyIntCodec {
            to_u64: T::to_key_u64,
            to_i64: T::to_key_i64,
            from_u64: T::from_key_u64,
            from_i64: T::from_key_i64,
        }
    }
}

/// A type's [`KeyTime`] functions (see [`KeyTextCodec`]).
pub struct KeyTimeCodec<T> {
    pub(crate) to: fn(&T) -> Result<DateTime>,
    pub(crate) from: fn(DateTime) -> Result<T>,
}

impl<T> std::fmt::Debug for KeyTimeCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyTimeCodec").finish_non_exhaustive()
    }
}

impl<T> KeyTimeCodec<T> {
    /// The codec of `T`.
    pub const fn new() -> KeyTimeCodec<T>
    where
        T: KeyTime,
    {
        KeyTimeCodec {
            to: T::to_key_datetime,
            from: T::from_key_datetime,
        }
    }
}

/// A type's [`KeyDate`] functions (see [`KeyTextCodec`]).
pub struct KeyDateCodec<T> {
    pub(crate) to: fn(&T) -> (i32, u32, u32),
    pub(crate) from: fn(i32, u32, u32) -> Option<T>,
}

impl<T> std::fmt::Debug for KeyDateCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyDateCodec").finish_non_exhaustive()
    }
}

impl<T> KeyDateCodec<T> {
    /// The codec of `T`.
    pub const fn new() -> KeyDateCodec<T>
    where
        T: KeyDate,
    {
        KeyDateCodec {
            to: T::to_key_ymd,
            from: T::from_key_ymd,
        }
    }
}

impl<T: KeyText> Default for KeyTextCodec<T> {
    fn default() -> KeyTextCodec<T> {
        KeyTextCodec::new()
    }
}

impl<T: KeyInt> Default for KeyIntCodec<T> {
    fn default() -> KeyIntCodec<T> {
        KeyIntCodec::new()
    }
}

impl<T: KeyTime> Default for KeyTimeCodec<T> {
    fn default() -> KeyTimeCodec<T> {
        KeyTimeCodec::new()
    }
}

impl<T: KeyDate> Default for KeyDateCodec<T> {
    fn default() -> KeyDateCodec<T> {
        KeyDateCodec::new()
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
    fn chars_are_one_character_or_a_code_point() {
        let mut out = String::new();
        'é'.write_key_text(&mut out);
        assert_eq!(out, "é");
        assert_eq!(char::from_key_text("é").unwrap(), 'é');
        assert!(char::from_key_text("ab").is_err());
        assert!(char::from_key_text("").is_err());
        assert_eq!('😀'.to_key_u64(), Some(0x1F600));
        assert_eq!(char::from_key_u64(0x1F600), Some('😀'));
        assert_eq!(char::from_key_u64(0xD800), None);
        assert_eq!(char::from_key_i64(-1), None);
    }

    #[test]
    fn key_ints_refuse_what_they_cannot_hold() {
        assert_eq!((-1i32).to_key_u64(), None);
        assert_eq!(u64::MAX.to_key_i64(), None);
        assert_eq!(u8::from_key_u64(256), None);
        assert_eq!(i16::from_key_i64(-5), Some(-5));
    }
}
