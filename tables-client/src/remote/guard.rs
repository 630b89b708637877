//! The key range of a SAS token, checked before a request is sent.
//!
//! A service SAS can limit a client to a range of keys (`spk`/`srk` to `epk`/`erk`,
//! the design guide's per-user access). Azure refuses requests outside the range with
//! `403`; the client refuses them first, with an error that names the range, so the
//! mistake shows up the same way on every endpoint (Azurite does not check ranges).
//! This is a convenience, not the security boundary: the service is.

use tables_core::key::cmp_ordinal;
use tables_core::{EntityKey, Error, ErrorKind, QueryPlan, Result};

use super::credential::SasToken;

/// One end of the range: a PartitionKey and, optionally, a RowKey within it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bound {
    partition_key: String,
    row_key: Option<String>,
}

/// The inclusive key range a SAS token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyRangeGuard {
    start: Option<Bound>,
    end: Option<Bound>,
}

impl KeyRangeGuard {
    /// The guard of a token, or `None` if the token grants every key.
    pub(crate) fn from_sas(token: &SasToken) -> Option<KeyRangeGuard> {
        let bound = |(partition_key, row_key): (String, Option<String>)| Bound {
            partition_key,
            row_key,
        };
        let guard = KeyRangeGuard {
            start: token.start_key().map(bound),
            end: token.end_key().map(bound),
        };
        (guard.start.is_some() || guard.end.is_some()).then_some(guard)
    }

    fn describe(&self) -> String {
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
        .with_service_code("AuthorizationFailure")
    }

    /// Whether a key lies within the range (both ends inclusive; a bound without a
    /// RowKey covers the whole partition).
    fn contains(&self, key: &EntityKey) -> bool {
        let after_start = self.start.as_ref().map_or(true, |start| {
            match cmp_ordinal(&key.partition_key, &start.partition_key) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Equal => start
                    .row_key
                    .as_ref()
                    .map_or(true, |rk| cmp_ordinal(&key.row_key, rk).is_ge()),
            }
        });
        let before_end = self.end.as_ref().map_or(true, |end| {
            match cmp_ordinal(&key.partition_key, &end.partition_key) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                std::cmp::Ordering::Equal => end
                    .row_key
                    .as_ref()
                    .map_or(true, |rk| cmp_ordinal(&key.row_key, rk).is_le()),
            }
        });
        after_start && before_end
    }

    /// Refuses a key outside the range.
    pub(crate) fn check_key(&self, key: &EntityKey) -> Result<()> {
        if self.contains(key) {
            Ok(())
        } else {
            Err(self
                .refuse(format!("the entity {key}"))
                .with_entity_key(key.clone()))
        }
    }

    /// Refuses a query confined to one partition that lies wholly outside the range.
    /// Queries over several partitions are left to the service, which answers with
    /// what the token grants.
    pub(crate) fn check_query(&self, plan: &QueryPlan) -> Result<()> {
        let Some(partition_key) = plan.partition_key() else {
            return Ok(());
        };
        let before_start = self
            .start
            .as_ref()
            .is_some_and(|start| cmp_ordinal(partition_key, &start.partition_key).is_lt());
        let after_end = self
            .end
            .as_ref()
            .is_some_and(|end| cmp_ordinal(partition_key, &end.partition_key).is_gt());
        if before_start || after_end {
            return Err(self.refuse(format!("a query of partition {partition_key:?}")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(
        start: Option<(&str, Option<&str>)>,
        end: Option<(&str, Option<&str>)>,
    ) -> KeyRangeGuard {
        let bound = |(pk, rk): (&str, Option<&str>)| Bound {
            partition_key: pk.to_owned(),
            row_key: rk.map(str::to_owned),
        };
        KeyRangeGuard {
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
}
