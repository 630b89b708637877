//! One table's rows and the write rules: preconditions, replace versus merge, and
//! all-or-nothing batches.
//!
//! Every write is decided (checked and built) before anything is stored, so a
//! rejected write or batch leaves the rows as they were.

use std::collections::BTreeMap;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tables_core::size::validate_entity;
use tables_core::{
    DateTime, DynamicEntity, ETag, EntityKey, Error, ErrorKind, IfMatch, Origin, Result, WriteOp,
    WriteOutcome,
};

use crate::changes::{Change, ChangeSink, RowChange};
use crate::key::{RowId, RowMap};

/// The rows of a table, in the service's key order. A stored entity shares its
/// properties with every copy a reader gets ([`DynamicEntity`] clones are
/// copy-on-write), so a read copies only its keys.
pub(crate) type Rows = BTreeMap<RowId, DynamicEntity>;

/// The stored entity under `key`.
pub(crate) fn lookup<'r>(rows: &'r Rows, key: (&str, &str)) -> Option<&'r DynamicEntity> {
    rows.find(key.0, key.1)
}

/// A table: its name as created and its rows.
#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) name: String,
    rows: RwLock<Rows>,
}

impl Table {
    pub(crate) fn new(name: &str) -> Table {
        Table {
            name: name.to_owned(),
            rows: RwLock::new(Rows::new()),
        }
    }

    /// Shared access; readers run in parallel.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Rows> {
        // A panic never leaves rows half-written (every change is decided first), so
        // a poisoned lock still guards consistent data.
        self.rows.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Exclusive access, for writes.
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Rows> {
        self.rows.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The entity as a reader sees it: every property, or only the selected ones (keys,
/// Timestamp and ETag always). Selected properties the entity lacks are absent.
pub(crate) fn project(entity: &DynamicEntity, select: Option<&[String]>) -> DynamicEntity {
    let Some(select) = select else {
        return entity.clone();
    };
    let mut out = DynamicEntity::new(entity.partition_key.clone(), entity.row_key.clone());
    out.timestamp = entity.timestamp;
    out.etag.clone_from(&entity.etag);
    for (name, value) in entity.properties() {
        if select.iter().any(|s| s == name) {
            out.insert(name, value.clone());
        }
    }
    out
}

fn key_of(op: &WriteOp) -> EntityKey {
    op.key()
}

/// Checks `op`'s precondition against the stored entity under its key.
///
/// Insert needs the key free; replace, merge and delete need the entity present and,
/// with [`IfMatch::Etag`], unchanged; upserts have no precondition.
fn check(op: &WriteOp, current: Option<&DynamicEntity>) -> Result<()> {
    match op {
        WriteOp::Insert(_) => match current {
            Some(_) => Err(Error::new(
                ErrorKind::EntityAlreadyExists,
                format!(
                    "an entity with key {} already exists; use an upsert or replace to overwrite it",
                    key_of(op)
                ),
            )
            .with_entity_key(key_of(op))
            .with_origin(Origin::Service)),
            None => Ok(()),
        },
        WriteOp::Replace { if_match, .. }
        | WriteOp::Merge { if_match, .. }
        | WriteOp::Delete { if_match, .. } => {
            let Some(current) = current else {
                return Err(Error::new(
                    ErrorKind::EntityNotFound,
                    format!(
                        "no entity with key {}; insert it first or use an upsert",
                        key_of(op)
                    ),
                )
                .with_entity_key(key_of(op))
                .with_origin(Origin::Service));
            };
            match if_match {
                IfMatch::Any => Ok(()),
                IfMatch::Etag(etag) if current.etag.as_ref() == Some(etag) => Ok(()),
                IfMatch::Etag(etag) => Err(Error::new(
                    ErrorKind::PreconditionFailed,
                    format!(
                        "the entity {} changed since it was read (If-Match {etag}); read it again and retry, or use IfMatch::Any",
                        key_of(op)
                    ),
                )
                .with_entity_key(key_of(op))
                .with_origin(Origin::Service)),
            }
        }
        WriteOp::UpsertReplace(_) | WriteOp::UpsertMerge(_) => Ok(()),
    }
}

/// What a checked write does to its key.
enum NewState {
    Put(DynamicEntity),
    Remove,
}

/// Builds the new state of `op`'s key, stamped with `timestamp`/`etag`. Merges keep
/// the stored properties `op` does not mention; the merged entity must still obey
/// the entity rules (property count, size).
fn build(
    op: &WriteOp,
    current: Option<&DynamicEntity>,
    timestamp: DateTime,
    etag: &ETag,
) -> Result<NewState> {
    let mut entity = match (op, current) {
        (WriteOp::Delete { .. }, _) => return Ok(NewState::Remove),
        (WriteOp::Merge { entity, .. } | WriteOp::UpsertMerge(entity), Some(current)) => {
            let mut merged = current.clone();
            for (name, value) in entity.properties() {
                merged.insert(name, value.clone());
            }
            // The merged entity is known only here: a limit it breaks is the
            // engine's answer, as it is the service's.
            validate_entity(&merged).map_err(|e| e.with_origin(Origin::Service))?;
            merged
        }
        _ => op.entity().cloned().unwrap_or_default(),
    };
    entity.timestamp = Some(timestamp);
    entity.etag = Some(etag.clone());
    Ok(NewState::Put(entity))
}

fn probe(op: &WriteOp) -> (&str, &str) {
    (op.partition_key(), op.row_key())
}

fn apply(rows: &mut Rows, op: &WriteOp, change: NewState) {
    let (partition_key, row_key) = probe(op);
    match change {
        NewState::Put(entity) => match rows.find_mut(partition_key, row_key) {
            Some(slot) => *slot = entity,
            None => {
                rows.insert(RowId::new(partition_key, row_key), entity);
            }
        },
        NewState::Remove => {
            rows.take(partition_key, row_key);
        }
    }
}

/// Where a table's changes are reported: the engine's sink, and the table's name as
/// created.
#[derive(Clone, Copy)]
pub(crate) struct Journal<'a> {
    pub(crate) sink: &'a dyn ChangeSink,
    pub(crate) table: &'a str,
}

impl Journal<'_> {
    /// Reports the new state of the rows `ops` change (`changes` in the same order).
    fn report(&self, ops: &[WriteOp], changes: &[NewState]) {
        let keys: Vec<EntityKey> = ops
            .iter()
            .zip(changes)
            .filter(|(_, change)| matches!(change, NewState::Remove))
            .map(|(op, _)| op.key())
            .collect();
        let mut removed = keys.iter();
        let rows: Vec<RowChange<'_>> = changes
            .iter()
            .filter_map(|change| match change {
                NewState::Put(entity) => Some(RowChange::Stored(entity)),
                NewState::Remove => removed.next().map(RowChange::Removed),
            })
            .collect();
        self.sink.record(Change::Rows {
            table: self.table,
            rows: &rows,
        });
    }
}

/// Puts a recorded row back as it was (Timestamp and ETag included), or removes it.
pub(crate) fn restore(rows: &mut Rows, row: &RowChange<'_>) {
    let (partition_key, row_key) = (row.partition_key(), row.row_key());
    match row {
        RowChange::Stored(entity) => match rows.find_mut(partition_key, row_key) {
            Some(slot) => *slot = (*entity).clone(),
            None => {
                rows.insert(RowId::new(partition_key, row_key), (*entity).clone());
            }
        },
        RowChange::Removed(_) => {
            rows.take(partition_key, row_key);
        }
    }
}

fn outcome(op: &WriteOp, timestamp: DateTime, etag: &ETag) -> WriteOutcome {
    match op {
        WriteOp::Delete { .. } => WriteOutcome::default(),
        _ => WriteOutcome::new(Some(etag.clone()), Some(timestamp)),
    }
}

/// Performs one validated write. `stamp` gives the write's timestamp; it is called
/// only once the precondition holds.
pub(crate) fn write(
    rows: &mut Rows,
    op: &WriteOp,
    stamp: impl FnOnce() -> DateTime,
    journal: Option<Journal<'_>>,
) -> Result<WriteOutcome> {
    let current = lookup(rows, probe(op));
    check(op, current)?;
    let timestamp = stamp();
    let etag = ETag::from_timestamp(timestamp);
    let change = build(op, current, timestamp, &etag)?;
    if let Some(journal) = journal {
        journal.report(std::slice::from_ref(op), std::slice::from_ref(&change));
    }
    apply(rows, op, change);
    Ok(outcome(op, timestamp, &etag))
}

/// Performs a batch that passed [`tables_core::validate_batch`]: every operation's
/// precondition is checked and its result built first; only then is anything
/// stored. The batch's entities share one timestamp, as in the service's
/// transactions. A failure names the operation's index.
pub(crate) fn batch(
    rows: &mut Rows,
    ops: &[WriteOp],
    mut stamp: impl FnMut() -> DateTime,
    journal: Option<Journal<'_>>,
) -> Result<Vec<WriteOutcome>> {
    // `validate_batch` guarantees each key at most once, so every operation sees the
    // state before the batch: checking each against the current rows is exact.
    for (index, op) in ops.iter().enumerate() {
        check(op, lookup(rows, probe(op))).map_err(|e| e.with_batch_index(index))?;
    }
    // Each row gets its own timestamp, so its own ETag: the service doesn't promise
    // one Timestamp per transaction (docs/service-behaviour.md, "Timestamps in an entity
    // group transaction"), and code must never use one row's ETag for another.
    let mut changes = Vec::with_capacity(ops.len());
    let mut outcomes = Vec::with_capacity(ops.len());
    for (index, op) in ops.iter().enumerate() {
        let timestamp = stamp();
        let etag = ETag::from_timestamp(timestamp);
        let current = lookup(rows, probe(op));
        let change = build(op, current, timestamp, &etag)
            .map_err(|e| e.with_batch_index(index).with_entity_key(op.key()))?;
        changes.push(change);
        outcomes.push(outcome(op, timestamp, &etag));
    }
    if let Some(journal) = journal {
        journal.report(ops, &changes);
    }
    for (op, change) in ops.iter().zip(changes) {
        apply(rows, op, change);
    }
    Ok(outcomes)
}
