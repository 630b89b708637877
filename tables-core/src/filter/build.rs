//! The filter builder: typed comparisons on named columns and boolean combinators.

use std::ops::{BitAnd, BitOr, Bound, Not};

use crate::filter::ast::{CmpOp, Filter, UncheckedFilter};
use crate::key::{prefix_range, KeyRange};
use crate::value::Value;

/// The property name of the PartitionKey.
pub(crate) const PARTITION_KEY: &str = "PartitionKey";
/// The property name of the RowKey.
pub(crate) const ROW_KEY: &str = "RowKey";
/// The property name of the server's timestamp.
pub(crate) const TIMESTAMP: &str = "Timestamp";

/// A property to build comparisons on; see [`col`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The property name.
    pub name: String,
}

/// A column by property name: the start of every built filter.
///
/// The constant's Rust type picks the Edm type of the comparison (`i32` is Int32,
/// `i64` is Int64, `f64` is Double and so on), and the service only matches
/// properties of that same type.
///
/// ```
/// use tables_core::{col, DynamicEntity};
///
/// let f = col("PartitionKey").eq("Sales") & col("Age").ge(30) & !col("LastName").eq("Jones");
/// assert_eq!(
///     f.to_odata(),
///     "PartitionKey eq 'Sales' and Age ge 30 and not (LastName eq 'Jones')"
/// );
/// let e = DynamicEntity::new("Sales", "1").with("Age", 34).with("LastName", "Smith");
/// assert!(f.matches(&e));
/// ```
pub fn col(name: impl Into<String>) -> Column {
    Column { name: name.into() }
}

impl Column {
    /// A column by property name (same as [`col`]).
    pub fn new(name: impl Into<String>) -> Column {
        col(name)
    }

    /// The PartitionKey column.
    pub fn partition_key() -> Column {
        col(PARTITION_KEY)
    }

    /// The RowKey column.
    pub fn row_key() -> Column {
        col(ROW_KEY)
    }

    /// The Timestamp column (the server's last-modified time, an Edm.DateTime).
    pub fn timestamp() -> Column {
        col(TIMESTAMP)
    }

    /// `self op value`.
    pub fn compare(&self, op: CmpOp, value: impl Into<Value>) -> Filter {
        Filter::Compare {
            property: self.name.clone(),
            op,
            value: value.into(),
        }
    }

    /// `self eq value`.
    pub fn eq(&self, value: impl Into<Value>) -> Filter {
        self.compare(CmpOp::Eq, value)
    }

    /// `self ne value`. Like every comparison, it only matches entities that have
    /// the property with the constant's type.
    pub fn ne(&self, value: impl Into<Value>) -> Filter {
        self.compare(CmpOp::Ne, value)
    }

    /// `self gt value`.
    pub fn gt(&self, value: impl Into<Value>) -> Filter {
        self.compare(CmpOp::Gt, value)
    }

    /// `self ge value`.
    pub fn ge(&self, value: impl Into<Value>) -> Filter {
        self.compare(CmpOp::Ge, value)
    }

    /// `self lt value`.
    pub fn lt(&self, value: impl Into<Value>) -> Filter {
        self.compare(CmpOp::Lt, value)
    }

    /// `self le value`.
    pub fn le(&self, value: impl Into<Value>) -> Filter {
        self.compare(CmpOp::Le, value)
    }

    /// `self ge low and self le high`: the closed range `[low, high]`.
    ///
    /// ```
    /// use tables_core::col;
    ///
    /// let f = col("RowKey").between("empid_000100", "empid_000199");
    /// assert_eq!(f.to_odata(), "RowKey ge 'empid_000100' and RowKey le 'empid_000199'");
    /// ```
    pub fn between(&self, low: impl Into<Value>, high: impl Into<Value>) -> Filter {
        self.ge(low).and(self.le(high))
    }

    /// `self ge low and self lt high`: the half-open range `[low, high)`.
    pub fn range(&self, low: impl Into<Value>, high: impl Into<Value>) -> Filter {
        self.ge(low).and(self.lt(high))
    }

    /// String properties starting with `prefix`, as the range the service can run
    /// (its filters have no `startswith`); see [`crate::key::prefix_range`].
    ///
    /// ```
    /// use tables_core::col;
    ///
    /// let f = col("RowKey").starts_with("email_a");
    /// assert_eq!(f.to_odata(), "RowKey ge 'email_a' and RowKey lt 'email_b'");
    /// ```
    pub fn starts_with(&self, prefix: &str) -> Filter {
        prefix_range(prefix).filter_on(self)
    }
}

impl Filter {
    /// `PartitionKey eq partition_key`.
    pub fn partition_key(partition_key: impl Into<String>) -> Filter {
        Column::partition_key().eq(Value::String(partition_key.into()))
    }

    /// `PartitionKey eq partition_key and RowKey eq row_key`: a point query.
    pub fn point(partition_key: impl Into<String>, row_key: impl Into<String>) -> Filter {
        Filter::partition_key(partition_key)
            .and(Column::row_key().eq(Value::String(row_key.into())))
    }

    /// `$filter` text sent to the service exactly as written, **unchecked**: the
    /// escape hatch for the rare filter [`Filter::parse`] does not read (prefer
    /// [`crate::col`] and the derive's typed columns, which are checked before
    /// anything is sent).
    ///
    /// Nothing local checks the text: not its syntax, its property names or the
    /// service's 15-comparison limit. A mistake comes back from the service as its
    /// `400` answer. Combined with other filters (`.and(..)`), the text is wrapped in
    /// parentheses. An engine that evaluates filters itself (the in-memory one)
    /// evaluates the text if [`Filter::parse`] reads it and otherwise refuses the
    /// query with [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported), saying
    /// it can't evaluate this unchecked filter.
    ///
    /// ```
    /// use tables_core::{col, DynamicEntity, Filter};
    ///
    /// // Text the parser reads: sent as written, and evaluable in memory.
    /// let f = Filter::unchecked_raw("Age gt 30");
    /// assert_eq!(f.to_odata(), "Age gt 30");
    /// assert!(f.matches(&DynamicEntity::new("p", "r").with("Age", 31)));
    ///
    /// // Text it does not read (upper-case keywords, which some emulators accept):
    /// // still sent as written, in parentheses when combined.
    /// let odd = Filter::partition_key("p").and(Filter::unchecked_raw("Age gt 30 AND Age lt 40"));
    /// assert_eq!(odd.to_odata(), "PartitionKey eq 'p' and (Age gt 30 AND Age lt 40)");
    /// assert!(odd.unparsed_part().is_some());
    /// ```
    pub fn unchecked_raw(text: impl Into<String>) -> Filter {
        Filter::Unchecked(UncheckedFilter::new(text.into()))
    }

    /// The first unchecked part ([`Filter::unchecked_raw`]) that [`Filter::parse`]
    /// does not read, if any: an engine that evaluates filters itself can't run the
    /// filter then.
    pub fn unparsed_part(&self) -> Option<&UncheckedFilter> {
        match self {
            Filter::Unchecked(raw) if raw.parsed().is_none() => Some(raw),
            Filter::Unchecked(_)
            | Filter::Compare { .. }
            | Filter::Literal(_)
            | Filter::Read(_) => None,
            Filter::And(left, right) | Filter::Or(left, right) => {
                left.unparsed_part().or_else(|| right.unparsed_part())
            }
            Filter::Not(inner) => inner.unparsed_part(),
        }
    }

    /// `self and other`.
    ///
    /// Conjunctions stay flat: when `other` is itself an `and`, its terms are
    /// appended one by one (`a & (b & c)` is `a and b and c`), which means the same
    /// and renders without parentheses.
    #[must_use]
    pub fn and(self, other: Filter) -> Filter {
        match other {
            Filter::And(left, right) => self.and(*left).and(*right),
            other => Filter::And(Box::new(self), Box::new(other)),
        }
    }

    /// `self or other`. Like [`Filter::and`], disjunctions stay flat.
    #[must_use]
    pub fn or(self, other: Filter) -> Filter {
        match other {
            Filter::Or(left, right) => self.or(*left).or(*right),
            other => Filter::Or(Box::new(self), Box::new(other)),
        }
    }

    /// `not self`.
    #[must_use]
    pub fn negate(self) -> Filter {
        Filter::Not(Box::new(self))
    }
}

impl BitAnd for Filter {
    type Output = Filter;

    /// `self and rhs`.
    fn bitand(self, rhs: Filter) -> Filter {
        self.and(rhs)
    }
}

impl BitOr for Filter {
    type Output = Filter;

    /// `self or rhs`.
    fn bitor(self, rhs: Filter) -> Filter {
        self.or(rhs)
    }
}

impl Not for Filter {
    type Output = Filter;

    /// `not self`.
    fn not(self) -> Filter {
        self.negate()
    }
}

/// The filters of a key range: what a query for the range sends.
impl KeyRange {
    /// The filter `column` within the range (`ge`/`gt` and `le`/`lt` comparisons). A
    /// range with no bounds gives `column ge ''`, which every key satisfies.
    pub fn filter_on(&self, column: &Column) -> Filter {
        let low = match &self.start {
            Bound::Included(s) => Some(column.ge(s.as_str())),
            Bound::Excluded(s) => Some(column.gt(s.as_str())),
            Bound::Unbounded => None,
        };
        let high = match &self.end {
            Bound::Included(e) => Some(column.le(e.as_str())),
            Bound::Excluded(e) => Some(column.lt(e.as_str())),
            Bound::Unbounded => None,
        };
        match (low, high) {
            (Some(low), Some(high)) => low.and(high),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => column.ge(""),
        }
    }

    /// The filter on `RowKey`.
    pub fn row_key_filter(&self) -> Filter {
        self.filter_on(&Column::row_key())
    }

    /// The filter on `PartitionKey`.
    pub fn partition_key_filter(&self) -> Filter {
        self.filter_on(&Column::partition_key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(property: &str, op: CmpOp, value: Value) -> Filter {
        Filter::Compare {
            property: property.to_owned(),
            op,
            value,
        }
    }

    #[test]
    fn comparisons_carry_operator_and_typed_value() {
        let c = col("Age");
        assert_eq!(c.eq(1), cmp("Age", CmpOp::Eq, Value::Int32(1)));
        assert_eq!(c.ne(1i64), cmp("Age", CmpOp::Ne, Value::Int64(1)));
        assert_eq!(c.gt(1.5), cmp("Age", CmpOp::Gt, Value::Double(1.5)));
        assert_eq!(c.ge(true), cmp("Age", CmpOp::Ge, Value::Boolean(true)));
        assert_eq!(c.lt("x"), cmp("Age", CmpOp::Lt, Value::String("x".into())));
        assert_eq!(
            c.le(vec![1u8]),
            cmp("Age", CmpOp::Le, Value::Binary(vec![1]))
        );
    }

    #[test]
    fn combinators_and_operators_build_the_same_tree() {
        let a = col("A").eq(1);
        let b = col("B").eq(2);
        assert_eq!(
            a.clone() & b.clone(),
            Filter::And(Box::new(a.clone()), Box::new(b.clone()))
        );
        assert_eq!(
            a.clone() | b.clone(),
            Filter::Or(Box::new(a.clone()), Box::new(b.clone()))
        );
        assert_eq!(!a.clone(), Filter::Not(Box::new(a.clone())));
        assert_eq!(a.clone().negate(), !a.clone());
        let c = col("C").eq(3);
        let left_deep = (a.clone() & b.clone()) & c.clone();
        assert_eq!(a.clone() & (b.clone() & c.clone()), left_deep);
        assert_eq!(
            a.clone() | (b.clone() | c.clone()),
            (a.clone() | b.clone()) | c.clone()
        );
        // Mixed operators keep their grouping.
        assert_eq!(
            a.clone() & (b.clone() | c.clone()),
            Filter::And(Box::new(a), Box::new(b | c))
        );
    }

    #[test]
    fn shortcuts_name_the_keys() {
        assert_eq!(
            Filter::point("Sales", "2"),
            col("PartitionKey").eq("Sales") & col("RowKey").eq("2")
        );
        assert_eq!(Filter::partition_key("p"), col("PartitionKey").eq("p"));
        assert_eq!(Column::timestamp().name, "Timestamp");
    }

    #[test]
    fn starts_with_lowers_to_a_range() {
        assert_eq!(
            col("RowKey").starts_with("empid_000123"),
            col("RowKey").range("empid_000123", "empid_000124")
        );
        assert_eq!(col("RowKey").starts_with(""), col("RowKey").ge(""));
        assert_eq!(
            col("RowKey").starts_with("\u{FFFF}"),
            col("RowKey").ge("\u{FFFF}")
        );
        assert_eq!(col("N").between(1, 9), col("N").ge(1) & col("N").le(9));
    }
}
