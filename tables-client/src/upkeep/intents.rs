//! Intent rows: how index rows in other partitions and tables follow their
//! primaries, eventually.
//!
//! # Row format
//!
//! An intent lives in the partition of the primaries it covers, written in their
//! entity group transaction:
//!
//! - RowKey `"$intent_<uuid>"`, `EntityType = "$intent"`;
//! - `Intent` (`Edm.String`): JSON
//!   `{"v":1,"primaries":[{"kind":"Employee","rk":"empid_000223","rows":[{"index":"by_email","entry":false,"table":"EmployeesByEmail","pk":"email_Sales","rk":"jones@contoso.com"}]}]}`:
//!   per primary (its kind and RowKey), every index row the write may have to
//!   touch: those the old primary implied (to remove if no longer implied) and those
//!   the new one implies. `entry` tells an index entity from a copy.
//!
//! # Applying an intent
//!
//! For each primary: read the current primary and derive the rows it implies (never
//! replaying a stored payload); record any implied row the intent doesn't list yet
//! (If-Match the intent's ETag) before writing it; upsert the implied copies, add the
//! primary to its index entities; delete the listed copies it no longer implies
//! (only if the copy still belongs to this primary, If-Match the copy's ETag) and
//! remove it from the index entities it left; then read the primary again, and
//! repeat if its ETag changed. Finally delete the intent, If-Match its ETag (if it
//! changed, another applier extended it: apply again). Because every step derives
//! from the current primary and every write is idempotent, applying late, twice, or
//! concurrently with writers and other appliers is harmless.
//!
//! # Known gap
//!
//! One window needs a race and a crash together: an applier's copy upsert is
//! delayed until after another applier has finished (and deleted) the intent, and
//! the delayed applier then dies before its re-read of the primary. The copy it
//! wrote may then be stale or orphaned until the primary's next write (whose own
//! intent repairs it). No test covers this window yet.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use tables_core::model::{index_entry_type, primary_key_of_copy, ENTITY_TYPE_PROPERTY};
use tables_core::{
    DynamicEntity, ETag, Engine, EntityKey, Error, ErrorKind, IfMatch, Result, Value, WriteOp,
};

use super::index_entities::{encode_member, update_member};
use super::{gave_up, lost_race, Codec, Implied};
use crate::service::TableServiceClient;

/// The `EntityType` of intent rows.
pub(crate) const INTENT_TYPE: &str = "$intent";
/// The property holding an intent's JSON.
const INTENT_PROPERTY: &str = "Intent";
/// The RowKey prefix of intent rows.
const INTENT_ROW_PREFIX: &str = "$intent_";
/// The format version written in `v`.
const FORMAT_VERSION: u32 = 1;

/// An index row an intent may touch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct RowRef {
    index: String,
    entry: bool,
    table: String,
    pk: String,
    rk: String,
}

impl RowRef {
    fn key(&self) -> EntityKey {
        EntityKey::new(self.pk.clone(), self.rk.clone())
    }
}

/// One primary an intent covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PrimaryIntent {
    kind: String,
    rk: String,
    rows: BTreeSet<RowRef>,
}

impl PrimaryIntent {
    pub(crate) fn new(kind: String, rk: String, rows: BTreeSet<RowRef>) -> PrimaryIntent {
        PrimaryIntent { kind, rk, rows }
    }

    fn same_primary(&self, other: &PrimaryIntent) -> bool {
        self.kind == other.kind && self.rk == other.rk
    }
}

/// An intent's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IntentDoc {
    v: u32,
    primaries: Vec<PrimaryIntent>,
}

impl IntentDoc {
    pub(crate) fn new(primaries: Vec<PrimaryIntent>) -> IntentDoc {
        IntentDoc {
            v: FORMAT_VERSION,
            primaries,
        }
    }

    /// Adds `other`'s primaries and rows to `self`.
    fn absorb(&mut self, other: &IntentDoc) {
        for theirs in &other.primaries {
            match self.primaries.iter_mut().find(|p| p.same_primary(theirs)) {
                Some(mine) => mine.rows.extend(theirs.rows.iter().cloned()),
                None => self.primaries.push(theirs.clone()),
            }
        }
    }
}

/// The index rows in other partitions or tables that `implied` holds, each with the
/// copy to write (`None` for an index entity membership).
pub(crate) fn remote_rows(
    implied: &Implied,
    primary_table: &str,
) -> BTreeMap<RowRef, Option<DynamicEntity>> {
    let mut rows = BTreeMap::new();
    for copy in implied.copies.iter().filter(|c| !c.same_partition()) {
        let key = copy.key();
        let reference = RowRef {
            index: copy.name().to_owned(),
            entry: false,
            table: copy.table().unwrap_or(primary_table).to_owned(),
            pk: key.partition_key,
            rk: key.row_key,
        };
        rows.insert(reference, Some(copy.entity().clone()));
    }
    for entry in implied.entries.iter().filter(|e| !e.same_partition()) {
        let reference = RowRef {
            index: entry.name().to_owned(),
            entry: true,
            table: entry.table().unwrap_or(primary_table).to_owned(),
            pk: entry.key().partition_key.clone(),
            rk: entry.key().row_key.clone(),
        };
        rows.insert(reference, None);
    }
    rows
}

/// The intent row at `key` holding `doc`.
fn intent_row(key: &EntityKey, doc: &IntentDoc) -> Result<DynamicEntity> {
    let text = serde_json::to_string(doc).map_err(|e| {
        Error::new(
            ErrorKind::InvalidValue,
            format!("can't encode the intent {key}: {e}"),
        )
    })?;
    let mut row = DynamicEntity::new(key.partition_key.clone(), key.row_key.clone());
    row.insert(ENTITY_TYPE_PROPERTY, INTENT_TYPE);
    row.insert(INTENT_PROPERTY, text);
    Ok(row)
}

/// The insert of a new intent holding `doc` in `partition_key`.
///
/// # Errors
///
/// [`ErrorKind::InvalidValue`] if the document can't be encoded.
pub(crate) fn new_intent_op(partition_key: &str, doc: &IntentDoc) -> Result<WriteOp> {
    let row_key = format!("{INTENT_ROW_PREFIX}{}", uuid::Uuid::new_v4().simple());
    let key = EntityKey::new(partition_key, row_key);
    Ok(WriteOp::Insert(intent_row(&key, doc)?))
}

/// Reads an intent row's document.
///
/// # Errors
///
/// [`ErrorKind::Decode`] if the row holds no readable intent.
pub(crate) fn parse_intent(row: &DynamicEntity) -> Result<IntentDoc> {
    let fail = |why: String| {
        Error::new(
            ErrorKind::Decode,
            format!("the intent row {} {why}", row.key()),
        )
        .with_entity_key(row.key())
        .with_property(INTENT_PROPERTY)
    };
    let Some(Value::String(text)) = row.get(INTENT_PROPERTY) else {
        return Err(fail(format!("has no string `{INTENT_PROPERTY}` property")));
    };
    let doc: IntentDoc =
        serde_json::from_str(text).map_err(|e| fail(format!("holds unreadable JSON: {e}")))?;
    if doc.v != FORMAT_VERSION {
        return Err(fail(format!(
            "has format version {}; this client reads version {FORMAT_VERSION}",
            doc.v
        )));
    }
    Ok(doc)
}

/// An intent being applied: where it is, the version last seen (`None` once it is
/// gone) and its content as this applier knows it.
#[derive(Debug)]
pub(crate) struct LiveIntent {
    key: EntityKey,
    etag: Option<ETag>,
    doc: IntentDoc,
    /// Whether `doc` lists rows the stored intent doesn't.
    dirty: bool,
}

impl LiveIntent {
    pub(crate) fn new(key: EntityKey, etag: Option<ETag>, doc: IntentDoc) -> LiveIntent {
        LiveIntent {
            key,
            etag,
            doc,
            dirty: false,
        }
    }

    /// The rows listed for the primary `kind`/`row_key` (added if missing).
    fn rows_of(&mut self, kind: &str, row_key: &str) -> &mut BTreeSet<RowRef> {
        let position = self
            .doc
            .primaries
            .iter()
            .position(|p| p.kind == kind && p.rk == row_key);
        let position = position.unwrap_or_else(|| {
            self.doc.primaries.push(PrimaryIntent::new(
                kind.to_owned(),
                row_key.to_owned(),
                BTreeSet::new(),
            ));
            self.doc.primaries.len() - 1
        });
        &mut self.doc.primaries[position].rows
    }

    /// Re-reads the stored intent after a lost race, keeping what this applier added.
    async fn reload(&mut self, engine: &dyn Engine, table: &str) -> Result<()> {
        match engine.get_entity(table, &self.key, None).await? {
            None => {
                self.etag = None;
                self.dirty = false;
            }
            Some(row) => {
                let stored = parse_intent(&row)?;
                let mut merged = stored.clone();
                merged.absorb(&self.doc);
                self.dirty = merged != stored;
                self.doc = merged;
                self.etag = row.etag;
            }
        }
        Ok(())
    }

    /// Stores the extended document, If-Match the last seen version. Returns `false`
    /// when another applier changed it first (reloaded: run the round again).
    async fn persist(&mut self, engine: &dyn Engine, table: &str) -> Result<bool> {
        let Some(etag) = self.etag.clone() else {
            self.dirty = false;
            return Ok(true);
        };
        let op = WriteOp::Replace {
            entity: intent_row(&self.key, &self.doc)?,
            if_match: IfMatch::Etag(etag),
        };
        match engine.write(table, &op).await {
            Ok(outcome) => {
                self.etag = outcome.etag;
                self.dirty = false;
                Ok(true)
            }
            Err(err) if err.kind() == ErrorKind::EntityNotFound => {
                self.etag = None;
                self.dirty = false;
                Ok(true)
            }
            Err(err) if err.kind() == ErrorKind::PreconditionFailed => {
                self.reload(engine, table).await?;
                Ok(false)
            }
            Err(err) => Err(err),
        }
    }
}

/// What applying an intent did.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Applied {
    /// The intent is gone (deleted by this applier or another).
    pub(crate) finished: bool,
    /// Copies upserted and memberships added.
    pub(crate) written: usize,
    /// Copies deleted and memberships removed.
    pub(crate) removed: usize,
}

/// Applies an intent of table `table`: settles every primary whose kind `codec_for`
/// knows, then deletes the intent (or, when it covers kinds `codec_for` doesn't
/// know, rewrites it with just those).
///
/// # Errors
///
/// The engine's errors; [`ErrorKind::PreconditionFailed`] when writers keep
/// changing a primary (or the intent) for more than
/// [`crate::ClientOptions::max_conflict_retries`] rounds. The intent then stays for
/// a later `reconcile()`.
pub(crate) async fn apply(
    service: &TableServiceClient,
    table: &str,
    mut live: LiveIntent,
    codec_for: &(dyn Fn(&str) -> Option<Codec> + Sync),
) -> Result<Applied> {
    let engine = service.engine().as_ref();
    let retries = service.options().max_conflict_retries;
    let mut applied = Applied::default();
    let mut lost = 0u32;
    loop {
        // Settle each primary once; a reload may reorder or add primaries, so look
        // them up by identity rather than position.
        let mut settled: Vec<(String, String)> = Vec::new();
        loop {
            let next = live.doc.primaries.iter().find_map(|p| {
                let id = (p.kind.clone(), p.rk.clone());
                let codec = codec_for(&p.kind)?;
                (!settled.contains(&id)).then_some((id, codec))
            });
            let Some((id, codec)) = next else {
                break;
            };
            settle(engine, table, &mut live, &id, codec, retries, &mut applied).await?;
            settled.push(id);
        }
        let Some(etag) = live.etag.clone() else {
            applied.finished = true;
            return Ok(applied);
        };
        let left: Vec<PrimaryIntent> = live
            .doc
            .primaries
            .iter()
            .filter(|p| codec_for(&p.kind).is_none())
            .cloned()
            .collect();
        let finished = left.is_empty();
        let op = if finished {
            WriteOp::Delete {
                key: live.key.clone(),
                if_match: IfMatch::Etag(etag),
            }
        } else {
            WriteOp::Replace {
                entity: intent_row(&live.key, &IntentDoc::new(left))?,
                if_match: IfMatch::Etag(etag),
            }
        };
        match engine.write(table, &op).await {
            Ok(_) => {
                applied.finished = finished;
                return Ok(applied);
            }
            Err(err) if err.kind() == ErrorKind::EntityNotFound => {
                applied.finished = true;
                return Ok(applied);
            }
            Err(err) if err.kind() == ErrorKind::PreconditionFailed => {
                lost += 1;
                if lost > retries {
                    return Err(gave_up(err, retries));
                }
                live.reload(engine, table).await?;
            }
            Err(err) => return Err(err),
        }
    }
}

/// Brings the index rows of the intent's primary `kind`/`row_key` in line with the
/// current primary, until a round sees the primary unchanged from start to end.
async fn settle(
    engine: &dyn Engine,
    table: &str,
    live: &mut LiveIntent,
    (kind, row_key): &(String, String),
    codec: Codec,
    retries: u32,
    applied: &mut Applied,
) -> Result<()> {
    let primary_key = EntityKey::new(live.key.partition_key.clone(), row_key.clone());
    let member = encode_member(&primary_key, false);
    let mut lost = 0u32;
    loop {
        let before = engine.get_entity(table, &primary_key, None).await?;
        let desired = match &before {
            Some(row) => remote_rows(&(codec.implied)(row)?, table),
            None => BTreeMap::new(),
        };
        // Record every row about to be written before writing it, so a crash can't
        // leave a row no intent mentions.
        for reference in desired.keys() {
            if live.rows_of(kind, row_key).insert(reference.clone()) {
                live.dirty = true;
            }
        }
        if live.dirty && !live.persist(engine, table).await? {
            lost += 1;
            if lost > retries {
                return Err(Error::new(
                    ErrorKind::PreconditionFailed,
                    format!(
                        "gave up recording intent {} after {retries} lost races",
                        live.key
                    ),
                ));
            }
            continue;
        }
        let rows: Vec<RowRef> = live.rows_of(kind, row_key).iter().cloned().collect();
        for reference in rows {
            let key = reference.key();
            let entry_type = || index_entry_type(kind, &reference.index);
            match desired.get(&reference) {
                Some(Some(copy)) => {
                    engine
                        .write(&reference.table, &WriteOp::UpsertReplace(copy.clone()))
                        .await?;
                    applied.written += 1;
                }
                Some(None) => {
                    let changed = update_member(
                        engine,
                        &reference.table,
                        &key,
                        &entry_type(),
                        &member,
                        true,
                        retries,
                    )
                    .await?;
                    applied.written += usize::from(changed);
                }
                None if reference.entry => {
                    let changed = update_member(
                        engine,
                        &reference.table,
                        &key,
                        &entry_type(),
                        &member,
                        false,
                        retries,
                    )
                    .await?;
                    applied.removed += usize::from(changed);
                }
                None => {
                    let removed =
                        remove_copy(engine, &reference.table, &key, &primary_key, retries).await?;
                    applied.removed += usize::from(removed);
                }
            }
        }
        let after = engine.get_entity(table, &primary_key, None).await?;
        let version = |row: &Option<DynamicEntity>| row.as_ref().map(|r| r.etag.clone());
        if version(&before) == version(&after) {
            return Ok(());
        }
        lost += 1;
        if lost > retries {
            return Err(Error::new(
                ErrorKind::PreconditionFailed,
                format!(
                    "gave up settling the index rows of {primary_key}: it changed in each of {retries} rounds"
                ),
            )
            .with_entity_key(primary_key));
        }
    }
}

/// Deletes the copy at `key` in `table` if it is still a copy of `owner`. Returns
/// whether it deleted one.
async fn remove_copy(
    engine: &dyn Engine,
    table: &str,
    key: &EntityKey,
    owner: &EntityKey,
    retries: u32,
) -> Result<bool> {
    let mut lost = 0u32;
    loop {
        let Some(row) = engine.get_entity(table, key, None).await? else {
            return Ok(false);
        };
        if primary_key_of_copy(&row).ok().as_ref() != Some(owner) {
            return Ok(false);
        }
        let op = WriteOp::Delete {
            key: key.clone(),
            if_match: row.etag.map_or(IfMatch::Any, IfMatch::Etag),
        };
        match engine.write(table, &op).await {
            Ok(_) => return Ok(true),
            Err(err) if lost_race(&err) => {
                lost += 1;
                if lost > retries {
                    return Err(gave_up(err, retries));
                }
            }
            Err(err) => return Err(err),
        }
    }
}
