//! Conversions between [`Value`] and Rust types.
//!
//! Into a `Value` (`From`): text, integers, floats, `bool`, [`DateTime`], `Uuid` and
//! bytes. Integers that fit `Edm.Int32` become `Int32`, except `i64` (always `Int64`);
//! a `u32` above `i32::MAX` becomes `Int64`; a `u64` converts with `TryFrom` (always
//! `Int64`, and an error above `i64::MAX`, never a wrap).
//!
//! Out of a `Value` (`TryFrom<&Value>` and `TryFrom<Value>`): the Edm type must match
//! and the number must fit. Integers accept `Int32` or `Int64` when the value is in
//! range (an `Int32` of -1 is not a `u32`); `f64` and `f32` accept `Double`,
//! `Int32`, and `Int64` within ±2^53 (the integers a double holds exactly); errors
//! are [`ErrorKind::InvalidValue`] naming the expected and actual type.
//!
//! ```
//! use tables_core::{ErrorKind, Value};
//!
//! assert_eq!(Value::from(7u32), Value::Int32(7));
//! assert_eq!(Value::from(u32::MAX), Value::Int64(4_294_967_295));
//! assert_eq!(Value::try_from(7u64)?, Value::Int64(7));
//! assert_eq!(Value::try_from(u64::MAX).unwrap_err().kind(), ErrorKind::InvalidValue);
//!
//! assert_eq!(u32::try_from(&Value::Int64(5))?, 5);
//! assert_eq!(u32::try_from(&Value::Int32(-1)).unwrap_err().kind(), ErrorKind::InvalidValue);
//! assert_eq!(String::try_from(Value::from("hi"))?, "hi");
//! # Ok::<(), tables_core::Error>(())
//! ```

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;

// ---------------------------------------------------------------- into Value

macro_rules! value_from {
    ($variant:ident: $($t:ty),* $(,)?) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::$variant(v.into())
            }
        }
    )*};
}

value_from!(String: String, &str, &String);
value_from!(Int32: i8, i16, i32, u8, u16);
value_from!(Int64: i64);
value_from!(Double: f32, f64);
value_from!(Boolean: bool);
value_from!(DateTime: DateTime);
value_from!(Guid: uuid::Uuid);
value_from!(Binary: Vec<u8>, &[u8]);

impl From<u32> for Value {
    /// `Int32` when the value fits, otherwise `Int64`.
    fn from(v: u32) -> Value {
        match i32::try_from(v) {
            Ok(small) => Value::Int32(small),
            Err(_) => Value::Int64(i64::from(v)),
        }
    }
}

impl TryFrom<u64> for Value {
    type Error = Error;

    /// Always `Int64`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] above `i64::MAX`: the service has no unsigned type.
    fn try_from(v: u64) -> Result<Value> {
        i64::try_from(v).map(Value::Int64).map_err(|_| {
            Error::new(
                ErrorKind::InvalidValue,
                format!(
                    "the u64 {v} is above i64::MAX and Edm.Int64 is signed; store it as a \
                     string or a padded key instead"
                ),
            )
        })
    }
}

// ---------------------------------------------------------------- out of Value

fn mismatch(target: &str, expected: &str, actual: &Value) -> Error {
    Error::new(
        ErrorKind::InvalidValue,
        format!(
            "cannot read {} as {target}: expected {expected}",
            actual.edm_type()
        ),
    )
}

fn out_of_range(target: &str, actual: &Value) -> Error {
    let shown = match actual {
        Value::Int32(v) => v.to_string(),
        Value::Int64(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        other => format!("{other:?}"),
    };
    Error::new(
        ErrorKind::InvalidValue,
        format!(
            "the {} value {shown} does not fit in {target}; use a wider type",
            actual.edm_type()
        ),
    )
}

/// Implements `TryFrom<Value>` by delegating to `TryFrom<&Value>` (for `Copy` targets).
macro_rules! by_value_via_ref {
    ($($t:ty),* $(,)?) => {$(
        impl TryFrom<Value> for $t {
            type Error = Error;

            fn try_from(value: Value) -> Result<$t> {
                <$t>::try_from(&value)
            }
        }
    )*};
}

macro_rules! integer_from_value {
    ($($t:ty),* $(,)?) => {$(
        impl TryFrom<&Value> for $t {
            type Error = Error;

            fn try_from(value: &Value) -> Result<$t> {
                let wide = match value {
                    Value::Int32(v) => i64::from(*v),
                    Value::Int64(v) => *v,
                    other => {
                        return Err(mismatch(stringify!($t), "Edm.Int32 or Edm.Int64", other))
                    }
                };
                <$t>::try_from(wide).map_err(|_| out_of_range(stringify!($t), value))
            }
        }
        by_value_via_ref!($t);
    )*};
}

integer_from_value!(i8, i16, i32, u8, u16, u32, u64);

impl TryFrom<&Value> for i64 {
    type Error = Error;

    fn try_from(value: &Value) -> Result<i64> {
        match value {
            Value::Int32(v) => Ok(i64::from(*v)),
            Value::Int64(v) => Ok(*v),
            other => Err(mismatch("i64", "Edm.Int32 or Edm.Int64", other)),
        }
    }
}

/// The largest integer magnitude every `f64` holds exactly.
const EXACT_IN_DOUBLE: i64 = 1 << 53;

/// A number as a double: exactly, or an error (an Int64 beyond ±2^53).
fn exact_double(target: &str, value: &Value) -> Result<f64> {
    match value {
        Value::Double(v) => Ok(*v),
        Value::Int32(v) => Ok(f64::from(*v)),
        Value::Int64(v) if (-EXACT_IN_DOUBLE..=EXACT_IN_DOUBLE).contains(v) => {
            // Exact: within ±2^53 every integer is a double.
            Ok(*v as f64)
        }
        Value::Int64(v) => Err(Error::new(
            ErrorKind::InvalidValue,
            format!(
                "the Edm.Int64 value {v} has no exact {target} (beyond ±2^53 a double skips integers); \
                 read it into an i64 field"
            ),
        )),
        other => Err(mismatch(target, "Edm.Double, Edm.Int32 or Edm.Int64", other)),
    }
}

impl TryFrom<&Value> for f64 {
    type Error = Error;

    fn try_from(value: &Value) -> Result<f64> {
        exact_double("f64", value)
    }
}

impl TryFrom<&Value> for f32 {
    type Error = Error;

    /// Rounds to the nearest `f32`; NaN and the infinities carry over.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] for other types, and for finite values beyond
    /// `f32::MAX` in magnitude.
    fn try_from(value: &Value) -> Result<f32> {
        let wide = exact_double("f32", value)?;
        // Narrowing rounds to nearest; only overflow to infinity is refused.
        let narrow = wide as f32;
        if wide.is_finite() && narrow.is_infinite() {
            return Err(out_of_range("f32", value));
        }
        Ok(narrow)
    }
}

impl TryFrom<&Value> for bool {
    type Error = Error;

    fn try_from(value: &Value) -> Result<bool> {
        value
            .as_bool()
            .ok_or_else(|| mismatch("bool", "Edm.Boolean", value))
    }
}

impl TryFrom<&Value> for DateTime {
    type Error = Error;

    fn try_from(value: &Value) -> Result<DateTime> {
        value
            .as_datetime()
            .ok_or_else(|| mismatch("DateTime", "Edm.DateTime", value))
    }
}

impl TryFrom<&Value> for uuid::Uuid {
    type Error = Error;

    fn try_from(value: &Value) -> Result<uuid::Uuid> {
        value
            .as_guid()
            .ok_or_else(|| mismatch("Uuid", "Edm.Guid", value))
    }
}

by_value_via_ref!(i64, f64, f32, bool, DateTime, uuid::Uuid);

impl TryFrom<&Value> for String {
    type Error = Error;

    fn try_from(value: &Value) -> Result<String> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| mismatch("String", "Edm.String", value))
    }
}

impl TryFrom<Value> for String {
    type Error = Error;

    fn try_from(value: Value) -> Result<String> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(mismatch("String", "Edm.String", &other)),
        }
    }
}

impl TryFrom<&Value> for Vec<u8> {
    type Error = Error;

    fn try_from(value: &Value) -> Result<Vec<u8>> {
        value
            .as_binary()
            .map(<[u8]>::to_vec)
            .ok_or_else(|| mismatch("Vec<u8>", "Edm.Binary", value))
    }
}

impl TryFrom<Value> for Vec<u8> {
    type Error = Error;

    fn try_from(value: Value) -> Result<Vec<u8>> {
        match value {
            Value::Binary(b) => Ok(b),
            other => Err(mismatch("Vec<u8>", "Edm.Binary", &other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::EdmType;
    use proptest::prelude::*;

    fn kind<T: std::fmt::Debug>(r: Result<T>) -> ErrorKind {
        r.expect_err("conversion should fail").kind()
    }

    #[test]
    fn into_value_picks_the_edm_type() {
        assert_eq!(Value::from("a"), Value::String("a".to_owned()));
        assert_eq!(Value::from(&"a".to_owned()), Value::String("a".to_owned()));
        assert_eq!(Value::from(-3i32), Value::Int32(-3));
        assert_eq!(Value::from(3i64), Value::Int64(3));
        assert_eq!(Value::from(255u8), Value::Int32(255));
        assert_eq!(Value::from(65_535u16), Value::Int32(65_535));
        assert_eq!(Value::from(i32::MAX as u32), Value::Int32(i32::MAX));
        assert_eq!(
            Value::from(i32::MAX as u32 + 1),
            Value::Int64(i64::from(i32::MAX) + 1)
        );
        assert_eq!(Value::from(1.5f32), Value::Double(1.5));
        assert_eq!(Value::from(true), Value::Boolean(true));
        assert_eq!(Value::from(DateTime::MIN), Value::DateTime(DateTime::MIN));
        assert_eq!(Value::from(&[1u8, 2][..]), Value::Binary(vec![1, 2]));
        assert_eq!(Value::from(vec![3u8]), Value::Binary(vec![3]));
        let id = uuid::Uuid::from_u128(9);
        assert_eq!(Value::from(id).edm_type(), EdmType::Guid);
    }

    #[test]
    fn u64_never_wraps() {
        assert_eq!(Value::try_from(0u64).unwrap(), Value::Int64(0));
        assert_eq!(
            Value::try_from(i64::MAX as u64).unwrap(),
            Value::Int64(i64::MAX)
        );
        assert_eq!(
            kind(Value::try_from(i64::MAX as u64 + 1)),
            ErrorKind::InvalidValue
        );
        assert_eq!(kind(Value::try_from(u64::MAX)), ErrorKind::InvalidValue);
    }

    #[test]
    fn integer_extraction_checks_range() {
        assert_eq!(u32::try_from(&Value::Int32(7)).unwrap(), 7);
        assert_eq!(
            u32::try_from(&Value::Int64(u32::MAX.into())).unwrap(),
            u32::MAX
        );
        assert_eq!(
            kind(u32::try_from(&Value::Int32(-1))),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            kind(u32::try_from(&Value::Int64(i64::from(u32::MAX) + 1))),
            ErrorKind::InvalidValue
        );
        assert_eq!(i32::try_from(Value::Int64(-5)).unwrap(), -5);
        assert_eq!(
            kind(i32::try_from(Value::Int64(1 << 31))),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            kind(u8::try_from(&Value::Int32(256))),
            ErrorKind::InvalidValue
        );
        assert_eq!(u16::try_from(&Value::Int32(65_535)).unwrap(), 65_535);
        assert_eq!(
            kind(u64::try_from(&Value::Int64(-1))),
            ErrorKind::InvalidValue
        );
        assert_eq!(i64::try_from(&Value::Int32(-9)).unwrap(), -9);
        assert_eq!(
            kind(i8::try_from(&Value::Int32(128))),
            ErrorKind::InvalidValue
        );
    }

    #[test]
    fn wrong_types_are_invalid_values() {
        let s = Value::from("1");
        assert_eq!(kind(i32::try_from(&s)), ErrorKind::InvalidValue);
        assert_eq!(kind(i64::try_from(&s)), ErrorKind::InvalidValue);
        assert_eq!(kind(f64::try_from(&s)), ErrorKind::InvalidValue);
        assert_eq!(kind(bool::try_from(&s)), ErrorKind::InvalidValue);
        assert_eq!(kind(DateTime::try_from(&s)), ErrorKind::InvalidValue);
        assert_eq!(kind(uuid::Uuid::try_from(&s)), ErrorKind::InvalidValue);
        assert_eq!(
            kind(Vec::<u8>::try_from(s.clone())),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            kind(String::try_from(Value::Int32(1))),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            kind(String::try_from(&Value::Int32(1))),
            ErrorKind::InvalidValue
        );
        assert_eq!(f64::try_from(&Value::Int64(1)).unwrap(), 1.0);
        assert_eq!(
            f64::try_from(&Value::Int64(1 << 53)).unwrap(),
            9_007_199_254_740_992.0
        );
        assert_eq!(
            kind(f64::try_from(&Value::Int64((1 << 53) + 1))),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            kind(f32::try_from(&Value::Int64(-(1 << 53) - 1))),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            kind(i64::try_from(&Value::Double(1.0))),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            kind(Vec::<u8>::try_from(&Value::Int32(1))),
            ErrorKind::InvalidValue
        );
    }

    #[test]
    fn floats() {
        assert_eq!(f64::try_from(&Value::Int32(3)).unwrap(), 3.0);
        assert!(f64::try_from(&Value::Double(f64::NAN)).unwrap().is_nan());
        assert_eq!(f32::try_from(&Value::Double(0.5)).unwrap(), 0.5);
        assert_eq!(
            f32::try_from(&Value::Double(f64::NEG_INFINITY)).unwrap(),
            f32::NEG_INFINITY
        );
        assert_eq!(
            kind(f32::try_from(&Value::Double(1e300))),
            ErrorKind::InvalidValue
        );
    }

    proptest! {
        #[test]
        fn integers_round_trip(a: i32, b: i64, c: u8, d: u16, e: u32, f in 0..=i64::MAX as u64) {
            prop_assert_eq!(i32::try_from(Value::from(a)).unwrap(), a);
            prop_assert_eq!(i64::try_from(Value::from(b)).unwrap(), b);
            prop_assert_eq!(u8::try_from(Value::from(c)).unwrap(), c);
            prop_assert_eq!(u16::try_from(Value::from(d)).unwrap(), d);
            prop_assert_eq!(u32::try_from(Value::from(e)).unwrap(), e);
            prop_assert_eq!(u64::try_from(Value::try_from(f).unwrap()).unwrap(), f);
        }

        #[test]
        fn narrowing_matches_std(wide: i64) {
            prop_assert_eq!(i32::try_from(&Value::Int64(wide)).ok(), i32::try_from(wide).ok());
            prop_assert_eq!(u32::try_from(&Value::Int64(wide)).ok(), u32::try_from(wide).ok());
            prop_assert_eq!(u16::try_from(&Value::Int64(wide)).ok(), u16::try_from(wide).ok());
        }

        #[test]
        fn others_round_trip(
            x: f64, y: f32, flag: bool, text in ".*", bytes in proptest::collection::vec(any::<u8>(), 0..64),
            id: u128, ticks in DateTime::MIN_TICKS..=DateTime::MAX_TICKS,
        ) {
            prop_assert_eq!(f64::try_from(Value::from(x)).unwrap().to_bits(), x.to_bits());
            let back = f32::try_from(Value::from(y)).unwrap();
            prop_assert!(back.to_bits() == y.to_bits() || (back.is_nan() && y.is_nan()));
            prop_assert_eq!(bool::try_from(Value::from(flag)).unwrap(), flag);
            prop_assert_eq!(String::try_from(Value::from(text.as_str())).unwrap(), text.clone());
            prop_assert_eq!(Vec::<u8>::try_from(&Value::from(&bytes[..])).unwrap(), bytes.clone());
            let id = uuid::Uuid::from_u128(id);
            prop_assert_eq!(uuid::Uuid::try_from(Value::from(id)).unwrap(), id);
            let t = DateTime::from_ticks(ticks).unwrap();
            prop_assert_eq!(DateTime::try_from(Value::from(t)).unwrap(), t);
        }
    }
}
