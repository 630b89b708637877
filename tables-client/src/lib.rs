//! `tables-client`: a typed object-mapping SDK for Azure Table storage, and its manual.
//!
//! It holds the typed client ([`TableServiceClient`], [`Table`], [`Query`],
//! [`Transaction`], [`BulkWriter`]), the remote engine ([`remote::RemoteEngine`], for
//! Azure Storage, the Cosmos DB Table API and Azurite) and [`PrefixedEngine`], and
//! re-exports the core vocabulary, the derive macros (`#[derive(Entity)]`,
//! `#[derive(EntityUnion)]`, `#[derive(Property)]`; their reference is
//! [`entity_attributes`]) and (feature `mem`, on by default) the in-memory engine,
//! [`mem`].
//!
//! This page is the manual, in a reader's order: [Quick start](#quick-start),
//! [Key design](#key-design), [Reads and queries](#reads-and-queries),
//! [Writes and ETags](#writes-and-etags),
//! [Partial and optimistic updates](#partial-and-optimistic-updates),
//! [Transactions and bulk](#transactions-and-bulk), [Indexes](#indexes),
//! [Existing tables](#existing-tables),
//! [Testing with the in-memory engine](#testing-with-the-in-memory-engine),
//! [Remote endpoints](#remote-endpoints), [Errors](#errors), and
//! [The design guide's patterns](#the-design-guides-patterns). Every example runs, on
//! the in-memory engine.
//!
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

// Rustdoc lists the methods of `Table` and `TableServiceClient` in the order of the
// modules that define them, so these are declared in the manual's order (one comment
// per line keeps rustfmt from sorting them).
// The client, its options and table management.
mod service;
// `Table<T>`: the handle and its table.
mod table;
// The six write modes and `get`.
mod write;
// Lookups through indexes.
mod lookup;
// Queries, pages and tokens.
mod query;
// Patches and read-modify-write.
mod update;
// Entity group transactions.
mod transaction;
// Bulk loads.
mod bulk;
// Index upkeep: verify, repair, reconcile.
mod upkeep;
// A table per period.
mod periodic;
// Tables under a name prefix.
mod prefixed;
// Client request ids.
mod request_id;
// The remote engine.
pub mod remote;

pub use bulk::{BulkMode, BulkReport, BulkWriter, ChunkOutcome};
pub use periodic::{Period, PeriodicTables};
pub use prefixed::PrefixedEngine;
pub use query::{PageToken, Query, TypedPage};
pub use request_id::ClientRequestId;
pub use service::{ClientOptions, TableServiceClient};
pub use table::{Table, Versioned};
pub use tables_core::*;
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
