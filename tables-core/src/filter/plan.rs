//! Query plans: which part of the key space a filter can match, in the terms of the
//! cost ladder of the table design guide (point, range, partition scan, table scan;
//! <https://learn.microsoft.com/azure/storage/tables/table-storage-design-guide>).
//!
//! A plan only narrows where an engine looks; the engine still applies
//! [`Filter::matches`] to every candidate. Plans are therefore *sound*: every entity
//! a filter matches lies inside its plan's key region.

use std::cmp::Ordering;

use crate::filter::ast::{CmpOp, Filter};
use crate::filter::build::{PARTITION_KEY, ROW_KEY};
use crate::key::cmp_ordinal;
use crate::value::Value;

/// One bound of a RowKey range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyBound {
    /// The bound's key.
    pub key: String,
    /// Whether the bound itself is in the range.
    pub inclusive: bool,
}

impl KeyBound {
    /// Whether `row_key` is at or above this bound, taken as a lower bound.
    pub fn admits_from_below(&self, row_key: &str) -> bool {
        match cmp_ordinal(row_key, &self.key) {
            Ordering::Greater => true,
            Ordering::Equal => self.inclusive,
            Ordering::Less => false,
        }
    }

    /// Whether `row_key` is at or below this bound, taken as an upper bound.
    pub fn admits_from_above(&self, row_key: &str) -> bool {
        match cmp_ordinal(row_key, &self.key) {
            Ordering::Less => true,
            Ordering::Equal => self.inclusive,
            Ordering::Greater => false,
        }
    }
}

/// Bounds on the PartitionKeys a filter can match: a superset, like a plan
/// ([`Filter::partition_key_bounds`]). A table scan whose filter compares the
/// PartitionKey with `ge`, `lt` and the like starts at the lower bound and stops
/// past the upper one instead of visiting every partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionBounds {
    /// The least PartitionKey that can match, if any is known.
    pub lower: Option<KeyBound>,
    /// The greatest PartitionKey that can match, if any is known.
    pub upper: Option<KeyBound>,
}

impl PartitionBounds {
    /// Whether `partition_key` lies within both bounds.
    pub fn admits(&self, partition_key: &str) -> bool {
        self.lower
            .as_ref()
            .is_none_or(|b| b.admits_from_below(partition_key))
            && self
                .upper
                .as_ref()
                .is_none_or(|b| b.admits_from_above(partition_key))
    }

    /// Whether `partition_key` is past the upper bound: a scan in key order that
    /// reaches it finds no further match.
    pub fn is_past(&self, partition_key: &str) -> bool {
        self.upper
            .as_ref()
            .is_some_and(|b| !b.admits_from_above(partition_key))
    }

    fn of(filter: &Filter) -> PartitionBounds {
        match filter {
            Filter::Compare {
                property,
                op,
                value: Value::String(key),
            } if property == PARTITION_KEY => {
                let bound = |inclusive| {
                    Some(KeyBound {
                        key: key.clone(),
                        inclusive,
                    })
                };
                let (lower, upper) = match op {
                    CmpOp::Eq => (bound(true), bound(true)),
                    CmpOp::Gt => (bound(false), None),
                    CmpOp::Ge => (bound(true), None),
                    CmpOp::Lt => (None, bound(false)),
                    CmpOp::Le => (None, bound(true)),
                    CmpOp::Ne => (None, None),
                };
                PartitionBounds { lower, upper }
            }
            Filter::And(left, right) => {
                let (a, b) = (PartitionBounds::of(left), PartitionBounds::of(right));
                PartitionBounds {
                    lower: tighter_opt(a.lower, b.lower, true),
                    upper: tighter_opt(a.upper, b.upper, false),
                }
            }
            Filter::Or(left, right) => {
                let (a, b) = (PartitionBounds::of(left), PartitionBounds::of(right));
                PartitionBounds {
                    lower: looser_opt(a.lower, b.lower, true),
                    upper: looser_opt(a.upper, b.upper, false),
                }
            }
            Filter::Unchecked(raw) => raw
                .parsed()
                .map_or_else(PartitionBounds::default, PartitionBounds::of),
            // `not`, other comparisons and constants bound nothing.
            Filter::Compare { .. } | Filter::Not(_) | Filter::Literal(_) | Filter::Read(_) => {
                PartitionBounds::default()
            }
        }
    }
}

/// How the service will run a query, best first.
///
/// ```
/// use tables_core::{Filter, QueryPlan};
///
/// let f = Filter::parse("PartitionKey eq 'Sales' and (RowKey eq '1' or RowKey eq '2')")?;
/// assert_eq!(f.plan(), QueryPlan::PartitionScan { partition_key: "Sales".into() });
/// assert_eq!(QueryPlan::of(None), QueryPlan::TableScan);
/// # Ok::<(), tables_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryPlan {
    /// PartitionKey and RowKey both fixed by equality.
    Point {
        /// The PartitionKey.
        partition_key: String,
        /// The RowKey.
        row_key: String,
    },
    /// PartitionKey fixed; a RowKey range.
    Range {
        /// The PartitionKey.
        partition_key: String,
        /// Lower RowKey bound.
        lower: Option<KeyBound>,
        /// Upper RowKey bound.
        upper: Option<KeyBound>,
    },
    /// PartitionKey fixed; every row of the partition is visited.
    PartitionScan {
        /// The PartitionKey.
        partition_key: String,
    },
    /// No PartitionKey equality: every partition is visited.
    TableScan,
}

impl QueryPlan {
    /// The plan of an optional filter; no filter is a table scan.
    pub fn of(filter: Option<&Filter>) -> QueryPlan {
        filter.map_or(QueryPlan::TableScan, Filter::plan)
    }

    /// The one partition the plan visits, if it is narrower than a table scan.
    pub fn partition_key(&self) -> Option<&str> {
        match self {
            QueryPlan::Point { partition_key, .. }
            | QueryPlan::Range { partition_key, .. }
            | QueryPlan::PartitionScan { partition_key } => Some(partition_key),
            QueryPlan::TableScan => None,
        }
    }

    /// Whether the key `(partition_key, row_key)` lies in the region the plan visits.
    pub fn contains(&self, partition_key: &str, row_key: &str) -> bool {
        match self {
            QueryPlan::Point {
                partition_key: pk,
                row_key: rk,
            } => pk == partition_key && rk == row_key,
            QueryPlan::Range {
                partition_key: pk,
                lower,
                upper,
            } => {
                pk == partition_key
                    && lower.as_ref().is_none_or(|b| b.admits_from_below(row_key))
                    && upper.as_ref().is_none_or(|b| b.admits_from_above(row_key))
            }
            QueryPlan::PartitionScan { partition_key: pk } => pk == partition_key,
            QueryPlan::TableScan => true,
        }
    }
}

/// The RowKey part of a region.
#[derive(Debug, Clone, PartialEq)]
enum RowRegion {
    Any,
    Point(String),
    Bounds(Option<KeyBound>, Option<KeyBound>),
}

/// A superset of the keys a filter can match.
#[derive(Debug, Clone, PartialEq)]
struct Region {
    partition_key: Option<String>,
    row: RowRegion,
}

const EVERYTHING: Region = Region {
    partition_key: None,
    row: RowRegion::Any,
};

/// The tighter of two bounds; `lower` says which side they bound.
fn tighter(a: KeyBound, b: KeyBound, lower: bool) -> KeyBound {
    match cmp_ordinal(&a.key, &b.key) {
        Ordering::Equal => {
            if a.inclusive {
                b
            } else {
                a
            }
        }
        Ordering::Greater if lower => a,
        Ordering::Less if !lower => a,
        _ => b,
    }
}

fn tighter_opt(a: Option<KeyBound>, b: Option<KeyBound>, lower: bool) -> Option<KeyBound> {
    match (a, b) {
        (Some(a), Some(b)) => Some(tighter(a, b, lower)),
        (a, b) => a.or(b),
    }
}

/// The looser of two bounds (either side of an `or`); none when either is none.
fn looser_opt(a: Option<KeyBound>, b: Option<KeyBound>, lower: bool) -> Option<KeyBound> {
    let (a, b) = (a?, b?);
    Some(match cmp_ordinal(&a.key, &b.key) {
        Ordering::Equal => {
            if a.inclusive {
                a
            } else {
                b
            }
        }
        Ordering::Less if lower => a,
        Ordering::Greater if !lower => a,
        _ => b,
    })
}

impl Region {
    /// Keys in both regions. A contradiction (two different equalities) keeps the
    /// first: nothing can match it, so any region is sound.
    fn intersect(self, other: Region) -> Region {
        let row = match (self.row, other.row) {
            (RowRegion::Point(k), _) | (_, RowRegion::Point(k)) => RowRegion::Point(k),
            (RowRegion::Any, r) | (r, RowRegion::Any) => r,
            (RowRegion::Bounds(l1, u1), RowRegion::Bounds(l2, u2)) => {
                RowRegion::Bounds(tighter_opt(l1, l2, true), tighter_opt(u1, u2, false))
            }
        };
        Region {
            partition_key: self.partition_key.or(other.partition_key),
            row,
        }
    }

    /// A region holding both. Unequal RowKey parts widen to the whole partition: an
    /// `or` between RowKey values is a partition scan, not a range.
    fn union(self, other: Region) -> Region {
        if self.partition_key != other.partition_key {
            return EVERYTHING;
        }
        let row = if self.row == other.row {
            self.row
        } else {
            RowRegion::Any
        };
        Region {
            partition_key: self.partition_key,
            row,
        }
    }

    fn of(filter: &Filter) -> Region {
        match filter {
            Filter::Compare {
                property,
                op,
                value: Value::String(key),
            } => {
                let bound = |inclusive| KeyBound {
                    key: key.clone(),
                    inclusive,
                };
                match (property.as_str(), op) {
                    (PARTITION_KEY, CmpOp::Eq) => Region {
                        partition_key: Some(key.clone()),
                        row: RowRegion::Any,
                    },
                    (ROW_KEY, op) => Region {
                        partition_key: None,
                        row: match op {
                            CmpOp::Eq => RowRegion::Point(key.clone()),
                            CmpOp::Gt => RowRegion::Bounds(Some(bound(false)), None),
                            CmpOp::Ge => RowRegion::Bounds(Some(bound(true)), None),
                            CmpOp::Lt => RowRegion::Bounds(None, Some(bound(false))),
                            CmpOp::Le => RowRegion::Bounds(None, Some(bound(true))),
                            CmpOp::Ne => RowRegion::Any,
                        },
                    },
                    _ => EVERYTHING,
                }
            }
            Filter::And(left, right) => Region::of(left).intersect(Region::of(right)),
            Filter::Or(left, right) => Region::of(left).union(Region::of(right)),
            // Unchecked text the service reads as the parser does; text the parser
            // does not read could match anything.
            Filter::Unchecked(raw) => raw.parsed().map_or(EVERYTHING, Region::of),
            // `not`, other comparisons and constants narrow nothing.
            Filter::Compare { .. } | Filter::Not(_) | Filter::Literal(_) | Filter::Read(_) => {
                EVERYTHING
            }
        }
    }

    fn into_plan(self) -> QueryPlan {
        let Some(partition_key) = self.partition_key else {
            return QueryPlan::TableScan;
        };
        match self.row {
            RowRegion::Any | RowRegion::Bounds(None, None) => {
                QueryPlan::PartitionScan { partition_key }
            }
            RowRegion::Point(row_key) => QueryPlan::Point {
                partition_key,
                row_key,
            },
            RowRegion::Bounds(lower, upper) => QueryPlan::Range {
                partition_key,
                lower,
                upper,
            },
        }
    }
}

impl Filter {
    /// How the service runs this filter: a point query when PartitionKey and RowKey
    /// equalities are conjoined at the top level, a range when a PartitionKey
    /// equality is conjoined with RowKey bounds, a partition scan when only the
    /// PartitionKey is fixed (an `or` between RowKey values is one), and a table
    /// scan otherwise (including `PartitionKey eq 'a' or PartitionKey eq 'b'`).
    ///
    /// ```
    /// use tables_core::filter::KeyBound;
    /// use tables_core::{col, QueryPlan};
    ///
    /// let f = col("PartitionKey").eq("Sales") & col("RowKey").starts_with("email_a");
    /// assert_eq!(
    ///     f.plan(),
    ///     QueryPlan::Range {
    ///         partition_key: "Sales".into(),
    ///         lower: Some(KeyBound { key: "email_a".into(), inclusive: true }),
    ///         upper: Some(KeyBound { key: "email_b".into(), inclusive: false }),
    ///     }
    /// );
    /// ```
    pub fn plan(&self) -> QueryPlan {
        Region::of(self).into_plan()
    }

    /// Bounds on the PartitionKeys this filter can match (a superset: every entity
    /// it matches has a PartitionKey within them), from PartitionKey comparisons
    /// conjoined at the top level or bounding both sides of an `or`.
    ///
    /// ```
    /// use tables_core::filter::KeyBound;
    /// use tables_core::Filter;
    ///
    /// let f = Filter::parse("PartitionKey ge 'b' and PartitionKey lt 'd' and N gt 1")?;
    /// let bounds = f.partition_key_bounds();
    /// assert_eq!(bounds.lower, Some(KeyBound { key: "b".into(), inclusive: true }));
    /// assert_eq!(bounds.upper, Some(KeyBound { key: "d".into(), inclusive: false }));
    /// assert!(bounds.admits("c") && !bounds.admits("d") && bounds.is_past("e"));
    /// assert_eq!(Filter::parse("PartitionKey lt 'b' or N eq 1")?.partition_key_bounds().upper, None);
    /// # Ok::<(), tables_core::Error>(())
    /// ```
    pub fn partition_key_bounds(&self) -> PartitionBounds {
        PartitionBounds::of(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::DynamicEntity;
    use crate::filter::build::col;
    use proptest::prelude::*;

    fn plan(text: &str) -> QueryPlan {
        Filter::parse(text).expect("example filters parse").plan()
    }

    fn bound(key: &str, inclusive: bool) -> Option<KeyBound> {
        Some(KeyBound {
            key: key.to_owned(),
            inclusive,
        })
    }

    fn range(pk: &str, lower: Option<KeyBound>, upper: Option<KeyBound>) -> QueryPlan {
        QueryPlan::Range {
            partition_key: pk.to_owned(),
            lower,
            upper,
        }
    }

    fn scan(pk: &str) -> QueryPlan {
        QueryPlan::PartitionScan {
            partition_key: pk.to_owned(),
        }
    }

    #[test]
    fn design_guide_cost_ladder() {
        assert_eq!(
            plan("PartitionKey eq 'Sales' and RowKey eq '2'"),
            QueryPlan::Point {
                partition_key: "Sales".into(),
                row_key: "2".into()
            }
        );
        assert_eq!(
            plan("PartitionKey eq 'Sales' and RowKey ge 'S' and RowKey lt 'T'"),
            range("Sales", bound("S", true), bound("T", false))
        );
        assert_eq!(
            plan("PartitionKey eq 'Sales' and LastName eq 'Smith'"),
            scan("Sales")
        );
        assert_eq!(plan("LastName eq 'Jones'"), QueryPlan::TableScan);
        assert_eq!(
            plan("PartitionKey eq 'Sales' and (RowKey eq '1' or RowKey eq '2')"),
            scan("Sales")
        );
        assert_eq!(
            plan("PartitionKey eq 'Sales' and RowKey eq '1' or PartitionKey eq 'Sales' and RowKey eq '2'"),
            scan("Sales")
        );
        assert_eq!(
            plan("PartitionKey eq 'a' or PartitionKey eq 'b'"),
            QueryPlan::TableScan
        );
    }

    #[test]
    fn design_guide_patterns() {
        // Intra-partition secondary index: id range and email prefix.
        assert_eq!(
            plan(
                "PartitionKey eq 'Sales' and RowKey ge 'empid_000100' and RowKey le 'empid_000199'"
            ),
            range(
                "Sales",
                bound("empid_000100", true),
                bound("empid_000199", true)
            )
        );
        assert_eq!(
            plan("PartitionKey eq 'Sales' and RowKey ge 'email_a' and RowKey lt 'email_b'"),
            range("Sales", bound("email_a", true), bound("email_b", false))
        );
        // Compound key: every review of employee 000123.
        assert_eq!(
            (Filter::partition_key("Sales") & col("RowKey").starts_with("empid_000123")).plan(),
            range(
                "Sales",
                bound("empid_000123", true),
                bound("empid_000124", false)
            )
        );
        // Log tail: the newest entries of one partition.
        assert_eq!(plan("PartitionKey eq 'empid'"), scan("empid"));
        // Inter-partition index point lookup.
        assert_eq!(
            Filter::point("email_Sales", "jonesj@contoso.com").plan(),
            QueryPlan::Point {
                partition_key: "email_Sales".into(),
                row_key: "jonesj@contoso.com".into()
            }
        );
    }

    #[test]
    fn other_conjuncts_keep_a_range_and_bounds_tighten() {
        assert_eq!(
            plan("Age gt 30 and RowKey gt 'a' and PartitionKey eq 'p' and RowKey ge 'b' and RowKey le 'y' and RowKey lt 'y'"),
            range("p", bound("b", true), bound("y", false))
        );
        assert_eq!(
            plan("PartitionKey eq 'p' and RowKey ge 'a' and RowKey gt 'a'"),
            range("p", bound("a", false), None)
        );
        assert_eq!(plan("PartitionKey eq 'p' and RowKey ne 'a'"), scan("p"));
        assert_eq!(
            plan("PartitionKey eq 'p' and not (RowKey lt 'a')"),
            scan("p")
        );
        assert_eq!(plan("RowKey eq 'a'"), QueryPlan::TableScan);
        assert_eq!(plan("PartitionKey ge 'p'"), QueryPlan::TableScan);
        assert_eq!(plan("PartitionKey eq 1"), QueryPlan::TableScan);
        assert_eq!(plan("not (PartitionKey eq 'p')"), QueryPlan::TableScan);
    }

    #[test]
    fn plan_accessors() {
        assert_eq!(QueryPlan::of(None), QueryPlan::TableScan);
        let f = Filter::point("p", "r");
        assert_eq!(QueryPlan::of(Some(&f)), f.plan());
        assert_eq!(f.plan().partition_key(), Some("p"));
        assert_eq!(QueryPlan::TableScan.partition_key(), None);
        assert!(f.plan().contains("p", "r"));
        assert!(!f.plan().contains("p", "s"));
        let r = range("p", bound("b", false), bound("d", true));
        assert!(!r.contains("p", "b") && r.contains("p", "c") && r.contains("p", "d"));
        assert!(!r.contains("p", "e") && !r.contains("q", "c"));
    }

    fn key() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "",
            "a",
            "b",
            "ab",
            "b\u{FFFF}",
            "\u{1F600}",
            "\u{E000}",
        ])
        .prop_map(str::to_owned)
    }

    fn leaf() -> impl Strategy<Value = Filter> {
        let op = prop::sample::select(CmpOp::ALL.to_vec());
        prop_oneof![
            (
                prop::sample::select(vec!["PartitionKey", "RowKey", "N"]),
                op,
                key()
            )
                .prop_map(|(p, op, k)| col(p).compare(op, k)),
            any::<bool>().prop_map(Filter::Literal),
            (0..3).prop_map(|n| col("RowKey").eq(n)),
        ]
    }

    fn filter() -> impl Strategy<Value = Filter> {
        leaf().prop_recursive(5, 32, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| a & b),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| a | b),
                inner.prop_map(|a| !a),
            ]
        })
    }

    proptest! {
        #[test]
        fn plans_never_exclude_a_match(f in filter(), pk in key(), rk in key(), n in key()) {
            let entity = DynamicEntity::new(pk.clone(), rk.clone()).with("N", n);
            if f.matches(&entity) {
                prop_assert!(f.plan().contains(&pk, &rk), "{} excludes ({:?}, {:?})", f, pk, rk);
                let bounds = f.partition_key_bounds();
                prop_assert!(bounds.admits(&pk), "{}'s bounds {:?} exclude {:?}", f, bounds, pk);
                prop_assert!(!bounds.is_past(&pk));
            }
        }
    }
}
