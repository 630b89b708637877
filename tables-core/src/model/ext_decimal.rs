//! `rust_decimal::Decimal` as a property (feature `rust_decimal`).
//!
//! Stored as `Edm.String` in the invariant form `-?digits(.digits)?` with the value's
//! own scale (`1.50` stays `1.50`): .NET's `decimal.Parse(s, CultureInfo.InvariantCulture)`
//! and Python's `Decimal(s)` read it back exactly, and both hold every `Decimal` (.NET's
//! `decimal` has the same 96-bit mantissa and 0..=28 scale). The service compares such
//! text as text, so a typed column of a `Decimal` has no comparisons (it is not
//! [`Filterable`](crate::model::Filterable)).

use std::str::FromStr as _;

use rust_decimal::Decimal;

use crate::error::{Error, ErrorKind, Result};
use crate::model::property::{missing, Property};
use crate::value::{EdmType, Value};

impl Property for Decimal {
    type Scalar = Decimal;
    const EDM_TYPE: EdmType = EdmType::String;

    fn to_value(&self) -> Result<Option<Value>> {
        Ok(Some(Value::String(self.to_string())))
    }

    /// Reads the text exactly (a value with more digits than a `Decimal` holds is an
    /// error, never rounded); also accepts exponent notation (Python writes
    /// `Decimal("0.0000001")` as `1E-7`) and whole `Int32`/`Int64` values.
    fn from_value(value: Option<Value>) -> Result<Decimal> {
        let text = match value {
            Some(Value::String(text)) => text,
            Some(Value::Int32(n)) => return Ok(Decimal::from(n)),
            Some(Value::Int64(n)) => return Ok(Decimal::from(n)),
            Some(other) => {
                return Err(Error::new(
                    ErrorKind::InvalidValue,
                    format!(
                        "expected a decimal (Edm.String text), found Edm.{:?}",
                        other.edm_type()
                    ),
                ))
            }
            None => return Err(missing("Decimal")),
        };
        let parsed = if text.contains(['e', 'E']) {
            Decimal::from_scientific(&text)
        } else {
            Decimal::from_str_exact(&text)
        };
        // `from_scientific` rounds what it can't hold; refuse it unless it is exact.
        match parsed {
            Ok(value) if !text.contains(['e', 'E']) || exact_scientific(&text, value) => Ok(value),
            _ => Err(Error::new(
                ErrorKind::InvalidValue,
                format!("{text:?} is not a decimal a Decimal holds exactly"),
            )),
        }
    }
}

/// Whether `value` is exactly the number `text` (in exponent notation) writes.
fn exact_scientific(text: &str, value: Decimal) -> bool {
    // Compare as mantissa digits and exponent: the text's digits, with trailing
    // zeros dropped, must equal the value's, at the same power of ten.
    let Some((mantissa, exponent)) = text.split_once(['e', 'E']) else {
        return false;
    };
    let Ok(exponent) = i64::from_str(exponent) else {
        return false;
    };
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return false;
    }
    let Ok(fraction_len) = i64::try_from(fraction.len()) else {
        return false;
    };
    let digits = format!("{whole}{fraction}");
    let power = exponent - fraction_len;
    let (text_digits, text_power) = normalize(&digits, power);
    let scale = i64::from(value.scale());
    let value_digits = value.mantissa().unsigned_abs().to_string();
    let (value_digits, value_power) = normalize(&value_digits, -scale);
    let zero = text_digits == "0";
    text_digits == value_digits
        && (zero || text_power == value_power)
        && (zero || negative == value.is_sign_negative())
}

/// Digits without leading or trailing zeros, and the power of ten of the last digit.
fn normalize(digits: &str, power: i64) -> (String, i64) {
    let trimmed = digits.trim_start_matches('0');
    let without_trailing = trimmed.trim_end_matches('0');
    if without_trailing.is_empty() {
        return ("0".to_owned(), 0);
    }
    let dropped = i64::try_from(trimmed.len() - without_trailing.len()).unwrap_or(0);
    (without_trailing.to_owned(), power + dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).unwrap()
    }

    #[test]
    fn decimals_are_exact_text_with_their_scale() {
        for text in [
            "0",
            "1.50",
            "-12.3400",
            "79228162514264337593543950335",
            "-79228162514264337593543950335",
            "0.0000000000000000000000000001",
            "7.9228162514264337593543950335",
        ] {
            let d = dec(text);
            let stored = d.to_value().unwrap();
            assert_eq!(stored, Some(Value::from(text)), "{text}");
            let back = Decimal::from_value(stored).unwrap();
            assert_eq!(back, d);
            assert_eq!(back.scale(), d.scale(), "{text}");
        }
    }

    #[test]
    fn reading_is_exact_or_an_error() {
        assert_eq!(
            Decimal::from_value(Some(Value::from("1E-7"))).unwrap(),
            dec("0.0000001")
        );
        assert_eq!(
            Decimal::from_value(Some(Value::from("-2.5e3"))).unwrap(),
            dec("-2500")
        );
        assert_eq!(
            Decimal::from_value(Some(Value::Int64(-3))).unwrap(),
            dec("-3")
        );
        for bad in [
            "79228162514264337593543950336",
            "0.00000000000000000000000000001",
            "1e-40",
            "1,5",
            "abc",
            "",
        ] {
            let err = Decimal::from_value(Some(Value::from(bad))).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidValue, "{bad}");
        }
        assert!(Decimal::from_value(Some(Value::Double(1.5))).is_err());
    }
}
