//! `Value` and `EdmType`: the eight property types of the Entity Data Model.

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
}
