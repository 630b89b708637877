//! The `Engine` trait: the one seam between typed code and storage.

use async_trait::async_trait;

use crate::capabilities::EngineCapabilities;
use crate::entity::{DynamicEntity, EntityKey};
use crate::error::Result;
use crate::query::{ContinuationToken, ListTablesOptions, Page, QuerySpec, TablePage};
use crate::write::{WriteOp, WriteOutcome};

/// A storage engine that speaks the Azure Table service's semantics.
///
/// Implemented by the in-memory engine (`tables-mem`) and the remote engine
/// (`tables-client`). Everything above this trait (typed tables, index upkeep,
/// paging streams) is written once against it, so it behaves the same on every
/// engine. The trait is object safe: hold engines as `Arc<dyn Engine>`.
///
/// Contract shared by every implementation:
/// - inputs are validated with `tables-core`'s rules before anything is written or
///   sent; a rejected call changes nothing;
/// - errors carry the service's kind, status and code ([`crate::ErrorKind`]), and
///   say where they came from ([`crate::Error::origin`]): a check made before
///   anything is sent or written is [`crate::Origin::Local`] on every engine; the
///   service's answer (or the in-memory engine's, which plays it) is
///   [`crate::Origin::Service`]; a `TableNotFound` names the table
///   ([`crate::Error::table`]); only a batch's errors carry a batch index;
/// - a continuation token the engine can't use fails with
///   [`crate::ErrorKind::InvalidContinuationToken`], whatever is wrong with it;
/// - table names compare case-insensitively and keep the case they were created with
///   (case-sensitively where [`Engine::capabilities`] says so);
/// - query results come in key order, unless [`Engine::capabilities`] says they
///   don't ([`EngineCapabilities::ordered_results`]).
#[async_trait]
pub trait Engine: Send + Sync + std::fmt::Debug {
    /// What this engine guarantees and accepts: key order of results, key and batch
    /// limits, table-name case, the service features it offers. Required, so no
    /// engine claims Azure Storage's promises by omission: a storage engine states
    /// the service it is or plays, a wrapper reports its inner engine's.
    fn capabilities(&self) -> EngineCapabilities;

    /// Creates a table.
    ///
    /// # Errors
    ///
    /// `InvalidTableName` for a name the service rejects; `TableAlreadyExists` if a
    /// table of that name (in any case) exists.
    async fn create_table(&self, table: &str) -> Result<()>;

    /// Deletes a table and every entity in it.
    ///
    /// # Errors
    ///
    /// `TableNotFound` if there is no such table.
    async fn delete_table(&self, table: &str) -> Result<()>;

    /// Lists tables, one page at a time, in name order.
    ///
    /// # Errors
    ///
    /// `InvalidQuery` for a page size outside 1 to 1,000.
    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage>;

    /// Reads one entity; `Ok(None)` if the table has no entity with that key.
    /// With `select`, only those properties are returned (keys, Timestamp and ETag
    /// always are).
    ///
    /// # Errors
    ///
    /// `TableNotFound` if the table does not exist; `InvalidKey` for a malformed key.
    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>>;

    /// Runs one page of a query. Entities come in PartitionKey, then RowKey order
    /// (in any order on an engine without [`EngineCapabilities::ordered_results`]).
    /// A page may hold fewer entities than `$top` (even none) and still carry a
    /// continuation token: callers loop until the token is `None`.
    ///
    /// # Errors
    ///
    /// `TableNotFound`; `InvalidQuery`/`InvalidFilter` for a spec that fails
    /// [`QuerySpec::validate`].
    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>>;

    /// One page of a query as the service sent it (JSON, minimal metadata), for a
    /// caller that copies rows without reading them (an export writing JSON Lines):
    /// [`crate::odata::entity_page_objects`] splits it into the entities' JSON.
    /// `Ok(None)` from an engine without a wire form (the mem engine) or one that
    /// changes rows on their way up (a layer): use [`Engine::query`] then. The page
    /// holds what [`Engine::query`] would return.
    ///
    /// # Errors
    ///
    /// As [`Engine::query`].
    async fn query_json(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Option<JsonPage>> {
        let _ = (table, spec, continuation);
        Ok(None)
    }

    /// Performs one write.
    ///
    /// # Errors
    ///
    /// `TableNotFound`; `EntityAlreadyExists` (insert); `EntityNotFound` (replace,
    /// merge, delete of an absent entity); `PreconditionFailed` (ETag mismatch);
    /// a validation kind for an invalid entity.
    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome>;

    /// Performs an entity group transaction: every operation or none. Returns one
    /// outcome per operation, in order.
    ///
    /// # Errors
    ///
    /// The first failing operation's error, with [`crate::Error::batch_index`] set;
    /// nothing is written. Rule violations (see [`crate::validate_batch`]) fail before
    /// anything is written.
    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>>;

    /// Finishes what the layers of this engine left undone in `table` (in one
    /// partition, with `partition_key`): the blob layer's orphan blobs, found
    /// through its intent rows (`tables_client::large`). A storage engine has no
    /// layers and does nothing; a layer does its own work after its inner engine's,
    /// and a wrapper forwards the call. `Table::reconcile` calls it.
    ///
    /// # Errors
    ///
    /// The first error met; the work that could be done was done, and what was left
    /// stays for the next call.
    async fn reconcile_layers(
        &self,
        table: &str,
        partition_key: Option<&str>,
    ) -> Result<LayerReconcileReport> {
        let _ = (table, partition_key);
        Ok(LayerReconcileReport::default())
    }
}

/// A page of a query as the service's JSON ([`Engine::query_json`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct JsonPage {
    /// The response body: `{"value":[{entity}, ...], ...}`.
    pub body: Vec<u8>,
    /// The token for the next page; `None` on the last page.
    pub continuation: Option<ContinuationToken>,
}

impl JsonPage {
    /// A page of `body` and `continuation`.
    pub fn new(body: Vec<u8>, continuation: Option<ContinuationToken>) -> JsonPage {
        JsonPage { body, continuation }
    }
}

/// What [`Engine::reconcile_layers`] found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LayerReconcileReport {
    /// Blob intents found: writes of blob fields that had not finished.
    pub blob_intents_found: usize,
    /// Of those, writes that had committed: the blobs they replaced were deleted.
    pub blob_writes_committed: usize,
    /// Of those, writes that had not committed: fenced, so they never can, and the
    /// blobs they uploaded deleted.
    pub blob_writes_fenced: usize,
    /// Blobs deleted.
    pub blobs_deleted: usize,
}

impl LayerReconcileReport {
    /// Adds `other`'s counts to this report's.
    pub fn absorb(&mut self, other: &LayerReconcileReport) {
        self.blob_intents_found += other.blob_intents_found;
        self.blob_writes_committed += other.blob_writes_committed;
        self.blob_writes_fenced += other.blob_writes_fenced;
        self.blobs_deleted += other.blobs_deleted;
    }
}

/// Implements [`Engine`] for a smart pointer by forwarding every call to the engine
/// it points at.
macro_rules! forward_engine {
    ($($pointer:ident)::+) => {
        #[async_trait]
        impl<E: Engine + ?Sized> Engine for $($pointer)::+<E> {
            fn capabilities(&self) -> EngineCapabilities {
                (**self).capabilities()
            }

            async fn create_table(&self, table: &str) -> Result<()> {
                (**self).create_table(table).await
            }

            async fn delete_table(&self, table: &str) -> Result<()> {
                (**self).delete_table(table).await
            }

            async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
                (**self).list_tables(options).await
            }

            async fn get_entity(
                &self,
                table: &str,
                key: &EntityKey,
                select: Option<&[String]>,
            ) -> Result<Option<DynamicEntity>> {
                (**self).get_entity(table, key, select).await
            }

            async fn query(
                &self,
                table: &str,
                spec: &QuerySpec,
                continuation: Option<&ContinuationToken>,
            ) -> Result<Page<DynamicEntity>> {
                (**self).query(table, spec, continuation).await
            }

            async fn query_json(
                &self,
                table: &str,
                spec: &QuerySpec,
                continuation: Option<&ContinuationToken>,
            ) -> Result<Option<JsonPage>> {
                (**self).query_json(table, spec, continuation).await
            }

            async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
                (**self).write(table, op).await
            }

            async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
                (**self).submit_batch(table, ops).await
            }

            async fn reconcile_layers(
                &self,
                table: &str,
                partition_key: Option<&str>,
            ) -> Result<LayerReconcileReport> {
                (**self).reconcile_layers(table, partition_key).await
            }
        }
    };
}

// A shared or boxed engine is an engine: wrappers such as a fault injector or a
// table-name prefix can hold an `Arc<dyn Engine>` or a `Box<dyn Engine>` (or either
// of any engine) and still be generic over what they wrap.
forward_engine!(std::sync::Arc);
forward_engine!(Box);
