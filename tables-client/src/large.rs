//! Large entities: `#[entity(blob)]` fields kept in blobs beside the table (the
//! design guide's large-entities pattern), and `#[entity(spill)]` fields kept in
//! the row while they fit one property (64 KiB) and in a blob when they don't.
//!
//! [`TableServiceClient::with_blob_store`](crate::TableServiceClient::with_blob_store)
//! puts a [`BlobEngine`] over the client's engine. For each row written with a blob
//! field, it:
//!
//! 1. reads the row's current version when the write may replace a blob (a replace,
//!    an upsert, a merge of a blob field, a delete), to learn the blobs it refers to;
//! 2. uploads each new value to a blob of its own, under a name never used before
//!    (`{table}/{hash of the keys}/{property}/{uuid}`, written only if absent);
//! 3. writes the row, which now holds a reference (container, name, size, ETag)
//!    instead of the value;
//! 4. deletes the blobs the write replaced; if the write failed and did not apply,
//!    deletes the blobs it uploaded.
//!
//! So a row never points at a missing or half-written blob: a blob exists, whole,
//! before any row refers to it, and is deleted only after no row does. A crash or a
//! lost answer between the steps leaves at most an orphan blob, which
//! [`BlobEngine::sweep_orphans`] deletes (blobs younger than its grace period are
//! kept: they may belong to a write still in flight). Reads fetch the blobs of the
//! rows they return, checking each against the ETag the row recorded; a projection
//! that leaves the field out fetches nothing.
//!
//! Without a blob store, a client refuses to write a blob field (every engine
//! refuses the held value, nothing is sent) and can't read one.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tables_core::blob::{BlobCondition, BlobStore, ListBlobsOptions};
use tables_core::sealed::{
    held_parts, is_blob_ref, unhold, value_from_plain_bytes, BLOB_REF_MAGIC, HELD_MAGIC,
};
use tables_core::size::{value_size, MAX_PROPERTY_VALUE_BYTES};
use tables_core::{
    ContinuationToken, DateTime, DynamicEntity, Engine, EntityKey, Error, ErrorKind, QuerySpec,
    Result, Value, WriteOp,
};

use crate::layer::{row_layer_engine, Applied};

/// How long [`BlobEngine::sweep_orphans`] leaves an unreferenced blob by default:
/// longer than any write takes, retries included.
pub const DEFAULT_SWEEP_GRACE: Duration = Duration::from_secs(15 * 60);

/// What a row stores for a blob field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct BlobRef {
    /// The container.
    c: String,
    /// The blob's name.
    n: String,
    /// Its size in bytes.
    s: u64,
    /// Its ETag when written.
    e: String,
}

impl BlobRef {
    fn to_value(&self) -> Result<Value> {
        let json = serde_json::to_vec(self)
            .map_err(|e| Error::local(ErrorKind::InvalidValue, format!("a blob reference: {e}")))?;
        let mut bytes = Vec::with_capacity(BLOB_REF_MAGIC.len() + json.len());
        bytes.extend_from_slice(BLOB_REF_MAGIC);
        bytes.extend_from_slice(&json);
        Ok(Value::Binary(bytes))
    }

    fn from_value(key: &EntityKey, property: &str, value: &Value) -> Result<Option<BlobRef>> {
        let Value::Binary(bytes) = value else {
            return Ok(None);
        };
        let Some(json) = bytes.strip_prefix(&BLOB_REF_MAGIC[..]) else {
            return Ok(None);
        };
        serde_json::from_slice(json).map(Some).map_err(|e| {
            Error::new(
                ErrorKind::Decode,
                format!("property `{property}` of {key} holds a damaged blob reference: {e}"),
            )
            .with_entity_key(key.clone())
            .with_property(property)
        })
    }
}

/// What [`BlobEngine::sweep_orphans`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SweepReport {
    /// Blobs no row refers to, deleted.
    pub deleted: usize,
    /// Blobs no row refers to, kept because they are younger than the grace period.
    pub kept_recent: usize,
    /// Blobs a row refers to.
    pub referenced: usize,
}

/// An [`Engine`] that keeps the values of `#[entity(blob)]` fields in a
/// [`BlobStore`] and a reference in the row. See the module docs.
#[derive(Debug, Clone)]
pub struct BlobEngine {
    inner: Arc<dyn Engine>,
    store: Arc<dyn BlobStore>,
    container: String,
    grace: Duration,
}

/// The blob references of `entity`, by property.
fn refs_of(entity: &DynamicEntity) -> Result<Vec<(String, BlobRef)>> {
    let key = entity.key();
    let mut refs = Vec::new();
    for (name, value) in entity.properties() {
        if let Some(r) = BlobRef::from_value(&key, name, value)? {
            refs.push((name.to_owned(), r));
        }
    }
    Ok(refs)
}

impl BlobEngine {
    /// `inner` with blob fields kept in `container` of `store` (which must exist).
    pub fn new(
        inner: Arc<dyn Engine>,
        store: Arc<dyn BlobStore>,
        container: impl Into<String>,
    ) -> BlobEngine {
        BlobEngine {
            inner,
            store,
            container: container.into(),
            grace: DEFAULT_SWEEP_GRACE,
        }
    }

    /// How old an unreferenced blob must be before [`BlobEngine::sweep_orphans`]
    /// deletes it (default [`DEFAULT_SWEEP_GRACE`]).
    #[must_use]
    pub fn with_sweep_grace(mut self, grace: Duration) -> BlobEngine {
        self.grace = grace;
        self
    }

    /// The engine below.
    pub fn inner(&self) -> &Arc<dyn Engine> {
        &self.inner
    }

    /// The prefix of every blob of `table`.
    fn table_prefix(table: &str) -> String {
        format!("{}/", table.to_ascii_lowercase())
    }

    /// A name no blob had before, for `property` of the row `key` in `table`.
    fn new_blob_name(table: &str, key: &EntityKey, property: &str) -> String {
        let mut hash = Sha256::new();
        hash.update(key.partition_key.as_bytes());
        hash.update([0]);
        hash.update(key.row_key.as_bytes());
        let digest = hash.finalize();
        let row: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{}{row}/{property}/{}",
            BlobEngine::table_prefix(table),
            uuid::Uuid::new_v4().simple()
        )
    }

    /// Uploads every held value of `entity` to a new blob and puts its reference in
    /// its place. Returns the row and the names uploaded.
    async fn upload(
        &self,
        table: &str,
        mut entity: DynamicEntity,
    ) -> Result<(DynamicEntity, Vec<String>)> {
        let key = entity.key();
        let mut held: Vec<(String, Vec<u8>)> = Vec::new();
        let mut inline: Vec<(String, Value)> = Vec::new();
        for (name, value) in entity.properties() {
            let Some((spills, plain)) = held_parts(value) else {
                continue;
            };
            if spills {
                // Inline while it fits one property; a blob otherwise.
                let value = value_from_plain_bytes(plain)?;
                if value_size(&value) <= MAX_PROPERTY_VALUE_BYTES {
                    inline.push((name.to_owned(), value));
                    continue;
                }
            }
            held.push((name.to_owned(), plain.to_vec()));
        }
        for (name, value) in inline {
            entity.insert(name, value);
        }
        let mut uploaded = Vec::with_capacity(held.len());
        for (property, content) in held {
            let name = BlobEngine::new_blob_name(table, &key, &property);
            let size = content.len() as u64;
            match self
                .store
                .put_blob(&self.container, &name, content, &BlobCondition::Absent)
                .await
            {
                Ok(written) => {
                    uploaded.push(name.clone());
                    let reference = BlobRef {
                        c: self.container.clone(),
                        n: name,
                        s: size,
                        e: written.etag,
                    };
                    entity.insert(property, reference.to_value()?);
                }
                Err(e) => {
                    // The row was not written: the blobs uploaded so far are orphans.
                    self.delete_quietly(&uploaded).await;
                    if !e.may_have_applied() {
                        return Err(e);
                    }
                    // The last upload may exist too.
                    self.delete_quietly(std::slice::from_ref(&name)).await;
                    return Err(e);
                }
            }
        }
        Ok((entity, uploaded))
    }

    /// Deletes blobs, leaving to the sweep any that can't be deleted now.
    async fn delete_quietly(&self, names: &[String]) {
        for name in names {
            if let Err(e) = self
                .store
                .delete_blob(&self.container, name, &BlobCondition::Any)
                .await
            {
                tracing::warn!(blob = %name, error = %e, "a replaced blob was not deleted; sweep_orphans will");
            }
        }
    }

    /// The blob names `old` refers to that a successful `op` leaves without a row.
    fn replaced_by(
        op: &WriteOp,
        old: &[(String, BlobRef)],
        new: Option<&DynamicEntity>,
    ) -> Vec<String> {
        let replaces_row = matches!(
            op,
            WriteOp::Replace { .. } | WriteOp::UpsertReplace(_) | WriteOp::Delete { .. }
        );
        old.iter()
            .filter(|(property, reference)| {
                let kept = new
                    .and_then(|row| row.get(property))
                    .and_then(|value| {
                        BlobRef::from_value(&EntityKey::new("", ""), property, value)
                            .ok()
                            .flatten()
                    })
                    .is_some_and(|r| r.n == reference.n);
                let rewritten = new.is_some_and(|row| row.get(property).is_some());
                !kept && (replaces_row || rewritten)
            })
            .map(|(_, reference)| reference.n.clone())
            .collect()
    }

    /// Whether `op` may leave a blob without a row, so the row's blobs must be known
    /// first.
    fn needs_old(op: &WriteOp) -> bool {
        match op {
            WriteOp::Insert(_) => false,
            WriteOp::Replace { .. } | WriteOp::UpsertReplace(_) | WriteOp::Delete { .. } => true,
            WriteOp::Merge { entity, .. } | WriteOp::UpsertMerge(entity) => entity
                .properties()
                .any(|(_, value)| tables_core::sealed::is_held(value) || is_blob_ref(value)),
        }
    }

    /// The write with its held values uploaded; the blobs uploaded; the blobs it
    /// replaces once it succeeds.
    async fn prepare(
        &self,
        table: &str,
        op: &WriteOp,
    ) -> Result<(WriteOp, Vec<String>, Vec<String>)> {
        let old = if BlobEngine::needs_old(op) {
            match self.inner.get_entity(table, &op.key(), None).await? {
                Some(row) => refs_of(&row)?,
                None => Vec::new(),
            }
        } else {
            Vec::new()
        };
        let (op, uploaded) = match op {
            WriteOp::Delete { .. } => (op.clone(), Vec::new()),
            WriteOp::Insert(entity) => {
                let (entity, up) = self.upload(table, entity.clone()).await?;
                (WriteOp::Insert(entity), up)
            }
            WriteOp::UpsertReplace(entity) => {
                let (entity, up) = self.upload(table, entity.clone()).await?;
                (WriteOp::UpsertReplace(entity), up)
            }
            WriteOp::UpsertMerge(entity) => {
                let (entity, up) = self.upload(table, entity.clone()).await?;
                (WriteOp::UpsertMerge(entity), up)
            }
            WriteOp::Replace { entity, if_match } => {
                let (entity, up) = self.upload(table, entity.clone()).await?;
                (
                    WriteOp::Replace {
                        entity,
                        if_match: if_match.clone(),
                    },
                    up,
                )
            }
            WriteOp::Merge { entity, if_match } => {
                let (entity, up) = self.upload(table, entity.clone()).await?;
                (
                    WriteOp::Merge {
                        entity,
                        if_match: if_match.clone(),
                    },
                    up,
                )
            }
        };
        let replaced = BlobEngine::replaced_by(&op, &old, op.entity());
        Ok((op, uploaded, replaced))
    }

    /// `entity` with each blob reference replaced by the blob's value (held, as the
    /// derive reads it).
    async fn fetch(&self, mut entity: DynamicEntity) -> Result<DynamicEntity> {
        let key = entity.key();
        for (property, reference) in refs_of(&entity)? {
            let missing = || {
                Error::new(
                    ErrorKind::BlobNotFound,
                    format!(
                        "the blob of property `{property}` of {key} ({}/{}) is missing or was \
                         changed outside this client",
                        reference.c, reference.n
                    ),
                )
                .with_origin(tables_core::Origin::Service)
                .with_entity_key(key.clone())
                .with_property(property.clone())
            };
            let blob = self
                .store
                .get_blob_range(
                    &reference.c,
                    &reference.n,
                    0,
                    reference.s.max(1),
                    Some(&reference.e),
                )
                .await
                .map_err(|e| {
                    if e.kind() == ErrorKind::PreconditionFailed {
                        missing()
                    } else {
                        e
                    }
                })?
                .ok_or_else(missing)?;
            if blob.data.len() as u64 != reference.s {
                return Err(missing());
            }
            let mut held = Vec::with_capacity(HELD_MAGIC.len() + blob.data.len());
            held.extend_from_slice(HELD_MAGIC);
            held.extend_from_slice(&blob.data);
            let held = Value::Binary(held);
            // A blob that does not hold a value the SDK wrote is damaged.
            if let Some(Err(e)) = unhold(&held) {
                return Err(e.with_entity_key(key.clone()).with_property(property));
            }
            entity.insert(property, held);
        }
        Ok(entity)
    }

    /// Deletes the blobs of `table` that no row refers to and that are older than
    /// the grace period.
    ///
    /// # Errors
    ///
    /// The engine's and the blob store's errors.
    pub async fn sweep_orphans(&self, table: &str) -> Result<SweepReport> {
        let mut referenced = std::collections::BTreeSet::new();
        let spec = QuerySpec::default();
        let mut token: Option<ContinuationToken> = None;
        loop {
            let page = self.inner.query(table, &spec, token.as_ref()).await?;
            for row in &page.items {
                for (_, reference) in refs_of(row)? {
                    referenced.insert(reference.n);
                }
            }
            match page.continuation {
                Some(next) => token = Some(next),
                None => break,
            }
        }
        let cutoff_nanos = DateTime::now().to_unix_nanos()
            - i128::try_from(self.grace.as_nanos()).unwrap_or(i128::MAX);
        let mut report = SweepReport::default();
        let mut marker = None;
        loop {
            let options = ListBlobsOptions::default()
                .with_prefix(BlobEngine::table_prefix(table))
                .with_marker(marker);
            let page = self.store.list_blobs(&self.container, &options).await?;
            for blob in page.blobs {
                if referenced.contains(&blob.name) {
                    report.referenced += 1;
                    continue;
                }
                let young = blob
                    .last_modified
                    .map_or(true, |at| at.to_unix_nanos() > cutoff_nanos);
                if young {
                    report.kept_recent += 1;
                    continue;
                }
                // Conditional on the version listed: a blob rewritten since is kept.
                match self
                    .store
                    .delete_blob(&self.container, &blob.name, &BlobCondition::Etag(blob.etag))
                    .await
                {
                    Ok(_) => report.deleted += 1,
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::PreconditionFailed | ErrorKind::BlobNotFound
                        ) => {}
                    Err(e) => return Err(e),
                }
            }
            match page.next_marker {
                Some(next) => marker = Some(next),
                None => return Ok(report),
            }
        }
    }
}

/// What a blob layer write remembers: the blobs it uploaded, and those it replaces.
type Uploads = (Vec<String>, Vec<String>);

row_layer_engine!(BlobEngine, Uploads);

impl BlobEngine {
    async fn read_row(&self, _table: &str, row: DynamicEntity) -> Result<DynamicEntity> {
        self.fetch(row).await
    }

    async fn prepare_write(&self, table: &str, op: &WriteOp) -> Result<(WriteOp, Uploads)> {
        let (op, uploaded, replaced) = self.prepare(table, op).await?;
        Ok((op, (uploaded, replaced)))
    }

    /// After a write: the replaced blobs go if it succeeded; the uploaded ones go if
    /// it failed without applying; if it may have applied, either set may be
    /// referenced, and the sweep decides.
    async fn settle(&self, applied: Applied, pending: Vec<Uploads>) {
        for (uploaded, replaced) in pending {
            match applied {
                Applied::Yes => self.delete_quietly(&replaced).await,
                Applied::No => self.delete_quietly(&uploaded).await,
                Applied::Maybe => {}
            }
        }
    }
}
