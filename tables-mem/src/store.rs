//! The engine's state: the table catalog, the clock and the fault controls, and the
//! synchronous body of every engine call.
//!
//! Locking: the catalog is an `RwLock` over the tables, each table an `RwLock` over
//! its rows. A call takes the catalog's read lock, then its table's lock, does its
//! work and releases both before returning; nothing is held across an `.await`.
//! Readers of a table run in parallel; writers of different tables too.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::Instant;

use tables_core::filter::UncheckedFilter;
use tables_core::key::{
    cmp_ordinal, validate_entity_key, validate_partition_key, validate_row_key, validate_table_name,
};
use tables_core::{
    validate_batch, validate_select, ContinuationToken, DynamicEntity, EngineCapabilities,
    EntityKey, Error, ErrorKind, Filter, ListTablesOptions, Origin, Page, QueryPlan, QuerySpec,
    Result, TablePage, WriteOp, WriteOutcome, MAX_PAGE_SIZE,
};

use crate::changes::{Change, ChangeSink, RowChange};
use crate::clock::Clock;
use crate::faults::Faults;
use crate::page::{query_page, query_page_unordered, PageRules};
use crate::table::{self, lookup, project, Journal, Table};
use crate::MemOptions;

/// Longest name a table can have (the service allows 63 characters).
const MAX_TABLE_NAME: usize = 63;

#[derive(Debug, Default)]
pub(crate) struct Store {
    /// Tables by lower-cased name (names compare case-insensitively). Ordered, not
    /// hashed: finding a name among a table catalog compares a few short names,
    /// which costs less than hashing it.
    tables: RwLock<BTreeMap<String, Table>>,
    clock: Clock,
    /// Hears every change, once set ([`crate::MemEngine::record_changes`]).
    sink: OnceLock<Arc<dyn ChangeSink>>,
    pub(crate) faults: Faults,
    pub(crate) options: MemOptions,
    /// What the options make the engine guarantee.
    pub(crate) capabilities: EngineCapabilities,
    /// The request-rate budget, when the options set one: the tokens left and when
    /// they were counted.
    budget: Mutex<Option<(f64, Instant)>>,
}

/// The engine's answer for a table it does not have: the service's `404
/// TableNotFound`, naming the table (the service's own message does not).
fn table_not_found(name: &str) -> Error {
    Error::new(
        ErrorKind::TableNotFound,
        format!("no table named {name:?}; create it first with create_table"),
    )
    .with_table(name)
    .with_origin(Origin::Service)
}

/// The catalog key of a table name, folded on the stack (no allocation). `None` for
/// a name that no table can have.
fn fold<'b>(name: &str, buf: &'b mut [u8; MAX_TABLE_NAME]) -> Option<&'b str> {
    let bytes = name.as_bytes();
    if bytes.len() > buf.len() || !name.is_ascii() {
        return None;
    }
    let folded = &mut buf[..bytes.len()];
    folded.copy_from_slice(bytes);
    folded.make_ascii_lowercase();
    std::str::from_utf8(folded).ok()
}

impl Store {
    pub(crate) fn new(options: MemOptions) -> Store {
        Store {
            capabilities: options.capabilities(),
            options,
            ..Store::default()
        }
    }

    /// Spends one request of the request-rate budget, if there is one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Throttled`] (`429 TooManyRequests`) when the budget is spent,
    /// saying when the next request fits.
    pub(crate) fn admit(&self) -> Result<()> {
        let Some(rate) = self.options.requests_per_second else {
            return Ok(());
        };
        let rate = f64::from(rate.max(1));
        let mut budget = self.budget.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let (tokens, since) = budget.get_or_insert((rate, now));
        *tokens = (*tokens + now.duration_since(*since).as_secs_f64() * rate).min(rate);
        *since = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            return Ok(());
        }
        let wait_ms = ((1.0 - *tokens) / rate * 1000.0).ceil().max(1.0);
        Err(Error::new(
            ErrorKind::Throttled,
            format!(
                "the request rate is above the budget of {rate} requests per second; retry after \
                 {wait_ms} ms"
            ),
        )
        .with_status(429)
        .with_service_code(tables_core::error_code::TOO_MANY_REQUESTS)
        .with_retry_after(std::time::Duration::from_secs_f64(wait_ms / 1000.0))
        .with_origin(Origin::Service))
    }

    /// The catalog key of a table name: the name itself where names are
    /// case-sensitive (Cosmos DB for Table), else its lower case; `None` for a name
    /// no table can have.
    fn catalog_key<'b>(&self, name: &'b str, buf: &'b mut [u8; MAX_TABLE_NAME]) -> Option<&'b str> {
        if self.capabilities.case_sensitive_table_names {
            Some(name)
        } else {
            fold(name, buf)
        }
    }

    /// Runs `f` on the table called `name` (any case, unless names are
    /// case-sensitive), holding the catalog's read lock.
    fn with_table<R>(&self, name: &str, f: impl FnOnce(&Table) -> Result<R>) -> Result<R> {
        let tables = self.tables.read().unwrap_or_else(PoisonError::into_inner);
        let mut buf = [0; MAX_TABLE_NAME];
        let table = self
            .catalog_key(name, &mut buf)
            .and_then(|key| tables.get(key))
            .ok_or_else(|| table_not_found(name))?;
        f(table)
    }

    pub(crate) fn create_table(&self, name: &str) -> Result<()> {
        validate_table_name(name)?;
        let mut tables = self.tables.write().unwrap_or_else(PoisonError::into_inner);
        let key = if self.capabilities.case_sensitive_table_names {
            name.to_owned()
        } else {
            name.to_ascii_lowercase()
        };
        if let Some(existing) = tables.get(&key) {
            return Err(Error::new(
                ErrorKind::TableAlreadyExists,
                format!(
                    "table {name:?} already exists (as {:?}; table names compare {})",
                    existing.name,
                    if self.capabilities.case_sensitive_table_names {
                        "case-sensitively"
                    } else {
                        "case-insensitively"
                    }
                ),
            )
            .with_table(name)
            .with_origin(Origin::Service));
        }
        tables.insert(key, Table::new(name));
        if let Some(sink) = self.sink.get() {
            sink.record(Change::TableCreated(name));
        }
        Ok(())
    }

    pub(crate) fn delete_table(&self, name: &str) -> Result<()> {
        let mut tables = self.tables.write().unwrap_or_else(PoisonError::into_inner);
        let mut buf = [0; MAX_TABLE_NAME];
        let key = self.catalog_key(name, &mut buf).map(str::to_owned);
        match key.and_then(|key| tables.remove(&key)) {
            Some(removed) => {
                if let Some(sink) = self.sink.get() {
                    sink.record(Change::TableDeleted(&removed.name));
                }
                Ok(())
            }
            // The service answers a delete of a missing table with ResourceNotFound.
            None => Err(table_not_found(name)
                .with_service_code(tables_core::error_code::RESOURCE_NOT_FOUND)),
        }
    }

    pub(crate) fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        options.validate()?;
        let requested = options.page_size.unwrap_or(MAX_PAGE_SIZE);
        let limit = requested.min(self.options.page_size) as usize;
        let tables = self.tables.read().unwrap_or_else(PoisonError::into_inner);
        let mut names: Vec<&str> = tables
            .values()
            .map(|t| t.name.as_str())
            .filter(|name| {
                options
                    .prefix
                    .as_deref()
                    .is_none_or(|prefix| name.starts_with(prefix))
            })
            .filter(|name| {
                options
                    .continuation
                    .as_deref()
                    .is_none_or(|next| cmp_ordinal(name, next).is_ge())
            })
            .collect();
        names.sort_unstable_by(|a, b| cmp_ordinal(a, b));
        let continuation = names.get(limit).map(|name| (*name).to_owned());
        names.truncate(limit);
        Ok(TablePage {
            names: names.into_iter().map(str::to_owned).collect(),
            continuation,
        })
    }

    pub(crate) fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        validate_entity_key(key)?;
        if let Some(select) = select {
            validate_select(select)?;
        }
        self.with_table(table, |table| {
            let rows = table.read();
            let found = lookup(&rows, (&key.partition_key, &key.row_key));
            Ok(found.map(|entity| match select {
                None => entity.clone_with_key(key),
                Some(_) => project(entity, select),
            }))
        })
    }

    pub(crate) fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        spec.validate()?;
        if let Some(raw) = spec.filter.as_ref().and_then(Filter::unparsed_part) {
            return Err(unevaluable(raw));
        }
        let resume = match continuation {
            Some(token) if self.capabilities.ordered_results => Some(resume_key(token)?),
            _ => None,
        };
        let plan = QueryPlan::of(spec.filter.as_ref());
        if !self.capabilities.timestamp_filters
            && spec
                .filter
                .as_ref()
                .is_some_and(|f| f.mentions("Timestamp"))
        {
            // Cosmos DB for Table: a filter on Timestamp matches nothing (the query
            // guide: such queries "don't return any data").
            return self.with_table(table, |_| {
                Ok(Page {
                    items: Vec::new(),
                    continuation: None,
                })
            });
        }
        let rules = PageRules {
            limit: spec
                .top
                .unwrap_or(MAX_PAGE_SIZE)
                .min(self.options.page_size)
                .max(1) as usize,
            break_at_partitions: self.options.break_at_partition_boundaries,
        };
        if !self.capabilities.ordered_results {
            let seed = self.options.order_seed;
            return self.with_table(table, |table| {
                query_page_unordered(&table.read(), spec, &plan, continuation, rules, seed)
            });
        }
        self.with_table(table, |table| {
            Ok(query_page(&table.read(), spec, &plan, resume, rules))
        })
    }

    pub(crate) fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        tables_core::sealed::refuse_sealed(op.entity())?;
        op.validate()?;
        self.check_service_limits(std::slice::from_ref(op))?;
        self.with_table(table, |table| {
            table::write(
                &mut table.write(),
                op,
                || self.clock.next(),
                self.journal(table),
            )
        })
    }

    pub(crate) fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        tables_core::sealed::refuse_sealed(ops.iter().filter_map(WriteOp::entity))?;
        validate_batch(ops)?;
        self.check_service_limits(ops)?;
        if self.capabilities.max_batch_bytes < tables_core::MAX_BATCH_BYTES {
            let encoded = tables_core::odata::batch::encode_batch(
                "http://127.0.0.1/account",
                table,
                ops,
                "batch",
                "changeset",
            );
            self.capabilities
                .check_batch_bytes(encoded.body.len())
                .map_err(|e| e.with_origin(Origin::Service).with_status(413))?;
        }
        self.with_table(table, |table| {
            table::batch(
                &mut table.write(),
                ops,
                || self.clock.next(),
                self.journal(table),
            )
        })
    }

    /// The service's own key limits, beyond every engine's (a RowKey of at most 255
    /// bytes on Cosmos DB for Table), as its answer.
    fn check_service_limits(&self, ops: &[WriteOp]) -> Result<()> {
        if self.capabilities.max_row_key_bytes >= tables_core::key::MAX_KEY_BYTES {
            return Ok(());
        }
        for (index, op) in ops.iter().enumerate() {
            if let Err(err) = self.capabilities.check_key(&op.key()) {
                let err = err
                    .with_origin(Origin::Service)
                    .with_status(400)
                    .with_service_code(tables_core::error_code::INVALID_INPUT);
                return Err(if ops.len() > 1 {
                    err.with_batch_index(index)
                } else {
                    err
                });
            }
        }
        Ok(())
    }

    /// Where `table`'s changes go, if anywhere.
    fn journal<'a>(&'a self, table: &'a Table) -> Option<Journal<'a>> {
        self.sink.get().map(|sink| Journal {
            sink: &**sink,
            table: &table.name,
        })
    }

    /// Sets the sink that hears every change from now on; `false` if one was set.
    pub(crate) fn record_changes(&self, sink: Arc<dyn ChangeSink>) -> bool {
        self.sink.set(sink).is_ok()
    }

    /// Makes a recorded change again, as it was: rows keep their Timestamp and ETag,
    /// and the clock moves past every restored Timestamp. Creating a table that
    /// exists, or deleting or removing what is absent, changes nothing.
    pub(crate) fn restore(&self, change: &Change<'_>) -> Result<()> {
        match *change {
            Change::TableCreated(name) => {
                validate_table_name(name)?;
                let mut tables = self.tables.write().unwrap_or_else(PoisonError::into_inner);
                tables
                    .entry(name.to_ascii_lowercase())
                    .or_insert_with(|| Table::new(name));
            }
            Change::TableDeleted(name) => {
                let mut tables = self.tables.write().unwrap_or_else(PoisonError::into_inner);
                tables.remove(&name.to_ascii_lowercase());
            }
            Change::Rows { table, rows } => {
                for row in rows {
                    validate_partition_key(row.partition_key())
                        .and_then(|()| validate_row_key(row.row_key()))?;
                    if let RowChange::Stored(entity) = row {
                        if let Some(timestamp) = entity.timestamp {
                            self.clock.advance_past(timestamp);
                        }
                    }
                }
                self.with_table(table, |t| {
                    let mut stored = t.write();
                    for row in rows {
                        table::restore(&mut stored, row);
                    }
                    Ok(())
                })?;
            }
        }
        Ok(())
    }

    /// Describes every table and row as changes: each table's [`Change::TableCreated`]
    /// then its rows, `chunk` at a time. A table's rows are copied (cheaply: rows
    /// share their properties) under its read lock and reported after it is
    /// released, so writers wait only for the copy.
    pub(crate) fn export(&self, chunk: usize, visit: &mut dyn FnMut(Change<'_>)) {
        let names: Vec<String> = self
            .tables
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect();
        for key in names {
            let copied = {
                let tables = self.tables.read().unwrap_or_else(PoisonError::into_inner);
                tables.get(&key).map(|table| {
                    let rows: Vec<DynamicEntity> = table.read().values().cloned().collect();
                    (table.name.clone(), rows)
                })
            };
            let Some((name, rows)) = copied else {
                continue; // deleted since the names were read
            };
            visit(Change::TableCreated(&name));
            for part in rows.chunks(chunk.max(1)) {
                let part: Vec<RowChange<'_>> = part.iter().map(RowChange::Stored).collect();
                visit(Change::Rows {
                    table: &name,
                    rows: &part,
                });
            }
        }
    }
}

/// The engine's answer to a query with unchecked filter text its parser does not
/// read: it can't evaluate it (the service might).
fn unevaluable(raw: &UncheckedFilter) -> Error {
    let why = raw
        .parse_error()
        .map(|e| format!(" ({})", e.message()))
        .unwrap_or_default();
    Error::new(
        ErrorKind::Unsupported,
        format!(
            "the in-memory engine can't evaluate the unchecked filter {:?}: it evaluates only \
             filters its parser reads, and the parser does not read this one{why}. The text is \
             sent as written to a remote service, which may accept it; on this engine, write \
             the filter with typed columns (col(..)) or text Filter::parse reads",
            raw.text()
        ),
    )
    .with_origin(Origin::Service)
}

/// The key a continuation token of this engine resumes at.
///
/// A token this engine did not make is the engine's answer (it plays the service),
/// with the kind every malformed token gets.
fn resume_key(token: &ContinuationToken) -> Result<(&str, &str)> {
    let malformed = |why: &str| {
        Error::new(
            ErrorKind::InvalidContinuationToken,
            format!("continuation token {token} was not made by this engine ({why}); pass the token of a previous page of the same query, or start again from the first page"),
        )
        .with_origin(Origin::Service)
    };
    let row_key = token
        .next_row_key()
        .ok_or_else(|| malformed("it has no RowKey"))?;
    validate_partition_key(token.next_partition_key())
        .and_then(|()| validate_row_key(row_key))
        .map_err(|_| malformed("its key is not a valid entity key"))?;
    Ok((token.next_partition_key(), row_key))
}
