//! Typed queries: [`Query<T>`], built from a [`Table<T>`] with [`Table::query`].
//!
//! A query narrows by partition, RowKey range and typed filters, may project into a
//! smaller type ([`Query::select`]) and bound the total ([`Query::take`]); it then
//! runs as a prefetching stream, as resumable pages, or collected. Every query
//! reads only primary rows of the kinds its type reads: index copies, index entries
//! and the client's own rows never come back.

mod across;
mod fetch;
mod index;
mod stream;
mod token;

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::Stream;
use tables_core::model::{rows_filter, KeyRange};
use tables_core::{
    Error, ErrorKind, Filter, FilterFor, QueryPlan, QuerySpec, Result, Row, MAX_PAGE_SIZE,
};

use crate::service::TableServiceClient;
use crate::table::{Table, Versioned};

pub use across::AcrossPartitions;
use fetch::Fetcher;
use index::Source;
pub use index::{IndexParts, IndexRead};
use stream::PageStream;
pub(crate) use token::Fingerprint;
pub use token::PageToken;

impl<T: Row> Table<T> {
    /// A query over this table, reading `T`: each primary row of `T`'s kinds once,
    /// never an index copy, index entry or intent row.
    ///
    /// ```
    /// use futures::TryStreamExt;
    /// use tables_client::{Entity, Row, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
    /// #[entity(rename_all = "PascalCase")]
    /// pub struct Employee { pub department: String, pub employee_id: u32, pub age: i32 }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// service.create_table("Employees").await?;
    /// # use tables_client::Engine as _;
    /// # for (id, age) in [(100, 25), (150, 41), (250, 52)] {
    /// #     let row = Employee { department: "Sales".into(), employee_id: id, age }.to_entity()?;
    /// #     service.engine().write("Employees", &tables_client::WriteOp::Insert(row)).await?;
    /// # }
    /// let employees = service.table::<Employee>("Employees");
    /// let found: Vec<Employee> = employees
    ///     .query()
    ///     .partition("Sales")
    ///     .row_range(Employee::employee_id_range(100..200)?)
    ///     .filter(Employee::AGE.gt(30))
    ///     .stream()
    ///     .try_collect()
    ///     .await?;
    /// assert_eq!(found.iter().map(|e| e.employee_id).collect::<Vec<_>>(), [150]);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn query(&self) -> Query<T> {
        Query::over(
            self.service().clone(),
            self.name(),
            T::KINDS,
            rows_filter::<T>(),
            Source::Primary,
        )
    }
}

/// A query for `T` over one table: a builder, then one of [`Query::stream`],
/// [`Query::page`], [`Query::collect`] or [`Query::first`].
///
/// The parts are ANDed: the partition, the RowKey range, every filter, and the kind
/// filter (`EntityType eq 'Employee'`; none for a union with a catch-all variant,
/// which reads every kind and skips non-primary rows on the client). Nothing is
/// sent before the query runs; builder mistakes are reported then.
pub struct Query<T> {
    service: TableServiceClient,
    table: Arc<str>,
    /// The kinds read; `None` reads every kind.
    kinds: Option<&'static [&'static str]>,
    /// The filter selecting the rows of those kinds by their tags (`None`: told
    /// apart on the client).
    tags: Option<Filter>,
    partition: Option<String>,
    rows: Option<KeyRange>,
    filter: Option<Filter>,
    select: Option<Vec<String>>,
    take: Option<usize>,
    page_size: Option<u32>,
    /// A builder mistake, reported when the query runs.
    invalid: Option<(ErrorKind, String)>,
    /// Primary rows, or an index's copies ([`Table::query_index`]).
    source: Source,
    /// What the caller needs of the order, on an engine whose results come in any
    /// order.
    order: Order,
    _rows: PhantomData<fn() -> T>,
}

/// What a query needs of its results' order, asked only of an engine whose results
/// come in any order ([`tables_core::EngineCapabilities::ordered_results`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Key order, as the call promises (the default): calls that can give it
    /// without buffering an unbounded result do, the others are refused.
    Key,
    /// Any order will do ([`Query::any_order`]).
    Any,
    /// Key order, reading at most this many rows and ordering them on the client
    /// ([`Query::order_in_client`]).
    InClient(usize),
}

impl<T> Clone for Query<T> {
    fn clone(&self) -> Query<T> {
        Query {
            service: self.service.clone(),
            table: Arc::clone(&self.table),
            kinds: self.kinds,
            tags: self.tags.clone(),
            partition: self.partition.clone(),
            rows: self.rows.clone(),
            filter: self.filter.clone(),
            select: self.select.clone(),
            take: self.take,
            page_size: self.page_size,
            invalid: self.invalid.clone(),
            source: self.source.clone(),
            order: self.order,
            _rows: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Query<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Query")
            .field("table", &self.table)
            .field("rows", &std::any::type_name::<T>())
            .field("filter", &self.full_filter().map(|f| f.to_odata()))
            .field("select", &self.select)
            .field("take", &self.take)
            .field("page_size", &self.page_size)
            .finish()
    }
}

/// One page of a typed query and where the next one starts.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TypedPage<T> {
    /// The page's values with their versions, in key order (on an engine whose
    /// results come in any order, only with [`Query::order_in_client`]; see
    /// [`Query::any_order`]). A page holds the page
    /// size's worth of items unless it is the last (or `take` ends it); the last
    /// page may be empty.
    pub items: Vec<Versioned<T>>,
    /// Where the next page starts; on the last page an end token
    /// ([`PageToken::is_end`]), which [`Query::page`] answers with an empty last
    /// page, never by starting again.
    pub next: PageToken,
}

impl<T> TypedPage<T> {
    /// Whether this is the query's last page (its `next` is an end token).
    pub fn is_last(&self) -> bool {
        self.next.is_end()
    }

    /// The token for the next page; `None` on the last page.
    pub fn next_token(&self) -> Option<&PageToken> {
        (!self.next.is_end()).then_some(&self.next)
    }
}

/// A query checked and ready to run.
struct Prepared {
    spec: QuerySpec,
    page_size: u32,
    take: Option<usize>,
    fingerprint: u64,
}

impl<T: Row> Query<T> {
    /// Only rows of this partition. Replaces an earlier partition.
    #[must_use]
    pub fn partition(mut self, partition_key: impl Into<String>) -> Self {
        self.partition = Some(partition_key.into());
        self
    }

    /// The query in each of `partitions` at once, merged in key order (by RowKey,
    /// then PartitionKey): how rows spread over the buckets of a hashed shard key
    /// (`{field:shard(N)}` in the PartitionKey) are read together, with
    /// `T::shard_partitions(..)` naming the partitions. Every other part of the
    /// query (filter, row range, `take`, projection) applies as usual; `take` counts
    /// the merged items.
    ///
    /// ```
    /// use futures::TryStreamExt;
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// // Sign-ins keyed by time would all land in one partition at a time; a bucket
    /// // of the user's name spreads them over 8.
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{user:shard(8)}", row_key = "{at:020}_{user}")]
    /// pub struct SignIn { pub user: String, pub at: u64 }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// let signins = service.table::<SignIn>("SignIns");
    /// signins.create().await?;
    /// for (at, user) in [(3, "ann"), (1, "bob"), (2, "cy")] {
    ///     signins.insert(&SignIn { user: user.into(), at }).await?;
    /// }
    /// let all = signins
    ///     .query()
    ///     .across_partitions(SignIn::shard_partitions()?)
    ///     .collect()
    ///     .await?;
    /// let order: Vec<u64> = all.iter().map(|s| s.at).collect();
    /// assert_eq!(order, [1, 2, 3]);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn across_partitions(
        self,
        partitions: impl IntoIterator<Item = impl Into<String>>,
    ) -> AcrossPartitions<T> {
        AcrossPartitions::new(self, partitions.into_iter().map(Into::into).collect())
    }

    /// Only RowKeys in `range`: a derived range or prefix helper
    /// (`Employee::employee_id_range(100..200)?`) or a [`KeyRange`]. Replaces an
    /// earlier range.
    #[must_use]
    pub fn row_range(mut self, range: KeyRange) -> Self {
        self.rows = Some(range);
        self
    }

    /// Only rows matching `filter`, ANDed with the other parts and earlier filters:
    /// `T`'s typed columns (`Employee::AGE.gt(30)`; for a union, a variant's), which
    /// match every row their field reads (an integer column also matches the other
    /// integer type, a float column whole numbers stored as integers), or an untyped
    /// [`Filter`] on stored property names. A column of another type does not
    /// compile.
    #[must_use]
    pub fn filter(mut self, filter: impl FilterFor<T>) -> Self {
        let filter = filter.into_filter();
        self.filter = Some(match self.filter.take() {
            Some(earlier) => earlier.and(filter),
            None => filter,
        });
        self
    }

    /// Only rows matching `$filter` text sent exactly as written, **unchecked**
    /// ([`Filter::unchecked_raw`]), ANDed with the other parts (in parentheses): the
    /// escape hatch for the rare filter [`Filter::parse`] does not read. Prefer
    /// [`Query::filter`] with typed columns, which are checked before anything is
    /// sent and use the codec's stored property names; the text names stored
    /// properties as the service sees them.
    ///
    /// A mistake in the text comes back as the service's answer. The in-memory
    /// engine evaluates the text if [`Filter::parse`] reads it, and otherwise fails
    /// the query with [`ErrorKind::Unsupported`], saying it can't evaluate the
    /// unchecked filter.
    #[must_use]
    pub fn filter_unchecked(self, text: impl Into<String>) -> Self {
        self.filter(Filter::unchecked_raw(text))
    }

    /// Reads into `P`, a projection of `T`: a smaller `#[derive(Entity)]` (or union)
    /// with the same kind and keys, holding only some of the fields. The query sends
    /// `$select` with `P`'s stored properties (and `EntityType`, `EntityVersion`), so
    /// the other properties never leave the service.
    ///
    /// `P` must read only kinds `T` reads; otherwise the query fails with
    /// [`ErrorKind::InvalidInput`] when it runs.
    #[must_use]
    pub fn select<P: Row>(self) -> Query<P> {
        let mut invalid = self.invalid;
        if let Source::Copies(copies) = &self.source {
            invalid.get_or_insert_with(|| {
                (
                    ErrorKind::InvalidQuery,
                    format!(
                        "a query over index `{}`'s copies reads them whole: read a projection \
                         with `T::<index>_partition(..)?.project::<P>()`, not `select`",
                        copies.index
                    ),
                )
            });
        }
        let kinds = match (self.kinds, P::KINDS) {
            (Some(mine), Some(theirs)) => {
                if let Some(stranger) = theirs.iter().find(|kind| !mine.contains(kind)) {
                    invalid.get_or_insert_with(|| {
                        (
                            ErrorKind::InvalidInput,
                            format!(
                                "the projection {} reads kind {stranger:?}, which a query for {} does not read ({mine:?}); \
                                 project into a type of the same kind",
                                std::any::type_name::<P>(),
                                std::any::type_name::<T>(),
                            ),
                        )
                    });
                }
                Some(theirs)
            }
            (mine, None) => mine,
            (None, theirs) => theirs,
        };
        let mut select: Vec<String> = Vec::new();
        let names = P::schemas().into_iter().flat_map(|schema| {
            let tag = schema.tag.properties().iter().copied();
            schema.property_names().chain(tag)
        });
        for name in names {
            if !select.iter().any(|known| known == name) {
                select.push(name.to_owned());
            }
        }
        let tags = match (self.tags, rows_filter::<P>()) {
            (Some(_), Some(theirs)) => Some(theirs),
            (mine, None) => mine,
            (None, theirs) => theirs,
        };
        // A type that keeps every other property reads them all.
        let select = if P::schemas().iter().any(|s| s.other_properties) {
            None
        } else {
            Some(select)
        };
        Query {
            service: self.service,
            table: self.table,
            kinds,
            tags,
            partition: self.partition,
            rows: self.rows,
            filter: self.filter,
            select,
            take: self.take,
            page_size: self.page_size,
            invalid,
            source: self.source,
            order: self.order,
            _rows: PhantomData,
        }
    }

    /// Says the caller does not need the results in key order. On Azure Storage
    /// (and every engine whose results are ordered) this changes nothing. On an
    /// engine whose results come in any order (Cosmos DB for Table), the query then
    /// runs as the engine answers: every matching row once, in no particular
    /// order, `take(n)` any `n` of them and `first` any one. Without it, the calls
    /// whose answer depends on the order are refused there (see
    /// [`Query::order_in_client`]).
    #[must_use]
    pub fn any_order(mut self) -> Self {
        self.order = Order::Any;
        self
    }

    /// Orders the results on the client, reading at most `max_rows` matching rows:
    /// on an engine whose results come in any order (Cosmos DB for Table), the
    /// query is read whole (every engine page), ordered by PartitionKey and RowKey,
    /// and then `take`, `first`, pages and streams answer as on Azure Storage. The
    /// cost is the whole query's rows read and held at once, however few are
    /// wanted; a query matching more than `max_rows` rows fails with
    /// [`ErrorKind::InvalidQuery`] rather than buffer without bound. A page token
    /// resumes exactly (each page reads the query again). On an engine whose
    /// results are ordered this changes nothing: the service orders them.
    ///
    /// ```
    /// use tables_client::mem::{MemEngine, MemOptions};
    /// use tables_client::{Entity, ErrorKind, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{account}", row_key = "{at:rticks}")]
    /// pub struct Event { pub account: String, pub at: tables_client::DateTime }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// // The Cosmos DB for Table profile: results in any order.
    /// let service = TableServiceClient::new(MemEngine::with_options(MemOptions::cosmos(1)));
    /// let events = service.table::<Event>("Events");
    /// events.create().await?;
    /// for day in 1..=9 {
    ///     let at = tables_client::DateTime::from_ymd_hms(2026, 11, day, 9, 0, 0).unwrap();
    ///     events.insert(&Event { account: "a-1".into(), at }).await?;
    /// }
    /// // "The three newest" depends on the order: refused unless the client orders it.
    /// let err = events.query().partition("a-1").take(3).collect().await.unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidQuery);
    /// let newest = events.query().partition("a-1").order_in_client(1_000).take(3).collect().await?;
    /// let day = |d| tables_client::DateTime::from_ymd_hms(2026, 11, d, 9, 0, 0).unwrap();
    /// assert_eq!(newest.iter().map(|e| e.at).collect::<Vec<_>>(), [day(9), day(8), day(7)]);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn order_in_client(mut self, max_rows: usize) -> Self {
        self.order = Order::InClient(max_rows);
        self
    }

    /// Checks each index copy the query reads against its entity, and returns the
    /// entities that still imply it, as stored, with their own ETags: what a reader
    /// of an eventually consistent index (another partition or table) needs when a
    /// stale or orphaned copy must not show. It costs one point read per row (the
    /// rows of a page concurrently), and rows it drops don't count towards `take`.
    /// Only for a query over an index ([`Table::query_index`]); elsewhere the query
    /// fails with [`ErrorKind::InvalidQuery`] when it runs.
    #[must_use]
    pub fn verified(mut self) -> Self {
        match &mut self.source {
            Source::Copies(copies) => copies.verified = true,
            Source::Primary => {
                self.invalid.get_or_insert_with(|| {
                    (
                        ErrorKind::InvalidQuery,
                        "`verified` checks the copies of an index query (`Table::query_index`); \
                         a query of primary rows reads the entities themselves"
                            .to_owned(),
                    )
                });
            }
        }
        self
    }

    /// At most `n` items in all, across pages (each request asks for no more than
    /// are still wanted). A smaller earlier `take` stays.
    #[must_use]
    pub fn take(mut self, n: usize) -> Self {
        self.take = Some(self.take.map_or(n, |earlier| earlier.min(n)));
        self
    }

    /// Items per request (`$top`), 1 to 1,000; by default the client's
    /// [`ClientOptions::page_size`](crate::ClientOptions::page_size), else 1,000. A
    /// size outside the range fails with [`ErrorKind::InvalidQuery`] when the query
    /// runs.
    #[must_use]
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = Some(n);
        self
    }

    /// How the service will run the query: a point read, a RowKey range, a
    /// partition scan or a table scan (the cost ladder of the table design guide, <https://learn.microsoft.com/azure/storage/tables/table-storage-design-guide>).
    pub fn plan(&self) -> QueryPlan {
        QueryPlan::of(self.full_filter().as_ref())
    }

    /// The query's results as a stream of values, in key order. It follows
    /// continuation tokens and fetches the next page while the caller consumes the
    /// current one, holding at most two pages (see [`Query::stream_versioned`]).
    /// On an engine whose results come in any order (Cosmos DB for Table) the
    /// stream's only item is a refusal unless the query says
    /// [`Query::order_in_client`] or [`Query::any_order`].
    ///
    /// A row that fails to decode is an `Err` item in its place and the stream goes
    /// on; an engine error (or a query refused before anything is sent) is the last
    /// item.
    pub fn stream(self) -> impl Stream<Item = Result<T>> + Send + 'static {
        stream::values(self.page_stream("stream"))
    }

    /// As [`Query::stream`], with each value's ETag and timestamp.
    ///
    /// The stream prefetches explicitly, spawning nothing: as it hands out the
    /// items of one page, it drives the request for the next on every poll, and
    /// holds that page until the current one runs out. The page being consumed and
    /// the next are all it holds, whatever the size of the result; it runs on any
    /// executor, and dropping it drops the request in flight.
    pub fn stream_versioned(self) -> impl Stream<Item = Result<Versioned<T>>> + Send + 'static {
        self.page_stream("stream_versioned")
    }

    /// Every item of the query, in key order. On an engine whose results come in
    /// any order (Cosmos DB for Table) the rows are ordered on the client (they are
    /// all held anyway); with `take(n)` that needs [`Query::order_in_client`] or
    /// [`Query::any_order`].
    ///
    /// # Errors
    ///
    /// As [`Query::page`]; the first item that fails to decode.
    pub async fn collect(self) -> Result<Vec<T>> {
        self.collect_as("collect").await
    }

    async fn collect_as(self, call: &'static str) -> Result<Vec<T>> {
        let prepared = self.prepare()?;
        let sort = self.client_order(call, &prepared)?;
        let mut fetcher = self.fetcher(&prepared, prepared.take, None, sort);
        let mut values = Vec::new();
        while let Some(items) = fetcher.next_batch().await {
            for item in items {
                values.push(item?.value);
            }
        }
        Ok(values)
    }

    /// The first item of the query, if any.
    ///
    /// # Errors
    ///
    /// As [`Query::collect`].
    pub async fn first(self) -> Result<Option<T>> {
        Ok(self.take(1).collect_as("first").await?.into_iter().next())
    }

    /// One page: the first (`token` `None`) or the one `token` starts, with the token
    /// of the next. The page is filled to the page size (several requests if the
    /// service returns short pages) unless the query ends first. The last page's
    /// token is an end token: passed back, it gives an empty last page again.
    ///
    /// ```
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{list}", row_key = "{item}")]
    /// pub struct Todo { pub list: String, pub item: String }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// let todos = service.table::<Todo>("Todos");
    /// todos.create().await?;
    /// for item in ["a", "b", "c"] {
    ///     todos.insert(&Todo { list: "home".into(), item: item.into() }).await?;
    /// }
    /// let query = todos.query().partition("home").page_size(2);
    /// let mut token = None;
    /// let mut seen = 0;
    /// loop {
    ///     let page = query.clone().page(token.as_ref()).await?;
    ///     seen += page.items.len();
    ///     if page.is_last() {
    ///         // Resuming from the end token gives nothing more, never page one again.
    ///         assert!(query.clone().page(Some(&page.next)).await?.items.is_empty());
    ///         break;
    ///     }
    ///     token = Some(page.next);
    /// }
    /// assert_eq!(seen, 3);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// Before anything is sent: [`ErrorKind::InvalidContinuationToken`] for a token
    /// of another query (another table, filter, projection, page size or take);
    /// [`ErrorKind::InvalidInput`] for a projection of another kind;
    /// [`ErrorKind::InvalidQuery`] for a
    /// page size outside 1 to 1,000 or a table scan when the client forbids them
    /// ([`ClientOptions::allow_table_scans`](crate::ClientOptions::allow_table_scans));
    /// [`ErrorKind::InvalidFilter`] for a filter the service would refuse. Then the
    /// engine's errors, and [`ErrorKind::Decode`] for a row that doesn't decode.
    pub async fn page(self, token: Option<&PageToken>) -> Result<TypedPage<T>> {
        let prepared = self.prepare()?;
        let sort = self.client_order("page", &prepared)?;
        let (taken, continuation) = match token {
            Some(token) => {
                token.check(prepared.fingerprint)?;
                let Some(continuation) = token.continuation() else {
                    // The query ended: nothing more, not the first page again.
                    return Ok(TypedPage {
                        items: Vec::new(),
                        next: token.clone(),
                    });
                };
                (token.items_before(), Some(continuation.clone()))
            }
            None => (0, None),
        };
        let remaining = prepared
            .take
            .map(|take| usize::try_from(taken).map_or(0, |taken| take.saturating_sub(taken)));
        let mut fetcher = self.fetcher(&prepared, remaining, continuation, sort);
        let size = prepared.page_size as usize;
        let mut items = Vec::new();
        while !fetcher.is_done() && items.len() < size {
            for item in fetcher.fetch_once(size - items.len()).await? {
                items.push(item?);
            }
        }
        let taken = taken.saturating_add(items.len() as u64);
        let next = match fetcher.continuation() {
            Some(next) if !fetcher.is_done() => {
                PageToken::new(prepared.fingerprint, taken, next.clone())
            }
            _ => PageToken::end(prepared.fingerprint, taken),
        };
        Ok(TypedPage { items, next })
    }

    fn page_stream(self, call: &'static str) -> PageStream<T> {
        let ready = self.prepare().and_then(|prepared| {
            let sort = self.client_order(call, &prepared)?;
            Ok((prepared, sort))
        });
        match ready {
            Ok((prepared, sort)) => {
                PageStream::new(self.fetcher(&prepared, prepared.take, None, sort))
            }
            Err(err) => PageStream::failed(err),
        }
    }

    /// Whether `call` orders the results on the client: `None` when the engine's
    /// order is the answer (an engine with ordered results, or a caller who said
    /// any order will do); `Some(bound)` to read at most `bound` rows (`None`: no
    /// bound) and order them.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidQuery`], before anything is sent, for a call whose answer
    /// depends on key order on an engine whose results come in any order, unless it
    /// can be right without an unbounded buffer (`collect` without `take`).
    fn client_order(
        &self,
        call: &'static str,
        prepared: &Prepared,
    ) -> Result<Option<Option<usize>>> {
        if self.service.engine().capabilities().ordered_results {
            return Ok(None);
        }
        // One key: at most one row, whatever the order.
        if matches!(
            QueryPlan::of(prepared.spec.filter.as_ref()),
            QueryPlan::Point { .. }
        ) {
            return Ok(None);
        }
        match self.order {
            Order::Any => Ok(None),
            Order::InClient(max) => Ok(Some(Some(max))),
            // collect holds every row anyway: ordering them costs nothing more.
            Order::Key if call == "collect" && prepared.take.is_none() => Ok(Some(None)),
            Order::Key => Err(Error::new(
                ErrorKind::InvalidQuery,
                format!(
                    "`{call}` on table {:?} answers in key order, and {} returns query results \
                     in any order, so {}; call .order_in_client(max_rows) to read the query \
                     whole and order it on the client (at most max_rows rows), .any_order() if \
                     any rows will do, or collect() without take to read every row in order. \
                     Nothing was sent",
                    self.table,
                    self.service.engine().capabilities().service,
                    match (call, prepared.take) {
                        ("first", _) => "the first row it sent would be any row".to_owned(),
                        (_, Some(n)) => format!("take({n}) would keep any {n} rows"),
                        _ => "its pages would not follow one another in key order".to_owned(),
                    }
                ),
            )),
        }
    }

    fn fetcher(
        &self,
        prepared: &Prepared,
        remaining: Option<usize>,
        next: Option<tables_core::ContinuationToken>,
        sort: Option<Option<usize>>,
    ) -> Fetcher<T> {
        let fetcher = Fetcher::new(
            Arc::clone(self.service.engine()),
            Arc::clone(&self.table),
            prepared.spec.clone(),
            prepared.page_size,
            remaining,
            next,
        )
        .reading(self.source.clone());
        match sort {
            Some(max_rows) => fetcher.sorted_in_client(max_rows, "the query"),
            None => fetcher,
        }
    }
}

impl<T> Query<T> {
    /// A query of `table`'s rows of `kinds` that `tags` selects, read from `source`
    /// (for an index's copies, `tags` selects them and `table` is the index's).
    fn over(
        service: TableServiceClient,
        table: &str,
        kinds: Option<&'static [&'static str]>,
        tags: Option<Filter>,
        source: Source,
    ) -> Query<T> {
        Query {
            service,
            table: Arc::from(table),
            kinds,
            tags,
            partition: None,
            rows: None,
            filter: None,
            select: None,
            take: None,
            page_size: None,
            invalid: None,
            source,
            order: Order::Key,
            _rows: PhantomData,
        }
    }

    /// The whole filter: partition, RowKey range, filters, kinds.
    fn full_filter(&self) -> Option<Filter> {
        let kinds = self.tags.clone();
        [
            self.partition.clone().map(Filter::partition_key),
            self.rows.as_ref().map(KeyRange::row_key_filter),
            self.filter.clone(),
            kinds,
        ]
        .into_iter()
        .flatten()
        .reduce(Filter::and)
    }

    /// Checks the query and builds what is sent, before anything is sent.
    fn prepare(&self) -> Result<Prepared> {
        if let Some((kind, message)) = &self.invalid {
            return Err(Error::new(*kind, message.clone()));
        }
        let page_size = self
            .page_size
            .or(self.service.options().page_size)
            .unwrap_or(MAX_PAGE_SIZE);
        let filter = self.full_filter();
        if !self.service.options().allow_table_scans
            && QueryPlan::of(filter.as_ref()) == QueryPlan::TableScan
        {
            return Err(Error::new(
                ErrorKind::InvalidQuery,
                format!(
                    "the query on table {:?} is a table scan (it fixes no PartitionKey) and this client forbids \
                     table scans (ClientOptions::allow_table_scans); add .partition(..)",
                    self.table
                ),
            ));
        }
        let spec = QuerySpec {
            filter,
            select: self.select.clone(),
            top: Some(page_size),
        };
        spec.validate()?;
        let fingerprint = Fingerprint::new()
            .part(&self.table.to_lowercase())
            .part(
                &spec
                    .filter
                    .as_ref()
                    .map(Filter::to_odata)
                    .unwrap_or_default(),
            )
            .part(
                &spec
                    .select
                    .as_ref()
                    .map(|s| s.join(","))
                    .unwrap_or_default(),
            )
            .part(&page_size.to_string())
            .part(&self.take.map(|n| n.to_string()).unwrap_or_default())
            .part(match &self.source {
                Source::Primary => "",
                Source::Copies(copies) if copies.verified => "verified",
                Source::Copies(_) => "copies",
            })
            .part(&match self.order {
                Order::Key => String::new(),
                Order::Any => "any".to_owned(),
                Order::InClient(max) => format!("client:{max}"),
            })
            .finish();
        Ok(Prepared {
            spec,
            page_size,
            take: self.take,
            fingerprint,
        })
    }
}
