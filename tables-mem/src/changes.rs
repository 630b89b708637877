//! The engine's changes, for a journal that makes it durable: [`ChangeSink`] hears
//! every change in the order the engine made them, [`MemEngine::restore`] replays
//! them, and [`MemEngine::export`] describes the whole engine as changes (a
//! snapshot).
//!
//! [`MemEngine::restore`]: crate::MemEngine::restore
//! [`MemEngine::export`]: crate::MemEngine::export

use std::fmt;

use tables_core::{DynamicEntity, EntityKey};

/// One change the engine made: what a journal keeps to rebuild the engine.
///
/// A write or a batch is one [`Change::Rows`], so a journal that keeps each
/// change whole keeps a batch all-or-nothing. Every change is complete in itself
/// (a row's new state, not the operation that made it), so replaying a change
/// twice, or replaying changes the engine already holds, leaves the same state:
/// a snapshot taken while writes go on, followed by the changes recorded from
/// before it began, restores exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Change<'a> {
    /// A table was created, with this name (its case as created).
    TableCreated(&'a str),
    /// The table was deleted, with all its rows.
    TableDeleted(&'a str),
    /// Rows of the table changed: one for a write, one per operation for a batch.
    Rows {
        /// The table, by its name as created.
        table: &'a str,
        /// Each row's new state.
        rows: &'a [RowChange<'a>],
    },
}

/// A row's new state in a [`Change::Rows`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowChange<'a> {
    /// The row as stored now, with its Timestamp and ETag.
    Stored(&'a DynamicEntity),
    /// The row was deleted.
    Removed(&'a EntityKey),
}

impl RowChange<'_> {
    /// The row's PartitionKey.
    pub fn partition_key(&self) -> &str {
        match self {
            RowChange::Stored(entity) => &entity.partition_key,
            RowChange::Removed(key) => &key.partition_key,
        }
    }

    /// The row's RowKey.
    pub fn row_key(&self) -> &str {
        match self {
            RowChange::Stored(entity) => &entity.row_key,
            RowChange::Removed(key) => &key.row_key,
        }
    }
}

/// Hears every change of a [`MemEngine`](crate::MemEngine) once it is decided, in
/// the order the engine makes them (see [`MemEngine::record_changes`]).
///
/// [`record`](ChangeSink::record) is called while the engine holds the locks of
/// the change (so two changes to one row are heard in the order they were made):
/// it must be quick, must not block on I/O, and must not call the engine. A
/// journal copies or encodes the change into a buffer and writes it elsewhere.
///
/// [`MemEngine::record_changes`]: crate::MemEngine::record_changes
pub trait ChangeSink: Send + Sync + fmt::Debug {
    /// One change, as the engine makes it.
    fn record(&self, change: Change<'_>);
}
