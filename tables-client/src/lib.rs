// The crate docs are the manual, one chapter per file in a reader's order.
#![doc = include_str!("manual/01-quick-start.md")]
#![doc = include_str!("manual/02-key-design.md")]
#![doc = include_str!("manual/03-reads-and-queries.md")]
#![doc = include_str!("manual/04-writes-and-etags.md")]
#![doc = include_str!("manual/05-partial-and-optimistic-updates.md")]
#![doc = include_str!("manual/06-transactions-and-bulk.md")]
#![doc = include_str!("manual/07-indexes.md")]
#![doc = include_str!("manual/08-existing-tables.md")]
#![doc = include_str!("manual/09-testing.md")]
#![doc = include_str!("manual/10-remote-endpoints.md")]
#![doc = include_str!("manual/11-errors.md")]
#![doc = include_str!("manual/12-guide-patterns.md")]
#![doc = include_str!("manual/13-cosmos.md")]

// `Table`'s methods are spread over these modules; rustdoc lists them in the order
// the modules are declared, so this is a reader's order: the handle, writes and
// point reads, queries, index lookups, updates, transactions, bulk, index upkeep.
// `service` comes first so `TableServiceClient` lists its constructors before
// `table` (defined beside `Table`).
pub mod blob;
pub mod encryption;
pub mod large;
mod layer;
mod service;
pub mod wide;

mod table;

mod write;

mod query;

mod lookup;

mod update;

mod transaction;

mod bulk;

mod upkeep;

mod paging;
mod periodic;
mod prefixed;
pub mod remote;
mod request_id;

pub use bulk::{BulkMode, BulkReport, BulkSummary, BulkWriter, ChunkOutcome, RefusedItem};
pub use periodic::{Period, PeriodicTables};
pub use prefixed::PrefixedEngine;
pub use query::{AcrossPartitions, IndexParts, IndexRead, PageToken, Query, TypedPage};
pub use request_id::ClientRequestId;
pub use service::{ClientOptions, TableServiceClient};
pub use table::{Table, Versioned};
pub use tables_core::{
    col, validate_batch, validate_select, AuthHint, CmpOp, Column, Contains, ContinuationToken,
    DateTime, DynamicEntity, ETag, EdmType, Engine, EngineCapabilities, Entity, EntityKey,
    EntityUnion, Error, ErrorKind, Filter, FilterFor, IfMatch, IndexKey, Key, KeyOf, KeyRange,
    LayerReconcileReport, ListTablesOptions, Origin, Page, PendingUpkeep, Property, QueryPlan,
    QuerySpec, Result, Row, ServiceKind, TablePage, TruncateToTicks, TypedColumn, TypedFilter,
    UniqueViolation, Value, WriteMode, WriteOp, WriteOutcome, MAX_BATCH_BYTES,
    MAX_BATCH_OPERATIONS, MAX_PAGE_SIZE,
};
pub use tables_core::{error_code, filter, key, size};

/// The attribute that implements [`Engine`] and [`remote::TokenCredential`]: both are
/// `async` traits usable as trait objects, written with the `async-trait` crate.
pub use async_trait::async_trait;

/// The entity model: the traits the derives implement, typed keys and index keys,
/// schemas, and how the rows of a table are told apart (primary rows, index copies,
/// index-entity entries).
pub mod model {
    pub use crate::upkeep::index_entity_members;
    pub use tables_core::model::{
        index_copy_type, index_entry_type, primary_from_copy, primary_key_of_copy, row_role,
        Contains, CopyIndex, CopyIndexKeyOf, EncryptedColumn, EncryptedFieldsCannotBeFiltered,
        Entity, EntitySchema, EntityUnion, Filterable, IndexCopy, IndexEntry, IndexKey, IndexKind,
        IndexOf, IndexPartition, IndexSchema, Key, KeyDate, KeyInt, KeyOf, KeyRange, KeyText,
        KeyTime, ListIndex, ListIndexKeyOf, Operand, OtherProperties, PartitionOf,
        ProjectedPartition, Property, PropertySchema, Reads, Row, RowRole, SeriesColumn, StoredAs,
        Tag, TagValue, TextRange, TypedColumn, TypedFilter, ENTITY_TYPE_PROPERTY,
        ENTITY_VERSION_PROPERTY, INDEX_COPY_MARK, INDEX_ENTRY_MARK, MOVED_FROM_PROPERTY,
        MOVING_TO_PROPERTY, PRIMARY_PARTITION_KEY_PROPERTY, PRIMARY_ROW_KEY_PROPERTY,
        RESERVED_PROPERTIES, SYSTEM_ROW_MARK,
    };
}

#[doc(hidden)]
pub use tables_core::__private;
pub use tables_derive::{Entity, EntityUnion, Property};
pub use transaction::Transaction;
pub use update::{OnNone, Patch, Updated};
pub use upkeep::{
    CheckPage, CheckPhase, CheckProgress, CheckReport, CheckToken, Finding, IndexCheck,
    IntentFailure, Problem, ReconcileReport, RowChange, TouchedRow,
};

#[doc = include_str!("entity_attributes.md")]
pub mod entity_attributes {}

/// The bundled in-memory engine.
#[cfg(feature = "mem")]
pub mod mem {
    pub use tables_mem::*;
}
