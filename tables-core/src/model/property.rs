//! [`Property`]: how a field type is stored as one typed property.

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::filter::Reads;
use crate::value::{EdmType, Value};

/// A Rust type stored as one table property.
///
/// Each type has one Edm type, used both when writing and in typed filters, so a
/// value compares the way it is stored:
///
/// | Rust | Edm type |
/// |---|---|
/// | `String`, `Box<str>`, `Arc<str>`, `Cow<'static, str>` | `Edm.String` |
/// | `char` | `Edm.String` (one character) |
/// | `bool` | `Edm.Boolean` |
/// | `i8`, `i16`, `i32`, `u8`, `u16` | `Edm.Int32` |
/// | `i64`, `u32`, `u64` (at most `i64::MAX`) | `Edm.Int64` |
/// | `std::time::Duration` (at most `i64::MAX` ns, about 292 years) | `Edm.Int64` nanoseconds |
/// | `f32`, `f64` | `Edm.Double` |
/// | `Vec<u8>` (`bytes::Bytes` behind a feature) | `Edm.Binary` |
/// | `uuid::Uuid` | `Edm.Guid` |
/// | [`DateTime`] (and chrono/time date-times behind features) | `Edm.DateTime`, 100 ns ticks: a chrono or time value finer than that is refused, never cut ([`TruncateToTicks`](crate::model::TruncateToTicks)) |
/// | `chrono::NaiveDate`, `time::Date` (features) | `Edm.String` `yyyy-MM-dd` |
/// | `rust_decimal::Decimal` (feature) | `Edm.String`, exact invariant text |
/// | `Option<T>` | as `T`; `None` is an absent property |
/// | unit enums with `#[derive(Property)]` | `Edm.String` |
///
/// A `u32` is always written as `Edm.Int64`, never `Int32` for small values, so
/// every value a field writes has one type. Reading is lenient where it is
/// lossless, because other programs write other types into the same column: an
/// integer field accepts `Int32` or `Int64` in range, a float field accepts
/// `Int32` and `Int64` (the Python and JS SDKs store whole numbers as integers; the
/// Cosmos DB Table API returns whole doubles untyped). Typed filters follow the
/// reader ([`Property::READS`]), so they match every row it reads.
///
/// ```
/// use tables_core::model::Property;
/// use tables_core::Value;
///
/// assert_eq!(7u32.to_value()?, Some(Value::Int64(7)));
/// assert_eq!(<Option<i32>>::from_value(None)?, None);
/// assert!(i32::from_value(None).is_err());
/// # Ok::<(), tables_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` can't be stored as a table property",
    label = "not a property type",
    note = "property types: String, Box<str>, Arc<str>, Cow<'static, str>, char, bool, i8..i64, \
            u8..u64, f32, f64, Vec<u8>, Uuid, std::time::Duration, tables DateTime, and behind \
            features chrono DateTime<Utc> and NaiveDate, time OffsetDateTime and Date, bytes::Bytes, \
            rust_decimal::Decimal; Option of these, and types with #[derive(Property)] (unit enums, \
            newtypes)",
    note = "for other types use #[entity(json)] (serde JSON in a string property) or \
            #[entity(with = module)] (your own codec)"
)]
pub trait Property: Sized {
    /// The type typed filters compare with: `Self`, or `T` for `Option<T>`.
    type Scalar;

    /// The Edm type the value is written as.
    const EDM_TYPE: EdmType;

    /// Which stored values [`Property::from_value`] accepts, so typed filters match
    /// every row it reads: only [`Property::EDM_TYPE`] unless the type says more.
    const READS: Reads = Reads::Written;

    /// The property value; `None` writes no property.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] when the value has no representation (a `u64`
    /// above `i64::MAX`).
    fn to_value(&self) -> Result<Option<Value>>;

    /// Reads the property; `None` means the row has no such property.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the property is absent and the type has no absent
    /// form; [`ErrorKind::InvalidValue`] for a value of another Edm type or out of
    /// range.
    fn from_value(value: Option<Value>) -> Result<Self>;
}

/// The error for an absent property of a type that needs one.
pub(crate) fn missing(type_name: &str) -> Error {
    Error::new(
        ErrorKind::Decode,
        format!("the property is missing, and a {type_name} can't be absent; make the field an Option or give it #[entity(default)]"),
    )
}

macro_rules! property_via_value {
    ($edm:ident: $($t:ty),* $(,)?) => {
        property_via_value!($edm reads Written: $($t),*);
    };
    ($edm:ident reads $reads:ident: $($t:ty),* $(,)?) => {$(
        impl Property for $t {
            type Scalar = $t;
            const EDM_TYPE: EdmType = EdmType::$edm;
            const READS: Reads = Reads::$reads;

            fn to_value(&self) -> Result<Option<Value>> {
                Ok(Some(Value::$edm(self.clone().into())))
            }

            fn from_value(value: Option<Value>) -> Result<$t> {
                match value {
                    Some(value) => <$t>::try_from(value),
                    None => Err(missing(stringify!($t))),
                }
            }
        }
    )*};
}

property_via_value!(String: String);
property_via_value!(Boolean: bool);
property_via_value!(Int32 reads Integer: i8, i16, i32, u8, u16);
property_via_value!(Int64 reads Integer: i64, u32);
property_via_value!(Double reads Single: f32);
property_via_value!(Double reads Double: f64);
property_via_value!(DateTime: DateTime);
property_via_value!(Guid: uuid::Uuid);
property_via_value!(Binary: Vec<u8>);

impl Property for u64 {
    type Scalar = u64;
    const EDM_TYPE: EdmType = EdmType::Int64;
    const READS: Reads = Reads::Integer;

    fn to_value(&self) -> Result<Option<Value>> {
        Value::try_from(*self).map(Some)
    }

    fn from_value(value: Option<Value>) -> Result<u64> {
        match value {
            Some(value) => u64::try_from(value),
            None => Err(missing("u64")),
        }
    }
}

macro_rules! property_via_string {
    ($($t:ty),* $(,)?) => {$(
        impl Property for $t {
            type Scalar = $t;
            const EDM_TYPE: EdmType = EdmType::String;

            fn to_value(&self) -> Result<Option<Value>> {
                Ok(Some(Value::String(String::from(&**self))))
            }

            fn from_value(value: Option<Value>) -> Result<$t> {
                match value {
                    Some(value) => String::try_from(value).map(<$t>::from),
                    None => Err(missing(stringify!($t))),
                }
            }
        }
    )*};
}

property_via_string!(
    Box<str>,
    std::sync::Arc<str>,
    std::borrow::Cow<'static, str>
);

/// One character, as one-character text.
impl Property for char {
    type Scalar = char;
    const EDM_TYPE: EdmType = EdmType::String;

    fn to_value(&self) -> Result<Option<Value>> {
        Ok(Some(Value::String(self.to_string())))
    }

    fn from_value(value: Option<Value>) -> Result<char> {
        let text = match value {
            Some(value) => String::try_from(value)?,
            None => return Err(missing("char")),
        };
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(Error::new(
                ErrorKind::InvalidValue,
                format!("{text:?} is not one character"),
            )),
        }
    }
}

/// Whole nanoseconds as `Edm.Int64`: exact for every duration up to `i64::MAX`
/// nanoseconds (about 292 years); longer ones are refused, never rounded.
impl Property for std::time::Duration {
    type Scalar = std::time::Duration;
    const EDM_TYPE: EdmType = EdmType::Int64;
    const READS: Reads = Reads::Integer;

    fn to_value(&self) -> Result<Option<Value>> {
        match i64::try_from(self.as_nanos()) {
            Ok(nanos) => Ok(Some(Value::Int64(nanos))),
            Err(_) => Err(Error::new(
                ErrorKind::InvalidValue,
                format!(
                    "the duration {self:?} is longer than an Int64 of nanoseconds holds (i64::MAX ns, about \
                     292 years); store longer spans in coarser units with #[entity(with = ..)]"
                ),
            )),
        }
    }

    fn from_value(value: Option<Value>) -> Result<std::time::Duration> {
        let nanos = match value {
            Some(Value::Int64(n)) => n,
            Some(Value::Int32(n)) => i64::from(n),
            Some(other) => {
                return Err(Error::new(
                    ErrorKind::InvalidValue,
                    format!(
                        "expected a duration (Edm.Int64 nanoseconds), found Edm.{:?}",
                        other.edm_type()
                    ),
                ))
            }
            None => return Err(missing("Duration")),
        };
        u64::try_from(nanos)
            .map(std::time::Duration::from_nanos)
            .map_err(|_| {
                Error::new(
                    ErrorKind::InvalidValue,
                    format!("{nanos} ns is negative, and a Duration can't be"),
                )
            })
    }
}

impl<T: Property> Property for Option<T> {
    type Scalar = T::Scalar;
    const EDM_TYPE: EdmType = T::EDM_TYPE;
    const READS: Reads = T::READS;

    fn to_value(&self) -> Result<Option<Value>> {
        match self {
            Some(inner) => inner.to_value(),
            None => Ok(None),
        }
    }

    fn from_value(value: Option<Value>) -> Result<Option<T>> {
        match value {
            Some(value) => T::from_value(Some(value)).map(Some),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Property + PartialEq + std::fmt::Debug>(value: T) {
        let stored = value.to_value().unwrap();
        if let Some(v) = &stored {
            assert_eq!(v.edm_type(), T::EDM_TYPE);
        }
        assert_eq!(T::from_value(stored).unwrap(), value);
    }

    #[test]
    fn every_type_round_trips_with_its_edm_type() {
        round_trip(String::from("Jones"));
        round_trip(true);
        round_trip(-5i8);
        round_trip(-5i16);
        round_trip(i32::MIN);
        round_trip(255u8);
        round_trip(u16::MAX);
        round_trip(i64::MIN);
        round_trip(u32::MAX);
        round_trip(7u32);
        round_trip(i64::MAX as u64);
        round_trip(1.5f32);
        round_trip(-0.25f64);
        round_trip(DateTime::MAX);
        round_trip(uuid::Uuid::from_u128(7));
        round_trip(vec![0u8, 255]);
        round_trip(Some(3i32));
        round_trip('é');
        round_trip('😀');
        round_trip(Box::<str>::from("box"));
        round_trip(std::sync::Arc::<str>::from("arc"));
        round_trip(std::borrow::Cow::<'static, str>::Borrowed("cow"));
        round_trip(std::time::Duration::new(3, 999_999_999));
        round_trip(std::time::Duration::from_nanos(i64::MAX as u64));
        round_trip(std::time::Duration::ZERO);
        round_trip(None::<String>);
    }

    #[test]
    fn u32_is_always_int64_so_filters_see_every_value() {
        assert_eq!(5u32.to_value().unwrap(), Some(Value::Int64(5)));
        assert_eq!(u32::from_value(Some(Value::Int32(5))).unwrap(), 5);
    }

    #[test]
    fn bad_values_are_errors_not_wraps() {
        assert_eq!(
            u64::MAX.to_value().unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            u8::from_value(Some(Value::Int32(256))).unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            i32::from_value(Some(Value::from("1"))).unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        assert_eq!(i32::from_value(None).unwrap_err().kind(), ErrorKind::Decode);
        let too_long = std::time::Duration::from_nanos(i64::MAX as u64 + 1);
        assert_eq!(
            too_long.to_value().unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            std::time::Duration::MAX.to_value().unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        assert!(std::time::Duration::from_value(Some(Value::Int64(-1))).is_err());
        assert!(char::from_value(Some(Value::from("ab"))).is_err());
        assert!(char::from_value(Some(Value::from(""))).is_err());
    }
}
