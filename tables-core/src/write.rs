//! Writes: the six write modes, `If-Match`, and the rules of entity group transactions.

use std::sync::Arc;

use crate::datetime::DateTime;
use crate::entity::{DynamicEntity, ETag, EntityKey};
use crate::error::{Error, ErrorKind, Result};
use crate::key::validate_entity_key;
use crate::size::{entity_size, validate_entity};
use crate::value::Value;

/// Most operations in one entity group transaction.
pub const MAX_BATCH_OPERATIONS: usize = 100;

/// Largest entity group transaction payload, in bytes (4 MiB).
pub const MAX_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// The precondition of a conditional write.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IfMatch {
    /// Unconditional (`If-Match: *`): the entity must exist, any version.
    Any,
    /// Only if the stored entity still has this ETag.
    Etag(ETag),
}

impl IfMatch {
    /// The `If-Match` header value.
    pub fn header_value(&self) -> &str {
        match self {
            IfMatch::Any => "*",
            IfMatch::Etag(etag) => etag.as_str(),
        }
    }

    /// The condition an `If-Match` header value states, as a web service built on
    /// the SDK receives it from its callers: `*` is [`IfMatch::Any`], anything else
    /// one ETag (as [`ETag::as_str`] wrote it into an `ETag` header).
    ///
    /// ```
    /// use tables_core::{ETag, IfMatch};
    ///
    /// assert_eq!(IfMatch::from_header_value(" * ")?, IfMatch::Any);
    /// let etag = ETag::new("W/\"datetime'2026-11-27T10%3A00%3A00.0000000Z'\"");
    /// assert_eq!(IfMatch::from_header_value(etag.as_str())?, IfMatch::Etag(etag));
    /// assert!(IfMatch::from_header_value("").is_err());
    /// # Ok::<(), tables_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for an empty value,
    /// or a list of ETags (`"a", "b"`), which a single entity's condition can't be.
    pub fn from_header_value(value: &str) -> crate::Result<IfMatch> {
        let value = value.trim();
        let invalid = |why: &str| {
            crate::Error::local(
                crate::ErrorKind::InvalidInput,
                format!("the If-Match header value {value:?} {why}; send `*` or one ETag as read"),
            )
        };
        if value.is_empty() {
            return Err(invalid("is empty"));
        }
        if value == "*" {
            return Ok(IfMatch::Any);
        }
        // One ETag is one quoted string, weak (`W/"..."`) or strong; a list has a
        // comma outside the quotes.
        let quoted = value.strip_prefix("W/").unwrap_or(value);
        let one = quoted.len() >= 2
            && quoted.starts_with('"')
            && quoted.ends_with('"')
            && !quoted[1..quoted.len() - 1].contains('"');
        if !one {
            return Err(invalid("is not one quoted ETag"));
        }
        Ok(IfMatch::Etag(ETag::new(value)))
    }
}

/// The six write modes of the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteMode {
    /// Insert; fails with `EntityAlreadyExists` if the key is taken.
    Insert,
    /// Replace the whole entity; fails if absent or the ETag differs.
    Replace,
    /// Merge the given properties; fails if absent or the ETag differs.
    Merge,
    /// Insert or replace, unconditionally.
    UpsertReplace,
    /// Insert or merge, unconditionally.
    UpsertMerge,
    /// Delete; fails if absent or the ETag differs.
    Delete,
}

/// One write, as an engine receives it.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    /// Insert a new entity.
    Insert(DynamicEntity),
    /// Replace an existing entity: properties not in `entity` are removed.
    Replace {
        /// The new content.
        entity: DynamicEntity,
        /// The precondition.
        if_match: IfMatch,
    },
    /// Merge into an existing entity: properties not in `entity` are kept.
    Merge {
        /// The properties to set.
        entity: DynamicEntity,
        /// The precondition.
        if_match: IfMatch,
    },
    /// Insert, or replace whatever is there (no precondition).
    UpsertReplace(DynamicEntity),
    /// Insert, or merge into whatever is there (no precondition).
    UpsertMerge(DynamicEntity),
    /// Delete an existing entity.
    Delete {
        /// The entity to delete.
        key: EntityKey,
        /// The precondition.
        if_match: IfMatch,
    },
}

impl WriteOp {
    /// The mode of this write.
    pub fn mode(&self) -> WriteMode {
        match self {
            WriteOp::Insert(_) => WriteMode::Insert,
            WriteOp::Replace { .. } => WriteMode::Replace,
            WriteOp::Merge { .. } => WriteMode::Merge,
            WriteOp::UpsertReplace(_) => WriteMode::UpsertReplace,
            WriteOp::UpsertMerge(_) => WriteMode::UpsertMerge,
            WriteOp::Delete { .. } => WriteMode::Delete,
        }
    }

    /// The entity written, if the mode carries one (every mode but delete).
    pub fn entity(&self) -> Option<&DynamicEntity> {
        match self {
            WriteOp::Insert(e)
            | WriteOp::UpsertReplace(e)
            | WriteOp::UpsertMerge(e)
            | WriteOp::Replace { entity: e, .. }
            | WriteOp::Merge { entity: e, .. } => Some(e),
            WriteOp::Delete { .. } => None,
        }
    }

    /// The entity written, to change it (every mode but delete).
    pub fn entity_mut(&mut self) -> Option<&mut DynamicEntity> {
        match self {
            WriteOp::Insert(e)
            | WriteOp::UpsertReplace(e)
            | WriteOp::UpsertMerge(e)
            | WriteOp::Replace { entity: e, .. }
            | WriteOp::Merge { entity: e, .. } => Some(e),
            WriteOp::Delete { .. } => None,
        }
    }

    /// The precondition, for the conditional modes.
    pub fn if_match(&self) -> Option<&IfMatch> {
        match self {
            WriteOp::Replace { if_match, .. }
            | WriteOp::Merge { if_match, .. }
            | WriteOp::Delete { if_match, .. } => Some(if_match),
            _ => None,
        }
    }

    /// The PartitionKey written.
    pub fn partition_key(&self) -> &str {
        match self {
            WriteOp::Delete { key, .. } => &key.partition_key,
            _ => self.entity().map_or("", |e| e.partition_key.as_str()),
        }
    }

    /// The RowKey written.
    pub fn row_key(&self) -> &str {
        match self {
            WriteOp::Delete { key, .. } => &key.row_key,
            _ => self.entity().map_or("", |e| e.row_key.as_str()),
        }
    }

    /// The key written (cloned).
    pub fn key(&self) -> EntityKey {
        EntityKey::new(self.partition_key(), self.row_key())
    }

    /// Whether the write can't take effect twice: a second delivery after the first
    /// applied fails instead of writing again. True for an insert (the second meets
    /// the row) and for a write conditional on an ETag (the second meets a newer
    /// one); false for upserts and `IfMatch::Any` writes, which a late or repeated
    /// delivery could apply again over another client's later write.
    pub fn is_replay_safe(&self) -> bool {
        match self {
            WriteOp::Insert(_) => true,
            WriteOp::UpsertReplace(_) | WriteOp::UpsertMerge(_) => false,
            WriteOp::Replace { if_match, .. }
            | WriteOp::Merge { if_match, .. }
            | WriteOp::Delete { if_match, .. } => matches!(if_match, IfMatch::Etag(_)),
        }
    }

    /// Bytes this operation adds to a batch payload, by the service's size estimate.
    pub fn estimated_size(&self) -> usize {
        match self {
            WriteOp::Delete { key, .. } => {
                4 + 2
                    * (crate::size::utf16_units(&key.partition_key)
                        + crate::size::utf16_units(&key.row_key))
            }
            _ => self.entity().map_or(0, entity_size),
        }
    }

    /// Checks the write against the service's rules: keys, property names, value
    /// sizes, property count and entity size.
    ///
    /// # Errors
    ///
    /// The kind names the rule ([`ErrorKind::InvalidKey`], [`ErrorKind::InvalidProperty`],
    /// [`ErrorKind::PropertyValueTooLarge`], [`ErrorKind::TooManyProperties`],
    /// [`ErrorKind::EntityTooLarge`]); the error carries the entity key and, where one
    /// property is at fault, its name.
    pub fn validate(&self) -> Result<()> {
        match self {
            WriteOp::Delete { key, .. } => validate_entity_key(key),
            _ => self.entity().map_or(Ok(()), validate_entity),
        }
    }
}

/// What a successful write returns.
///
/// Engines fill [`WriteOutcome::etag`], [`WriteOutcome::timestamp`] and
/// [`WriteOutcome::attempts`]; the typed client also says which client request id
/// the call carried and whether index upkeep it committed is still pending.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOutcome {
    /// The new ETag. `None` after a delete, and after a write whose answer was lost
    /// and whose commit the typed client confirmed through its commit marker (the
    /// version is then unknown: read the entity to learn it).
    pub etag: Option<ETag>,
    /// The new Timestamp (`None` after a delete, or when the endpoint did not say).
    pub timestamp: Option<DateTime>,
    /// How many times the write was sent: 1 when it went through at once; more when
    /// the remote engine retried a transient failure or the typed client planned it
    /// again after losing a race to a concurrent writer.
    pub attempts: u32,
    /// The `x-ms-client-request-id` every request of the call carried (the typed
    /// client sets one per call), to find the call in the service's logs.
    pub client_request_id: Option<String>,
    /// Index rows in other partitions or tables that the write committed to keep but
    /// could not write yet: its intent waits for `reconcile()`. `None` when every
    /// index row is in step.
    pub pending_upkeep: Option<PendingUpkeep>,
}

impl WriteOutcome {
    /// The outcome of a write sent once, with its new ETag and Timestamp.
    pub fn new(etag: Option<ETag>, timestamp: Option<DateTime>) -> WriteOutcome {
        WriteOutcome {
            etag,
            timestamp,
            ..WriteOutcome::default()
        }
    }
}

impl Default for WriteOutcome {
    fn default() -> WriteOutcome {
        WriteOutcome {
            etag: None,
            timestamp: None,
            attempts: 1,
            client_request_id: None,
            pending_upkeep: None,
        }
    }
}

/// Index upkeep a committed write left for later ([`WriteOutcome::pending_upkeep`]):
/// the intent row that records it, and why applying it failed. `reconcile()` (or the
/// next write of the same entity) finishes it; until then lookups through the
/// affected indexes may miss the entity or find its old values.
#[derive(Debug, Clone)]
pub struct PendingUpkeep {
    table: String,
    intent: EntityKey,
    error: Arc<Error>,
}

impl PendingUpkeep {
    /// Upkeep recorded by the intent at `intent` in `table`, left after `error`.
    pub fn new(table: impl Into<String>, intent: EntityKey, error: Error) -> PendingUpkeep {
        PendingUpkeep {
            table: table.into(),
            intent,
            error: Arc::new(error),
        }
    }

    /// The table holding the intent row (the written entity's table).
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The key of the intent row (in the written entity's partition).
    pub fn intent(&self) -> &EntityKey {
        &self.intent
    }

    /// Why the upkeep could not finish.
    pub fn error(&self) -> &Error {
        &self.error
    }
}

impl PartialEq for PendingUpkeep {
    fn eq(&self, other: &PendingUpkeep) -> bool {
        self.table == other.table
            && self.intent == other.intent
            && self.error.kind() == other.error.kind()
            && self.error.message() == other.error.message()
    }
}

impl Eq for PendingUpkeep {}

/// Checks a batch against the entity group transaction rules before anything is sent
/// or written: 1 to 100 operations, one PartitionKey, each RowKey at most once, every
/// operation valid on its own, and the payload under 4 MiB.
///
/// The error carries the index of the offending operation
/// ([`Error::batch_index`]) and the service's code for the rule
/// (`InvalidInput`, `CommandsInBatchActOnDifferentPartitions`, `InvalidDuplicateRow`,
/// `RequestBodyTooLarge`, or the operation's own validation code).
///
/// ```
/// use tables_core::{validate_batch, DynamicEntity, ErrorKind, WriteOp};
///
/// let ops = vec![
///     WriteOp::Insert(DynamicEntity::new("Sales", "1")),
///     WriteOp::Insert(DynamicEntity::new("Marketing", "2")),
/// ];
/// let err = validate_batch(&ops).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidBatch);
/// assert_eq!(err.batch_index(), Some(1));
/// ```
///
/// # Errors
///
/// [`ErrorKind::InvalidBatch`] for an empty batch, more than 100 operations, a second
/// PartitionKey or a repeated RowKey; [`ErrorKind::RequestTooLarge`] above 4 MiB; the
/// operation's own validation error otherwise.
pub fn validate_batch(ops: &[WriteOp]) -> Result<()> {
    check_batch(ops, false)
}

/// [`validate_batch`] for a batch on its way into the client's layers: a row marked
/// for the wide layout (`tables_core::wide`) is checked key and property by
/// property, but not for its size and property count, and does not count toward
/// the batch's size; the wide layer lays it out over rows within the limits and
/// checks the batch it sends with [`validate_batch`].
///
/// # Errors
///
/// As [`validate_batch`].
pub fn validate_batch_before_layout(ops: &[WriteOp]) -> Result<()> {
    check_batch(ops, true)
}

/// The most bytes a blob reference takes in a row (container, name, size, ETag).
const BLOB_REFERENCE_BYTES: usize = 1024;

/// `entity` as the blob layer sends it, each value held for a blob standing in for
/// a reference of the most bytes one takes; `None` when it holds none.
fn with_blob_references(entity: &DynamicEntity) -> Option<DynamicEntity> {
    if !entity
        .properties()
        .any(|(_, value)| crate::sealed::is_held(value))
    {
        return None;
    }
    let mut sent = entity.clone();
    for (name, value) in entity.properties() {
        if crate::sealed::is_held(value) {
            sent.insert(name, Value::Binary(vec![0; BLOB_REFERENCE_BYTES]));
        }
    }
    Some(sent)
}

fn check_batch(ops: &[WriteOp], before_layout: bool) -> Result<()> {
    let Some(first) = ops.first() else {
        return Err(Error::new(
            ErrorKind::InvalidBatch,
            "a batch needs at least one operation",
        ));
    };
    if ops.len() > MAX_BATCH_OPERATIONS {
        return Err(Error::new(
            ErrorKind::InvalidBatch,
            format!(
                "the batch has {} operations; an entity group transaction holds at most {MAX_BATCH_OPERATIONS} (split it per partition into chunks of {MAX_BATCH_OPERATIONS})",
                ops.len()
            ),
        )
        .with_service_code(crate::error_code::INVALID_INPUT)
        .with_batch_index(0));
    }
    let partition = first.partition_key();
    let mut seen: std::collections::HashSet<&str> =
        std::collections::HashSet::with_capacity(ops.len());
    let mut total = 0usize;
    for (index, op) in ops.iter().enumerate() {
        let laid_out_later = before_layout && op.entity().is_some_and(crate::wide::is_wide);
        // A value held for a blob leaves the row as a reference (the blob layer's).
        let as_sent = before_layout
            .then(|| op.entity().and_then(with_blob_references))
            .flatten();
        let entity = as_sent.as_ref().or(op.entity());
        if laid_out_later {
            entity
                .map_or(Ok(()), crate::size::validate_entity_properties)
                .map_err(|e| e.with_batch_index(index))?;
        } else if let Some(entity) = &as_sent {
            validate_entity(entity).map_err(|e| e.with_batch_index(index))?;
        } else {
            op.validate().map_err(|e| e.with_batch_index(index))?;
        }
        if op.partition_key() != partition {
            return Err(Error::new(
                ErrorKind::InvalidBatch,
                format!(
                    "operation {index} writes PartitionKey {:?} but the batch is for {partition:?}; all operations of a batch must share one PartitionKey",
                    op.partition_key()
                ),
            )
            .with_service_code("CommandsInBatchActOnDifferentPartitions")
            .with_batch_index(index)
            .with_entity_key(op.key()));
        }
        if !seen.insert(op.row_key()) {
            return Err(Error::new(
                ErrorKind::InvalidBatch,
                format!(
                    "RowKey {:?} appears twice in the batch (again at operation {index}); an entity can appear only once in a batch",
                    op.row_key()
                ),
            )
            .with_service_code("InvalidDuplicateRow")
            .with_batch_index(index)
            .with_entity_key(op.key()));
        }
        if !laid_out_later {
            total += match &as_sent {
                Some(entity) => crate::size::entity_size(entity),
                None => op.estimated_size(),
            };
        }
        if total > MAX_BATCH_BYTES {
            return Err(Error::new(
                ErrorKind::RequestTooLarge,
                format!("the batch payload exceeds {MAX_BATCH_BYTES} bytes at operation {index}; split it into smaller batches"),
            )
            .with_batch_index(index));
        }
    }
    Ok(())
}
