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
/// evaluate them with [`Filter::matches`]. For the rare filter the parser does not
/// read, [`Filter::unchecked_raw`] sends text as written.
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
    /// Raw `$filter` text sent as written, not checked: [`Filter::unchecked_raw`].
    Unchecked(UncheckedFilter),
}

/// `$filter` text the caller vouches for, sent to the service exactly as written
/// (wrapped in parentheses when combined with other filters): the escape hatch for
/// a filter [`Filter::parse`] does not read. Made by [`Filter::unchecked_raw`].
///
/// Nothing checks it before sending, so a mistake in it comes back as the service's
/// answer (`400 InvalidInput`) instead of a local [`ErrorKind::InvalidFilter`].
/// Engines that evaluate filters themselves (the in-memory engine) evaluate it if
/// [`Filter::parse`] reads it, and refuse it with [`ErrorKind::Unsupported`]
/// otherwise.
///
/// [`ErrorKind::InvalidFilter`]: crate::ErrorKind::InvalidFilter
/// [`ErrorKind::Unsupported`]: crate::ErrorKind::Unsupported
#[derive(Debug, Clone, PartialEq)]
pub struct UncheckedFilter {
    text: String,
    /// The text as [`Filter::parse`] reads it, if it does.
    parsed: Option<Box<Filter>>,
}

impl UncheckedFilter {
    pub(crate) fn new(text: String) -> UncheckedFilter {
        let parsed = Filter::parse(&text).ok().map(Box::new);
        UncheckedFilter { text, parsed }
    }

    /// The text, as it is sent.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text as [`Filter::parse`] reads it; `None` when the parser does not read
    /// it (an engine that evaluates filters itself can't run it).
    pub fn parsed(&self) -> Option<&Filter> {
        self.parsed.as_deref()
    }

    /// Why [`Filter::parse`] does not read the text; `None` when it does.
    pub fn parse_error(&self) -> Option<crate::Error> {
        match self.parsed {
            Some(_) => None,
            None => Filter::parse(&self.text).err(),
        }
    }
}
