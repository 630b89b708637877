//! The index rows upkeep wrote or removed, as reports list them.

use tables_core::EntityKey;

/// How an index row changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RowChange {
    /// An index copy was written (created, or brought up to date).
    CopyWritten,
    /// An index copy its entity no longer implies was deleted.
    CopyRemoved,
    /// An entity was added to an index entity's list.
    MemberAdded,
    /// An entity was removed from an index entity's list.
    MemberRemoved,
}

/// An index row that index upkeep wrote or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TouchedRow {
    /// The table of the row.
    pub table: String,
    /// The row's key.
    pub key: EntityKey,
    /// What changed.
    pub change: RowChange,
}
