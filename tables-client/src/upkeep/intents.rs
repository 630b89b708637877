//! Intent rows: how index rows in other partitions and tables follow their
//! primaries, eventually, and the commit marker of the writes that have them.
//!
//! # Row format
//!
//! An intent lives in the partition of the primaries it covers:
//!
//! - RowKey `"$intent_<uuid>"`, `EntityType = "$intent"`;
//! - `Intent` (`Edm.String`): JSON
//!   `{"v":1,"state":"pending","primaries":[{"kind":"Employee","rk":"empid_000223","rows":[{"index":"by_email","entry":false,"table":"EmployeesByEmail","pk":"email_Sales","rk":"jones@contoso.com"}]}]}`:
//!   per primary (its kind and RowKey), every index row the write may have to
//!   touch: those the old primary implied (to remove if no longer implied) and those
//!   the new one implies. `entry` tells an index entity from a copy; `all` (when set)
//!   says the rows in the primary's own partition are listed too, and `only` that
//!   just these indexes are kept (an index repair).
//!
//! # States
//!
//! - `claiming`: written alone before a write that must claim `unique_index` values
//!   in other partitions; the write has not committed.
//! - `pending`: the write committed (the intent was written, or turned from
//!   `claiming`, in the write's entity group transaction); its rows are to be settled.
//! - `done`: settled; a small tombstone kept for [`crate::ClientOptions::intent_retention`],
//!   so that a doubtful attempt of the write can still learn it committed, and a late
//!   copy of it can't commit again.
//! - `aborted`: the write did not commit and can no longer commit (its intent was
//!   fenced); claims it listed are released.
//!
//! The intent is the write's *commit marker*: its state tells exactly whether a
//! write whose answer was lost committed (see `commit`).
//!
//! Applying (settling) an intent is in `settle`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tables_core::model::ENTITY_TYPE_PROPERTY;
use tables_core::{
    DateTime, DynamicEntity, ETag, Engine, EntityKey, Error, ErrorKind, IfMatch, Origin, Result,
    Value, WriteOp,
};

use super::conflict::ConflictLoop;
use super::Implied;

/// The `EntityType` of intent rows.
pub(crate) const INTENT_TYPE: &str = "$intent";
/// The property holding an intent's JSON.
const INTENT_PROPERTY: &str = "Intent";
/// The RowKey prefix of intent rows.
pub(crate) const INTENT_ROW_PREFIX: &str = "$intent_";
/// The format version written in `v`.
const FORMAT_VERSION: u32 = 1;

/// Where an intent is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum IntentState {
    /// Claims are being made; the write has not committed.
    Claiming,
    /// The write committed; its rows are to be settled.
    #[default]
    Pending,
    /// Settled: a tombstone.
    Done,
    /// The write did not and will not commit.
    Aborted,
}

/// An index row an intent may touch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct RowRef {
    pub(crate) index: String,
    pub(crate) entry: bool,
    pub(crate) table: String,
    pub(crate) pk: String,
    pub(crate) rk: String,
    /// The index keeps its rows in the primary's partition (an index entity there
    /// lists members by RowKey alone).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) near: bool,
}

impl RowRef {
    pub(crate) fn key(&self) -> EntityKey {
        EntityKey::new(self.pk.clone(), self.rk.clone())
    }
}

/// One primary an intent covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PrimaryIntent {
    pub(crate) kind: String,
    pub(crate) rk: String,
    pub(crate) rows: BTreeSet<RowRef>,
    /// The new row of a move (`Table::move_to`): the key of the row it comes from,
    /// whose copies it takes over while settling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) from: Option<MovedFrom>,
}

/// Where the new row of a move comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MovedFrom {
    pub(crate) pk: String,
    pub(crate) rk: String,
}

impl PrimaryIntent {
    pub(crate) fn new(kind: String, rk: String, rows: BTreeSet<RowRef>) -> PrimaryIntent {
        PrimaryIntent {
            kind,
            rk,
            rows,
            from: None,
        }
    }

    /// The primary as the new row of a move from `from`.
    pub(crate) fn moved_from(mut self, from: Option<&EntityKey>) -> PrimaryIntent {
        self.from = from.map(|key| MovedFrom {
            pk: key.partition_key.clone(),
            rk: key.row_key.clone(),
        });
        self
    }

    fn same_primary(&self, other: &PrimaryIntent) -> bool {
        self.kind == other.kind && self.rk == other.rk
    }
}

/// An intent's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IntentDoc {
    v: u32,
    #[serde(default)]
    state: IntentState,
    /// The rows in the primaries' own partition are listed too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    all: bool,
    /// A repair of some indexes only: the rows of the others are left alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    only: Option<BTreeSet<String>>,
    #[serde(default)]
    primaries: Vec<PrimaryIntent>,
}

impl IntentDoc {
    pub(crate) fn new(state: IntentState, all: bool, primaries: Vec<PrimaryIntent>) -> IntentDoc {
        IntentDoc {
            v: FORMAT_VERSION,
            state,
            all,
            only: None,
            primaries,
        }
    }

    /// The same document, settling only the indexes named in `only`.
    pub(crate) fn only(mut self, only: Option<BTreeSet<String>>) -> IntentDoc {
        self.only = only;
        self
    }

    /// The indexes a repair settles (`None`: all).
    pub(crate) fn only_indexes(&self) -> Option<BTreeSet<String>> {
        self.only.clone()
    }

    /// Whether settling it keeps index `index`.
    pub(crate) fn settles(&self, index: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(index))
    }

    pub(crate) fn state(&self) -> IntentState {
        self.state
    }

    pub(crate) fn covers_all_rows(&self) -> bool {
        self.all
    }

    pub(crate) fn primaries(&self) -> &[PrimaryIntent] {
        &self.primaries
    }

    /// The same document in `state`.
    pub(crate) fn with_state(mut self, state: IntentState) -> IntentDoc {
        self.state = state;
        self
    }

    /// Whether it is a tombstone: settled (`done`), or fenced with nothing left to
    /// release (`aborted` without rows).
    pub(crate) fn is_finished(&self) -> bool {
        match self.state {
            IntentState::Done => true,
            IntentState::Aborted => self.primaries.is_empty(),
            IntentState::Claiming | IntentState::Pending => false,
        }
    }

    /// Whether settling it can have work to do.
    pub(crate) fn has_work(&self) -> bool {
        matches!(self.state, IntentState::Pending | IntentState::Aborted)
            && !self.primaries.is_empty()
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

/// The index rows `implied` holds that upkeep outside the primary's transaction
/// keeps: those in other partitions or tables, or every one with `all`; each with
/// the copy to write (`None` for an index entity membership).
pub(crate) fn rows_of(
    implied: &Implied,
    primary_table: &str,
    all: bool,
) -> BTreeMap<RowRef, Option<DynamicEntity>> {
    let mut rows = BTreeMap::new();
    for copy in implied.copies.iter().filter(|c| all || !c.same_partition()) {
        let key = copy.key();
        let reference = RowRef {
            index: copy.name().to_owned(),
            entry: false,
            table: copy.table().unwrap_or(primary_table).to_owned(),
            pk: key.partition_key,
            rk: key.row_key,
            near: copy.same_partition(),
        };
        rows.insert(reference, Some(copy.entity().clone()));
    }
    for entry in implied
        .entries
        .iter()
        .filter(|e| all || !e.same_partition())
    {
        let reference = RowRef {
            index: entry.name().to_owned(),
            entry: true,
            table: entry.table().unwrap_or(primary_table).to_owned(),
            pk: entry.key().partition_key.clone(),
            rk: entry.key().row_key.clone(),
            near: entry.same_partition(),
        };
        rows.insert(reference, None);
    }
    rows
}

/// The intent row at `key` holding `doc`.
pub(crate) fn intent_row(key: &EntityKey, doc: &IntentDoc) -> Result<DynamicEntity> {
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

/// A fresh, unique intent key in `partition_key`.
pub(crate) fn new_intent_key(partition_key: &str) -> EntityKey {
    EntityKey::new(
        partition_key,
        format!("{INTENT_ROW_PREFIX}{}", uuid::Uuid::new_v4().simple()),
    )
}

/// Reads an intent row's document.
///
/// # Errors
///
/// [`ErrorKind::Decode`] if the row holds no readable intent.
pub(crate) fn parse_intent(row: &DynamicEntity) -> Result<IntentDoc> {
    read_doc(row, "intent row", INTENT_PROPERTY, |doc: &IntentDoc| doc.v)
}

/// Reads the JSON document a row of the client's own (`what`: an intent row, a
/// move row) keeps in `property`, in this client's format version.
///
/// # Errors
///
/// [`ErrorKind::Decode`] naming the row and the property: no string there,
/// unreadable JSON, another format version.
pub(crate) fn read_doc<D: serde::de::DeserializeOwned>(
    row: &DynamicEntity,
    what: &str,
    property: &str,
    version: impl Fn(&D) -> u32,
) -> Result<D> {
    let fail = |why: String| {
        Error::new(ErrorKind::Decode, format!("the {what} {} {why}", row.key()))
            .with_entity_key(row.key())
            .with_property(property)
    };
    let Some(Value::String(text)) = row.get(property) else {
        return Err(fail(format!("has no string `{property}` property")));
    };
    let doc: D =
        serde_json::from_str(text).map_err(|e| fail(format!("holds unreadable JSON: {e}")))?;
    if version(&doc) != FORMAT_VERSION {
        return Err(fail(format!(
            "has format version {}; this client reads version {FORMAT_VERSION}",
            version(&doc)
        )));
    }
    Ok(doc)
}

/// An intent being worked on: where it is, the version last seen (`None` once it is
/// gone), its content as this worker knows it, and when it was last written.
#[derive(Debug)]
pub(crate) struct LiveIntent {
    pub(crate) key: EntityKey,
    pub(crate) etag: Option<ETag>,
    pub(crate) doc: IntentDoc,
    pub(crate) written_at: Option<DateTime>,
    /// Whether `doc` lists rows the stored intent doesn't.
    pub(crate) dirty: bool,
}

impl LiveIntent {
    pub(crate) fn new(key: EntityKey, etag: Option<ETag>, doc: IntentDoc) -> LiveIntent {
        LiveIntent {
            key,
            etag,
            doc,
            written_at: None,
            dirty: false,
        }
    }

    /// An intent as read from its row.
    ///
    /// # Errors
    ///
    /// As [`parse_intent`].
    pub(crate) fn from_row(row: &DynamicEntity) -> Result<LiveIntent> {
        let mut live = LiveIntent::new(row.key(), row.etag.clone(), parse_intent(row)?);
        live.written_at = row.timestamp;
        Ok(live)
    }

    /// Whether the intent is still there with work to do (no other worker finished
    /// it meanwhile).
    pub(crate) fn is_at_work(&self) -> bool {
        self.etag.is_some() && self.doc.has_work()
    }

    /// The rows listed for the primary `kind`/`row_key` (added if missing).
    /// Where the primary `kind`/`row_key` was moved from, when it is the new row of
    /// a move.
    pub(crate) fn moved_from(&self, kind: &str, row_key: &str) -> Option<EntityKey> {
        self.doc
            .primaries
            .iter()
            .find(|p| p.kind == kind && p.rk == row_key)
            .and_then(|p| p.from.as_ref())
            .map(|from| EntityKey::new(from.pk.clone(), from.rk.clone()))
    }

    pub(crate) fn rows_of(&mut self, kind: &str, row_key: &str) -> &mut BTreeSet<RowRef> {
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

    /// Re-reads the stored intent after a lost race, keeping the rows this worker
    /// added.
    pub(crate) async fn reload(&mut self, engine: &dyn Engine, table: &str) -> Result<()> {
        match engine.get_entity(table, &self.key, None).await? {
            None => {
                self.etag = None;
                self.dirty = false;
            }
            Some(row) => {
                let stored = parse_intent(&row)?;
                self.etag = row.etag;
                self.written_at = row.timestamp;
                if stored.is_finished() {
                    // Another worker finished it: its work is over, and rows added to a
                    // tombstone would resurrect it.
                    self.doc = stored;
                    self.dirty = false;
                    return Ok(());
                }
                let mut merged = stored.clone();
                merged.absorb(&self.doc);
                self.dirty = merged != stored;
                self.doc = merged;
            }
        }
        Ok(())
    }

    /// Replaces the stored intent with `doc`, If-Match the last seen version.
    /// `Ok(false)` when another worker changed it first (then reloaded) or it is gone.
    pub(crate) async fn store(
        &mut self,
        engine: &dyn Engine,
        table: &str,
        doc: IntentDoc,
    ) -> Result<bool> {
        let Some(etag) = self.etag.clone() else {
            return Ok(false);
        };
        let op = WriteOp::Replace {
            entity: intent_row(&self.key, &doc)?,
            if_match: IfMatch::Etag(etag),
        };
        match engine.write(table, &op).await {
            Ok(outcome) => {
                self.etag = outcome.etag;
                self.doc = doc;
                self.dirty = false;
                Ok(true)
            }
            Err(err) if super::conflict::row_changed(&err) => {
                self.reload(engine, table).await?;
                Ok(false)
            }
            Err(err) => Err(err),
        }
    }

    /// Stores the extended document. `Ok(false)` when another worker changed it first
    /// (reloaded: run the round again) or it is gone.
    pub(crate) async fn persist(&mut self, engine: &dyn Engine, table: &str) -> Result<bool> {
        if self.etag.is_none() {
            self.dirty = false;
            return Ok(false);
        }
        let doc = self.doc.clone();
        self.store(engine, table, doc).await
    }

    /// Deletes the intent, If-Match the last seen version. `Ok(false)` when another
    /// worker changed it first (then reloaded).
    pub(crate) async fn delete(&mut self, engine: &dyn Engine, table: &str) -> Result<bool> {
        let Some(etag) = self.etag.clone() else {
            return Ok(true);
        };
        let op = WriteOp::Delete {
            key: self.key.clone(),
            if_match: IfMatch::Etag(etag),
        };
        match engine.write(table, &op).await {
            Ok(_) => {
                self.etag = None;
                Ok(true)
            }
            Err(err) if err.kind() == ErrorKind::EntityNotFound => {
                self.etag = None;
                Ok(true)
            }
            Err(err) if err.kind() == ErrorKind::PreconditionFailed => {
                self.reload(engine, table).await?;
                Ok(false)
            }
            Err(err) => Err(err),
        }
    }

    /// Turns a `claiming` intent into `aborted`, so its write can never commit (the
    /// write's transaction is conditional on the claiming version). Returns the state
    /// the intent is in afterwards (`None` when it is gone).
    ///
    /// # Errors
    ///
    /// The engine's errors; [`ErrorKind::PreconditionFailed`] when the intent keeps
    /// changing for more than `retries` rounds.
    pub(crate) async fn fence(
        &mut self,
        engine: &dyn Engine,
        table: &str,
        retries: u32,
    ) -> Result<Option<IntentState>> {
        let mut rounds = ConflictLoop::new(retries);
        loop {
            if self.etag.is_none() {
                return Ok(None);
            }
            if self.doc.state != IntentState::Claiming {
                return Ok(Some(self.doc.state));
            }
            let aborted = self.doc.clone().with_state(IntentState::Aborted);
            if self.store(engine, table, aborted).await? {
                return Ok(Some(IntentState::Aborted));
            }
            rounds
                .lost(
                    Error::new(
                        ErrorKind::PreconditionFailed,
                        format!("the intent {} changed while being fenced", self.key),
                    )
                    .with_origin(Origin::Service),
                )
                .await?;
        }
    }

    /// How long ago the intent was last written, by this machine's clock (zero when
    /// unknown or in the future).
    pub(crate) fn age(&self) -> Duration {
        let Some(written) = self.written_at else {
            return Duration::ZERO;
        };
        let ticks = DateTime::now().ticks().saturating_sub(written.ticks());
        let nanos = u64::try_from(ticks).unwrap_or(0).saturating_mul(100);
        Duration::from_nanos(nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_round_trip_and_read_the_first_format() {
        let rows: BTreeSet<RowRef> = [RowRef {
            index: "by_email".into(),
            entry: false,
            table: "ByEmail".into(),
            pk: "p".into(),
            rk: "r".into(),
            near: false,
        }]
        .into();
        let doc = IntentDoc::new(
            IntentState::Claiming,
            false,
            vec![PrimaryIntent::new(
                "Employee".into(),
                "empid_1".into(),
                rows,
            )],
        );
        let key = new_intent_key("Sales");
        assert!(key.row_key.starts_with(INTENT_ROW_PREFIX));
        let row = intent_row(&key, &doc).unwrap();
        assert_eq!(parse_intent(&row).unwrap(), doc);
        // The first format had no state: such intents are pending.
        let old = DynamicEntity::new("Sales", "$intent_1")
            .with(INTENT_PROPERTY, r#"{"v":1,"primaries":[]}"#);
        let parsed = parse_intent(&old).unwrap();
        assert_eq!(parsed.state(), IntentState::Pending);
        assert!(!parsed.has_work());
        let tombstone = IntentDoc::new(IntentState::Done, false, Vec::new());
        let text = serde_json::to_string(&tombstone).unwrap();
        assert_eq!(text, r#"{"v":1,"state":"done","primaries":[]}"#);
    }
}
