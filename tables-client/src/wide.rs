//! Wide entities: a type marked `#[entity(wide)]` (or with a series too long for one
//! row) may exceed 252 properties or 1 MiB. The [`WideEngine`] layer stores each
//! entity as a base row and up to 99 part rows of the same partition (the layout of
//! [`tables_core::wide`]) and makes them one entity again on the way up.
//!
//! - **Writes** (of every row of the table: entities, index copies, index entities)
//!   lay the entity out again and write every row in one entity group
//!   transaction: the base row under the entity's condition (its ETag, or the version
//!   just read for an unconditional write), the existing parts under the versions
//!   read with it, new parts as inserts and the parts no longer needed as deletes.
//!   Nothing else writes a part without its base row, so the base row's ETag governs
//!   the whole entity: it is the ETag a read returns, and a write under a stale one
//!   fails whole. An unconditional write that loses a race to a concurrent writer is
//!   planned again (up to [`ClientOptions::max_conflict_retries`] times).
//! - A **merge** (a patch, `set_point`) reads the entity first. While the result fits
//!   one row, it is sent as asked, under the version read; otherwise the change is
//!   applied to the whole entity and every row is written back as above.
//! - A **delete** removes the base row and every part in one transaction, under the
//!   version read.
//! - An entity that fits one row is one plain row (no layout property).
//! - **Reads** fetch the base row and its parts with one range query; rows of two
//!   versions (the entity changed while a query's pages were read) are read again.
//! - **Queries** return whole entities, never parts. A filter over a property stored
//!   on a part row can't be judged by the service, so the query also asks for every
//!   multi-row entity in the key region the filter names, and the layer judges the
//!   filter on the whole entity ([`tables_core::wide::widen`]).
//!
//! The layer sits directly on the storage engine, under the encryption and blob
//! layers, so it lays out rows in their stored form (ciphertext, blob references)
//! and never sees a plaintext encrypted field. [`TableServiceClient`] builds that
//! stack for the tables of wide types.
//!
//! [`ClientOptions::max_conflict_retries`]: crate::ClientOptions::max_conflict_retries
//! [`TableServiceClient`]: crate::TableServiceClient

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use tables_core::wide::{
    assemble, filter_properties, fits_one_row, is_wide, part_count, part_number, rows_filter,
    split, strip_layout, widen, Assembled, LAYOUT_PROPERTIES,
};
use tables_core::{
    validate_batch, ContinuationToken, DynamicEntity, Engine, EntityKey, Error, ErrorKind, Filter,
    IfMatch, ListTablesOptions, Page, QuerySpec, Result, TablePage, WriteOp, WriteOutcome,
};

use crate::upkeep::conflict::lost_race;

/// How many times a read that met rows of two versions reads the entity again.
const TORN_READ_RETRIES: usize = 8;

/// The wide layer over a storage engine (see the module docs).
pub struct WideEngine {
    inner: Arc<dyn Engine>,
    conflict_retries: u32,
}

impl fmt::Debug for WideEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WideEngine")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

/// The rows stored for one entity: its base row and the part rows found in its
/// range (in key order).
struct Stored {
    base: DynamicEntity,
    parts: Vec<DynamicEntity>,
}

impl Stored {
    /// The stored part rows of the base row, by number.
    fn part(&self, number: usize) -> Option<&DynamicEntity> {
        self.parts
            .iter()
            .find(|row| part_number(row) == Some(number))
    }
}

/// One write laid out: the rows' operations (the base row's first) and whether a
/// lost race may be planned again (the caller asked for no condition).
struct Laid {
    ops: Vec<WriteOp>,
    retry: bool,
}

impl Laid {
    fn through(op: &WriteOp) -> Laid {
        Laid {
            ops: vec![op.clone()],
            retry: false,
        }
    }
}

fn names_with_layout(select: Option<&[String]>, extra: &[String]) -> Option<Vec<String>> {
    select.map(|names| {
        let mut all: Vec<String> = names.to_vec();
        for name in LAYOUT_PROPERTIES
            .iter()
            .map(|n| (*n).to_owned())
            .chain(extra.iter().cloned())
        {
            if !all.contains(&name) {
                all.push(name);
            }
        }
        all
    })
}

/// Keeps only `select`'s properties (and the keys) of `entity`.
fn project(entity: &mut DynamicEntity, select: Option<&[String]>) {
    if let Some(select) = select {
        let keep: HashSet<&str> = select.iter().map(String::as_str).collect();
        entity.retain(|name, _| keep.contains(name));
    }
}

impl WideEngine {
    /// The wide layer over `inner`, which must be the storage engine itself (not an
    /// encryption or blob layer: those go above this one). An unconditional write
    /// that loses a race is planned again up to `conflict_retries` times.
    pub fn new(inner: Arc<dyn Engine>, conflict_retries: u32) -> WideEngine {
        WideEngine {
            inner,
            conflict_retries,
        }
    }

    /// The engine below.
    pub fn inner(&self) -> &Arc<dyn Engine> {
        &self.inner
    }

    /// The rows stored for `key` (only the layout properties and `select`'s when
    /// `select` is given); `None` when there is no base row.
    async fn read_rows(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<Vec<String>>,
    ) -> Result<Option<Stored>> {
        let spec = QuerySpec {
            filter: Some(rows_filter(&key.partition_key, &key.row_key)),
            select,
            top: None,
        };
        let mut base = None;
        let mut parts = Vec::new();
        let mut continuation: Option<ContinuationToken> = None;
        loop {
            let page = self
                .inner
                .query(table, &spec, continuation.as_ref())
                .await?;
            for row in page.items {
                if row.row_key == key.row_key {
                    base = Some(row);
                } else if part_number(&row).is_some() {
                    parts.push(row);
                }
            }
            match page.continuation {
                Some(next) => continuation = Some(next),
                None => break,
            }
        }
        Ok(base.map(|base| Stored { base, parts }))
    }

    /// The whole entity `key` (with `select`'s properties when given), read again
    /// while its rows are of two versions.
    async fn read_whole(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        for _ in 0..TORN_READ_RETRIES {
            let Some(stored) = self
                .read_rows(table, key, names_with_layout(select, &[]))
                .await?
            else {
                return Ok(None);
            };
            if let Assembled::Whole(entity) = assemble(stored.base, &stored.parts) {
                return Ok(Some(entity));
            }
        }
        Err(Error::local(
            ErrorKind::PreconditionFailed,
            format!(
                "the wide entity ({}, {}) changed during each of {TORN_READ_RETRIES} reads; \
                 read it again",
                key.partition_key, key.row_key
            ),
        )
        .with_table(table)
        .with_entity_key(key.clone()))
    }

    /// The operations that write `entity` (marked wide) over `stored`, the base row
    /// under `condition` (`None`: it must not exist).
    fn lay_out(
        entity: &DynamicEntity,
        condition: Option<IfMatch>,
        stored: Option<&Stored>,
    ) -> Result<Vec<WriteOp>> {
        let tag = uuid::Uuid::new_v4().simple().to_string();
        let mut rows = split(entity, &tag)?.into_iter();
        let Some(base) = rows.next() else {
            return Err(Error::local(
                ErrorKind::InvalidValue,
                "a wide entity laid out to no rows",
            ));
        };
        let mut ops = Vec::with_capacity(rows.len() + 1);
        ops.push(match condition {
            None => WriteOp::Insert(base),
            Some(if_match) => WriteOp::Replace {
                entity: base,
                if_match,
            },
        });
        let mut written = 0;
        for row in rows {
            written += 1;
            let existing = stored
                .and_then(|s| s.part(written))
                .and_then(|row| row.etag.clone());
            ops.push(match existing {
                Some(etag) => WriteOp::Replace {
                    entity: row,
                    if_match: IfMatch::Etag(etag),
                },
                None => WriteOp::Insert(row),
            });
        }
        if let Some(stored) = stored {
            for row in &stored.parts {
                if part_number(row).is_some_and(|n| n > written) {
                    ops.push(WriteOp::Delete {
                        key: row.key(),
                        if_match: row.etag.clone().map_or(IfMatch::Any, IfMatch::Etag),
                    });
                }
            }
        }
        Ok(ops)
    }

    /// The condition for the base row: the caller's ETag, or the version read (and
    /// then a lost race may be retried).
    fn condition(asked: Option<&IfMatch>, stored: Option<&Stored>) -> (Option<IfMatch>, bool) {
        match asked {
            Some(IfMatch::Etag(etag)) => (Some(IfMatch::Etag(etag.clone())), false),
            Some(IfMatch::Any) => match stored.and_then(|s| s.base.etag.clone()) {
                Some(etag) => (Some(IfMatch::Etag(etag)), true),
                // Nothing stored: the replace fails as the service says.
                None => (Some(IfMatch::Any), false),
            },
            // An upsert.
            None => match stored.and_then(|s| s.base.etag.clone()) {
                Some(etag) => (Some(IfMatch::Etag(etag)), true),
                None => (None, true),
            },
        }
    }

    /// `op` as the operations on the rows of its entity.
    async fn lay_out_op(&self, table: &str, op: &WriteOp) -> Result<Laid> {
        let layout_only = || Some(LAYOUT_PROPERTIES.iter().map(|n| (*n).to_owned()).collect());
        match op {
            // Every row of the table goes through here, not only the ones the codec
            // marked: an index copy rebuilt from a read (which drops the marks), or a
            // settled intent's copy, is laid out alike.
            WriteOp::Insert(entity) if is_wide(entity) || !fits_one_row(entity) => Ok(Laid {
                ops: WideEngine::lay_out(entity, None, None)?,
                retry: false,
            }),
            WriteOp::Replace { entity, if_match } => {
                let stored = self.read_rows(table, &entity.key(), layout_only()).await?;
                let (condition, retry) = WideEngine::condition(Some(if_match), stored.as_ref());
                Ok(Laid {
                    ops: WideEngine::lay_out(entity, condition, stored.as_ref())?,
                    retry,
                })
            }
            WriteOp::UpsertReplace(entity) => {
                let stored = self.read_rows(table, &entity.key(), layout_only()).await?;
                let (condition, retry) = WideEngine::condition(None, stored.as_ref());
                Ok(Laid {
                    ops: WideEngine::lay_out(entity, condition, stored.as_ref())?,
                    retry,
                })
            }
            WriteOp::Merge { entity, .. } | WriteOp::UpsertMerge(entity) => {
                let asked = match op {
                    WriteOp::Merge { if_match, .. } => Some(if_match),
                    _ => None,
                };
                let key = entity.key();
                let Some(stored) = self.read_rows(table, &key, None).await? else {
                    return Ok(match asked {
                        // Nothing to merge into: an upsert inserts, laid out if it
                        // needs several rows; a lost race to an insert is planned
                        // again.
                        None => Laid {
                            ops: WideEngine::lay_out(entity, None, None)?,
                            retry: true,
                        },
                        // A merge fails as the service says.
                        Some(_) => Laid::through(op),
                    });
                };
                let mut merged = match assemble(stored.base.clone(), &stored.parts) {
                    Assembled::Whole(whole) => whole,
                    // A write between the query's pages: a lost race.
                    Assembled::Torn => {
                        return Err(Error::local(
                            ErrorKind::PreconditionFailed,
                            "the wide entity changed while it was read",
                        )
                        .with_entity_key(key))
                    }
                };
                for (name, value) in entity.properties() {
                    merged.insert(name, value.clone());
                }
                strip_layout(&mut merged);
                // Every write here is under the version read: a concurrent writer
                // may have spread the entity over several rows since.
                let (condition, retry) = WideEngine::condition(asked, Some(&stored));
                let condition = condition.unwrap_or(IfMatch::Any);
                if stored.parts.is_empty() && fits_one_row(&merged) {
                    // Still one row: the merge as asked.
                    let mut patch = entity.clone();
                    strip_layout(&mut patch);
                    return Ok(Laid {
                        ops: vec![WriteOp::Merge {
                            entity: patch,
                            if_match: condition,
                        }],
                        retry,
                    });
                }
                merged.insert(tables_core::wide::PARTS_PROPERTY, 0i32);
                Ok(Laid {
                    ops: WideEngine::lay_out(&merged, Some(condition), Some(&stored))?,
                    retry,
                })
            }
            WriteOp::Delete { key, if_match } => {
                let Some(stored) = self.read_rows(table, key, layout_only()).await? else {
                    return Ok(Laid::through(op));
                };
                let (condition, retry) = WideEngine::condition(Some(if_match), Some(&stored));
                let mut ops = vec![WriteOp::Delete {
                    key: key.clone(),
                    if_match: condition.unwrap_or(IfMatch::Any),
                }];
                for row in &stored.parts {
                    ops.push(WriteOp::Delete {
                        key: row.key(),
                        if_match: row.etag.clone().map_or(IfMatch::Any, IfMatch::Etag),
                    });
                }
                Ok(Laid { ops, retry })
            }
            _ => Ok(Laid::through(op)),
        }
    }

    /// The entities of a page of rows: multi-row entities assembled (read again when
    /// the page holds only some of their rows) and judged by `filter`, part rows
    /// dropped.
    async fn assemble_page(
        &self,
        table: &str,
        rows: Vec<DynamicEntity>,
        filter: Option<&Filter>,
        select: Option<&[String]>,
    ) -> Result<Vec<DynamicEntity>> {
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            if part_number(row).is_some() {
                continue;
            }
            let mut entity = match part_count(row) {
                Some(n) if n >= 1 => {
                    // The whole page: on an engine whose results come in any order
                    // (Cosmos DB for Table) a part may come before its base row.
                    let parts: Vec<DynamicEntity> = rows
                        .iter()
                        .filter(|r| {
                            r.partition_key == row.partition_key
                                && tables_core::wide::base_row_key(r) == Some(&row.row_key)
                        })
                        .cloned()
                        .collect();
                    let whole = match assemble(row.clone(), &parts) {
                        Assembled::Whole(whole) => Some(whole),
                        Assembled::Torn => self.read_whole(table, &row.key(), select).await?,
                    };
                    let Some(whole) = whole else {
                        continue;
                    };
                    if filter.is_some_and(|f| !f.matches(&whole)) {
                        continue;
                    }
                    whole
                }
                _ => {
                    let mut plain = row.clone();
                    strip_layout(&mut plain);
                    plain
                }
            };
            project(&mut entity, select);
            out.push(entity);
        }
        Ok(out)
    }

    /// `e`, a laid-out batch's validation error, with what made the batch.
    fn explain(e: Error) -> Error {
        if e.kind() != ErrorKind::RequestTooLarge {
            return e;
        }
        let message = format!(
            "{} (the transaction's wide entities, laid out over their rows with the index \
             copies written beside them, exceed what one entity group transaction carries: keep \
             large fields in blobs with #[entity(blob)], or index them outside the partition)",
            e.message()
        );
        e.with_message(message)
    }

    fn too_many_rows(table: &str, rows: usize) -> Error {
        Error::local(
            ErrorKind::InvalidBatch,
            format!(
                "the transaction's wide entities take {rows} rows; one entity group transaction \
                 writes at most {}: write them in smaller transactions",
                tables_core::MAX_BATCH_OPERATIONS
            ),
        )
        .with_table(table)
    }
}

#[async_trait]
impl Engine for WideEngine {
    fn capabilities(&self) -> tables_core::EngineCapabilities {
        self.inner.capabilities()
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        self.inner.create_table(table).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.inner.delete_table(table).await
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        self.inner.list_tables(options).await
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        let mut entity = self.read_whole(table, key, select).await?;
        if let Some(entity) = &mut entity {
            project(entity, select);
        }
        Ok(entity)
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        if let Some(raw) = spec.filter.as_ref().and_then(Filter::unparsed_part) {
            return Err(Error::local(
                ErrorKind::Unsupported,
                format!(
                    "the raw filter `{}` can't be judged on a wide entity, whose properties may \
                     lie on several rows: build the filter with `Filter`",
                    raw.text()
                ),
            )
            .with_table(table));
        }
        let mut read_for_filter = Vec::new();
        if let Some(filter) = &spec.filter {
            filter_properties(filter, &mut read_for_filter);
        }
        let widened = QuerySpec {
            filter: spec.filter.as_ref().map(widen),
            select: names_with_layout(spec.select.as_deref(), &read_for_filter),
            top: spec.top,
        };
        let page = self.inner.query(table, &widened, continuation).await?;
        let items = self
            .assemble_page(
                table,
                page.items,
                spec.filter.as_ref(),
                spec.select.as_deref(),
            )
            .await?;
        Ok(Page {
            items,
            continuation: page.continuation,
        })
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let laid = self.lay_out_op(table, op).await?;
            let outcome = if let [one] = laid.ops.as_slice() {
                self.inner.write(table, one).await
            } else {
                if laid.ops.len() > tables_core::MAX_BATCH_OPERATIONS {
                    return Err(WideEngine::too_many_rows(table, laid.ops.len()));
                }
                validate_batch(&laid.ops)
                    .map_err(|e| WideEngine::explain(e.without_batch_index()).with_table(table))?;
                self.inner
                    .submit_batch(table, &laid.ops)
                    .await
                    .map(|mut outcomes| outcomes.swap_remove(0))
                    .map_err(Error::without_batch_index)
            };
            match outcome {
                Ok(mut first) => {
                    first.attempts = first.attempts.max(attempt);
                    return Ok(first);
                }
                Err(e) if laid.retry && lost_race(&e) && attempt <= self.conflict_retries => {}
                Err(e) => return Err(e),
            }
        }
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut flat = Vec::with_capacity(ops.len());
            // For each row operation, the caller's operation it belongs to; for each
            // caller's operation, where its rows start and whether it may retry.
            let mut origin = Vec::with_capacity(ops.len());
            let mut starts = Vec::with_capacity(ops.len());
            let mut retries = Vec::with_capacity(ops.len());
            for (i, op) in ops.iter().enumerate() {
                let laid = self
                    .lay_out_op(table, op)
                    .await
                    .map_err(|e| e.with_batch_index(i))?;
                starts.push(flat.len());
                retries.push(laid.retry);
                origin.extend(std::iter::repeat_n(i, laid.ops.len()));
                flat.extend(laid.ops);
            }
            if flat.len() == ops.len() {
                return self.inner.submit_batch(table, ops).await;
            }
            if flat.len() > tables_core::MAX_BATCH_OPERATIONS {
                return Err(WideEngine::too_many_rows(table, flat.len()));
            }
            let back = |e: Error| match e.batch_index().and_then(|j| origin.get(j)) {
                Some(&i) => e.with_batch_index(i),
                None => e,
            };
            validate_batch(&flat).map_err(|e| WideEngine::explain(back(e)).with_table(table))?;
            match self.inner.submit_batch(table, &flat).await {
                Ok(outcomes) => {
                    return Ok(starts
                        .iter()
                        .map(|&start| {
                            let mut outcome = outcomes[start].clone();
                            outcome.attempts = outcome.attempts.max(attempt);
                            outcome
                        })
                        .collect())
                }
                Err(e) => {
                    let culprit = e.batch_index().and_then(|j| origin.get(j)).copied();
                    let may_retry = culprit.is_some_and(|i| retries[i]);
                    if may_retry && lost_race(&e) && attempt <= self.conflict_retries {
                        continue;
                    }
                    return Err(back(e));
                }
            }
        }
    }

    async fn reconcile_layers(
        &self,
        table: &str,
        partition_key: Option<&str>,
    ) -> Result<tables_core::LayerReconcileReport> {
        self.inner.reconcile_layers(table, partition_key).await
    }
}
