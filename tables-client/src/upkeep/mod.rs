//! Index upkeep: every typed write keeps the index copies and index entities its
//! type declares in step with the primary rows, never applies a write twice, and
//! says whether a write that failed may have applied.
//!
//! - **Same partition** (`IndexSchema::same_partition`): the copies and index-entity
//!   rows go in the primary's entity group transaction. The client reads the current
//!   primary and the index rows first and makes every operation conditional on the
//!   versions read ([`rows`]), so a concurrent change can't leave a stale copy and no
//!   copy of another entity is ever replaced; when the caller's own condition is
//!   `IfMatch::Any` (or the mode is an upsert) a lost race is retried ([`conflict`]).
//! - **Other partitions or tables**: the transaction also stores an *intent* row in
//!   the primary's partition ([`intents`]); after the commit the client settles it
//!   ([`settle`]: re-deriving the index rows from the current primary). The intent
//!   is the transaction's commit marker ([`commit`]). A `unique_index` value there is
//!   claimed before the transaction. A finished intent stays as a *tombstone* for
//!   `ClientOptions::intent_retention`, so a late delivery of its transaction
//!   fails. `Table::reconcile` finishes intents a crash left behind, and removes
//!   old tombstones.
//! - **What no intent records** (a copy write delivered after its intent was
//!   finished, rows damaged by hand, an index added later): `Table::verify_indexes`
//!   and `Table::repair_indexes` compare every index row with what the entities
//!   imply ([`audit`]).
//!
//! Everything here is type-erased through [`Codec`], so one transaction can mix
//! entity types.

// `reconcile` before `audit`: rustdoc lists `Table::reconcile` before
// `Table::verify_indexes` and `Table::repair_indexes`.
mod reconcile;

mod audit;
mod commit;
pub(crate) mod conflict;
mod index_entities;
mod intents;
pub(crate) mod marks;
pub(crate) mod moving;
mod plan;
mod rows;
mod settle;
mod touched;

use std::collections::HashSet;
use std::fmt;

use futures::future::try_join_all;
use tables_core::model::{check_writer, IndexCopy, IndexEntry};
use tables_core::{
    DynamicEntity, Engine, EntityKey, Error, IfMatch, Origin, PendingUpkeep, Result, Row, WriteOp,
    WriteOutcome,
};

use crate::request_id::ClientRequestId;
use crate::service::TableServiceClient;

pub use audit::{
    CheckPage, CheckPhase, CheckProgress, CheckReport, CheckToken, Finding, IndexCheck, Problem,
};
pub(crate) use conflict::{lost_race, ConflictLoop};
pub use index_entities::index_entity_members;
pub(crate) use index_entities::{member_key, members_of};
pub use reconcile::{IntentFailure, ReconcileReport};
pub(crate) use rows::owner_of;
pub use touched::{RowChange, TouchedRow};

/// How a caller's item writes its primary row.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    Insert,
    Replace(IfMatch),
    Merge(IfMatch),
    UpsertReplace,
    UpsertMerge,
    Delete(IfMatch),
}

impl Mode {
    fn merges(&self) -> bool {
        matches!(self, Mode::Merge(_) | Mode::UpsertMerge)
    }
}

/// The index rows a primary row implies.
#[derive(Debug, Clone, Default)]
pub(crate) struct Implied {
    pub(crate) copies: Vec<IndexCopy>,
    pub(crate) entries: Vec<IndexEntry>,
}

/// What the upkeep needs of a row type, without the type.
#[derive(Clone, Copy)]
pub(crate) struct Codec {
    /// The index rows a stored primary row implies (decoding it as the type).
    pub(crate) implied: fn(&DynamicEntity) -> Result<Implied>,
    /// The kind of a stored or new primary row, by the tags of the type's kinds.
    pub(crate) kind_of: fn(&DynamicEntity) -> Option<&'static str>,
    /// Whether the type has any index or index entity.
    pub(crate) indexed: bool,
    /// The type's name and its RowKey template, for errors about its keys.
    pub(crate) type_name: &'static str,
    pub(crate) row_key_template: &'static str,
}

impl fmt::Debug for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Codec")
            .field("indexed", &self.indexed)
            .finish_non_exhaustive()
    }
}

impl Codec {
    pub(crate) fn of<T: Row>() -> Codec {
        Codec {
            implied: implied_of::<T>,
            kind_of: tables_core::model::kind_of::<T>,
            indexed: T::HAS_INDEXES,
            type_name: std::any::type_name::<T>(),
            row_key_template: T::schemas().first().map_or("", |s| s.row_key),
        }
    }
}

impl Item {
    /// Checks the keys this item writes (its row and the index copies it implies)
    /// against the limits of the service `capabilities` describes, before anything
    /// is sent: a RowKey over 255 bytes on Cosmos DB for Table names the type, the
    /// index and the template that made it.
    fn check_keys(&self, capabilities: &tables_core::EngineCapabilities) -> Result<()> {
        if self.row.is_some() {
            capabilities.check_key(&self.key).map_err(|err| {
                let message = format!(
                    "{} (the RowKey template of {}: {:?})",
                    err.message(),
                    self.codec.type_name,
                    self.codec.row_key_template
                );
                Error::local(err.kind(), message).with_entity_key(self.key.clone())
            })?;
        }
        for copy in self.implied.iter().flat_map(|implied| &implied.copies) {
            let key = copy.entity().key();
            capabilities.check_key(&key).map_err(|err| {
                let message = format!(
                    "{} (index `{}` of {}, RowKey template {:?})",
                    err.message(),
                    copy.name(),
                    self.codec.type_name,
                    copy.index().row_key
                );
                Error::local(err.kind(), message).with_entity_key(key.clone())
            })?;
        }
        Ok(())
    }
}

fn implied_of<T: Row>(row: &DynamicEntity) -> Result<Implied> {
    let value = T::from_entity(row.clone())?;
    Ok(Implied {
        copies: value.index_copies(row)?,
        entries: value.index_entries()?,
    })
}

/// Whether a stored row's `EntityType` is one of `T`'s kinds (the kinds whose
/// index rows `T` can derive).
pub(crate) fn derives_kind<T: Row>(kind: &str) -> bool {
    T::schemas().iter().any(|s| s.kind == kind)
}

/// One write of a caller: a transaction item, or a whole single write.
#[derive(Debug)]
pub(crate) struct Item {
    mode: Mode,
    key: EntityKey,
    /// The encoded row (`None` for a delete).
    row: Option<DynamicEntity>,
    /// The index rows of the new row, when known without reading (not for merges).
    implied: Option<Implied>,
    codec: Codec,
    /// A step of a move (`Table::move_to`): writes the rows a move marks, and (for
    /// the new row) takes over the copies of the row it comes from.
    moving: Option<Moving>,
}

/// The part an item plays in a move.
#[derive(Debug, Clone)]
pub(crate) enum Moving {
    /// The new row, taking over the copies the row at `from` holds.
    In { from: EntityKey },
    /// The delete of the moved row.
    Out,
}

impl Item {
    /// A write of `value` in `mode` (not `Mode::Delete`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] when `T` must not write its kind (see
    /// [`check_writer`]); `value`'s encoding errors.
    pub(crate) fn write<T: Row>(mode: Mode, value: &T) -> Result<Item> {
        let row = value.to_entity()?;
        Item::write_row(mode, value, row)
    }

    /// A write of `value` whose row is `row`: `value` encoded over a stored row,
    /// keeping the columns `value` doesn't name (`Table::update`, patches).
    ///
    /// # Errors
    ///
    /// As [`Item::write`].
    pub(crate) fn write_row<T: Row>(mode: Mode, value: &T, row: DynamicEntity) -> Result<Item> {
        check_writer::<T>()?;
        let codec = Codec::of::<T>();
        let implied = if codec.indexed && !mode.merges() {
            Some(Implied {
                copies: value.index_copies(&row)?,
                entries: value.index_entries()?,
            })
        } else {
            None
        };
        Ok(Item {
            mode,
            key: row.key(),
            row: Some(row),
            implied,
            codec,
            moving: None,
        })
    }

    /// The item as a step of a move.
    pub(crate) fn moving(mut self, moving: Moving) -> Item {
        self.moving = Some(moving);
        self
    }

    /// The row this item's new row takes over copies from (a move's new row).
    pub(crate) fn heir_of(&self) -> Option<&EntityKey> {
        match &self.moving {
            Some(Moving::In { from }) => Some(from),
            _ => None,
        }
    }

    /// A merge of `row`'s properties into the stored `T` at its key (a patch that
    /// only sets): the upkeep reads the stored row to follow the index rows.
    ///
    /// # Errors
    ///
    /// As [`Item::write`].
    pub(crate) fn merge_properties<T: Row>(if_match: IfMatch, row: DynamicEntity) -> Result<Item> {
        check_writer::<T>()?;
        Ok(Item {
            mode: Mode::Merge(if_match),
            key: row.key(),
            row: Some(row),
            implied: None,
            codec: Codec::of::<T>(),
            moving: None,
        })
    }

    /// A delete of the `T` at `key`.
    ///
    /// # Errors
    ///
    /// As [`Item::write`].
    pub(crate) fn delete<T: Row>(key: EntityKey, if_match: IfMatch) -> Result<Item> {
        check_writer::<T>()?;
        Ok(Item {
            mode: Mode::Delete(if_match),
            key,
            row: None,
            implied: None,
            codec: Codec::of::<T>(),
            moving: None,
        })
    }

    pub(crate) fn key(&self) -> &EntityKey {
        &self.key
    }

    /// The encoded row written (`None` for a delete).
    pub(crate) fn row(&self) -> Option<&DynamicEntity> {
        self.row.as_ref()
    }

    /// The copies in the primary's partition the new row implies, when known
    /// without reading.
    pub(crate) fn partition_copies(&self) -> impl Iterator<Item = &DynamicEntity> + '_ {
        self.implied
            .iter()
            .flat_map(|i| i.copies.iter())
            .filter(|c| c.same_partition())
            .map(IndexCopy::entity)
    }

    /// The write as the caller asked for it, with no upkeep, without copying the row.
    pub(crate) fn into_plain_op(self) -> WriteOp {
        let row = self.row.unwrap_or_default();
        match self.mode {
            Mode::Insert => WriteOp::Insert(row),
            Mode::Replace(if_match) => WriteOp::Replace {
                entity: row,
                if_match,
            },
            Mode::Merge(if_match) => WriteOp::Merge {
                entity: row,
                if_match,
            },
            Mode::UpsertReplace => WriteOp::UpsertReplace(row),
            Mode::UpsertMerge => WriteOp::UpsertMerge(row),
            Mode::Delete(if_match) => WriteOp::Delete {
                key: self.key,
                if_match,
            },
        }
    }

    /// The write as the caller asked for it, with no upkeep.
    pub(crate) fn plain_op(&self) -> WriteOp {
        let row = || self.row.clone().unwrap_or_default();
        match &self.mode {
            Mode::Insert => WriteOp::Insert(row()),
            Mode::Replace(if_match) => WriteOp::Replace {
                entity: row(),
                if_match: if_match.clone(),
            },
            Mode::Merge(if_match) => WriteOp::Merge {
                entity: row(),
                if_match: if_match.clone(),
            },
            Mode::UpsertReplace => WriteOp::UpsertReplace(row()),
            Mode::UpsertMerge => WriteOp::UpsertMerge(row()),
            Mode::Delete(if_match) => WriteOp::Delete {
                key: self.key.clone(),
                if_match: if_match.clone(),
            },
        }
    }

    /// The index copies in the primary's partition this item's new row implies
    /// (known before reading only for inserts, replaces and upserts).
    pub(crate) fn known_partition_copies(&self) -> usize {
        self.implied.as_ref().map_or(0, |i| {
            i.copies.iter().filter(|c| c.same_partition()).count()
        })
    }

    /// Whether the new row is known to need an intent.
    pub(crate) fn known_intent(&self) -> bool {
        self.implied.as_ref().is_some_and(|i| {
            i.copies.iter().any(|c| !c.same_partition())
                || i.entries.iter().any(|e| !e.same_partition())
        })
    }
}

/// What the caller asked for: one write, or a batch of items (a transaction, a
/// chunk of a bulk write). Only a batch's errors carry a batch index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `Table::insert`, `replace`...: its error names no batch index, even when
    /// the write went out as a transaction with its index rows.
    Single,
    /// A transaction or bulk chunk: every item error names the item's index.
    Batch,
}

/// Performs `items` (all in one partition of `table`) as one entity group
/// transaction with their index upkeep; one outcome per item. Every request carries
/// the call's client request id, which the outcomes and the error report.
///
/// For a [`Shape::Batch`], errors carry the failing item's index
/// ([`Error::batch_index`]); a [`Shape::Single`] write's never do. An error that may
/// have applied says so, and no write is ever sent again after it may have applied.
pub(crate) async fn run(
    service: &TableServiceClient,
    table: &str,
    items: Vec<Item>,
    shape: Shape,
) -> Result<Vec<WriteOutcome>> {
    let single_item = items.len() == 1;
    let capabilities = service.engine().capabilities();
    for item in &items {
        item.check_keys(&capabilities)?;
    }
    let (id, result) = ClientRequestId::in_call(run_items(service, table, items, None)).await;
    match result {
        Ok(mut outcomes) => {
            for outcome in &mut outcomes {
                outcome.client_request_id = Some(id.as_str().to_owned());
            }
            Ok(outcomes)
        }
        Err(err) => {
            let err = match shape {
                // The upkeep names the item internally; the caller made no batch.
                Shape::Single => err.without_batch_index(),
                // A one-item batch without upkeep went out as a plain write, whose
                // errors name no index: the item's answer is item 0's.
                Shape::Batch
                    if single_item
                        && err.batch_index().is_none()
                        && err.entity_key().is_some()
                        && err.origin() != Origin::Transport =>
                {
                    err.with_batch_index(0)
                }
                Shape::Batch => err,
            };
            Err(err.with_client_request_id(id.as_str()))
        }
    }
}

/// [`run`] for one item whose transaction also inserts `fence`, a row of its
/// partition whose presence tells whether it committed (and whose prior insert by
/// another worker stops it from committing): the new row of a move.
pub(crate) async fn run_fenced(
    service: &TableServiceClient,
    table: &str,
    item: Item,
    fence: DynamicEntity,
) -> Result<WriteOutcome> {
    let (id, result) =
        ClientRequestId::in_call(run_items(service, table, vec![item], Some(fence))).await;
    match result {
        Ok(outcomes) => {
            let mut outcome = outcomes
                .into_iter()
                .next()
                .unwrap_or_else(|| WriteOutcome::new(None, None));
            outcome.client_request_id = Some(id.as_str().to_owned());
            Ok(outcome)
        }
        Err(err) => Err(err
            .without_batch_index()
            .with_client_request_id(id.as_str())),
    }
}

async fn run_items(
    service: &TableServiceClient,
    table: &str,
    items: Vec<Item>,
    fence: Option<DynamicEntity>,
) -> Result<Vec<WriteOutcome>> {
    let engine = service.engine().as_ref();
    if items.iter().all(|item| !item.codec.indexed) {
        // No upkeep: the write as asked, sent once.
        let mut ops: Vec<WriteOp> = items.into_iter().map(Item::into_plain_op).collect();
        ops.extend(fence.map(WriteOp::Insert));
        return commit::submit(engine, table, &ops).await;
    }
    let mut rounds = ConflictLoop::new(service.options().max_conflict_retries);
    loop {
        let olds = read_olds(service, table, &items).await?;
        let prepared = plan::prepare(&items, olds)?;
        let (reads, stale) = read_rows(service, prepared.to_read(table)).await?;
        let mut built = prepared.build(table, &reads, &stale)?;
        if let Some(fence) = &fence {
            built.fence(WriteOp::Insert(fence.clone()));
        }
        tables_core::validate_batch_before_layout(&built.ops).map_err(|e| built.map_error(e))?;
        let codecs = built.codecs.clone();
        let covered = covered_items(&items, &built);
        match commit::commit(service, table, built, &mut rounds).await {
            commit::Outcome::Committed {
                outcomes,
                intent,
                clean,
            } => {
                let pending = match intent {
                    Some(live) => {
                        let key = live.key.clone();
                        let codec_for =
                            |kind: &str| codecs.iter().find(|(k, _)| k == kind).map(|(_, c)| *c);
                        let finish = settle::Finish::Owner { clean };
                        settle::apply(service, table, live, &codec_for, finish)
                            .await
                            .err()
                            .map(|err| PendingUpkeep::new(table, key, err))
                    }
                    None => None,
                };
                let attempts = rounds.attempts();
                let mut outcomes: Vec<WriteOutcome> =
                    outcomes.into_iter().take(items.len()).collect();
                for (index, outcome) in outcomes.iter_mut().enumerate() {
                    outcome.attempts = attempts;
                    if covered.contains(&index) {
                        outcome.pending_upkeep.clone_from(&pending);
                    }
                }
                return Ok(outcomes);
            }
            commit::Outcome::Lost(err) => rounds.lost(err).await?,
            commit::Outcome::Failed(err) => return Err(err.with_attempts(rounds.attempts())),
        }
    }
}

/// The items whose primaries the transaction's intent lists.
fn covered_items(items: &[Item], built: &plan::Built) -> HashSet<usize> {
    let Some(intent) = &built.intent else {
        return HashSet::new();
    };
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| {
            intent
                .doc
                .primaries()
                .iter()
                .any(|p| p.rk == item.key.row_key)
        })
        .map(|(index, _)| index)
        .collect()
}

/// The current primary rows the items replace, merge into or delete (inserts need
/// none: an existing row fails them), read concurrently.
async fn read_olds(
    service: &TableServiceClient,
    table: &str,
    items: &[Item],
) -> Result<Vec<Option<DynamicEntity>>> {
    let engine = service.engine().as_ref();
    let reads = items.iter().enumerate().map(|(index, item)| async move {
        let needed = item.codec.indexed && !matches!(item.mode, Mode::Insert);
        if !needed {
            return Ok(None);
        }
        engine
            .get_entity(table, &item.key, None)
            .await
            .map_err(|e| e.with_batch_index(index))
    });
    try_join_all(reads).await
}

/// Reads the rows a plan depends on, concurrently, and tells which claims held by
/// other entities among them are stale.
async fn read_rows(
    service: &TableServiceClient,
    wanted: Vec<plan::ToRead>,
) -> Result<(plan::Reads, HashSet<(String, EntityKey)>)> {
    let engine = service.engine().as_ref();
    let reads = wanted.into_iter().map(|want| async move {
        let row = engine.get_entity(&want.table, &want.key, None).await?;
        let mut stale = false;
        if let (Some((codec, kind, index)), Some(stored)) = (&want.claim, &row) {
            let of = rows::IndexOf { kind, index };
            let theirs = rows::owner_of(stored).is_some_and(|owner| {
                !matches!(
                    rows::Holder::of(Some(stored), of, &owner),
                    rows::Holder::Foreign(_)
                )
            });
            if theirs {
                stale = rows::is_stale_claim(engine, stored, of, *codec).await?;
            }
        }
        Ok::<_, Error>((plan::read_key(&want.table, &want.key), row, stale))
    });
    let mut rows = plan::Reads::new();
    let mut stale = HashSet::new();
    for (key, row, is_stale) in try_join_all(reads).await? {
        if is_stale {
            stale.insert(key.clone());
        }
        rows.insert(key, row);
    }
    Ok((rows, stale))
}
