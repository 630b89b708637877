//! [`BulkWriter`]: large loads, grouped by partition and sent as entity group
//! transactions of up to 100 operations, several at once, while the input is still
//! being read.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::marker::PhantomData;

use futures::stream::{FuturesUnordered, StreamExt};
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
    /// Insert or merge (upsert-merge): an item's properties are set on the stored
    /// row, the others it has kept. For rows without index copies only (raw
    /// [`DynamicEntity`] rows, types with no `index(..)`): the copies of a merged row
    /// can't be known without reading it, so a type with indexes is refused with
    /// [`ErrorKind::InvalidInput`] before anything is read.
    Merge,
}

/// A bulk loader for one table, from [`TableServiceClient::bulk_writer`].
///
/// [`BulkWriter::write_all`] (or [`BulkWriter::write_each`]) reads the items one at a
/// time, encodes and checks each as it comes, groups the rows by PartitionKey and
/// cuts each partition into chunks of at most 100 operations and 4 MiB (an item's
/// same-partition index copies count and stay in its chunk). A chunk goes out as an
/// entity group transaction as soon as it is full, at most
/// [`BulkWriter::concurrency`] at a time, while reading goes on; a partition's
/// chunks are sent one after another, in item order, so a later write of a row
/// lands after an earlier one.
///
/// **Memory is bounded whatever the input's length**: the writer holds at most
/// `4 × concurrency × 100` items not yet sent, plus the chunks in flight; reading
/// pauses until a chunk finishes. With the defaults (concurrency 8) that is 3,200
/// items waiting and 8 chunks in flight. Items of many partitions interleaved fill
/// many chunks at once: when that many wait and none is full, the fullest goes out
/// early (input sorted by PartitionKey, as exports are, makes full chunks). [`BulkWriter::write_each`] hands each
/// finished chunk to the caller and keeps only counts; [`BulkWriter::write_all`]
/// also keeps every chunk's outcome for its [`BulkReport`], one small record per
/// item.
///
/// **Atomic per chunk only.** Each chunk is one entity group transaction: all of its
/// rows are written or none. Chunks succeed or fail independently, so a failed load
/// leaves the other chunks written; the report says which caller items each chunk
/// held and how it ended, so the caller can retry exactly the failed ones.
///
/// **A bad item stops the reading.** An item that can't be written (it doesn't
/// encode, or a key or property the service would refuse) is refused before its
/// chunk is sent: every item before it is still sent (partial chunks included),
/// nothing after it is read, and the report names it
/// ([`BulkReport::refused`]) and where to resume ([`BulkReport::resume_at`]).
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

/// An item refused before its chunk was sent: its index in the input and why.
#[derive(Debug)]
#[non_exhaustive]
pub struct RefusedItem {
    /// The item's index in the sequence given to the writer.
    pub index: usize,
    /// Why it can't be written (its [`Error::batch_index`] is `index`).
    pub error: Error,
}

/// What a [`BulkWriter::write_all`] did, chunk by chunk.
///
/// `write_all` returns it as is only when every chunk was written and no item was
/// refused; otherwise it returns an error carrying the report
/// ([`BulkReport::from_error`]), so a partial failure can't pass for success.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct BulkReport {
    /// Every chunk sent (or checked and not sent), in the order of their first
    /// items.
    pub chunks: Vec<ChunkOutcome>,
    /// The item that stopped the reading, if one was refused: no item after it was
    /// read.
    pub refused: Option<RefusedItem>,
    /// How many items were read from the input (the refused one included).
    pub items_read: usize,
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

    /// Whether every chunk was written and no item refused.
    pub fn is_complete(&self) -> bool {
        self.refused.is_none() && self.chunks.iter().all(ChunkOutcome::is_written)
    }

    /// Where to go on: the index of the first item not read (the refused item's,
    /// if one was refused). Items from there on were never claimed; the items of
    /// failed chunks before it are [`BulkReport::failed_items`].
    pub fn resume_at(&self) -> usize {
        self.refused.as_ref().map_or(self.items_read, |r| r.index)
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
        let items = |chunks: &mut dyn Iterator<Item = &ChunkOutcome>| {
            chunks.map(|c| c.items.len()).sum::<usize>()
        };
        describe_load(
            f,
            (self.failed().count(), self.chunks.len()),
            (items(&mut self.failed()), items(&mut self.chunks.iter())),
            self.refused.as_ref(),
        )
    }
}

/// "`a` of `b` chunks failed (`c` of `d` items not written)", and the refused item.
fn describe_load(
    f: &mut fmt::Formatter<'_>,
    (chunks_failed, chunks): (usize, usize),
    (items_failed, items): (usize, usize),
    refused: Option<&RefusedItem>,
) -> fmt::Result {
    write!(
        f,
        "{chunks_failed} of {chunks} chunks failed ({items_failed} of {items} items not written)"
    )?;
    if let Some(refused) = refused {
        write!(
            f,
            "; item {} was refused and nothing after it was read",
            refused.index
        )?;
    }
    Ok(())
}

impl std::error::Error for BulkReport {}

impl BulkReport {
    /// `Ok(self)` when complete; otherwise an error of the refused item's kind, or
    /// else the first failed chunk's (marked if any failed chunk may have applied),
    /// with the report as its source.
    fn into_result(self) -> Result<BulkReport> {
        let failed = self.failed().find_map(|c| c.result.as_ref().err());
        let failure = load_failure(
            self.refused.as_ref(),
            failed,
            &self.to_string(),
            self.doubtful(),
            self.resume_at(),
        );
        match failure {
            Some(err) => Err(err.with_source(self)),
            None => Ok(self),
        }
    }

    fn doubtful(&self) -> bool {
        self.failed()
            .any(|c| c.result.as_ref().is_err_and(Error::may_have_applied))
    }
}

/// The error of a load that did not complete: the refused item's, else the first
/// failed chunk's (both reports pick it so); `None` when nothing failed.
fn load_failure(
    refused: Option<&RefusedItem>,
    failed: Option<&Error>,
    what: &str,
    may_have_applied: bool,
    resume_at: usize,
) -> Option<Error> {
    let first = refused.map(|r| &r.error).or(failed)?;
    Some(load_error(first, what, may_have_applied, resume_at))
}

/// The error of a load that did not write everything: `first`'s kind, origin and
/// item, a message saying what was and wasn't written and where to go on.
fn load_error(first: &Error, what: &str, doubtful: bool, resume_at: usize) -> Error {
    let message = format!(
        "the bulk load did not write everything: {what}. The first failure: {}. \
         The other chunks were written; BulkReport::from_error (or BulkSummary::from_error) \
         says which items to retry, and resume_at() ({resume_at}) where the input stopped",
        first.message()
    );
    let mut err = Error::new(first.kind(), message).with_origin(first.origin());
    if let Some(index) = first.batch_index() {
        err = err.with_batch_index(index);
    }
    if doubtful {
        err = err.with_may_have_applied();
    }
    err
}

/// A chunk's error as the load's error needs it (its kind, origin, item, words and
/// doubt), once the chunk itself went to the caller.
fn copy_of(err: &Error) -> Error {
    let mut copy = Error::new(err.kind(), err.message()).with_origin(err.origin());
    if let Some(index) = err.batch_index() {
        copy = copy.with_batch_index(index);
    }
    if err.may_have_applied() {
        copy = copy.with_may_have_applied();
    }
    copy
}

/// What a [`BulkWriter::write_each`] did, in counts: its memory does not grow with
/// the load (each chunk's outcome went to the caller's function).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct BulkSummary {
    /// Items read from the input (the refused one included).
    pub items_read: usize,
    /// Items written (in chunks that succeeded).
    pub items_written: usize,
    /// Items not written because their chunk failed.
    pub items_failed: usize,
    /// Chunks written.
    pub chunks_written: usize,
    /// Chunks that failed.
    pub chunks_failed: usize,
    /// Whether a failed chunk may have been applied (its answer was lost).
    pub may_have_applied: bool,
    /// The item that stopped the reading, if one was refused.
    pub refused: Option<RefusedItem>,
}

impl BulkSummary {
    /// The summary a partly failed [`BulkWriter::write_each`] carries, if `err` is
    /// one.
    pub fn from_error(err: &Error) -> Option<&BulkSummary> {
        std::error::Error::source(err)?.downcast_ref()
    }

    /// Whether every chunk was written and no item refused.
    pub fn is_complete(&self) -> bool {
        self.refused.is_none() && self.chunks_failed == 0
    }

    /// Where to go on: the index of the first item not read (the refused item's,
    /// if one was refused).
    pub fn resume_at(&self) -> usize {
        self.refused.as_ref().map_or(self.items_read, |r| r.index)
    }

    fn count(&mut self, chunk: &ChunkOutcome) {
        match &chunk.result {
            Ok(_) => {
                self.chunks_written += 1;
                self.items_written += chunk.items.len();
            }
            Err(err) => {
                self.chunks_failed += 1;
                self.items_failed += chunk.items.len();
                self.may_have_applied |= err.may_have_applied();
            }
        }
    }
}

impl fmt::Display for BulkSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        describe_load(
            f,
            (self.chunks_failed, self.chunks_failed + self.chunks_written),
            (self.items_failed, self.items_failed + self.items_written),
            self.refused.as_ref(),
        )
    }
}

impl std::error::Error for BulkSummary {}

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
    /// to the caller index of the failing item. The report keeps one outcome per
    /// item; for loads too large for that, [`BulkWriter::write_each`] hands the
    /// outcomes over chunk by chunk instead.
    ///
    /// # Errors
    ///
    /// Before anything is read: [`ErrorKind::InvalidInput`] for a type with
    /// eventually consistent indexes or index entities (use
    /// [`Table::insert`](crate::Table::insert) per item).
    ///
    /// When an item is refused (it doesn't encode; an invalid key or property; its
    /// own rows exceed 100 operations or 4 MiB): an error of its kind, whose
    /// [`Error::batch_index`] is its caller index, carrying the [`BulkReport`] of
    /// what was sent before it ([`BulkReport::from_error`]).
    ///
    /// When some chunks failed: an error of the first failure's kind carrying the
    /// report; it says [whether a failed chunk may have applied](Error::may_have_applied).
    pub async fn write_all(self, items: impl IntoIterator<Item = T>) -> Result<BulkReport> {
        check_supported::<T>(self.mode)?;
        let mut chunks = Vec::new();
        let end = self.stream(items, |chunk| chunks.push(chunk)).await;
        chunks.sort_unstable_by_key(|c| c.items.first().copied());
        BulkReport {
            chunks,
            refused: end.refused,
            items_read: end.items_read,
        }
        .into_result()
    }

    /// Writes every item, handing each chunk's outcome to `on_chunk` as it
    /// finishes (in the order they finish), and returns the counts. Its memory does
    /// not grow with the load: what [`BulkWriter`] holds (at most
    /// `4 × concurrency × 100` items waiting, `concurrency` chunks in flight) and
    /// what `on_chunk` keeps. A checkpoint of a resumable load is `on_chunk`'s to
    /// write: the items of each written chunk are final.
    ///
    /// ```
    /// use tables_client::{BulkSummary, Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone)]
    /// #[entity(partition_key = "{device}", row_key = "{reading:08}")]
    /// pub struct Reading {
    ///     pub device: String,
    ///     pub reading: u32,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// service.create_table("Readings").await?;
    /// // 10,000 readings of 10 devices, generated as they are written.
    /// let items = (0..10_000).map(|i| Reading { device: format!("d{}", i % 10), reading: i });
    /// let mut written = 0;
    /// let summary: BulkSummary = service
    ///     .bulk_writer::<Reading>("Readings")
    ///     .write_each(items, |chunk| {
    ///         if chunk.is_written() {
    ///             written += chunk.items.len(); // e.g. record chunk.items in a checkpoint
    ///         }
    ///     })
    ///     .await?;
    /// assert_eq!((summary.items_written, written), (10_000, 10_000));
    /// assert_eq!(summary.resume_at(), 10_000);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`BulkWriter::write_all`], carrying the [`BulkSummary`]
    /// ([`BulkSummary::from_error`]) instead of a report.
    pub async fn write_each(
        self,
        items: impl IntoIterator<Item = T>,
        mut on_chunk: impl FnMut(ChunkOutcome),
    ) -> Result<BulkSummary> {
        check_supported::<T>(self.mode)?;
        let mut summary = BulkSummary::default();
        let end = self
            .stream(items, |chunk| {
                summary.count(&chunk);
                on_chunk(chunk);
            })
            .await;
        summary.items_read = end.items_read;
        summary.refused = end.refused;
        if summary.is_complete() {
            return Ok(summary);
        }
        let what = summary.to_string();
        let failure = load_failure(
            summary.refused.as_ref(),
            end.first_failure.as_ref(),
            &what,
            summary.may_have_applied,
            summary.resume_at(),
        );
        match failure {
            Some(err) => Err(err.with_source(summary)),
            None => Ok(summary),
        }
    }

    /// Reads, encodes, checks, chunks and sends, `concurrency` chunks at a time,
    /// one chunk at a time per partition, holding at most [`Self::max_waiting`]
    /// items not yet sent; every chunk's outcome goes to `on_chunk`.
    async fn stream(
        &self,
        items: impl IntoIterator<Item = T>,
        mut on_chunk: impl FnMut(ChunkOutcome),
    ) -> StreamEnd {
        let table = self.table.as_str();
        let limits = ChunkLimits {
            reserve: self.reserved_deletes(),
            max_bytes: chunk_bytes(self.service.engine().capabilities().max_batch_bytes),
        };
        let max_waiting = self.max_waiting();
        let mut end = StreamEnd::default();
        let mut chunks = Chunker::default();
        let mut busy: HashSet<String> = HashSet::new();
        let mut in_flight = FuturesUnordered::new();
        let mut input = items.into_iter().enumerate();
        let mut reading = true;
        loop {
            // Send what may go: a chunk whose partition has none in flight.
            while in_flight.len() < self.concurrency {
                let Some(chunk) = chunks.next_ready(&busy) else {
                    break;
                };
                busy.insert(chunk.partition_key.clone());
                in_flight.push(self.send(table, chunk));
            }
            if reading && chunks.waiting < max_waiting {
                match input.next() {
                    Some((index, value)) => {
                        end.items_read = index + 1;
                        match self.checked(index, &value) {
                            Ok(planned) => chunks.add(planned, &limits),
                            Err(error) => {
                                end.refused = Some(RefusedItem { index, error });
                                reading = false;
                                chunks.close_all();
                            }
                        }
                    }
                    None => {
                        reading = false;
                        chunks.close_all();
                    }
                }
                continue;
            }
            match in_flight.next().await {
                Some(outcome) => {
                    busy.remove(&outcome.partition_key);
                    if end.first_failure.is_none() {
                        end.first_failure = outcome.result.as_ref().err().map(copy_of);
                    }
                    on_chunk(outcome);
                }
                // Nothing in flight: a full buffer of partial chunks sends its
                // largest; with the input done and nothing waiting, the load is.
                None if reading => chunks.close_largest(),
                None if chunks.waiting == 0 => return end,
                None => {}
            }
        }
    }

    /// The most items held unsent: four rounds of full chunks.
    fn max_waiting(&self) -> usize {
        4 * self.concurrency * MAX_BATCH_OPERATIONS
    }

    /// One item encoded and checked on its own (keys, properties, its rows' count
    /// and size), as its chunk will be.
    fn checked(&self, index: usize, value: &T) -> Result<Planned> {
        let planned = encode(index, value, self.mode)?;
        let ops: Vec<WriteOp> = std::iter::once(&planned.primary)
            .chain(&planned.copies)
            .map(|row| self.op(row.clone()))
            .collect();
        validate_batch(&ops).map_err(|e| e.with_batch_index(index))?;
        Ok(planned)
    }

    fn op(&self, row: DynamicEntity) -> WriteOp {
        match self.mode {
            BulkMode::Insert => WriteOp::Insert(row),
            BulkMode::Upsert => WriteOp::UpsertReplace(row),
            BulkMode::Merge => WriteOp::UpsertMerge(row),
        }
    }

    /// Operations each item must keep room for to delete its old copies: in upsert
    /// mode, as many as a variant of `T` has copies.
    fn reserved_deletes(&self) -> usize {
        match self.mode {
            BulkMode::Insert | BulkMode::Merge => 0,
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
                batch.ops.push(self.op(row.clone()));
            }
        }
        batch
    }

    /// Sends one chunk through the typed write path: one entity group transaction
    /// with the index upkeep of every item (reading the current rows first when the
    /// type has copies), retried after a lost race like any typed write.
    async fn send(&self, table: &str, chunk: Chunk) -> ChunkOutcome {
        let indexes = chunk.caller_indexes();
        // Each item was checked alone and the chunk kept within the limits; this
        // is the guard that nothing invalid goes out whatever the chunking did.
        let batch = self.planned_batch(&chunk);
        if let Err(err) = validate_batch(&batch.ops) {
            return ChunkOutcome {
                result: Err(at_item(err, &chunk, &batch)),
                items: indexes,
                partition_key: chunk.partition_key,
            };
        }
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
fn check_supported<T: Row>(mode: BulkMode) -> Result<()> {
    if mode == BulkMode::Merge && T::HAS_INDEXES {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "the bulk writer can't merge {} rows: the type has index copies, which \
                 a merge can't keep without reading each row; use BulkMode::Upsert, or \
                 Table::merge per item",
                std::any::type_name::<T>()
            ),
        ));
    }
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
        BulkMode::Merge => Mode::UpsertMerge,
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

/// How full a chunk may get.
struct ChunkLimits {
    /// Operations each item keeps room for (deletes of its old copies).
    reserve: usize,
    /// [`entity_size`] bytes a chunk holds ([`chunk_bytes`]).
    max_bytes: usize,
}

/// Where the stream stopped.
#[derive(Default)]
struct StreamEnd {
    items_read: usize,
    refused: Option<RefusedItem>,
    first_failure: Option<Error>,
}

/// A partition's chunk being filled.
struct Open {
    chunk: Chunk,
    ops: usize,
    bytes: usize,
    /// 1 when an item carries a blob field's value: the blob layer's intent row
    /// (`crate::large`) rides in the chunk.
    blob_intent: usize,
    /// The chunk's row keys: a row twice in one transaction is refused by the
    /// service, so a repeat starts the next chunk (which goes out after this one).
    rows: HashSet<String>,
}

/// The chunks being filled (one per partition) and those full and waiting to be
/// sent, in the order they filled; `waiting` counts the items of both.
#[derive(Default)]
struct Chunker {
    open: HashMap<String, Open>,
    ready: VecDeque<Chunk>,
    waiting: usize,
}

impl Chunker {
    /// Adds an item to its partition's chunk, first closing that chunk if the item
    /// doesn't fit (100 operations, the byte limit) or repeats one of its rows; a
    /// chunk that no further item could fit is closed at once.
    fn add(&mut self, item: Planned, limits: &ChunkLimits) {
        let rows: Vec<&DynamicEntity> =
            std::iter::once(&item.primary).chain(&item.copies).collect();
        let item_ops = rows.len() + limits.reserve;
        let item_bytes = rows.iter().map(|row| entity_size(row)).sum::<usize>()
            + limits.reserve * MAX_DELETE_BYTES;
        let item_intent = usize::from(
            rows.iter()
                .any(|row| row.properties().any(|(_, value)| is_held(value))),
        );
        let partition_key = item.primary.partition_key.clone();
        if let Some(open) = self.open.get(&partition_key) {
            let full = open.ops + item_ops + open.blob_intent.max(item_intent)
                > MAX_BATCH_OPERATIONS
                || open.bytes + item_bytes > limits.max_bytes
                || rows.iter().any(|row| open.rows.contains(&row.row_key));
            if full {
                self.close(&partition_key);
            }
        }
        let open = self
            .open
            .entry(partition_key.clone())
            .or_insert_with(|| Open {
                chunk: Chunk {
                    partition_key: partition_key.clone(),
                    items: Vec::new(),
                },
                ops: 0,
                bytes: 0,
                blob_intent: 0,
                rows: HashSet::new(),
            });
        open.ops += item_ops;
        open.bytes += item_bytes;
        open.blob_intent = open.blob_intent.max(item_intent);
        open.rows.extend(rows.iter().map(|row| row.row_key.clone()));
        open.chunk.items.push(item);
        self.waiting += 1;
        // The smallest item (one row and its reserve) no longer fits: send now.
        if open.ops + 1 + limits.reserve + open.blob_intent > MAX_BATCH_OPERATIONS {
            self.close(&partition_key);
        }
    }

    fn close(&mut self, partition_key: &str) {
        if let Some(open) = self.open.remove(partition_key) {
            self.ready.push_back(open.chunk);
        }
    }

    /// Closes every chunk being filled, in partition order of their first items.
    fn close_all(&mut self) {
        let mut open: Vec<Open> = self.open.drain().map(|(_, open)| open).collect();
        open.sort_unstable_by_key(|o| o.chunk.items.first().map(|p| p.index));
        self.ready.extend(open.into_iter().map(|o| o.chunk));
    }

    /// Closes the chunk holding the most items (the buffer is full of partial
    /// chunks and nothing is in flight).
    fn close_largest(&mut self) {
        let largest = self
            .open
            .iter()
            .max_by_key(|(_, open)| open.chunk.items.len())
            .map(|(partition_key, _)| partition_key.clone());
        if let Some(partition_key) = largest {
            self.close(&partition_key);
        }
    }

    /// The first waiting chunk whose partition has no chunk in flight.
    fn next_ready(&mut self, busy: &HashSet<String>) -> Option<Chunk> {
        let at = self
            .ready
            .iter()
            .position(|chunk| !busy.contains(&chunk.partition_key))?;
        let chunk = self.ready.remove(at)?;
        self.waiting -= chunk.items.len();
        Some(chunk)
    }
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
