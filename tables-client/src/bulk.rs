//! [`BulkWriter`]: large loads, grouped by partition and sent as entity group
//! transactions of up to 100 operations, several at once.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use futures::stream::{self, StreamExt};
use tables_core::model::IndexKind;
use tables_core::sealed::is_held;
use tables_core::size::entity_size;
use tables_core::{
    validate_batch, DynamicEntity, Error, ErrorKind, Result, Row, WriteOp, WriteOutcome,
    MAX_BATCH_BYTES, MAX_BATCH_OPERATIONS,
};

use crate::service::TableServiceClient;
use crate::upkeep::{self, Item, Mode};

/// How a [`BulkWriter`] writes each item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum BulkMode {
    /// Insert: an item whose key is taken fails its chunk with
    /// [`ErrorKind::EntityAlreadyExists`], one whose `unique_index` value another
    /// entity holds with [`ErrorKind::UniqueViolation`].
    Insert,
    /// Insert or replace (upsert-replace), the default. For a type with index copies,
    /// each chunk first reads its items' current rows, deletes the copies they no
    /// longer imply, and makes the write conditional on the versions read (retrying
    /// the chunk after a concurrent change, up to
    /// [`ClientOptions::max_conflict_retries`](crate::ClientOptions::max_conflict_retries)).
    /// Its chunks keep room for those deletes, so they hold fewer items (33 of a type
    /// with one index: 3 operations each).
    #[default]
    Upsert,
}

/// A bulk loader for one table, from [`TableServiceClient::bulk_writer`].
///
/// [`BulkWriter::write_all`] encodes every item, groups the rows by PartitionKey
/// (partitions in order of first appearance, items in caller order within each),
/// cuts each partition into chunks of at most 100 operations and 4 MiB (an item's
/// same-partition index copies count and stay in its chunk), validates every chunk,
/// and only then sends the chunks as entity group transactions, at most
/// [`BulkWriter::concurrency`] at a time.
///
/// **Atomic per chunk only.** Each chunk is one entity group transaction: all of its
/// rows are written or none. Chunks succeed or fail independently, so a failed load
/// leaves the other chunks written; [`BulkReport`] says which caller items each chunk
/// held and how it ended, so the caller can retry exactly the failed ones.
///
/// ```
/// use tables_client::{BulkMode, BulkReport, Entity, ErrorKind, Filter, QuerySpec, Row, TableServiceClient, WriteOp};
///
/// #[derive(Entity, Debug, Clone, PartialEq)]
/// #[entity(partition_key = "{device}", row_key = "{reading:06}")]
/// pub struct Reading {
///     pub device: String,
///     pub reading: u32,
///     pub celsius: f64,
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let service = TableServiceClient::in_memory();
/// service.create_table("Readings").await?;
/// // Reading 150 of device "a" is already there: its chunk fails as a whole.
/// let old = Reading { device: "a".into(), reading: 150, celsius: 0.0 };
/// service.engine().write("Readings", &WriteOp::Insert(old.to_entity()?)).await?;
///
/// let items = (0..250).map(|i| Reading { device: "a".into(), reading: i, celsius: 20.5 });
/// let err = service
///     .bulk_writer::<Reading>("Readings")
///     .mode(BulkMode::Insert)
///     .write_all(items)
///     .await
///     .unwrap_err(); // a load that failed in part is an error...
/// assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
/// let report = BulkReport::from_error(&err).unwrap(); // ...that carries the report
/// // 250 items of one partition: chunks of 100, 100 and 50 items.
/// assert_eq!(report.chunks.len(), 3);
/// let failed = report.failed().next().unwrap();
/// assert_eq!(failed.items, (100..200).collect::<Vec<_>>()); // caller indexes
/// let err = failed.result.as_ref().unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
/// assert_eq!(err.batch_index(), Some(150)); // the caller index of the culprit
/// assert_eq!(report.written_items().len(), 150);
///
/// // The other chunks are written; nothing of the failed one is (150 is the old row).
/// let spec = QuerySpec::new().filter(Filter::partition_key("a"));
/// let rows = service.engine().query("Readings", &spec, None).await?.items;
/// assert_eq!(rows.len(), 151);
/// assert_eq!(Reading::from_entity(rows[100].clone())?, old);
/// # Ok::<(), tables_client::Error>(())
/// # }).unwrap();
/// ```
///
/// Types with eventually consistent indexes (another partition or table) or index
/// entities are refused with [`ErrorKind::InvalidInput`]: their upkeep needs an
/// intent or a read-modify-write per item, which [`Table::insert`](crate::Table::insert)
/// and [`Table::upsert`](crate::Table::upsert) do; write such items one at a time
/// through them.
pub struct BulkWriter<T> {
    service: TableServiceClient,
    table: String,
    mode: BulkMode,
    concurrency: usize,
    _rows: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for BulkWriter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkWriter")
            .field("table", &self.table)
            .field("rows", &std::any::type_name::<T>())
            .field("mode", &self.mode)
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

impl TableServiceClient {
    /// A bulk loader of `T` values into table `table`. Nothing is checked or sent
    /// until [`BulkWriter::write_all`].
    pub fn bulk_writer<T: Row>(&self, table: &str) -> BulkWriter<T> {
        BulkWriter {
            service: self.clone(),
            table: table.to_owned(),
            mode: BulkMode::default(),
            concurrency: self.options().bulk_concurrency.max(1),
            _rows: PhantomData,
        }
    }
}

/// How one chunk (one entity group transaction) ended.
#[derive(Debug)]
#[non_exhaustive]
pub struct ChunkOutcome {
    /// The partition of every row of the chunk.
    pub partition_key: String,
    /// The caller's items in the chunk, as indexes into the sequence given to
    /// [`BulkWriter::write_all`], ascending.
    pub items: Vec<usize>,
    /// One outcome per item (in the order of `items`; the outcome of the item's
    /// primary row), or the chunk's error: then none of the chunk's rows was written,
    /// and [`Error::batch_index`] is the caller index of the failing item.
    pub result: Result<Vec<WriteOutcome>>,
}

impl ChunkOutcome {
    /// Whether the chunk was written.
    pub fn is_written(&self) -> bool {
        self.result.is_ok()
    }
}

/// What a [`BulkWriter::write_all`] did, chunk by chunk.
///
/// `write_all` returns it as is only when every chunk was written; a load that
/// failed in part returns an error carrying the report
/// ([`BulkReport::from_error`]), so a partial failure can't pass for success.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct BulkReport {
    /// Every chunk, partitions in order of first appearance, chunks in item order.
    pub chunks: Vec<ChunkOutcome>,
}

impl BulkReport {
    /// The report a partly failed [`BulkWriter::write_all`] carries, if `err` is one.
    ///
    /// ```
    /// # fn retry(_: &[usize]) {}
    /// # fn handle(result: tables_client::Result<tables_client::BulkReport>) -> tables_client::Result<()> {
    /// use tables_client::BulkReport;
    ///
    /// match result {
    ///     Ok(report) => assert!(report.is_complete()),
    ///     Err(err) => match BulkReport::from_error(&err) {
    ///         // Some chunks were written: retry exactly the others.
    ///         Some(report) => retry(&report.failed_items()),
    ///         None => return Err(err), // refused before anything was sent
    ///     },
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_error(err: &Error) -> Option<&BulkReport> {
        std::error::Error::source(err)?.downcast_ref()
    }

    /// The chunks that were written.
    pub fn succeeded(&self) -> impl Iterator<Item = &ChunkOutcome> + '_ {
        self.chunks.iter().filter(|c| c.is_written())
    }

    /// The chunks that failed (none of their rows was written, unless their error
    /// says it [may have been applied](Error::may_have_applied)).
    pub fn failed(&self) -> impl Iterator<Item = &ChunkOutcome> + '_ {
        self.chunks.iter().filter(|c| !c.is_written())
    }

    /// Whether every chunk was written.
    pub fn is_complete(&self) -> bool {
        self.chunks.iter().all(ChunkOutcome::is_written)
    }

    /// The caller indexes of the items written, ascending.
    pub fn written_items(&self) -> Vec<usize> {
        sorted_items(self.succeeded())
    }

    /// The caller indexes of the items not written (their chunk failed), ascending.
    pub fn failed_items(&self) -> Vec<usize> {
        sorted_items(self.failed())
    }
}

impl fmt::Display for BulkReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed: Vec<&ChunkOutcome> = self.failed().collect();
        write!(
            f,
            "{} of {} chunks failed ({} of {} items not written)",
            failed.len(),
            self.chunks.len(),
            failed.iter().map(|c| c.items.len()).sum::<usize>(),
            self.chunks.iter().map(|c| c.items.len()).sum::<usize>()
        )
    }
}

impl std::error::Error for BulkReport {}

impl BulkReport {
    /// `Ok(self)` when complete; otherwise an error of the first failed chunk's kind
    /// (marked if any failed chunk may have applied), with the report as its source.
    fn into_result(self) -> Result<BulkReport> {
        let Some(first) = self.failed().find_map(|c| c.result.as_ref().err()) else {
            return Ok(self);
        };
        let doubtful = self
            .failed()
            .any(|c| c.result.as_ref().is_err_and(Error::may_have_applied));
        let message = format!(
            "the bulk load failed in part: {self}; the other chunks were written. The first \
             failure: {first}. BulkReport::from_error gives every chunk's outcome, and \
             failed_items() the items to retry"
        );
        let mut err = Error::new(first.kind(), message).with_origin(first.origin());
        if let Some(index) = first.batch_index() {
            err = err.with_batch_index(index);
        }
        if doubtful {
            err = err.with_may_have_applied();
        }
        Err(err.with_source(self))
    }
}

fn sorted_items<'a>(chunks: impl Iterator<Item = &'a ChunkOutcome>) -> Vec<usize> {
    let mut items: Vec<usize> = chunks.flat_map(|c| c.items.iter().copied()).collect();
    items.sort_unstable();
    items
}

/// The most a delete adds to a batch payload (two keys of at most 1 KiB, counted
/// as the service's estimate counts them).
const MAX_DELETE_BYTES: usize = 4 + 2 * 2 * 1024;

/// One caller item: its write, with its primary row and same-partition copies.
struct Planned {
    index: usize,
    item: Item,
    primary: DynamicEntity,
    copies: Vec<DynamicEntity>,
}

/// One entity group transaction to be.
struct Chunk {
    partition_key: String,
    items: Vec<Planned>,
}

impl Chunk {
    fn caller_indexes(&self) -> Vec<usize> {
        self.items.iter().map(|p| p.index).collect()
    }
}

/// The operations of a chunk, and where each item's primary operation is.
struct Batch {
    ops: Vec<WriteOp>,
    primary_at: Vec<usize>,
}

impl Batch {
    /// The position (in the chunk) of the item owning operation `op`.
    fn item_of(&self, op: usize) -> usize {
        self.primary_at
            .partition_point(|&start| start <= op)
            .saturating_sub(1)
    }
}

impl<T: Row> BulkWriter<T> {
    /// Sets how items are written ([`BulkMode::Upsert`] by default).
    #[must_use]
    pub fn mode(mut self, mode: BulkMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets how many chunks are in flight at once (default
    /// [`ClientOptions::bulk_concurrency`](crate::ClientOptions::bulk_concurrency));
    /// 0 counts as 1.
    #[must_use]
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Writes every item and reports each chunk's outcome.
    ///
    /// A chunk that fails (a conflict, a throttled request, ...) does not stop the
    /// others; its error is in its [`ChunkOutcome`], with [`Error::batch_index`] set
    /// to the caller index of the failing item.
    ///
    /// # Errors
    ///
    /// Before anything is sent, and then nothing is written:
    /// [`ErrorKind::InvalidInput`] for a type with eventually consistent indexes or
    /// index entities (use [`Table::insert`](crate::Table::insert) per item), or for
    /// two items writing the same row; an item's encoding error; a chunk's
    /// [`validate_batch`] error (an invalid key or property, an item whose own rows
    /// exceed 100 operations or 4 MiB). Each error's [`Error::batch_index`] is the
    /// caller index of the item at fault.
    ///
    /// After sending, when some chunks failed: an error of the first failure's kind
    /// whose source is the whole [`BulkReport`] ([`BulkReport::from_error`]); it says
    /// [whether a failed chunk may have applied](Error::may_have_applied).
    pub async fn write_all(self, items: impl IntoIterator<Item = T>) -> Result<BulkReport> {
        check_supported::<T>()?;
        let chunks = self.plan(items)?;
        let table = self.table.as_str();
        let writer = &self;
        let mut done: Vec<(usize, ChunkOutcome)> = stream::iter(chunks.into_iter().enumerate())
            .map(|(at, chunk)| async move { (at, writer.send(table, chunk).await) })
            .buffer_unordered(self.concurrency)
            .collect()
            .await;
        done.sort_unstable_by_key(|(at, _)| *at);
        BulkReport {
            chunks: done.into_iter().map(|(_, outcome)| outcome).collect(),
        }
        .into_result()
    }

    /// Encodes, groups, chunks and validates everything; sends nothing.
    fn plan(&self, items: impl IntoIterator<Item = T>) -> Result<Vec<Chunk>> {
        let mut groups: Vec<(String, Vec<Planned>)> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        for (index, value) in items.into_iter().enumerate() {
            let planned = encode(index, &value, self.mode)?;
            let at = *group_of
                .entry(planned.primary.partition_key.clone())
                .or_insert_with(|| {
                    groups.push((planned.primary.partition_key.clone(), Vec::new()));
                    groups.len() - 1
                });
            groups[at].1.push(planned);
        }
        let reserve = self.reserved_deletes();
        let max_bytes = chunk_bytes(self.service.engine().capabilities().max_batch_bytes);
        let mut chunks = Vec::new();
        for (partition_key, items) in groups {
            check_rows_once(&items)?;
            chunks.extend(cut(partition_key, items, reserve, max_bytes));
        }
        for chunk in &chunks {
            let batch = self.planned_batch(chunk);
            validate_batch(&batch.ops).map_err(|e| at_item(e, chunk, &batch))?;
        }
        Ok(chunks)
    }

    /// Operations each item must keep room for to delete its old copies: in upsert
    /// mode, as many as a variant of `T` has copies.
    fn reserved_deletes(&self) -> usize {
        match self.mode {
            BulkMode::Insert => 0,
            BulkMode::Upsert => T::schemas()
                .iter()
                .map(|s| s.indexes.len())
                .max()
                .unwrap_or(0),
        }
    }

    /// The chunk's operations without reading anything: what an insert sends, and
    /// what an upsert of a type without copies sends.
    fn planned_batch(&self, chunk: &Chunk) -> Batch {
        let mut batch = Batch {
            ops: Vec::new(),
            primary_at: Vec::with_capacity(chunk.items.len()),
        };
        for item in &chunk.items {
            batch.primary_at.push(batch.ops.len());
            for row in std::iter::once(&item.primary).chain(&item.copies) {
                batch.ops.push(match self.mode {
                    BulkMode::Insert => WriteOp::Insert(row.clone()),
                    BulkMode::Upsert => WriteOp::UpsertReplace(row.clone()),
                });
            }
        }
        batch
    }

    /// Sends one chunk through the typed write path: one entity group transaction
    /// with the index upkeep of every item (reading the current rows first when the
    /// type has copies), retried after a lost race like any typed write.
    async fn send(&self, table: &str, chunk: Chunk) -> ChunkOutcome {
        let indexes = chunk.caller_indexes();
        let items: Vec<Item> = chunk.items.into_iter().map(|p| p.item).collect();
        let result = upkeep::run(&self.service, table, items, upkeep::Shape::Batch)
            .await
            .map_err(|e| match e.batch_index().and_then(|i| indexes.get(i)) {
                Some(&caller) => e.with_batch_index(caller),
                None => e,
            });
        ChunkOutcome {
            items: indexes,
            partition_key: chunk.partition_key,
            result,
        }
    }
}

/// Refuses types whose index upkeep a plain entity group transaction can't do.
fn check_supported<T: Row>() -> Result<()> {
    for schema in T::schemas() {
        for index in schema.indexes {
            if index.is_eventually_consistent() || index.kind == IndexKind::List {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "the bulk writer can't keep index `{}` of {} (an index in another \
                         partition or table, or an index entity, needs per-item upkeep); \
                         write these items one at a time with Table::insert or Table::upsert",
                        index.name, schema.kind
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn encode<T: Row>(index: usize, value: &T, mode: BulkMode) -> Result<Planned> {
    let mode = match mode {
        BulkMode::Insert => Mode::Insert,
        BulkMode::Upsert => Mode::UpsertReplace,
    };
    let item = Item::write(mode, value).map_err(|e| e.with_batch_index(index))?;
    let primary = item.row().cloned().unwrap_or_default();
    let copies = item.partition_copies().cloned().collect();
    Ok(Planned {
        index,
        item,
        primary,
        copies,
    })
}

/// Each row of a partition is written once per load: which of two writes of a row
/// would land last is up to the chunks' timing, so a repeat is refused.
fn check_rows_once(items: &[Planned]) -> Result<()> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for item in items {
        for row in std::iter::once(&item.primary).chain(&item.copies) {
            if let Some(first) = seen.insert(row.row_key.as_str(), item.index) {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "items {first} and {} both write row ({:?}, {:?}); a bulk load writes \
                         each row once",
                        item.index, row.partition_key, row.row_key
                    ),
                )
                .with_batch_index(item.index)
                .with_entity_key(row.key()));
            }
        }
    }
    Ok(())
}

/// Cuts one partition's items into chunks of at most 100 operations and 4 MiB,
/// counting `reserve` extra operations per item. An item that doesn't fit a chunk
/// on its own gets a chunk to itself (and fails validation there).
///
/// `max_bytes` counts as [`entity_size`] does (the service's accounting of a stored
/// entity). Where the service limits the batch's *encoded* body more tightly than
/// Azure Storage's 4 MiB (Cosmos DB for Table: 2 MB), [`chunk_bytes`] leaves room
/// for the encoding (binary values grow by a third in base64).
/// The most [`entity_size`] bytes a chunk holds for a service whose batches hold at
/// most `service_limit` encoded bytes: Azure Storage's limit counts stored size, so
/// it is the limit itself; a tighter limit of the encoded body gets two thirds.
fn chunk_bytes(service_limit: usize) -> usize {
    if service_limit >= MAX_BATCH_BYTES {
        MAX_BATCH_BYTES
    } else {
        service_limit / 3 * 2
    }
}

fn cut(partition_key: String, items: Vec<Planned>, reserve: usize, max_bytes: usize) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut current: Vec<Planned> = Vec::new();
    let (mut ops, mut bytes) = (0usize, 0usize);
    // A chunk with a blob field's value carries one more row: the blob layer's
    // intent (`crate::large`).
    let mut blob_intent = 0usize;
    for item in items {
        let item_ops = 1 + item.copies.len() + reserve;
        let item_bytes = std::iter::once(&item.primary)
            .chain(&item.copies)
            .map(entity_size)
            .sum::<usize>()
            + reserve * MAX_DELETE_BYTES;
        let item_intent = usize::from(
            std::iter::once(&item.primary)
                .chain(&item.copies)
                .any(|row| row.properties().any(|(_, value)| is_held(value))),
        );
        if !current.is_empty()
            && (ops + item_ops + blob_intent.max(item_intent) > MAX_BATCH_OPERATIONS
                || bytes + item_bytes > max_bytes)
        {
            chunks.push(Chunk {
                partition_key: partition_key.clone(),
                items: std::mem::take(&mut current),
            });
            (ops, bytes, blob_intent) = (0, 0, 0);
        }
        ops += item_ops;
        bytes += item_bytes;
        blob_intent = blob_intent.max(item_intent);
        current.push(item);
    }
    if !current.is_empty() {
        chunks.push(Chunk {
            partition_key,
            items: current,
        });
    }
    chunks
}

/// Points a batch error's index at the caller's item.
fn at_item(err: Error, chunk: &Chunk, batch: &Batch) -> Error {
    match err.batch_index() {
        Some(op) => match chunk.items.get(batch.item_of(op)) {
            Some(item) => err.with_batch_index(item.index),
            None => err,
        },
        None => err,
    }
}
