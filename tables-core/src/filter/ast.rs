//! The filter AST.

use crate::value::Value;

/// A comparison operator of the OData `$filter` language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `eq`
    Eq,
    /// `ne`
    Ne,
    /// `gt`
    Gt,
    /// `ge`
    Ge,
    /// `lt`
    Lt,
    /// `le`
    Le,
}

impl CmpOp {
    /// The operator's OData keyword.
    pub const fn keyword(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
        }
    }
}

/// A filter over entities, as the service understands it: comparisons of a property
/// with a constant, combined with `and`, `or` and `not`.
///
/// Build filters with [`crate::filter::col`] or the derive's typed columns, render
/// them with `Display` (OData syntax), parse OData text with [`Filter::parse`], and
/// evaluate them with [`Filter::matches`].
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `property op constant`.
    Compare {
        /// The property name (`PartitionKey`, `RowKey`, `Timestamp` or a user property).
        property: String,
        /// The operator.
        op: CmpOp,
        /// The constant.
        value: Value,
    },
    /// Both sides hold.
    And(Box<Filter>, Box<Filter>),
    /// Either side holds.
    Or(Box<Filter>, Box<Filter>),
    /// The inner filter does not hold.
    Not(Box<Filter>),
    /// A constant `true` or `false` filter.
    Literal(bool),
}
