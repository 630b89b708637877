//! [`Property`]: how a field type is stored as one typed property.

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::value::{EdmType, Value};

/// A Rust type stored as one table property.
///
/// Each type has one Edm type, used both when writing and in typed filters, so a
/// value compares the way it is stored:
///
/// | Rust | Edm type |
/// |---|---|
/// | `String` | `Edm.String` |
/// | `bool` | `Edm.Boolean` |
/// | `i8`, `i16`, `i32`, `u8`, `u16` | `Edm.Int32` |
/// | `i64`, `u32`, `u64` (at most `i64::MAX`) | `Edm.Int64` |
/// | `f32`, `f64` | `Edm.Double` |
/// | `Vec<u8>` | `Edm.Binary` |
/// | `uuid::Uuid` | `Edm.Guid` |
/// | [`DateTime`] (and chrono/time date-times behind features) | `Edm.DateTime` |
/// | `Option<T>` | as `T`; `None` is an absent property |
/// | unit enums with `#[derive(Property)]` | `Edm.String` |
///
/// A `u32` is always written as `Edm.Int64`, never `Int32` for small values, so
/// every stored value of a field has one type and a typed filter finds them all.
/// Reading is lenient where it is lossless: an integer field accepts `Int32` or
/// `Int64` in range, a float field accepts `Int32` (the Cosmos DB Table API returns
/// whole doubles untyped).
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
    note = "property types: String, bool, i8..i64, u8..u64, f32, f64, Vec<u8>, Uuid, \
            tables DateTime (chrono/time behind features), Option of these, and types with \
            #[derive(Property)] (unit enums, newtypes)",
    note = "for other types use #[entity(json)] (serde JSON in a string property) or \
            #[entity(with = module)] (your own codec)"
)]
pub trait Property: Sized {
    /// The type typed filters compare with: `Self`, or `T` for `Option<T>`.
    type Scalar;

    /// The Edm type the value is written as.
    const EDM_TYPE: EdmType;

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
    ($edm:ident: $($t:ty),* $(,)?) => {$(
        impl Property for $t {
            type Scalar = $t;
            const EDM_TYPE: EdmType = EdmType::$edm;

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
property_via_value!(Int32: i8, i16, i32, u8, u16);
property_via_value!(Int64: i64, u32);
property_via_value!(Double: f32, f64);
property_via_value!(DateTime: DateTime);
property_via_value!(Guid: uuid::Uuid);
property_via_value!(Binary: Vec<u8>);

impl Property for u64 {
    type Scalar = u64;
    const EDM_TYPE: EdmType = EdmType::Int64;

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

impl<T: Property> Property for Option<T> {
    type Scalar = T::Scalar;
    const EDM_TYPE: EdmType = T::EDM_TYPE;

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
    }
}
