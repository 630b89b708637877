//! `Value` and `EdmType`: the eight property types of the Entity Data Model.

use std::fmt;

use crate::datetime::DateTime;

/// The eight property types the Table service stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdmType {
    /// `Edm.String`: UTF-16 text, at most 64 KiB.
    String,
    /// `Edm.Int32`.
    Int32,
    /// `Edm.Int64`.
    Int64,
    /// `Edm.Double`: IEEE 754 binary64, including NaN and the infinities.
    Double,
    /// `Edm.Boolean`.
    Boolean,
    /// `Edm.DateTime`: UTC, 100 ns precision.
    DateTime,
    /// `Edm.Guid`.
    Guid,
    /// `Edm.Binary`: at most 64 KiB.
    Binary,
}

impl EdmType {
    /// The OData type name, e.g. `"Edm.Int64"`.
    pub const fn odata_name(self) -> &'static str {
        match self {
            EdmType::String => "Edm.String",
            EdmType::Int32 => "Edm.Int32",
            EdmType::Int64 => "Edm.Int64",
            EdmType::Double => "Edm.Double",
            EdmType::Boolean => "Edm.Boolean",
            EdmType::DateTime => "Edm.DateTime",
            EdmType::Guid => "Edm.Guid",
            EdmType::Binary => "Edm.Binary",
        }
    }

    /// Parses an OData type name such as `"Edm.Guid"`.
    pub fn from_odata_name(name: &str) -> Option<EdmType> {
        Some(match name {
            "Edm.String" => EdmType::String,
            "Edm.Int32" => EdmType::Int32,
            "Edm.Int64" => EdmType::Int64,
            "Edm.Double" => EdmType::Double,
            "Edm.Boolean" => EdmType::Boolean,
            "Edm.DateTime" => EdmType::DateTime,
            "Edm.Guid" => EdmType::Guid,
            "Edm.Binary" => EdmType::Binary,
            _ => return None,
        })
    }
}

impl fmt::Display for EdmType {
    /// The OData type name, e.g. `Edm.Int64`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.odata_name())
    }
}

/// A typed property value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `Edm.String`.
    String(String),
    /// `Edm.Int32`.
    Int32(i32),
    /// `Edm.Int64`.
    Int64(i64),
    /// `Edm.Double`.
    Double(f64),
    /// `Edm.Boolean`.
    Boolean(bool),
    /// `Edm.DateTime`.
    DateTime(DateTime),
    /// `Edm.Guid`.
    Guid(uuid::Uuid),
    /// `Edm.Binary`.
    Binary(Vec<u8>),
}

impl Value {
    /// The value's Edm type.
    pub fn edm_type(&self) -> EdmType {
        match self {
            Value::String(_) => EdmType::String,
            Value::Int32(_) => EdmType::Int32,
            Value::Int64(_) => EdmType::Int64,
            Value::Double(_) => EdmType::Double,
            Value::Boolean(_) => EdmType::Boolean,
            Value::DateTime(_) => EdmType::DateTime,
            Value::Guid(_) => EdmType::Guid,
            Value::Binary(_) => EdmType::Binary,
        }
    }

    /// The text of an `Edm.String`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as an `i32`: an `Edm.Int32`, or an `Edm.Int64` that fits.
    pub fn as_i32(&self) -> Option<i32> {
        i32::try_from(self).ok()
    }

    /// The value as an `i64`: an `Edm.Int64` or an `Edm.Int32`.
    pub fn as_i64(&self) -> Option<i64> {
        i64::try_from(self).ok()
    }

    /// The value as an `f64`: an `Edm.Double`, or an `Edm.Int32` (which converts exactly).
    pub fn as_f64(&self) -> Option<f64> {
        f64::try_from(self).ok()
    }

    /// The value of an `Edm.Boolean`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// The instant of an `Edm.DateTime`.
    pub fn as_datetime(&self) -> Option<DateTime> {
        match self {
            Value::DateTime(t) => Some(*t),
            _ => None,
        }
    }

    /// The GUID of an `Edm.Guid`.
    pub fn as_guid(&self) -> Option<uuid::Uuid> {
        match self {
            Value::Guid(g) => Some(*g),
            _ => None,
        }
    }

    /// The bytes of an `Edm.Binary`.
    pub fn as_binary(&self) -> Option<&[u8]> {
        match self {
            Value::Binary(b) => Some(b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_return_only_their_own_types() {
        let text = Value::String("x".to_owned());
        assert_eq!(text.as_str(), Some("x"));
        assert_eq!(text.as_i64(), None);
        assert_eq!(text.as_binary(), None);
        assert_eq!(Value::Int32(7).as_i32(), Some(7));
        assert_eq!(Value::Int32(7).as_i64(), Some(7));
        assert_eq!(Value::Int32(7).as_f64(), Some(7.0));
        assert_eq!(Value::Int32(7).as_str(), None);
        assert_eq!(Value::Int64(1 << 40).as_i32(), None);
        assert_eq!(Value::Int64(5).as_i32(), Some(5));
        assert_eq!(Value::Double(0.5).as_f64(), Some(0.5));
        assert_eq!(Value::Double(0.5).as_i64(), None);
        assert_eq!(Value::Boolean(true).as_bool(), Some(true));
        assert_eq!(Value::Int32(1).as_bool(), None);
        assert_eq!(
            Value::DateTime(DateTime::MIN).as_datetime(),
            Some(DateTime::MIN)
        );
        assert_eq!(Value::Boolean(true).as_datetime(), None);
        let id = uuid::Uuid::from_u128(42);
        assert_eq!(Value::Guid(id).as_guid(), Some(id));
        assert_eq!(Value::String(id.to_string()).as_guid(), None);
        assert_eq!(Value::Binary(vec![1, 2]).as_binary(), Some(&[1u8, 2][..]));
    }

    #[test]
    fn edm_type_names_round_trip() {
        for t in [
            EdmType::String,
            EdmType::Int32,
            EdmType::Int64,
            EdmType::Double,
            EdmType::Boolean,
            EdmType::DateTime,
            EdmType::Guid,
            EdmType::Binary,
        ] {
            assert_eq!(EdmType::from_odata_name(&t.to_string()), Some(t));
        }
        assert_eq!(EdmType::from_odata_name("Edm.Single"), None);
    }
}
