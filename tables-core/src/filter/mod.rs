//! Filters: an AST with a builder API, OData `$filter` rendering and parsing, an
//! evaluator with the service's semantics, and the query-plan classifier.
//!
//! ```
//! use tables_core::{col, DynamicEntity, Filter, QueryPlan};
//!
//! let f = Filter::partition_key("Sales") & col("RowKey").starts_with("empid_0001");
//! let text = f.to_odata();
//! assert_eq!(text, "PartitionKey eq 'Sales' and RowKey ge 'empid_0001' and RowKey lt 'empid_0002'");
//! assert_eq!(Filter::parse(&text)?, f);
//! assert!(matches!(f.plan(), QueryPlan::Range { .. }));
//! assert!(f.matches(&DynamicEntity::new("Sales", "empid_000123")));
//! f.validate()?;
//! # Ok::<(), tables_core::Error>(())
//! ```

mod ast;
mod build;
mod eval;
mod expand;
mod parse;
mod plan;
mod reads;
mod render;

pub use ast::{CmpOp, Filter, ReadComparison, UncheckedFilter};
pub use build::{col, Column};
pub(crate) use build::{PARTITION_KEY, ROW_KEY};
pub use plan::{KeyBound, PartitionBounds, QueryPlan};
pub use reads::{FilterDialect, Reads};

use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;

/// The most comparisons the service accepts in one filter.
pub const MAX_COMPARISONS: usize = 15;

impl Filter {
    /// The filter with every typed comparison ([`Filter::Read`]) written out as the
    /// plain comparisons `dialect` needs; the rest as it is.
    pub fn expand(&self, dialect: FilterDialect) -> Filter {
        match self {
            Filter::Read(read) => read.expand(dialect),
            Filter::And(left, right) => Filter::And(
                Box::new(left.expand(dialect)),
                Box::new(right.expand(dialect)),
            ),
            Filter::Or(left, right) => Filter::Or(
                Box::new(left.expand(dialect)),
                Box::new(right.expand(dialect)),
            ),
            Filter::Not(inner) => Filter::Not(Box::new(inner.expand(dialect))),
            other => other.clone(),
        }
    }

    /// Whether the filter holds a typed comparison ([`Filter::Read`]), whose text
    /// depends on the dialect.
    pub fn has_read_comparisons(&self) -> bool {
        match self {
            Filter::Read(_) => true,
            Filter::And(left, right) | Filter::Or(left, right) => {
                left.has_read_comparisons() || right.has_read_comparisons()
            }
            Filter::Not(inner) => inner.has_read_comparisons(),
            Filter::Compare { .. } | Filter::Literal(_) | Filter::Unchecked(_) => false,
        }
    }

    /// Whether any comparison of the filter is on `property` (an unchecked part
    /// counts when its text parses and names it, or when it does not parse and its
    /// text holds the name).
    ///
    /// ```
    /// use tables_core::{col, Filter};
    ///
    /// let filter = col("Age").gt(30).and(col("Timestamp").ge(tables_core::DateTime::MIN));
    /// assert!(filter.mentions("Timestamp"));
    /// assert!(!col("Age").gt(30).mentions("Timestamp"));
    /// ```
    pub fn mentions(&self, property: &str) -> bool {
        match self {
            Filter::Compare { property: p, .. } => p == property,
            Filter::Read(read) => read.property() == property,
            Filter::And(left, right) | Filter::Or(left, right) => {
                left.mentions(property) || right.mentions(property)
            }
            Filter::Not(inner) => inner.mentions(property),
            Filter::Literal(_) => false,
            Filter::Unchecked(raw) => match raw.parsed() {
                Some(parsed) => parsed.mentions(property),
                None => raw.text().contains(property),
            },
        }
    }

    /// The OData `$filter` text for an engine of `dialect`: [`Filter::to_odata`]
    /// for [`FilterDialect::Typed`].
    pub fn to_odata_for(&self, dialect: FilterDialect) -> String {
        match dialect {
            FilterDialect::Typed => self.to_odata(),
            _ => self.expand(dialect).to_odata(),
        }
    }
}

impl Filter {
    /// Checks the filter against the service's rules: at most
    /// [`MAX_COMPARISONS`] comparisons, property names that can be written in a
    /// filter (identifiers such as `LastName`, not keywords like `and`), and no NaN
    /// or infinite Double constants (the service has no literal for them).
    ///
    /// Unchecked parts ([`Filter::unchecked_raw`]) are not checked, nor counted
    /// towards the comparison limit: only that their text is not blank.
    ///
    /// ```
    /// use tables_core::{col, ErrorKind, Filter};
    ///
    /// assert!(col("Age").gt(30).validate().is_ok());
    /// let err = col("Ratio").lt(f64::NAN).validate().unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidFilter);
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidFilter`] naming the first rule broken.
    pub fn validate(&self) -> Result<()> {
        let count = self.checked_comparison_count();
        if count > MAX_COMPARISONS {
            return Err(Error::new(
                ErrorKind::InvalidFilter,
                format!(
                    "the filter has {count} comparisons; the service allows at most {MAX_COMPARISONS}: split the query or use key ranges"
                ),
            ));
        }
        self.validate_terms()
    }

    fn validate_terms(&self) -> Result<()> {
        match self {
            Filter::Compare {
                property, value, ..
            } => {
                if !parse::is_property_name(property) {
                    return Err(Error::new(
                        ErrorKind::InvalidFilter,
                        format!(
                            "{property:?} cannot be used as a property name in a filter; property names are non-empty identifiers (letters, digits, `_`, not starting with a digit) and not a keyword such as `and`"
                        ),
                    )
                    .with_property(property.clone()));
                }
                match value {
                    Value::Double(x) if !x.is_finite() => Err(Error::new(
                        ErrorKind::InvalidFilter,
                        format!(
                            "the filter compares {property:?} with {x}; the service has no literal for NaN or infinity"
                        ),
                    )
                    .with_property(property.clone())),
                    _ => Ok(()),
                }
            }
            Filter::And(left, right) | Filter::Or(left, right) => {
                left.validate_terms()?;
                right.validate_terms()
            }
            Filter::Not(inner) => inner.validate_terms(),
            Filter::Read(read) => match read.refusal() {
                Some(why) => Err(Error::new(
                    ErrorKind::InvalidFilter,
                    format!(
                        "the filter compares {:?} with a value it can't be stored as: {why}",
                        read.property()
                    ),
                )
                .with_property(read.property())),
                None => read.expand(FilterDialect::Typed).validate_terms(),
            },
            Filter::Literal(_) => Ok(()),
            Filter::Unchecked(raw) if raw.text().trim().is_empty() => Err(Error::new(
                ErrorKind::InvalidFilter,
                "the unchecked filter text is empty; leave the filter unset to read every entity",
            )),
            Filter::Unchecked(_) => Ok(()),
        }
    }

    /// The comparisons outside unchecked parts: the ones the limit is checked on.
    fn checked_comparison_count(&self) -> usize {
        match self {
            Filter::Compare { .. } => 1,
            Filter::And(left, right) | Filter::Or(left, right) => {
                left.checked_comparison_count() + right.checked_comparison_count()
            }
            Filter::Not(inner) => inner.checked_comparison_count(),
            Filter::Read(read) => read.expand(FilterDialect::Typed).checked_comparison_count(),
            Filter::Literal(_) | Filter::Unchecked(_) => 0,
        }
    }

    /// The number of comparisons (`property op constant`) in the filter. An
    /// unchecked part counts the comparisons [`Filter::parse`] reads in it (none when
    /// the parser does not read it).
    pub fn comparison_count(&self) -> usize {
        match self {
            Filter::Compare { .. } => 1,
            Filter::And(left, right) | Filter::Or(left, right) => {
                left.comparison_count() + right.comparison_count()
            }
            Filter::Not(inner) => inner.comparison_count(),
            Filter::Read(read) => read.expand(FilterDialect::Typed).comparison_count(),
            Filter::Literal(_) => 0,
            Filter::Unchecked(raw) => raw.parsed().map_or(0, Filter::comparison_count),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::DateTime;
    use crate::entity::DynamicEntity;
    use proptest::prelude::*;

    #[test]
    fn comparison_limit_is_fifteen() {
        let mut f = col("A").eq(0);
        for i in 1..15 {
            f = f.or(col("A").eq(i));
        }
        assert_eq!(f.comparison_count(), 15);
        assert!(f.validate().is_ok());
        let f = (f & Filter::Literal(true)).negate();
        assert_eq!(f.comparison_count(), 15);
        assert!(f.validate().is_ok());
        let f = f.and(col("B").eq(1));
        assert_eq!(f.comparison_count(), 16);
        assert_eq!(
            f.validate().map_err(|e| e.kind()),
            Err(ErrorKind::InvalidFilter)
        );
    }

    #[test]
    fn property_names_and_doubles_are_checked() {
        for name in [
            "",
            "and",
            "not",
            "eq",
            "true",
            "Last Name",
            "1st",
            "a-b",
            "a'b",
        ] {
            let err = (col("Ok").eq(1) & col(name).eq(1))
                .validate()
                .expect_err(name);
            assert_eq!(err.kind(), ErrorKind::InvalidFilter, "{name:?}");
            assert_eq!(err.property(), Some(name));
        }
        for name in ["LastName", "_x", "a1", "Größe", "And", "X"] {
            assert!(col(name).eq(1).validate().is_ok(), "{name:?}");
        }
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = (!col("R").gt(x)).validate().expect_err("non-finite");
            assert_eq!(err.kind(), ErrorKind::InvalidFilter);
        }
        assert!(col("R").gt(f64::MAX).validate().is_ok());
    }

    #[test]
    fn unchecked_text_is_sent_as_written_and_skips_the_checks() {
        // Text the parser does not read (upper-case `AND`): sent verbatim, never
        // evaluated as a match, and found by `unparsed_part`.
        let odd = Filter::unchecked_raw("A eq 1 AND B eq 2");
        assert_eq!(odd.to_odata(), "A eq 1 AND B eq 2");
        assert!(odd.validate().is_ok());
        assert_eq!(
            odd.unparsed_part().map(UncheckedFilter::text),
            Some("A eq 1 AND B eq 2")
        );
        assert!(odd
            .unparsed_part()
            .and_then(UncheckedFilter::parse_error)
            .is_some());
        assert!(!odd.matches(&DynamicEntity::new("p", "r").with("A", 1).with("B", 2)));
        assert_eq!(odd.plan(), QueryPlan::TableScan);
        // Combined, it is parenthesised on either side and under `not`.
        let pk = Filter::partition_key("p");
        assert_eq!(
            pk.clone().and(odd.clone()).to_odata(),
            "PartitionKey eq 'p' and (A eq 1 AND B eq 2)"
        );
        assert_eq!(
            odd.clone().or(pk.clone()).to_odata(),
            "(A eq 1 AND B eq 2) or PartitionKey eq 'p'"
        );
        assert_eq!(odd.clone().negate().to_odata(), "not (A eq 1 AND B eq 2)");
        assert_eq!(
            pk.clone().and(odd.clone()).plan(),
            QueryPlan::PartitionScan {
                partition_key: "p".into()
            }
        );
        assert!(pk.clone().and(odd.clone()).unparsed_part().is_some());

        // Text it reads: evaluated and planned as the parsed filter.
        let readable = Filter::unchecked_raw("PartitionKey eq 'p' and A gt 1");
        assert!(readable.unparsed_part().is_none());
        let row = |a: i32| DynamicEntity::new("p", "r").with("A", a);
        assert!(readable.matches(&row(2)));
        assert!(!readable.matches(&row(1)));
        assert_eq!(readable.plan(), pk.plan());
        assert_eq!(readable.comparison_count(), 2);

        // The comparison limit is the service's to check on unchecked text, and the
        // checked parts are still checked.
        let sixteen = (0..16)
            .map(|i| format!("A eq {i}"))
            .collect::<Vec<_>>()
            .join(" or ");
        let mut fifteen = col("A").eq(0);
        for i in 1..15 {
            fifteen = fifteen.or(col("A").eq(i));
        }
        assert_eq!(
            Filter::parse(&sixteen)
                .map(|f| f.validate().map_err(|e| e.kind()))
                .ok(),
            Some(Err(ErrorKind::InvalidFilter))
        );
        assert!(Filter::unchecked_raw(sixteen.clone()).validate().is_ok());
        assert!(fifteen
            .clone()
            .and(Filter::unchecked_raw(sixteen))
            .validate()
            .is_ok());
        let bad_name = col("and").eq(1).and(Filter::unchecked_raw("x"));
        assert_eq!(
            bad_name.validate().map_err(|e| e.kind()),
            Err(ErrorKind::InvalidFilter)
        );
        for blank in ["", "  "] {
            let err = Filter::unchecked_raw(blank).validate().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidFilter, "{blank:?}");
            assert_eq!(err.origin(), crate::Origin::Local);
        }
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<String>().prop_map(Value::String),
            "[a-z' ]{0,6}".prop_map(Value::String),
            any::<i32>().prop_map(Value::Int32),
            any::<i64>().prop_map(Value::Int64),
            any::<f64>()
                .prop_filter("finite", |x| x.is_finite())
                .prop_map(Value::Double),
            any::<bool>().prop_map(Value::Boolean),
            (DateTime::MIN_TICKS..=DateTime::MAX_TICKS)
                .prop_filter_map("in range", DateTime::from_ticks)
                .prop_map(Value::DateTime),
            any::<u128>().prop_map(|n| Value::Guid(uuid::Uuid::from_u128(n))),
            prop::collection::vec(any::<u8>(), 0..8).prop_map(Value::Binary),
        ]
    }

    fn property() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "PartitionKey",
                "RowKey",
                "Timestamp",
                "X",
                "binary",
                "datetime"
            ])
            .prop_map(str::to_owned),
            "[A-Za-z_][A-Za-z0-9_]{0,8}",
        ]
        .prop_filter("a property name", |name| parse::is_property_name(name))
    }

    fn op() -> impl Strategy<Value = CmpOp> {
        prop::sample::select(CmpOp::ALL.to_vec())
    }

    fn filter() -> impl Strategy<Value = Filter> {
        let leaf = prop_oneof![
            4 => (property(), op(), value()).prop_map(|(property, op, value)| Filter::Compare {
                property,
                op,
                value
            }),
            1 => any::<bool>().prop_map(Filter::Literal),
        ];
        leaf.prop_recursive(6, 48, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| a & b),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| a | b),
                inner.prop_map(|a| !a),
            ]
        })
    }

    proptest! {
        #[test]
        fn parse_reads_back_what_render_writes(f in filter()) {
            let text = f.to_odata();
            let parsed = Filter::parse(&text);
            prop_assert!(parsed.is_ok(), "{text:?}: {parsed:?}");
            prop_assert_eq!(parsed.ok(), Some(f));
        }

        #[test]
        fn parse_never_panics(text in any::<String>()) {
            let _ = Filter::parse(&text);
        }

        #[test]
        fn parse_never_panics_on_filter_like_text(
            words in prop::collection::vec(
                prop::sample::select(vec![
                    "A", "eq", "ne", "and", "or", "not", "(", ")", "'x'", "'", "''", "1", "-", "1.",
                    "1e", "1L", "2147483648", "true", "false", "X'0", "guid'", "datetime'", "1D",
                    "9e999", " ", "é",
                ]),
                0..12,
            )
        ) {
            let _ = Filter::parse(&words.concat());
            let _ = Filter::parse(&words.join(" "));
        }
    }
}
