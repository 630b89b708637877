//! The filter AST.

use crate::filter::reads::Reads;
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
    /// Every operator, in the order of the OData specification.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Lt,
        CmpOp::Le,
    ];

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
    /// A typed field's comparison over every stored value its reader reads
    /// ([`ReadComparison`]), sent as one comparison per stored type.
    Read(ReadComparison),
}

/// A comparison of a typed field's property with a value, over every stored value
/// the field's reader reads ([`Reads`]): an integer field's `gt 0` holds for an
/// Int32 or an Int64 above zero, a float field's for a Double or an integer. Typed
/// columns build it ([`crate::model::TypedColumn`]); it is sent as one comparison
/// per stored type the reader accepts, in the form the engine needs
/// ([`ReadComparison::expand`]), and it means the same on every engine.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadComparison {
    property: String,
    op: CmpOp,
    /// The operand as the field writes it; `None` for an integer beyond `i64::MAX`
    /// (a `u64`), which no stored value reaches.
    operand: Option<Value>,
    reads: Reads,
    /// Why the operand can't be compared (it has no stored form): the filter fails
    /// [`Filter::validate`] with it, so nothing is sent.
    refused: Option<String>,
}

impl ReadComparison {
    /// `property op operand` over every stored value a reader of `reads` takes;
    /// `operand` as the field writes it (`None`: an integer beyond `i64::MAX`).
    pub fn new(
        property: impl Into<String>,
        op: CmpOp,
        operand: Option<Value>,
        reads: Reads,
    ) -> ReadComparison {
        ReadComparison {
            property: property.into(),
            op,
            operand,
            reads,
            refused: None,
        }
    }

    /// A comparison with an operand that has no stored form, refused with `why` when
    /// the filter is validated (before anything is sent).
    pub fn refused(
        property: impl Into<String>,
        op: CmpOp,
        reads: Reads,
        why: impl Into<String>,
    ) -> ReadComparison {
        ReadComparison {
            property: property.into(),
            op,
            operand: None,
            reads,
            refused: Some(why.into()),
        }
    }

    /// Why the operand can't be compared, if it can't.
    pub fn refusal(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// The property compared.
    pub fn property(&self) -> &str {
        &self.property
    }

    /// The operator.
    pub fn op(&self) -> CmpOp {
        self.op
    }

    /// The operand as the field writes it; `None` for an integer beyond `i64::MAX`.
    pub fn operand(&self) -> Option<&Value> {
        self.operand.as_ref()
    }

    /// Which stored values the field's reader accepts.
    pub fn reads(&self) -> Reads {
        self.reads
    }
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
