//! The key range a SAS token grants: [`SasKeyRange`], one implementation for both
//! sides.
//!
//! A service SAS can limit a client to a range of keys (`spk`/`srk` to `epk`/`erk`,
//! per-user access, docs/protocol.md §3.3). Azure refuses writes and reads of single
//! entities outside the range with `403`, and answers queries with the entities
//! inside the range only. The client applies the range before sending, so a token
//! behaves the same way on every endpoint (Azurite does not check ranges): a key
//! outside the range, or a query confined to a partition outside it, is refused with
//! an error that names the range; any other query gets the range added to its
//! filter. `tables-server` enforces the same rules with the same code, as the
//! security boundary the service is.

use crate::filter::MAX_COMPARISONS;
use crate::key::cmp_ordinal;
use crate::{
    AuthHint, Column, EntityKey, Error, ErrorKind, Filter, QueryPlan, QuerySpec, Result, Value,
};

use super::sas::SasToken;

/// One end of the range: a PartitionKey and, optionally, a RowKey within it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bound {
    partition_key: String,
    row_key: Option<String>,
}

/// The inclusive key range a SAS token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SasKeyRange {
    start: Option<Bound>,
    end: Option<Bound>,
}

impl SasKeyRange {
    /// The guard of a token, or `None` if the token grants every key.
    pub fn from_sas(token: &SasToken) -> Option<SasKeyRange> {
        let bound = |(partition_key, row_key): (String, Option<String>)| Bound {
            partition_key,
            row_key,
        };
        let guard = SasKeyRange {
            start: token.start_key().map(bound),
            end: token.end_key().map(bound),
        };
        (guard.start.is_some() || guard.end.is_some()).then_some(guard)
    }

    /// The range in words: `PartitionKey "a" ..= (PartitionKey "b", RowKey "r")`.
    pub fn describe(&self) -> String {
        let side = |b: &Option<Bound>| match b {
            None => "unbounded".to_owned(),
            Some(Bound {
                partition_key,
                row_key: None,
            }) => format!("PartitionKey {partition_key:?}"),
            Some(Bound {
                partition_key,
                row_key: Some(rk),
            }) => format!("(PartitionKey {partition_key:?}, RowKey {rk:?})"),
        };
        format!("{} ..= {}", side(&self.start), side(&self.end))
    }

    fn refuse(&self, what: String) -> Error {
        Error::new(
            ErrorKind::Auth,
            format!(
                "{what} is outside the key range the SAS token grants ({}); the service would \
                 answer 403 AuthorizationFailure. Use a token whose range covers it",
                self.describe()
            ),
        )
        .with_service_code(crate::error_code::AUTHORIZATION_FAILURE)
        .with_auth_hint(AuthHint::MissingPermission)
    }

    /// Whether a key lies within the range (both ends inclusive; a bound without a
    /// RowKey covers the whole partition).
    pub fn contains(&self, key: &EntityKey) -> bool {
        self.within(&key.partition_key, Some(&key.row_key))
    }

    /// Whether the row `row_key` of the partition lies within the range, or, with
    /// `None`, every row of it does.
    pub fn within(&self, partition_key: &str, row_key: Option<&str>) -> bool {
        // How the row stands against a bound's own partition, `Equal` meaning "on
        // the bound's RowKey side that the range includes".
        let side = |bound: &Bound, past: fn(std::cmp::Ordering) -> bool| match cmp_ordinal(
            partition_key,
            &bound.partition_key,
        ) {
            std::cmp::Ordering::Equal => match (&bound.row_key, row_key) {
                (None, _) => true,
                (Some(edge), Some(row_key)) => past(cmp_ordinal(row_key, edge)),
                (Some(_), None) => false,
            },
            order => past(order),
        };
        self.start
            .as_ref()
            .is_none_or(|start| side(start, std::cmp::Ordering::is_ge))
            && self
                .end
                .as_ref()
                .is_none_or(|end| side(end, std::cmp::Ordering::is_le))
    }

    /// Refuses a key outside the range.
    pub fn check_key(&self, key: &EntityKey) -> Result<()> {
        if self.contains(key) {
            Ok(())
        } else {
            Err(self
                .refuse(format!("the entity {key}"))
                .with_entity_key(key.clone()))
        }
    }

    /// Refuses a query confined to one partition that lies wholly outside the range.
    pub fn check_query(&self, plan: &QueryPlan) -> Result<()> {
        match plan.partition_key() {
            Some(partition_key) if self.excludes_partition(partition_key) => {
                Err(self.refuse(format!("a query of partition {partition_key:?}")))
            }
            _ => Ok(()),
        }
    }

    /// Whether no row of the partition lies within the range.
    pub fn excludes_partition(&self, partition_key: &str) -> bool {
        let before_start = self
            .start
            .as_ref()
            .is_some_and(|start| cmp_ordinal(partition_key, &start.partition_key).is_lt());
        let after_end = self
            .end
            .as_ref()
            .is_some_and(|end| cmp_ordinal(partition_key, &end.partition_key).is_gt());
        before_start || after_end
    }

    /// The query as it goes out: confined to the range, as Azure answers it, unless
    /// it already is (one partition inside the range with no RowKey bound there). A
    /// filter left with no room for the range's comparisons (at most 15 in all) is
    /// sent as it is: Azure confines it anyway.
    pub fn narrow(&self, spec: &QuerySpec, plan: &QueryPlan) -> Option<QuerySpec> {
        if plan.partition_key().is_some_and(|pk| self.within(pk, None)) {
            return None;
        }
        let range = self.range_filter()?;
        let filter = match &spec.filter {
            Some(filter) => filter.clone().and(range),
            None => range,
        };
        if filter.comparison_count() > MAX_COMPARISONS {
            return None;
        }
        Some(QuerySpec {
            filter: Some(filter),
            select: spec.select.clone(),
            top: spec.top,
        })
    }

    /// The range as a filter: `PartitionKey ge spk` (or, with a start RowKey,
    /// `PartitionKey gt spk or (PartitionKey eq spk and RowKey ge srk)`), and the
    /// mirror image for the end.
    fn range_filter(&self) -> Option<Filter> {
        let pk = Column::partition_key;
        let text = |s: &str| Value::String(s.to_owned());
        let start = self.start.as_ref().map(|b| match &b.row_key {
            None => pk().ge(text(&b.partition_key)),
            Some(rk) => pk().gt(text(&b.partition_key)).or(pk()
                .eq(text(&b.partition_key))
                .and(Column::row_key().ge(text(rk)))),
        });
        let end = self.end.as_ref().map(|b| match &b.row_key {
            None => pk().le(text(&b.partition_key)),
            Some(rk) => pk().lt(text(&b.partition_key)).or(pk()
                .eq(text(&b.partition_key))
                .and(Column::row_key().le(text(rk)))),
        });
        match (start, end) {
            (Some(start), Some(end)) => Some(start.and(end)),
            (start, end) => start.or(end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(
        start: Option<(&str, Option<&str>)>,
        end: Option<(&str, Option<&str>)>,
    ) -> SasKeyRange {
        let bound = |(pk, rk): (&str, Option<&str>)| Bound {
            partition_key: pk.to_owned(),
            row_key: rk.map(str::to_owned),
        };
        SasKeyRange {
            start: start.map(bound),
            end: end.map(bound),
        }
    }

    #[test]
    fn partition_ranges_are_inclusive() {
        let g = guard(Some(("p2", None)), Some(("p4", None)));
        for pk in ["p2", "p3", "p4"] {
            assert!(g.check_key(&EntityKey::new(pk, "any")).is_ok(), "{pk}");
        }
        for pk in ["p1", "p5", "p40", ""] {
            let err = g.check_key(&EntityKey::new(pk, "any")).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Auth, "{pk}");
            assert_eq!(err.status(), Some(403));
            assert_eq!(err.origin(), crate::Origin::Local);
            assert_eq!(err.auth_hint(), Some(AuthHint::MissingPermission));
        }
    }

    #[test]
    fn row_keys_bound_the_edge_partitions() {
        let g = guard(Some(("p", Some("m"))), Some(("q", Some("c"))));
        assert!(g.check_key(&EntityKey::new("p", "m")).is_ok());
        assert!(g.check_key(&EntityKey::new("p", "z")).is_ok());
        assert!(g.check_key(&EntityKey::new("p", "a")).is_err());
        assert!(g.check_key(&EntityKey::new("q", "c")).is_ok());
        assert!(g.check_key(&EntityKey::new("q", "d")).is_err());
    }

    #[test]
    fn single_partition_queries_outside_are_refused() {
        let g = guard(Some(("p2", None)), Some(("p2", None)));
        let inside = QueryPlan::PartitionScan {
            partition_key: "p2".into(),
        };
        let outside = QueryPlan::PartitionScan {
            partition_key: "p3".into(),
        };
        assert!(g.check_query(&inside).is_ok());
        assert_eq!(g.check_query(&outside).unwrap_err().kind(), ErrorKind::Auth);
        assert!(g.check_query(&QueryPlan::TableScan).is_ok());
    }

    fn row(pk: &str, rk: &str) -> crate::DynamicEntity {
        crate::DynamicEntity::new(pk, rk)
    }

    /// The narrowed filter admits exactly the keys the range holds, and survives
    /// rendering and parsing (what the service reads is what we meant).
    #[test]
    fn narrowed_queries_admit_exactly_the_range() {
        let keys = ["", "a", "m", "p", "p0", "q", "z", "\u{e000}"];
        let guards = [
            guard(Some(("p", None)), Some(("p", None))),
            guard(Some(("m", None)), Some(("q", None))),
            guard(Some(("m", Some("m"))), Some(("q", Some("p0")))),
            guard(Some(("p", Some("a"))), None),
            guard(None, Some(("m", Some("z")))),
        ];
        for g in &guards {
            let narrowed = g.narrow(&QuerySpec::new(), &QueryPlan::TableScan).unwrap();
            let filter = narrowed.filter.unwrap();
            let reparsed = Filter::parse(&filter.to_odata()).unwrap();
            for pk in keys {
                for rk in keys {
                    let inside = g.contains(&EntityKey::new(pk, rk));
                    assert_eq!(filter.matches(&row(pk, rk)), inside, "{pk:?} {rk:?}");
                    assert_eq!(reparsed.matches(&row(pk, rk)), inside, "{pk:?} {rk:?}");
                }
            }
        }
    }

    #[test]
    fn narrowing_keeps_the_callers_filter_and_skips_what_is_inside() {
        let g = guard(Some(("m", None)), Some(("q", Some("k")))); // q only up to k
        let caller = crate::col("Age").gt(30);
        let spec = QuerySpec::new().filter(caller.clone()).top(5);
        let narrowed = g.narrow(&spec, &QueryPlan::TableScan).unwrap();
        assert_eq!(narrowed.top, Some(5));
        let filter = narrowed.filter.unwrap();
        assert!(filter.matches(&row("n", "x").with("Age", 31)));
        assert!(!filter.matches(&row("n", "x").with("Age", 30)));
        assert!(!filter.matches(&row("z", "x").with("Age", 31)));
        assert!(!filter.matches(&row("q", "l").with("Age", 31)));

        // A partition wholly inside needs nothing; one at a bounded edge does.
        let inside = QueryPlan::PartitionScan {
            partition_key: "n".into(),
        };
        assert!(g.narrow(&spec, &inside).is_none());
        let edge = QueryPlan::PartitionScan {
            partition_key: "q".into(),
        };
        assert!(g.narrow(&spec, &edge).is_some());

        // No room left under the 15-comparison limit: sent as it is.
        let mut wide = caller;
        for n in 0..13 {
            wide = wide.or(crate::col("Age").eq(n));
        }
        assert_eq!(wide.comparison_count(), 14);
        let spec = QuerySpec::new().filter(wide);
        assert!(g.narrow(&spec, &QueryPlan::TableScan).is_none());
    }
}
