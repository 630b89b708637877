//! [`KeyRange`]: a range of PartitionKeys or RowKeys in the service's order, and
//! [`prefix_range`], the range of the keys that start with a prefix.

use std::cmp::Ordering;
use std::ops::Bound;

use super::order::{cmp_ordinal, ordinal_successor};

/// A range of keys in the service's (ordinal) order, e.g. the RowKeys of employees
/// 100 to 199: `RowKey ge 'empid_000100' and RowKey lt 'empid_000200'`.
///
/// Derived entities generate helpers that build ranges from field values
/// (`Employee::employee_id_range(100..200)`); [`KeyRange::prefix`] is the
/// table design guide's "starts with" (<https://learn.microsoft.com/azure/storage/tables/table-storage-design-guide>).
///
/// ```
/// use tables_core::key::KeyRange;
///
/// let emails_a = KeyRange::prefix("email_a");
/// assert!(emails_a.contains("email_anne@contoso.com"));
/// assert!(!emails_a.contains("email_bob@contoso.com"));
/// assert_eq!(
///     emails_a.row_key_filter().to_odata(),
///     "RowKey ge 'email_a' and RowKey lt 'email_b'"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyRange {
    /// The lower bound.
    pub start: Bound<String>,
    /// The upper bound.
    pub end: Bound<String>,
}

impl KeyRange {
    /// The keys between two bounds.
    pub fn new(start: Bound<String>, end: Bound<String>) -> KeyRange {
        KeyRange { start, end }
    }

    /// Every key.
    pub fn all() -> KeyRange {
        KeyRange::new(Bound::Unbounded, Bound::Unbounded)
    }

    /// The keys starting with `prefix`.
    pub fn prefix(prefix: &str) -> KeyRange {
        prefix_range(prefix)
    }

    /// A range that holds no key.
    pub fn empty() -> KeyRange {
        KeyRange::new(
            Bound::Excluded(String::new()),
            Bound::Excluded(String::new()),
        )
    }

    /// Whether `key` is in the range.
    pub fn contains(&self, key: &str) -> bool {
        let above = match &self.start {
            Bound::Included(s) => cmp_ordinal(key, s) != Ordering::Less,
            Bound::Excluded(s) => cmp_ordinal(key, s) == Ordering::Greater,
            Bound::Unbounded => true,
        };
        let below = match &self.end {
            Bound::Included(e) => cmp_ordinal(key, e) != Ordering::Greater,
            Bound::Excluded(e) => cmp_ordinal(key, e) == Ordering::Less,
            Bound::Unbounded => true,
        };
        above && below
    }

    /// Whether the range holds no key at all.
    pub fn is_empty(&self) -> bool {
        let (start, start_inclusive) = match &self.start {
            Bound::Included(s) => (s, true),
            Bound::Excluded(s) => (s, false),
            Bound::Unbounded => return false,
        };
        let (end, end_inclusive) = match &self.end {
            Bound::Included(e) => (e, true),
            Bound::Excluded(e) => (e, false),
            Bound::Unbounded => return false,
        };
        match cmp_ordinal(start, end) {
            Ordering::Greater => true,
            Ordering::Equal => !(start_inclusive && end_inclusive),
            // Nothing lies strictly between `s` and `s` + U+0000, but U+0000 can't be
            // in a key; the range is then empty only if it excludes both ends.
            Ordering::Less => false,
        }
    }
}

/// The keys that start with `prefix`, in ordinal ([`cmp_ordinal`]) order: from
/// `prefix` included to the first string after every string starting with it,
/// excluded (unbounded when there is none: for the empty prefix, and for a prefix
/// made only of U+FFFF, the greatest character in UTF-16 order).
///
/// For every string `s`: `s.starts_with(prefix)` if and only if the range contains
/// `s`. Use it to express "starts with" in a `$filter`, which has no string
/// functions.
///
/// ```
/// use std::ops::Bound;
/// use tables_core::key::prefix_range;
///
/// let range = prefix_range("email_a");
/// assert_eq!(range.start, Bound::Included("email_a".to_owned()));
/// assert_eq!(range.end, Bound::Excluded("email_b".to_owned()));
/// assert_eq!(prefix_range("").end, Bound::Unbounded);
/// // U+D7FF is followed, in UTF-16 order, by the supplementary characters.
/// assert_eq!(prefix_range("x\u{D7FF}").end, Bound::Excluded("x\u{10000}".to_owned()));
/// ```
pub fn prefix_range(prefix: &str) -> KeyRange {
    let mut chars: Vec<char> = prefix.chars().collect();
    let start = Bound::Included(prefix.to_owned());
    // Strip trailing greatest characters, then step the last one to its successor.
    while let Some(&last) = chars.last() {
        chars.pop();
        if let Some(next) = ordinal_successor(last) {
            chars.push(next);
            return KeyRange::new(start, Bound::Excluded(chars.into_iter().collect()));
        }
    }
    KeyRange::new(start, Bound::Unbounded)
}
