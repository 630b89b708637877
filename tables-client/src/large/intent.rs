//! Blob intents: how a write of blob fields records the blobs it uploads before it
//! uploads them, so that a crash at any step leaves nothing `reconcile()` can't
//! find.
//!
//! # Row format
//!
//! An intent lives in the partition of the rows it covers:
//!
//! - RowKey `"$blobs_<uuid>"`, `EntityType = "$blobs"`;
//! - `BlobIntent` (`Edm.String`): JSON
//!   `{"v":1,"state":"pending","c":"photos","uploaded":["staff/…/photo/…"],"replaced":[]}`.
//!
//! # States
//!
//! - `pending`: written alone before the uploads; the write has not committed.
//!   Its entity group transaction carries the intent's next version under the
//!   pending version's ETag, so the write commits only while the intent is pending.
//! - `committed`: written in the write's transaction with the blobs it replaced;
//!   the write committed, those blobs are to be deleted.
//! - `aborted`: fenced by `reconcile()` or by the writer after a lost answer: the
//!   write did not commit and never can; the blobs it uploaded are to be deleted.
//!
//! Once its blobs are deleted, the intent row is deleted. The blob layer hides
//! intent rows from every read.

use serde::{Deserialize, Serialize};

use crate::upkeep::conflict::row_changed;
use tables_core::model::ENTITY_TYPE_PROPERTY;
use tables_core::{
    DynamicEntity, ETag, Engine, EntityKey, Error, ErrorKind, IfMatch, Result, Value, WriteOp,
};

/// The `EntityType` of blob intent rows.
pub(super) const BLOB_INTENT_TYPE: &str = "$blobs";
/// The RowKey prefix of blob intent rows.
const ROW_PREFIX: &str = "$blobs_";
/// The property holding an intent's JSON.
const PROPERTY: &str = "BlobIntent";
/// The format version written in `v`.
const FORMAT_VERSION: u32 = 1;

/// Where a blob intent is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum BlobIntentState {
    /// The uploads are being made; the write has not committed.
    Pending,
    /// The write committed; the blobs it replaced are to be deleted.
    Committed,
    /// The write did not commit and never will; its uploads are to be deleted.
    Aborted,
}

/// An intent's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct BlobIntentDoc {
    v: u32,
    state: BlobIntentState,
    /// The container of every blob listed.
    c: String,
    /// The blobs the write uploads (to delete if it does not commit).
    #[serde(default)]
    uploaded: Vec<String>,
    /// The blobs the write replaces (to delete once it commits).
    #[serde(default)]
    replaced: Vec<String>,
}

/// A blob intent row as last read or written.
#[derive(Debug, Clone)]
pub(super) struct BlobIntent {
    key: EntityKey,
    /// `None` before it is written.
    etag: Option<ETag>,
    doc: BlobIntentDoc,
}

/// Whether `row` is a blob intent.
pub(super) fn is_blob_intent(row: &DynamicEntity) -> bool {
    row.row_key.starts_with(ROW_PREFIX)
        && matches!(row.get(ENTITY_TYPE_PROPERTY), Some(Value::String(t)) if t == BLOB_INTENT_TYPE)
}

impl BlobIntent {
    /// A new intent in `partition_key`, not yet written.
    pub(super) fn new(
        partition_key: &str,
        state: BlobIntentState,
        container: &str,
        uploaded: Vec<String>,
        replaced: Vec<String>,
    ) -> BlobIntent {
        BlobIntent {
            key: EntityKey::new(
                partition_key,
                format!("{ROW_PREFIX}{}", uuid::Uuid::new_v4().simple()),
            ),
            etag: None,
            doc: BlobIntentDoc {
                v: FORMAT_VERSION,
                state,
                c: container.to_owned(),
                uploaded,
                replaced,
            },
        }
    }

    /// The intent a row holds.
    pub(super) fn from_row(row: &DynamicEntity) -> Result<BlobIntent> {
        let key = row.key();
        let damaged = |why: String| {
            Error::new(
                ErrorKind::Decode,
                format!("the blob intent {key} is damaged: {why}"),
            )
            .with_entity_key(key.clone())
        };
        let Some(Value::String(json)) = row.get(PROPERTY) else {
            return Err(damaged(format!("no `{PROPERTY}` string")));
        };
        let doc: BlobIntentDoc = serde_json::from_str(json).map_err(|e| damaged(e.to_string()))?;
        if doc.v != FORMAT_VERSION {
            return Err(damaged(format!(
                "format version {} (this SDK reads {FORMAT_VERSION}; use a newer one)",
                doc.v
            )));
        }
        Ok(BlobIntent {
            key,
            etag: row.etag.clone(),
            doc,
        })
    }

    pub(super) fn key(&self) -> &EntityKey {
        &self.key
    }

    pub(super) fn state(&self) -> BlobIntentState {
        self.doc.state
    }

    pub(super) fn container(&self) -> &str {
        &self.doc.c
    }

    pub(super) fn uploaded(&self) -> &[String] {
        &self.doc.uploaded
    }

    pub(super) fn replaced(&self) -> &[String] {
        &self.doc.replaced
    }

    /// The row of this intent in `state`, with the blobs it replaces.
    fn row(&self, state: BlobIntentState, replaced: Vec<String>) -> Result<DynamicEntity> {
        let doc = BlobIntentDoc {
            state,
            replaced,
            ..self.doc.clone()
        };
        let json = serde_json::to_string(&doc)
            .map_err(|e| Error::local(ErrorKind::InvalidValue, format!("a blob intent: {e}")))?;
        let mut row = DynamicEntity::new(self.key.partition_key.clone(), self.key.row_key.clone());
        row.insert(ENTITY_TYPE_PROPERTY, BLOB_INTENT_TYPE);
        row.insert(PROPERTY, json);
        Ok(row)
    }

    /// The write that creates it as it is.
    pub(super) fn insert_op(&self) -> Result<WriteOp> {
        Ok(WriteOp::Insert(
            self.row(self.doc.state, self.doc.replaced.clone())?,
        ))
    }

    /// Writes it, alone, as it is.
    pub(super) async fn create(&mut self, engine: &dyn Engine, table: &str) -> Result<()> {
        let written = engine.write(table, &self.insert_op()?).await?;
        self.etag = written.etag;
        Ok(())
    }

    /// The write, for the transaction of the write it covers, that turns it to
    /// `committed` with `replaced`: only while it is still the version written.
    pub(super) fn commit_op(&self, replaced: Vec<String>) -> Result<WriteOp> {
        Ok(WriteOp::Replace {
            entity: self.row(BlobIntentState::Committed, replaced)?,
            if_match: self.if_match(),
        })
    }

    fn if_match(&self) -> IfMatch {
        self.etag.clone().map_or(IfMatch::Any, IfMatch::Etag)
    }

    /// Turns a pending intent to `aborted`, so the write it covers can never
    /// commit. `Ok(false)` when the intent changed or went since it was read (read
    /// it again to learn what happened).
    pub(super) async fn fence(&mut self, engine: &dyn Engine, table: &str) -> Result<bool> {
        let op = WriteOp::Replace {
            entity: self.row(BlobIntentState::Aborted, self.doc.replaced.clone())?,
            if_match: self.if_match(),
        };
        match engine.write(table, &op).await {
            Ok(written) => {
                self.etag = written.etag;
                self.doc.state = BlobIntentState::Aborted;
                Ok(true)
            }
            Err(e) if row_changed(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The intent as stored now; `None` when it is gone.
    pub(super) async fn reread(
        &self,
        engine: &dyn Engine,
        table: &str,
    ) -> Result<Option<BlobIntent>> {
        match engine.get_entity(table, &self.key, None).await? {
            Some(row) => BlobIntent::from_row(&row).map(Some),
            None => Ok(None),
        }
    }

    /// Deletes it, if it is still the version last seen (a version changed since
    /// belongs to another worker, which deletes it).
    pub(super) async fn remove(&self, engine: &dyn Engine, table: &str) -> Result<()> {
        let op = WriteOp::Delete {
            key: self.key.clone(),
            if_match: self.if_match(),
        };
        match engine.write(table, &op).await {
            Ok(_) => Ok(()),
            Err(e) if row_changed(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// After the transaction that turned it to `committed` succeeded: its version.
    pub(super) fn committed(&mut self, etag: Option<ETag>, replaced: Vec<String>) {
        self.etag = etag;
        self.doc.state = BlobIntentState::Committed;
        self.doc.replaced = replaced;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_round_trips_through_its_row() {
        let intent = BlobIntent::new(
            "hr",
            BlobIntentState::Pending,
            "photos",
            vec!["staff/ab/photo/1".into()],
            Vec::new(),
        );
        let WriteOp::Insert(row) = intent.insert_op().unwrap() else {
            panic!("an insert");
        };
        assert!(is_blob_intent(&row));
        let read = BlobIntent::from_row(&row).unwrap();
        assert_eq!(read.doc, intent.doc);
        assert_eq!(read.key(), intent.key());
        let WriteOp::Replace { entity, .. } = intent.commit_op(vec!["old".into()]).unwrap() else {
            panic!("a replace");
        };
        let committed = BlobIntent::from_row(&entity).unwrap();
        assert_eq!(committed.state(), BlobIntentState::Committed);
        assert_eq!(committed.replaced(), ["old".to_owned()]);
    }

    #[test]
    fn a_row_of_another_type_is_not_an_intent() {
        let row = DynamicEntity::new("hr", "$blobs_1").with(ENTITY_TYPE_PROPERTY, "Employee");
        assert!(!is_blob_intent(&row));
        let damaged = DynamicEntity::new("hr", "$blobs_1")
            .with(ENTITY_TYPE_PROPERTY, BLOB_INTENT_TYPE)
            .with(PROPERTY, "{");
        assert!(is_blob_intent(&damaged));
        assert_eq!(
            BlobIntent::from_row(&damaged).unwrap_err().kind(),
            ErrorKind::Decode
        );
    }
}
