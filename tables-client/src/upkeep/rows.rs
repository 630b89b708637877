//! Index copies and their owners: who holds a stored copy, and the conditional
//! writes that claim, refresh or release one. Every write of a copy is conditional
//! (an insert where none is stored, else `If-Match` the stored version), and none
//! ever replaces or deletes a copy another entity holds.
//!
//! A copy's owner is the primary its `PrimaryPartitionKey` and `PrimaryRowKey` name,
//! of the kind and index its `EntityType` (`<Kind>@<index>`) names.
//!
//! A copy in another partition of a `unique_index` is *claimed* before its entity
//! commits, so that two entities never commit one value. Until the entity commits,
//! the claim carries [`CLAIM_PROPERTY`] naming the claiming write's intent; the
//! write's upkeep then rewrites the copy without it. A claim whose write was
//! abandoned is *stale* ([`is_stale_claim`]) and may be taken over.

use tables_core::model::{
    role_of, RowRole, ENTITY_TYPE_PROPERTY, PRIMARY_PARTITION_KEY_PROPERTY,
    PRIMARY_ROW_KEY_PROPERTY,
};
use tables_core::{
    DynamicEntity, Engine, EntityKey, Error, IfMatch, Result, UniqueViolation, Value, WriteOp,
};

use super::intents::{IntentState, INTENT_ROW_PREFIX};
use super::Codec;

/// On a claimed copy: `<primary table>/<intent RowKey>` of the write that claimed it
/// (the intent lives in the primary's partition).
pub(crate) const CLAIM_PROPERTY: &str = "PrimaryIntent";

/// An index row's identity: the entity kind and index it belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexOf<'a> {
    pub(crate) kind: &'a str,
    pub(crate) index: &'a str,
}

/// Who holds a stored index copy.
#[derive(Debug)]
pub(crate) enum Holder<'a> {
    /// No row at the key.
    Absent,
    /// A copy of the index for this primary.
    Mine(&'a DynamicEntity),
    /// A copy of the index for another primary.
    Other {
        owner: EntityKey,
        row: &'a DynamicEntity,
    },
    /// Another row: another index's or kind's copy, a primary, an untyped row.
    Foreign(&'a DynamicEntity),
}

impl<'a> Holder<'a> {
    /// Classifies `stored` for copies of `of` made for `primary`.
    pub(crate) fn of(
        stored: Option<&'a DynamicEntity>,
        of: IndexOf<'_>,
        primary: &EntityKey,
    ) -> Holder<'a> {
        let Some(row) = stored else {
            return Holder::Absent;
        };
        let same_index = matches!(
            row.get(ENTITY_TYPE_PROPERTY).and_then(Value::as_str).map(role_of),
            Some(RowRole::IndexCopy { kind, index }) if kind == of.kind && index == of.index
        );
        if !same_index {
            return Holder::Foreign(row);
        }
        match owner_of(row) {
            Some(owner) if owner == *primary => Holder::Mine(row),
            Some(owner) => Holder::Other { owner, row },
            None => Holder::Foreign(row),
        }
    }
}

/// The primary key a copy names.
pub(crate) fn owner_of(row: &DynamicEntity) -> Option<EntityKey> {
    let text = |name: &str| row.get(name).and_then(Value::as_str);
    Some(EntityKey::new(
        text(PRIMARY_PARTITION_KEY_PROPERTY)?,
        text(PRIMARY_ROW_KEY_PROPERTY)?,
    ))
}

/// Whether the stored copy already holds `desired`'s content (its version aside).
/// A claim mark makes it differ, so the commit's upkeep removes the mark.
pub(crate) fn same_content(stored: &DynamicEntity, desired: &DynamicEntity) -> bool {
    let mut bare = stored.clone();
    bare.etag = None;
    bare.timestamp = None;
    bare == *desired
}

/// The `If-Match` of a write over `row`: its ETag.
pub(crate) fn version_of(row: &DynamicEntity) -> IfMatch {
    row.etag.clone().map_or(IfMatch::Any, IfMatch::Etag)
}

/// The write that stores `desired` (a copy of `primary` for `of`) over `stored`:
/// an insert where nothing is stored, a replace `If-Match` the stored version where
/// `primary` holds it and the content differs, nothing where it is already stored.
///
/// # Errors
///
/// [`tables_core::ErrorKind::UniqueViolation`] when another entity (or another row)
/// holds the key.
pub(crate) fn put_copy(
    stored: Option<&DynamicEntity>,
    desired: &DynamicEntity,
    of: IndexOf<'_>,
    table: &str,
    primary: &EntityKey,
) -> Result<Option<WriteOp>> {
    match Holder::of(stored, of, primary) {
        Holder::Absent => Ok(Some(WriteOp::Insert(desired.clone()))),
        Holder::Mine(row) if same_content(row, desired) => Ok(None),
        Holder::Mine(row) => Ok(Some(replace_over(row, desired))),
        Holder::Other { owner, .. } => Err(taken(of, table, desired.key(), owner, primary)),
        Holder::Foreign(row) => Err(taken(of, table, desired.key(), row.key(), primary)),
    }
}

/// The replace of `row` by `desired`, conditional on `row`'s version.
pub(crate) fn replace_over(row: &DynamicEntity, desired: &DynamicEntity) -> WriteOp {
    WriteOp::Replace {
        entity: desired.clone(),
        if_match: version_of(row),
    }
}

/// The delete of `stored` if it is `primary`'s copy for `of`, conditional on its
/// version; `None` when there is nothing of `primary`'s to delete.
pub(crate) fn release_copy(
    stored: Option<&DynamicEntity>,
    of: IndexOf<'_>,
    primary: &EntityKey,
) -> Option<WriteOp> {
    match Holder::of(stored, of, primary) {
        Holder::Mine(row) => Some(WriteOp::Delete {
            key: row.key(),
            if_match: version_of(row),
        }),
        _ => None,
    }
}

/// The unique violation of `writer` meeting `owner`'s row at `key`.
pub(crate) fn taken(
    of: IndexOf<'_>,
    table: &str,
    key: EntityKey,
    owner: EntityKey,
    writer: &EntityKey,
) -> Error {
    Error::unique(UniqueViolation::new(
        of.kind,
        of.index,
        table,
        key,
        owner,
        writer.clone(),
    ))
}

/// The claim mark of a write whose intent is at `intent` in table `primary_table`.
pub(crate) fn claim_mark(primary_table: &str, intent: &EntityKey) -> String {
    format!("{primary_table}/{}", intent.row_key)
}

/// The primary table and intent key a claim mark on `row` (owned by `owner`) names.
fn parse_claim(row: &DynamicEntity, owner: &EntityKey) -> Option<(String, EntityKey)> {
    let mark = row.get(CLAIM_PROPERTY)?.as_str()?;
    let (table, row_key) = mark.split_once('/')?;
    row_key.starts_with(INTENT_ROW_PREFIX).then(|| {
        (
            table.to_owned(),
            EntityKey::new(owner.partition_key.clone(), row_key),
        )
    })
}

/// Whether `row`, a copy of index `of` held by another entity, is a claim its write
/// abandoned: it carries a claim mark, the claiming intent is no longer at work
/// (aborted, finished or gone), and the owner doesn't imply the copy. Such a claim
/// may be taken over, `If-Match` its version.
///
/// # Errors
///
/// The engine's errors; decode errors of the owner's row.
pub(crate) async fn is_stale_claim(
    engine: &dyn Engine,
    row: &DynamicEntity,
    of: IndexOf<'_>,
    codec: Codec,
) -> Result<bool> {
    let Some(owner) = owner_of(row) else {
        return Ok(false);
    };
    let Some((table, intent)) = parse_claim(row, &owner) else {
        return Ok(false);
    };
    if let Some(intent) = engine.get_entity(&table, &intent, None).await? {
        let state = super::intents::parse_intent(&intent)?.state();
        if matches!(state, IntentState::Claiming | IntentState::Pending) {
            return Ok(false);
        }
    }
    let Some(primary) = engine.get_entity(&table, &owner, None).await? else {
        return Ok(true);
    };
    let implied = (codec.implied)(&primary)?;
    let key = row.key();
    Ok(!implied
        .copies
        .iter()
        .any(|copy| copy.name() == of.index && copy.key() == key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables_core::ETag;

    const OF: IndexOf<'static> = IndexOf {
        kind: "Employee",
        index: "email",
    };

    fn copy_of(owner: &EntityKey) -> DynamicEntity {
        DynamicEntity::new("Sales", "email_a@x")
            .with(ENTITY_TYPE_PROPERTY, "Employee@email")
            .with(PRIMARY_PARTITION_KEY_PROPERTY, owner.partition_key.clone())
            .with(PRIMARY_ROW_KEY_PROPERTY, owner.row_key.clone())
            .with("Age", 30)
    }

    fn stored(mut row: DynamicEntity) -> DynamicEntity {
        row.etag = Some(ETag::new("W/\"datetime'2024-01-01T00%3A00%3A00Z'\""));
        row
    }

    #[test]
    fn copies_are_put_conditionally_and_never_over_another_owner() {
        let me = EntityKey::new("Sales", "empid_1");
        let you = EntityKey::new("Sales", "empid_2");
        let desired = copy_of(&me);
        // Absent: insert.
        let op = put_copy(None, &desired, OF, "T", &me).unwrap();
        assert!(matches!(op, Some(WriteOp::Insert(_))));
        // Mine, same content: nothing; changed: replace If-Match.
        let mine = stored(copy_of(&me));
        assert_eq!(put_copy(Some(&mine), &desired, OF, "T", &me).unwrap(), None);
        let changed = desired.clone().with("Age", 31);
        let op = put_copy(Some(&mine), &changed, OF, "T", &me)
            .unwrap()
            .unwrap();
        assert!(matches!(
            op,
            WriteOp::Replace {
                if_match: IfMatch::Etag(_),
                ..
            }
        ));
        // Another's: a unique violation naming the owner.
        let yours = stored(copy_of(&you));
        let err = put_copy(Some(&yours), &desired, OF, "T", &me).unwrap_err();
        let violation = err.unique_violation().unwrap();
        assert_eq!(violation.owner(), &you);
        assert_eq!(violation.writer(), &me);
        assert_eq!(violation.index(), "email");
        // Another index's row at the key is no copy of ours either.
        let foreign = stored(copy_of(&me).with(ENTITY_TYPE_PROPERTY, "Employee@badge"));
        assert!(put_copy(Some(&foreign), &desired, OF, "T", &me).is_err());
        // Releases touch only our own copy.
        assert!(release_copy(Some(&mine), OF, &me).is_some());
        assert!(release_copy(Some(&yours), OF, &me).is_none());
        assert!(release_copy(Some(&foreign), OF, &me).is_none());
        assert!(release_copy(None, OF, &me).is_none());
    }

    #[test]
    fn a_claim_mark_makes_the_content_differ() {
        let me = EntityKey::new("Sales", "empid_1");
        let claimed = stored(copy_of(&me).with(CLAIM_PROPERTY, "Staff/$intent_1"));
        assert!(!same_content(&claimed, &copy_of(&me)));
        assert_eq!(
            parse_claim(&claimed, &me),
            Some(("Staff".to_owned(), EntityKey::new("Sales", "$intent_1")))
        );
        assert_eq!(parse_claim(&stored(copy_of(&me)), &me), None);
    }
}
