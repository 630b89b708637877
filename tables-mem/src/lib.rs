//! `tables-mem`: the in-memory engine of the `tables` SDK.
//!
//! [`MemEngine`] implements [`tables_core::Engine`] with the Azure Table service's
//! rules, in process. It is not a mock: code that works against it works against the
//! service.
//!
//! - **Order.** Entities are kept and returned by PartitionKey, then RowKey, compared
//!   by UTF-16 code units as the service and Azurite compare them
//!   ([`tables_core::key::cmp_ordinal`]), not by Rust's `str` order.
//! - **Writes.** Every write gets a new Timestamp and ETag; timestamps strictly
//!   increase per engine, even within one 100 ns tick. Insert on an existing key fails
//!   with `EntityAlreadyExists`; replace, merge and delete of a missing key with
//!   `EntityNotFound` (`ResourceNotFound`); a stale ETag with `PreconditionFailed`
//!   (`UpdateConditionNotSatisfied`). Merge keeps properties it does not mention,
//!   replace drops them; upserts have no precondition.
//! - **Validation first.** Keys, entities, queries and batches are checked with
//!   `tables-core`'s rules before anything changes: a rejected write or batch
//!   changes nothing.
//! - **Where errors come from.** The engine plays the service, so its decisions
//!   about the table's state (a missing table, which it names; a taken key; a stale
//!   ETag; a token it did not make) are [`tables_core::Origin::Service`], as the
//!   remote engine reports the service's answers. The checks `tables-core` makes
//!   before anything happens are [`tables_core::Origin::Local`] on every engine.
//! - **Unchecked filters** ([`tables_core::Filter::unchecked_raw`]) are evaluated
//!   when `tables-core`'s parser reads their text; text it does not read fails the
//!   query with `Unsupported`, saying the engine can't evaluate that unchecked
//!   filter (the service might).
//! - **Batches** are all-or-nothing; the error names the failing operation
//!   ([`tables_core::Error::batch_index`]) with the service's code.
//! - **Queries** honour `$filter`, `$select` (keys, Timestamp and ETag always
//!   present) and `$top`, visit only the key range the filter allows, and page like
//!   the service: at most `min($top, page size)` entities per page, optionally ending
//!   pages at partition boundaries (pages may then be short, even empty, and still
//!   carry a token), so client paging loops get exercised. See [`MemOptions`].
//! - **Tables** compare names case-insensitively and keep the case they were created
//!   with; [`Engine::list_tables`] lists them in ordinal name order.
//! - **Concurrency.** Safe under many concurrent tasks: readers of a table run in
//!   parallel, and no lock is held across an `.await`.
//! - **Fault injection** ([`MemEngine::faults`]) fails or delays chosen calls, for
//!   reliability tests of the layers above; [`FaultInjector`] gives any other engine
//!   (the remote one on an emulator, say) the same controls.
//! - **Durability** is a journal's job: [`MemEngine::record_changes`] reports every
//!   change in order, [`MemEngine::restore`] replays them, [`MemEngine::export`]
//!   describes the engine as changes for a snapshot (`tables-server --data-dir`
//!   keeps its accounts this way).
//! - **Blobs.** [`MemBlobStore`] is the blob service beside the engine
//!   ([`tables_core::BlobStore`]: containers, blobs with ETags and conditions,
//!   ranged reads, listings by prefix), with the same fault injection.
//!
//! ```
//! use tables_core::{col, DynamicEntity, Engine, EntityKey, QuerySpec, WriteOp};
//! use tables_mem::{MemEngine, MemOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> tables_core::Result<()> {
//! let engine = MemEngine::with_options(MemOptions::default().with_page_size(2));
//! engine.create_table("Customers").await?;
//! for rk in ["a", "b", "c"] {
//!     let entity = DynamicEntity::new("Smith", rk).with("Age", 30);
//!     engine.write("Customers", &WriteOp::Insert(entity)).await?;
//! }
//! let got = engine.get_entity("customers", &EntityKey::new("Smith", "b"), None).await?;
//! assert_eq!(got.map(|e| e.row_key), Some("b".to_owned()));
//!
//! // Page through a query until no continuation token comes back.
//! let spec = QuerySpec::new().filter(col("PartitionKey").eq("Smith"));
//! let (mut rows, mut token) = (Vec::new(), None);
//! loop {
//!     let page = engine.query("Customers", &spec, token.as_ref()).await?;
//!     rows.extend(page.items.into_iter().map(|e| e.row_key));
//!     token = page.continuation;
//!     if token.is_none() {
//!         break;
//!     }
//! }
//! assert_eq!(rows, ["a", "b", "c"]);
//! # Ok(())
//! # }
//! ```

mod blob;
mod changes;
mod clock;
mod faults;
mod inject;
mod key;
mod page;
mod store;
mod table;

use std::sync::Arc;

use async_trait::async_trait;
use tables_core::{
    ContinuationToken, DynamicEntity, Engine, EngineCapabilities, EntityKey, ListTablesOptions,
    Page, QuerySpec, Result, ServiceKind, TablePage, WriteOp, WriteOutcome, MAX_PAGE_SIZE,
};

pub use blob::MemBlobStore;
pub use changes::{Change, ChangeSink, RowChange};
pub use faults::{CallKind, Fault, Faults};
pub use inject::FaultInjector;

use store::Store;

/// Options of a [`MemEngine`].
///
/// ```
/// use tables_mem::{MemEngine, MemOptions};
///
/// // One entity per page, and pages that end at partition boundaries: the harshest
/// // paging a client can meet.
/// let engine = MemEngine::with_options(
///     MemOptions::default()
///         .with_page_size(1)
///         .with_break_at_partition_boundaries(true),
/// );
/// assert_eq!(engine.options().page_size, 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemOptions {
    /// Most entities (and table names) per page, whatever `$top` says: 1 to 1,000,
    /// default 1,000 (the service's maximum). Values outside the range are clamped
    /// into it by [`MemEngine::with_options`].
    pub page_size: u32,
    /// End a query page when the next row is in another partition, as the service
    /// may when a query crosses a partition-server boundary. Such pages can be
    /// short, even empty, and still carry a continuation token. Default `false`.
    pub break_at_partition_boundaries: bool,
    /// The service the engine plays, with its rules: Azure Storage's Table service
    /// (the default) or Azure Cosmos DB for Table ([`MemOptions::cosmos`]).
    pub service: ServiceKind,
    /// On Cosmos DB for Table: the seed of the order results come in. Each seed
    /// gives another arbitrary order, within a page and across pages; a
    /// continuation still resumes exactly (no row lost or repeated).
    pub order_seed: u64,
    /// Requests per second the engine serves before it answers `429 Too Many
    /// Requests` (Cosmos DB's request units, counted as one per call); `None`
    /// (the default): no budget.
    pub requests_per_second: Option<u32>,
}

impl Default for MemOptions {
    fn default() -> MemOptions {
        MemOptions {
            page_size: MAX_PAGE_SIZE,
            break_at_partition_boundaries: false,
            service: ServiceKind::AzureStorage,
            order_seed: 0,
            requests_per_second: None,
        }
    }
}

impl MemOptions {
    /// Sets [`page_size`](MemOptions::page_size).
    pub fn with_page_size(mut self, entities: u32) -> MemOptions {
        self.page_size = entities;
        self
    }

    /// Sets [`break_at_partition_boundaries`](MemOptions::break_at_partition_boundaries).
    pub fn with_break_at_partition_boundaries(mut self, breaks: bool) -> MemOptions {
        self.break_at_partition_boundaries = breaks;
        self
    }

    /// The Cosmos DB for Table profile: results in an arbitrary order that `seed`
    /// chooses, RowKeys of at most 255 bytes, batches of at most 2 MB,
    /// case-sensitive table names, and filters on `Timestamp` that match nothing,
    /// as its FAQ and query guide describe the service. What a test of a Cosmos
    /// application runs on without an account.
    ///
    /// ```
    /// use tables_core::{Engine, ServiceKind};
    /// use tables_mem::{MemEngine, MemOptions};
    ///
    /// let engine = MemEngine::with_options(MemOptions::cosmos(7));
    /// assert_eq!(engine.capabilities().service, ServiceKind::CosmosTable);
    /// assert!(!engine.capabilities().ordered_results);
    /// ```
    pub fn cosmos(seed: u64) -> MemOptions {
        MemOptions {
            service: ServiceKind::CosmosTable,
            order_seed: seed,
            ..MemOptions::default()
        }
    }

    /// Sets [`requests_per_second`](MemOptions::requests_per_second).
    pub fn with_requests_per_second(mut self, budget: Option<u32>) -> MemOptions {
        self.requests_per_second = budget;
        self
    }

    /// What an engine with these options guarantees.
    pub fn capabilities(&self) -> EngineCapabilities {
        EngineCapabilities::of(self.service)
    }
}

/// The in-memory engine. Cloning is cheap and shares the same store.
#[derive(Debug, Clone, Default)]
pub struct MemEngine {
    store: Arc<Store>,
}

impl MemEngine {
    /// A new, empty engine with the default options.
    pub fn new() -> MemEngine {
        MemEngine::default()
    }

    /// A new, empty engine with `options`; a `page_size` outside 1 to 1,000 is
    /// clamped into that range.
    pub fn with_options(mut options: MemOptions) -> MemEngine {
        options.page_size = options.page_size.clamp(1, MAX_PAGE_SIZE);
        MemEngine {
            store: Arc::new(Store::new(options)),
        }
    }

    /// The options in force (after clamping).
    pub fn options(&self) -> &MemOptions {
        &self.store.options
    }

    /// The fault-injection controls and call counters of this engine (shared by its
    /// clones). See [`Faults`].
    pub fn faults(&self) -> &Faults {
        &self.store.faults
    }

    /// Reports every change this engine (and its clones) makes from now on to
    /// `sink`, in the order they are made: the hook of a journal. See [`Change`] and
    /// [`ChangeSink`]. A failed write or batch reports nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](tables_core::ErrorKind::InvalidInput) if a sink
    /// was set already (an engine has one).
    pub fn record_changes(&self, sink: Arc<dyn ChangeSink>) -> Result<()> {
        if self.store.record_changes(sink) {
            Ok(())
        } else {
            Err(tables_core::Error::local(
                tables_core::ErrorKind::InvalidInput,
                "this engine reports its changes to a sink already; an engine has one",
            ))
        }
    }

    /// Makes a change recorded earlier (by a [`ChangeSink`] or [`MemEngine::export`])
    /// again, as it was: rows keep their Timestamp and ETag, and the engine's clock
    /// moves past every restored Timestamp, so later writes get later ones. Replaying
    /// a change the engine holds already changes nothing: creating a table that
    /// exists, or removing a row that is absent, is not an error. Restoring does not
    /// report to the sink; restore first, then [`record_changes`](MemEngine::record_changes).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tables_core::{DynamicEntity, Engine, EntityKey, WriteOp};
    /// use tables_mem::{Change, ChangeSink, MemEngine, RowChange};
    ///
    /// /// Keeps the changes as owned copies (a real journal writes them to disk).
    /// #[derive(Debug, Default)]
    /// struct Kept(Mutex<Vec<(Option<String>, Vec<DynamicEntity>)>>);
    /// impl ChangeSink for Kept {
    ///     fn record(&self, change: Change<'_>) {
    ///         let kept = match change {
    ///             Change::TableCreated(name) => (Some(name.to_owned()), Vec::new()),
    ///             Change::Rows { rows, .. } => (None, rows.iter().filter_map(|row| match row {
    ///                 RowChange::Stored(entity) => Some((*entity).clone()),
    ///                 _ => None,
    ///             }).collect()),
    ///             _ => return,
    ///         };
    ///         self.0.lock().unwrap().push(kept);
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> tables_core::Result<()> {
    /// let journal = Arc::new(Kept::default());
    /// let engine = MemEngine::new();
    /// engine.record_changes(journal.clone())?;
    /// engine.create_table("Orders").await?;
    /// engine.write("Orders", &WriteOp::Insert(DynamicEntity::new("p", "r").with("n", 1))).await?;
    ///
    /// // A new engine, rebuilt from the journal, holds the same row, ETag and all.
    /// let rebuilt = MemEngine::new();
    /// for (table, rows) in journal.0.lock().unwrap().iter() {
    ///     match table {
    ///         Some(name) => rebuilt.restore(&Change::TableCreated(name))?,
    ///         None => {
    ///             let rows: Vec<RowChange<'_>> = rows.iter().map(RowChange::Stored).collect();
    ///             rebuilt.restore(&Change::Rows { table: "Orders", rows: &rows })?;
    ///         }
    ///     }
    /// }
    /// let key = EntityKey::new("p", "r");
    /// assert_eq!(
    ///     rebuilt.get_entity("Orders", &key, None).await?,
    ///     engine.get_entity("Orders", &key, None).await?,
    /// );
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](tables_core::ErrorKind::InvalidInput) for a
    /// table name or key that no table or row can have, and
    /// [`ErrorKind::TableNotFound`](tables_core::ErrorKind::TableNotFound) for rows
    /// of a table that does not exist: changes out of order, or not this engine's.
    /// Nothing of a refused change is applied.
    pub fn restore(&self, change: &Change<'_>) -> Result<()> {
        self.store.restore(change)
    }

    /// Describes every table and row as changes, for a snapshot: each table's
    /// [`Change::TableCreated`], then its rows as [`Change::Rows`] of at most
    /// `chunk` rows. Restoring them into a new engine rebuilds this one. Writers of a
    /// table wait only while its rows are copied (rows share their properties, so a
    /// copy is cheap), not while `visit` runs.
    pub fn export(&self, chunk: usize, mut visit: impl FnMut(Change<'_>)) {
        self.store.export(chunk, &mut visit);
    }
}

#[async_trait]
impl Engine for MemEngine {
    fn capabilities(&self) -> EngineCapabilities {
        self.store.capabilities
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        self.store.admit()?;
        let ticket = self.store.faults.enter(CallKind::CreateTable).await?;
        ticket.finish(self.store.create_table(table))
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.store.admit()?;
        let ticket = self.store.faults.enter(CallKind::DeleteTable).await?;
        ticket.finish(self.store.delete_table(table))
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        self.store.admit()?;
        let ticket = self.store.faults.enter(CallKind::ListTables).await?;
        ticket.finish(self.store.list_tables(options))
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        self.store.admit()?;
        let ticket = self.store.faults.enter(CallKind::GetEntity).await?;
        ticket.finish(self.store.get_entity(table, key, select))
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        self.store.admit()?;
        let ticket = self.store.faults.enter(CallKind::Query).await?;
        ticket.finish(self.store.query(table, spec, continuation))
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.store.admit()?;
        let ticket = self.store.faults.enter(CallKind::Write).await?;
        ticket.finish(self.store.write(table, op))
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.store.admit()?;
        let ticket = self.store.faults.enter(CallKind::Batch).await?;
        ticket.finish(self.store.submit_batch(table, ops))
    }
}
