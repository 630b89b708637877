//! Index upkeep: every typed write keeps the index copies and index entities its
//! type declares in step with the primary rows.
//!
//! - **Same partition** (`IndexSchema::same_partition`): the copies and index-entity
//!   rows go in the primary's entity group transaction. The client reads the current
//!   primary first and makes the transaction conditional on its ETag, so a
//!   concurrent change can't leave a stale copy; when the caller's own condition is
//!   `IfMatch::Any` (or the mode is an upsert) a lost race is retried, up to
//!   [`crate::ClientOptions::max_conflict_retries`] times.
//! - **Other partitions or tables**: the transaction also stores an *intent* row in
//!   the primary's partition ([`intents`]); after the commit the client applies it
//!   (re-deriving the index rows from the current primary) and deletes it.
//!   `Table::reconcile` finishes intents a crash left behind.
//!
//! Everything here is type-erased through [`Codec`], so one transaction can mix
//! entity types.

mod index_entities;
mod intents;
mod plan;
mod reconcile;

use std::collections::HashSet;
use std::fmt;

use tables_core::model::{IndexCopy, IndexEntry};
use tables_core::{
    DynamicEntity, Engine, EntityKey, Error, ErrorKind, IfMatch, Result, Row, WriteOp, WriteOutcome,
};

use crate::request_id::ClientRequestId;
use crate::service::TableServiceClient;

pub(crate) use index_entities::{member_key, members_of};
pub use reconcile::ReconcileReport;

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
    /// Whether the type has any index or index entity.
    pub(crate) indexed: bool,
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
            indexed: T::HAS_INDEXES,
        }
    }
}

fn implied_of<T: Row>(row: &DynamicEntity) -> Result<Implied> {
    let value = T::decode(row.clone())?;
    Ok(Implied {
        copies: value.copies_of(row)?,
        entries: value.entries_of()?,
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
}

impl Item {
    /// A write of `value` in `mode` (not `Mode::Delete`).
    pub(crate) fn write<T: Row>(mode: Mode, value: &T) -> Result<Item> {
        let row = value.encode()?;
        let codec = Codec::of::<T>();
        let implied = if codec.indexed && !mode.merges() {
            Some(Implied {
                copies: value.copies_of(&row)?,
                entries: value.entries_of()?,
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
        })
    }

    /// A delete of the `T` at `key`.
    pub(crate) fn delete<T: Row>(key: EntityKey, if_match: IfMatch) -> Item {
        Item {
            mode: Mode::Delete(if_match),
            key,
            row: None,
            implied: None,
            codec: Codec::of::<T>(),
        }
    }

    pub(crate) fn key(&self) -> &EntityKey {
        &self.key
    }

    /// The write as the caller asked for it, with no upkeep.
    pub(crate) fn plain_op(&self) -> WriteOp {
        Item {
            mode: self.mode.clone(),
            key: self.key.clone(),
            row: self.row.clone(),
            implied: None,
            codec: self.codec,
        }
        .into_plain_op()
    }

    /// [`Item::plain_op`], by value.
    pub(crate) fn into_plain_op(self) -> WriteOp {
        let Item { mode, key, row, .. } = self;
        let row = || row.unwrap_or_default();
        match mode {
            Mode::Insert => WriteOp::Insert(row()),
            Mode::Replace(if_match) => WriteOp::Replace {
                entity: row(),
                if_match,
            },
            Mode::Merge(if_match) => WriteOp::Merge {
                entity: row(),
                if_match,
            },
            Mode::UpsertReplace => WriteOp::UpsertReplace(row()),
            Mode::UpsertMerge => WriteOp::UpsertMerge(row()),
            Mode::Delete(if_match) => WriteOp::Delete { key, if_match },
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

/// Performs `items` (all in one partition of `table`) as one entity group
/// transaction with their index upkeep; one outcome per item. Every request carries
/// the call's client request id, which the outcomes and the error report.
///
/// Errors carry the failing item's index ([`Error::batch_index`]).
pub(crate) async fn run(
    service: &TableServiceClient,
    table: &str,
    items: Vec<Item>,
) -> Result<Vec<WriteOutcome>> {
    let (id, result) = ClientRequestId::in_call(run_items(service, table, items)).await;
    match result {
        Ok(mut outcomes) => {
            for outcome in &mut outcomes {
                outcome.client_request_id = Some(id.as_str().to_owned());
            }
            Ok(outcomes)
        }
        Err(err) => Err(err.with_client_request_id(id.as_str())),
    }
}

async fn run_items(
    service: &TableServiceClient,
    table: &str,
    items: Vec<Item>,
) -> Result<Vec<WriteOutcome>> {
    let engine = service.engine();
    if items.iter().all(|item| !item.codec.indexed) {
        let ops: Vec<WriteOp> = items.into_iter().map(Item::into_plain_op).collect();
        return submit(engine.as_ref(), table, &ops).await;
    }
    let retries = service.options().max_conflict_retries;
    let mut absent: HashSet<EntityKey> = HashSet::new();
    let mut lost = 0u32;
    loop {
        let olds = read_olds(engine.as_ref(), table, &items).await?;
        let prepared = plan::prepare(&items, olds)?;
        let mut entry_rows = Vec::new();
        for key in prepared.entry_keys() {
            let row = engine.get_entity(table, &key, None).await?;
            entry_rows.push((key, row));
        }
        let built = prepared.build(table, entry_rows, &absent)?;
        tables_core::validate_batch(&built.ops).map_err(|e| built.map_error(e))?;
        let err = match submit(engine.as_ref(), table, &built.ops).await {
            Ok(outcomes) => {
                if let Some((index, doc)) = built.intent {
                    let etag = outcomes.get(index).and_then(|o| o.etag.clone());
                    let codecs = built.codecs;
                    let codec_for = |kind: &str| {
                        codecs
                            .iter()
                            .find(|(k, _)| k == kind)
                            .map(|(_, codec)| *codec)
                    };
                    let live = intents::LiveIntent::new(built.ops[index].key(), etag, doc);
                    // The primary write is committed: if applying fails (a crash, a
                    // transient error), the intent stays for `reconcile()` to finish.
                    let _ = intents::apply(service, table, live, &codec_for).await;
                }
                return Ok(outcomes.into_iter().take(items.len()).collect());
            }
            Err(err) => err,
        };
        match built.on_error(&err) {
            plan::Retry::No => return Err(built.map_error(err)),
            plan::Retry::Absent(key) => {
                absent.insert(key);
            }
            plan::Retry::Conflict => {}
        }
        lost += 1;
        if lost > retries {
            return Err(gave_up(built.map_error(err), retries));
        }
        tokio::task::yield_now().await;
    }
}

/// Sends `ops`: one write, or one entity group transaction.
async fn submit(engine: &dyn Engine, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
    match ops {
        [op] => engine.write(table, op).await.map(|outcome| vec![outcome]),
        _ => engine.submit_batch(table, ops).await,
    }
}

/// The current primary rows the items replace, merge into or delete (inserts need
/// none: an existing row fails them).
async fn read_olds(
    engine: &dyn Engine,
    table: &str,
    items: &[Item],
) -> Result<Vec<Option<DynamicEntity>>> {
    let mut olds = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let needed = item.codec.indexed && !matches!(item.mode, Mode::Insert);
        let old = if needed {
            engine
                .get_entity(table, &item.key, None)
                .await
                .map_err(|e| e.with_batch_index(index))?
        } else {
            None
        };
        olds.push(old);
    }
    Ok(olds)
}

/// Whether an error means a conditional write lost a race (412, or a row that
/// appeared or vanished since it was read).
pub(crate) fn lost_race(err: &Error) -> bool {
    matches!(
        err.kind(),
        ErrorKind::PreconditionFailed | ErrorKind::EntityAlreadyExists | ErrorKind::EntityNotFound
    )
}

/// The error after `retries` lost races in a row.
pub(crate) fn gave_up(last: Error, retries: u32) -> Error {
    let mut err = Error::new(
        ErrorKind::PreconditionFailed,
        format!(
            "gave up after {retries} retries: concurrent writers kept changing the rows this \
             write depends on (raise ClientOptions::max_conflict_retries, or write less \
             concurrently to the same rows)"
        ),
    );
    if let Some(index) = last.batch_index() {
        err = err.with_batch_index(index);
    }
    if let Some(key) = last.entity_key() {
        err = err.with_entity_key(key.clone());
    }
    err.with_source(last)
}
