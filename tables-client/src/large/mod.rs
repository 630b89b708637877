//! Large entities: `#[entity(blob)]` fields kept in blobs beside the table (the
//! design guide's large-entities pattern), and `#[entity(spill)]` fields kept in
//! the row while they fit one property (64 KiB) and in a blob when they don't.
//!
//! [`TableServiceClient::with_blob_store`](crate::TableServiceClient::with_blob_store)
//! puts a [`BlobEngine`] over the client's engine. For each write (or transaction)
//! with blob fields, it:
//!
//! 1. reads the row's current version when the write may replace a blob (a replace,
//!    an upsert, a merge of a blob field, a delete), to learn the blobs it refers to,
//!    and makes the write conditional on that version (an upsert of an absent row
//!    becomes an insert), so the blobs it replaces are exactly those;
//! 2. writes an *intent* row in the row's partition listing the blobs it will upload
//!    (`pending`);
//! 3. uploads each new value to a blob of its own, under a name never used before
//!    (`{table}/{hash of the keys}/{property}/{uuid}`, written only if absent);
//! 4. writes the rows, which now hold a reference (container, name, size, ETag)
//!    instead of the value, and in the same entity group transaction turns the
//!    intent to `committed` with the blobs replaced, only if the intent is still
//!    the `pending` version it wrote;
//! 5. deletes the replaced blobs, then the intent. If the transaction failed and
//!    did not apply, it deletes what it uploaded instead; if its answer was lost, it
//!    reads the intent (committed: the write applied) or fences it (see below:
//!    it did not, and never will).
//!
//! So a row never points at a missing or half-written blob: a blob exists, whole,
//! before any row refers to it, and is deleted only after no row does. A crash at
//! any step leaves at most orphan blobs, and always an intent that lists them:
//! [`Table::reconcile`](crate::Table::reconcile) (through
//! [`Engine::reconcile_layers`]) deletes the replaced blobs of a committed intent;
//! a pending one it first *fences* (turns it to `aborted` under its ETag, so the
//! write's transaction, conditional on the pending version, can never commit),
//! then deletes its uploads. A write that loses its intent to a fence, or its row
//! to a concurrent writer, is planned again (at most [`MAX_WRITE_ATTEMPTS`] times).
//! Intent rows are the layer's own: reads through it never see them.
//!
//! A transaction with blob fields carries one more row, its intent, so it holds at
//! most 99 of the caller's operations (bulk writes leave room for it).
//! [`BlobEngine::sweep_orphans`] remains for blobs no intent lists (a container
//! written by something else, or by an SDK version before intents). Reads fetch
//! the blobs of the rows they return, checking each against the ETag the row
//! recorded, except those of `#[entity(blob, lazy)]` fields: these stay references,
//! read as [`LazyBlob`](crate::blob::LazyBlob) handles that fetch on demand. A
//! projection that leaves the field out fetches nothing.
//!
//! Without a blob store, a client refuses to write a blob field (every engine
//! refuses the held value, nothing is sent) and can't read one.

use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tables_core::blob::{BlobCondition, BlobReference, BlobStore, ListBlobsOptions};
use tables_core::model::ENTITY_TYPE_PROPERTY;
use tables_core::sealed::{
    held_parts, is_blob_ref, is_held_lazy, unhold, value_from_plain_bytes, HELD_MAGIC,
};
use tables_core::size::{value_size, MAX_PROPERTY_VALUE_BYTES};
use tables_core::{
    col, DateTime, DynamicEntity, Engine, EntityKey, Error, ErrorKind, Filter, IfMatch,
    LayerReconcileReport, QuerySpec, Result, Value, WriteOp, WriteOutcome,
};

use crate::layer::row_layer_engine;
use crate::paging::EntityPages;
use crate::upkeep::conflict::lost_race;
use intent::{is_blob_intent, BlobIntent, BlobIntentState, BLOB_INTENT_TYPE};

mod intent;

/// How long [`BlobEngine::sweep_orphans`] leaves an unreferenced blob by default:
/// longer than any write takes, retries included.
pub const DEFAULT_SWEEP_GRACE: Duration = Duration::from_secs(15 * 60);

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
fn refs_of(entity: &DynamicEntity) -> Result<Vec<(String, BlobReference)>> {
    let key = entity.key();
    let mut refs = Vec::new();
    for (name, value) in entity.properties() {
        if let Some(r) = BlobReference::from_value(&key, name, value)? {
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

    /// The values of `entity` that go to blobs, each with its new blob's name; the
    /// spilling values that fit a property are put back inline.
    fn plan_uploads(&self, table: &str, entity: &mut DynamicEntity) -> Result<Vec<Upload>> {
        let key = entity.key();
        let mut uploads = Vec::new();
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
            uploads.push(Upload {
                lazy: is_held_lazy(value),
                property: name.to_owned(),
                name: BlobEngine::new_blob_name(table, &key, name),
                content: plain.to_vec(),
            });
        }
        for (name, value) in inline {
            entity.insert(name, value);
        }
        Ok(uploads)
    }

    /// Deletes blobs; `Ok(count)` of those that existed.
    async fn delete_blobs(&self, container: &str, names: &[String]) -> Result<usize> {
        let mut deleted = 0;
        for name in names {
            match self
                .store
                .delete_blob(container, name, &BlobCondition::Any)
                .await
            {
                Ok(_) => deleted += 1,
                Err(e) if e.kind() == ErrorKind::BlobNotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(deleted)
    }

    /// Deletes blobs and then the intent that lists them, leaving both to
    /// `reconcile()` if that fails now.
    async fn clean_up(&self, table: &str, intent: &BlobIntent, names: &[String]) {
        match self.delete_blobs(intent.container(), names).await {
            Ok(_) => {
                if let Err(e) = intent.remove(self.inner.as_ref(), table).await {
                    tracing::warn!(intent = %intent.key(), error = %e, "a finished blob intent was not deleted; reconcile() will");
                }
            }
            Err(e) => {
                tracing::warn!(intent = %intent.key(), error = %e, "blobs of a write were not deleted; reconcile() will");
            }
        }
    }

    /// The blob names `old` refers to that a successful `op` leaves without a row.
    fn replaced_by(
        op: &WriteOp,
        old: &[(String, BlobReference)],
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
                        BlobReference::from_value(&EntityKey::new("", ""), property, value)
                            .ok()
                            .flatten()
                    })
                    .is_some_and(|r| r.name == reference.name);
                let rewritten = new.is_some_and(|row| row.get(property).is_some());
                !kept && (replaces_row || rewritten)
            })
            .map(|(_, reference)| reference.name.clone())
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

    /// `op` made conditional on the version of its row read before it (`old`), so
    /// the blobs it replaces are exactly those that version refers to; `None` when
    /// `op` already carries the caller's condition, or its row was not read.
    fn pinned(op: &WriteOp, old: Option<&DynamicEntity>, read: bool) -> Option<WriteOp> {
        if !read {
            return None;
        }
        let etag = old.and_then(|row| row.etag.clone());
        match (op, etag) {
            (WriteOp::UpsertReplace(entity), None) | (WriteOp::UpsertMerge(entity), None) => {
                Some(WriteOp::Insert(entity.clone()))
            }
            (WriteOp::UpsertReplace(entity), Some(etag))
            | (
                WriteOp::Replace {
                    entity,
                    if_match: IfMatch::Any,
                },
                Some(etag),
            ) => Some(WriteOp::Replace {
                entity: entity.clone(),
                if_match: IfMatch::Etag(etag),
            }),
            (WriteOp::UpsertMerge(entity), Some(etag))
            | (
                WriteOp::Merge {
                    entity,
                    if_match: IfMatch::Any,
                },
                Some(etag),
            ) => Some(WriteOp::Merge {
                entity: entity.clone(),
                if_match: IfMatch::Etag(etag),
            }),
            (
                WriteOp::Delete {
                    key,
                    if_match: IfMatch::Any,
                },
                Some(etag),
            ) => Some(WriteOp::Delete {
                key: key.clone(),
                if_match: IfMatch::Etag(etag),
            }),
            _ => None,
        }
    }

    /// The blob references `op` writes that its row does not hold now (a
    /// `LazyBlob` handle copied from another row, or the entity's index copy
    /// written with the handle the entity was read with): each becomes a copy of
    /// that blob, so no two rows ever share one (the next write of either would
    /// delete it under the other).
    fn foreign_references(
        op: &WriteOp,
        old: &[(String, BlobReference)],
    ) -> Result<Vec<(String, BlobReference)>> {
        let Some(entity) = op.entity() else {
            return Ok(Vec::new());
        };
        let key = entity.key();
        let mut foreign = Vec::new();
        for (property, value) in entity.properties() {
            let Some(written) = BlobReference::from_value(&key, property, value)? else {
                continue;
            };
            let held_now = old.iter().any(|(p, r)| {
                p == property && r.name == written.name && r.container == written.container
            });
            if !held_now {
                foreign.push((property.to_owned(), written));
            }
        }
        Ok(foreign)
    }

    /// A write (one op) or a batch through the blob layer. See the module docs.
    async fn write_rows(
        &self,
        table: &str,
        ops: &[WriteOp],
        batch: bool,
    ) -> Result<Vec<WriteOutcome>> {
        let mut attempt = 1;
        loop {
            match self.try_write(table, ops, batch).await? {
                Attempt::Done(mut outcomes) => {
                    for outcome in &mut outcomes {
                        outcome.attempts = outcome.attempts.max(attempt);
                    }
                    return Ok(outcomes);
                }
                Attempt::Again(e) if attempt < MAX_WRITE_ATTEMPTS => {
                    tracing::debug!(error = %e, attempt, "a blob write lost a race; planning it again");
                    attempt += 1;
                }
                Attempt::Again(e) => {
                    let message = format!(
                        "{} (the row changed under each of {attempt} attempts to write it with \
                         its blobs; nothing was written)",
                        e.message()
                    );
                    return Err(e.with_message(message).with_attempts(attempt));
                }
            }
        }
    }

    /// One attempt of [`BlobEngine::write_rows`]: `Again` when it lost a race and
    /// applied nothing.
    async fn try_write(&self, table: &str, ops: &[WriteOp], batch: bool) -> Result<Attempt> {
        let inner = self.inner.as_ref();
        // 1. The versions the writes may replace, and the blobs they refer to.
        let mut planned = Vec::with_capacity(ops.len());
        let mut uploads: Vec<(usize, Upload)> = Vec::new();
        // Read at once: a transaction's rows are independent reads.
        let olds = futures::future::try_join_all(ops.iter().map(|op| async move {
            if BlobEngine::needs_old(op) {
                inner.get_entity(table, &op.key(), None).await
            } else {
                Ok(None)
            }
        }))
        .await?;
        for (i, (op, old)) in ops.iter().zip(olds).enumerate() {
            let read = BlobEngine::needs_old(op);
            let old_refs = match &old {
                Some(row) => refs_of(row)?,
                None => Vec::new(),
            };
            let pinned = BlobEngine::pinned(op, old.as_ref(), read);
            let mut op = pinned.clone().unwrap_or_else(|| op.clone());
            if let Some(entity) = op.entity_mut() {
                for upload in self.plan_uploads(table, entity)? {
                    uploads.push((i, upload));
                }
            }
            for (property, source) in BlobEngine::foreign_references(&op, &old_refs)? {
                let content = source
                    .read_content(self.store.as_ref())
                    .await
                    .map_err(|e| {
                        let message = format!(
                            "property `{property}` of {} is written with a handle to a blob this \
                         write copies, which can't be read: {}",
                            op.key(),
                            e.message()
                        );
                        e.with_message(message).with_property(property.clone())
                    })?;
                uploads.push((
                    i,
                    Upload {
                        lazy: source.lazy,
                        name: BlobEngine::new_blob_name(table, &op.key(), &property),
                        property,
                        content,
                    },
                ));
            }
            planned.push(Planned {
                op,
                pinned: pinned.is_some(),
                old_refs,
            });
        }
        // 2. The intent, before any upload.
        let partition_key = ops
            .first()
            .map(|op| op.partition_key().to_owned())
            .unwrap_or_default();
        let names: Vec<String> = uploads.iter().map(|(_, u)| u.name.clone()).collect();
        let mut intent = None;
        if !uploads.is_empty() {
            let mut pending = BlobIntent::new(
                &partition_key,
                BlobIntentState::Pending,
                &self.container,
                names.clone(),
                Vec::new(),
            );
            pending.create(inner, table).await?;
            intent = Some(pending);
        }
        // 3. The uploads, each to a name never used.
        for (i, upload) in uploads {
            let size = upload.content.len() as u64;
            match self
                .store
                .put_blob(
                    &self.container,
                    &upload.name,
                    upload.content,
                    &BlobCondition::Absent,
                )
                .await
            {
                Ok(written) => {
                    let reference = BlobReference {
                        container: self.container.clone(),
                        name: upload.name,
                        size,
                        etag: written.etag,
                        lazy: upload.lazy,
                    };
                    if let Some(entity) = planned[i].op.entity_mut() {
                        entity.insert(upload.property, reference.to_value()?);
                    }
                }
                Err(e) => {
                    if let Some(intent) = &intent {
                        if e.may_have_applied() {
                            // The upload may still land: the intent stays for
                            // reconcile(), which deletes it whenever it does.
                            let _ = self.delete_blobs(&self.container, &names).await;
                        } else {
                            self.clean_up(table, intent, &names).await;
                        }
                    }
                    return Err(e);
                }
            }
        }
        // 4. The rows, with the intent turned to `committed` in the same
        //    transaction (or, with nothing uploaded but blobs replaced, created so).
        let mut replaced = Vec::new();
        for plan in &planned {
            replaced.extend(BlobEngine::replaced_by(
                &plan.op,
                &plan.old_refs,
                plan.op.entity(),
            ));
        }
        let mut commit: Vec<WriteOp> = planned.iter().map(|p| p.op.clone()).collect();
        match &intent {
            Some(pending) => commit.push(pending.commit_op(replaced.clone())?),
            None if !replaced.is_empty() => {
                let created = BlobIntent::new(
                    &partition_key,
                    BlobIntentState::Committed,
                    &self.container,
                    Vec::new(),
                    replaced.clone(),
                );
                commit.push(created.insert_op()?);
                intent = Some(created);
            }
            None => {}
        }
        let outcome = if batch || commit.len() > 1 {
            inner.submit_batch(table, &commit).await
        } else {
            inner.write(table, &commit[0]).await.map(|o| vec![o])
        };
        let rows = ops.len();
        match outcome {
            Ok(mut outcomes) => {
                if let Some(mut intent) = intent {
                    let etag = outcomes.get(rows).and_then(|o| o.etag.clone());
                    intent.committed(etag, replaced.clone());
                    self.clean_up(table, &intent, &replaced).await;
                }
                outcomes.truncate(rows);
                Ok(Attempt::Done(outcomes))
            }
            Err(e) => {
                let sent_as_batch = batch || commit.len() > 1;
                self.after_failure(table, e, intent, &planned, batch, sent_as_batch)
                    .await
            }
        }
    }

    /// After the transaction of a write failed: clean up what it uploaded if it
    /// did not apply, settle it through its intent if it may have.
    async fn after_failure(
        &self,
        table: &str,
        e: Error,
        intent: Option<BlobIntent>,
        planned: &[Planned],
        batch: bool,
        sent_as_batch: bool,
    ) -> Result<Attempt> {
        let inner = self.inner.as_ref();
        // Which write failed: one of the caller's (made conditional here or not), or
        // the intent's (fenced).
        let culprit = if sent_as_batch {
            e.batch_index()
        } else {
            Some(0)
        };
        let lost = culprit
            .and_then(|i| planned.get(i))
            .is_some_and(|p| p.pinned)
            && lost_race(&e);
        let fenced = culprit == Some(planned.len()) && lost_race(&e);
        let e = if batch { e } else { e.without_batch_index() };
        let Some(mut intent) = intent else {
            // Nothing uploaded and nothing replaced: only a race to report.
            return if lost { Ok(Attempt::Again(e)) } else { Err(e) };
        };
        let uploaded = intent.uploaded().to_vec();
        let uploaded = uploaded.as_slice();
        if !e.may_have_applied() {
            if fenced {
                // reconcile() fenced the intent: the write never commits. Its uploads
                // go (reconcile() deletes them too, but one may land after it did).
                let _ = self.delete_blobs(&self.container, uploaded).await;
                return Ok(Attempt::Again(e));
            }
            self.clean_up(table, &intent, uploaded).await;
            return if lost { Ok(Attempt::Again(e)) } else { Err(e) };
        }
        if intent.state() != BlobIntentState::Pending {
            // Nothing was uploaded: if the transaction applies, even late, its
            // intent tells reconcile() which blobs it replaced.
            return Err(e);
        }
        // The answer was lost: the intent says whether the write committed, and
        // fencing it makes sure a late delivery never will.
        for _ in 0..MAX_WRITE_ATTEMPTS {
            match intent.reread(inner, table).await {
                Ok(Some(now)) => match now.state() {
                    BlobIntentState::Committed => {
                        self.clean_up(table, &now, now.replaced()).await;
                        // Committed, version unknown (read the row to learn it).
                        let outcomes = planned
                            .iter()
                            .map(|_| WriteOutcome::new(None, None))
                            .collect();
                        return Ok(Attempt::Done(outcomes));
                    }
                    BlobIntentState::Aborted => {
                        // Fenced by reconcile(): it did not commit. Plan it again.
                        let _ = self.delete_blobs(&self.container, uploaded).await;
                        return Ok(Attempt::Again(e.settled_not_applied()));
                    }
                    BlobIntentState::Pending => {
                        intent = now;
                        match intent.fence(inner, table).await {
                            Ok(true) => {
                                self.clean_up(table, &intent, uploaded).await;
                                return Err(e.settled_not_applied());
                            }
                            Ok(false) => continue,
                            Err(_) => return Err(e),
                        }
                    }
                },
                // Gone: reconcile() finished it, one way or the other.
                Ok(None) | Err(_) => return Err(e),
            }
        }
        Err(e)
    }

    /// `entity` with each blob reference replaced by the blob's value (held, as the
    /// derive reads it).
    async fn fetch(&self, mut entity: DynamicEntity) -> Result<DynamicEntity> {
        let key = entity.key();
        for (property, reference) in refs_of(&entity)? {
            if reference.lazy {
                // A `LazyBlob` field: the reference is its handle.
                continue;
            }
            let in_context = |e: Error| {
                let message = format!("property `{property}` of {key}: {}", e.message());
                e.with_message(message)
                    .with_entity_key(key.clone())
                    .with_property(property.clone())
            };
            let content = reference
                .read_content(self.store.as_ref())
                .await
                .map_err(in_context)?;
            let mut held = Vec::with_capacity(HELD_MAGIC.len() + content.len());
            held.extend_from_slice(HELD_MAGIC);
            held.extend_from_slice(&content);
            let held = Value::Binary(held);
            // A blob that does not hold a value the SDK wrote is damaged.
            if let Some(Err(e)) = unhold(&held) {
                return Err(in_context(e));
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
        let mut pages = EntityPages::new(table, QuerySpec::default(), None);
        while let Some(page) = pages.next(self.inner.as_ref()).await? {
            for row in &page.items {
                for (_, reference) in refs_of(row)? {
                    referenced.insert(reference.name);
                }
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
                    .is_none_or(|at| at.to_unix_nanos() > cutoff_nanos);
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

/// How many times a blob write is planned again after losing a race (to a
/// concurrent writer of its row, or to `reconcile()` fencing its intent).
pub const MAX_WRITE_ATTEMPTS: u32 = 10;

/// A value on its way to a blob.
struct Upload {
    /// Reads leave it unfetched.
    lazy: bool,
    property: String,
    name: String,
    content: Vec<u8>,
}

/// One write of a call, as it will be sent.
struct Planned {
    op: WriteOp,
    /// Made conditional on the version read here (so a race is ours to retry).
    pinned: bool,
    /// The blobs the version read refers to.
    old_refs: Vec<(String, BlobReference)>,
}

/// How an attempt of a write ended.
enum Attempt {
    Done(Vec<WriteOutcome>),
    /// It lost a race and applied nothing: plan it again.
    Again(Error),
}

row_layer_engine!(BlobEngine, writes = write_rows, reconcile = finish_intents);

impl BlobEngine {
    async fn read_row(&self, _table: &str, row: DynamicEntity) -> Result<DynamicEntity> {
        self.fetch(row).await
    }

    /// Its intent rows.
    fn hides(&self, row: &DynamicEntity) -> bool {
        is_blob_intent(row)
    }

    /// A projection goes down as it is.
    fn widen_select(&self, _select: &[String]) -> Option<Vec<String>> {
        None
    }

    /// [`Engine::reconcile_layers`] for this layer: finishes the blob intents of
    /// `table` (of one partition, with `partition_key`).
    async fn finish_intents(
        &self,
        table: &str,
        partition_key: Option<&str>,
    ) -> Result<LayerReconcileReport> {
        let mut filter = col(ENTITY_TYPE_PROPERTY).eq(BLOB_INTENT_TYPE);
        if let Some(pk) = partition_key {
            filter = Filter::partition_key(pk) & filter;
        }
        let mut pages = EntityPages::new(table, QuerySpec::new().filter(filter), None);
        let mut report = LayerReconcileReport::default();
        let mut first_error = None;
        while let Some(page) = pages.next(self.inner.as_ref()).await? {
            for row in page.items.iter().filter(|row| is_blob_intent(row)) {
                report.blob_intents_found += 1;
                let finished = match BlobIntent::from_row(row) {
                    Ok(intent) => self.finish_intent(table, intent, &mut report).await,
                    Err(e) => Err(e),
                };
                if let Err(e) = finished {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }

    /// Finishes one intent: a committed write's replaced blobs go; a write that
    /// has not committed is fenced first, then its uploads go; then the intent.
    async fn finish_intent(
        &self,
        table: &str,
        mut intent: BlobIntent,
        report: &mut LayerReconcileReport,
    ) -> Result<()> {
        let inner = self.inner.as_ref();
        for _ in 0..MAX_WRITE_ATTEMPTS {
            match intent.state() {
                BlobIntentState::Committed => {
                    report.blobs_deleted += self
                        .delete_blobs(intent.container(), intent.replaced())
                        .await?;
                    intent.remove(inner, table).await?;
                    report.blob_writes_committed += 1;
                    return Ok(());
                }
                BlobIntentState::Aborted => {
                    report.blobs_deleted += self
                        .delete_blobs(intent.container(), intent.uploaded())
                        .await?;
                    intent.remove(inner, table).await?;
                    report.blob_writes_fenced += 1;
                    return Ok(());
                }
                BlobIntentState::Pending => {
                    if !intent.fence(inner, table).await? {
                        // It changed (committed, or fenced by another worker).
                        match intent.reread(inner, table).await? {
                            Some(now) => intent = now,
                            None => return Ok(()),
                        }
                    }
                }
            }
        }
        Err(Error::new(
            ErrorKind::PreconditionFailed,
            format!(
                "the blob intent {} kept changing while reconcile() finished it; it stays for \
                 the next call",
                intent.key()
            ),
        )
        .with_entity_key(intent.key().clone()))
    }
}
