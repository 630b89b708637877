//! The key of the ordered row map: (PartitionKey, RowKey) in the service's order.
//!
//! Rows are ordered by [`cmp_ordinal`] (UTF-16 code units), not by Rust's `str`
//! order. Lookups and range starts borrow the stored key as `dyn KeyRef`, so a point
//! get or a range seek compares `&str`s in place and allocates nothing.

use std::borrow::Borrow;
use std::cmp::Ordering;

use tables_core::key::cmp_ordinal;

/// A borrowed view of a row key: what the map compares.
pub(crate) trait KeyRef {
    /// The PartitionKey.
    fn partition_key(&self) -> &str;
    /// The RowKey.
    fn row_key(&self) -> &str;
}

/// The owned key stored in the map.
#[derive(Debug, Clone)]
pub(crate) struct RowId {
    pub(crate) partition_key: String,
    pub(crate) row_key: String,
}

impl RowId {
    pub(crate) fn new(partition_key: &str, row_key: &str) -> RowId {
        RowId {
            partition_key: partition_key.to_owned(),
            row_key: row_key.to_owned(),
        }
    }
}

impl KeyRef for RowId {
    fn partition_key(&self) -> &str {
        &self.partition_key
    }
    fn row_key(&self) -> &str {
        &self.row_key
    }
}

impl KeyRef for (&str, &str) {
    fn partition_key(&self) -> &str {
        self.0
    }
    fn row_key(&self) -> &str {
        self.1
    }
}

/// The service's key order: PartitionKey, then RowKey, each by UTF-16 code units.
pub(crate) fn cmp_keys(a: &dyn KeyRef, b: &dyn KeyRef) -> Ordering {
    cmp_ordinal(a.partition_key(), b.partition_key())
        .then_with(|| cmp_ordinal(a.row_key(), b.row_key()))
}

impl<'a> Borrow<dyn KeyRef + 'a> for RowId {
    fn borrow(&self) -> &(dyn KeyRef + 'a) {
        self
    }
}

impl PartialEq for dyn KeyRef + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.partition_key() == other.partition_key() && self.row_key() == other.row_key()
    }
}

impl Eq for dyn KeyRef + '_ {}

impl PartialOrd for dyn KeyRef + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn KeyRef + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_keys(self, other)
    }
}

// `RowId`'s order must be exactly the borrowed form's order (the `Borrow` contract).
impl PartialEq for RowId {
    fn eq(&self, other: &Self) -> bool {
        self.partition_key == other.partition_key && self.row_key == other.row_key
    }
}

impl Eq for RowId {}

impl PartialOrd for RowId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RowId {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_keys(self, other)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn map_orders_by_utf16_and_finds_borrowed_keys() {
        let mut map = BTreeMap::new();
        // In `str` order U+FF01 < U+1F600; in UTF-16 order it is the other way round.
        for (pk, rk) in [
            ("p", "\u{FF01}"),
            ("p", "\u{1F600}"),
            ("p", "a"),
            ("\u{FF01}", ""),
        ] {
            map.insert(RowId::new(pk, rk), ());
        }
        let order: Vec<(&str, &str)> = map
            .keys()
            .map(|k| (k.partition_key.as_str(), k.row_key.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("p", "a"),
                ("p", "\u{1F600}"),
                ("p", "\u{FF01}"),
                ("\u{FF01}", "")
            ]
        );
        let probe: &dyn KeyRef = &("p", "\u{1F600}");
        assert!(map.contains_key(probe));
        let absent: &dyn KeyRef = &("p", "b");
        assert!(!map.contains_key(absent));
    }
}
