//! Index entities (`index_entity(..)`): one row per indexed value listing the
//! entities that have it, the "EmployeeIDs" list of the index
//! entities pattern (<https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns>).
//!
//! # Row format
//!
//! - keys: the index's `partition_key`/`row_key` templates (e.g. `Sales` /
//!   `lastname_Jones`), in the index's table (the primary's table by default);
//! - `EntityType`: `"<Kind>#<index>"` (e.g. `Employee#last_name`), so queries for the
//!   kind never see it;
//! - `Members` (`Edm.String`): a JSON array of the members, sorted, each once. When
//!   the index lives in the members' partition, a member is its RowKey
//!   (`["empid_000223","empid_000224"]`); otherwise it is
//!   `"<PartitionKey>\u{1f}<RowKey>"` (U+001F can't occur in a key, so the split is
//!   unambiguous).
//! - A list longer than one property holds (64 KiB) continues in `Members_1`,
//!   `Members_2`, ...: the array's text cut into pieces of at most 32,768 UTF-16
//!   units, read back by joining them in order (the guide's index-entities option 1).
//!   The row is still one entity, replaced whole under its ETag, so the pieces
//!   always belong to one version. A list over what one entity holds (1 MiB) goes
//!   to a blob: `Members` holds it for the client's blob layer (`crate::large`),
//!   which uploads each version to a new blob and keeps its reference in the row,
//!   under the same ETag discipline (a client without a blob store refuses it,
//!   nothing written).
//!
//! A row with no member left is deleted. Every change is a read followed by a write
//! conditional on the row's ETag (insert when absent), retried when another writer
//! got there first: concurrent writers never lose each other's members.

use std::collections::BTreeSet;

use tables_core::model::ENTITY_TYPE_PROPERTY;
use tables_core::sealed::{hold, is_blob_ref, unhold};
use tables_core::size::{MAX_ENTITY_BYTES, MAX_PROPERTY_VALUE_BYTES};
use tables_core::{
    DynamicEntity, Engine, EntityKey, Error, ErrorKind, IfMatch, Result, Value, WriteOp,
};

use super::conflict::ConflictLoop;

/// The property listing an index entity's members (the first piece of the list).
pub(crate) const MEMBERS_PROPERTY: &str = "Members";
/// The most UTF-16 units of the list one property holds (64 KiB).
const PIECE_UNITS: usize = MAX_PROPERTY_VALUE_BYTES / 2;
/// The most bytes the list may take in one entity: 1 MiB less room for the keys,
/// the `EntityType` and each property's overhead.
const MAX_LIST_BYTES: usize = MAX_ENTITY_BYTES - 8 * 1024;

/// The property holding piece `index` of the list (`Members`, `Members_1`, ...).
fn piece_property(index: usize) -> String {
    if index == 0 {
        MEMBERS_PROPERTY.to_owned()
    } else {
        format!("{MEMBERS_PROPERTY}_{index}")
    }
}

/// The text of an index entity's list: its pieces joined in order; `None` when it
/// has none.
///
/// # Errors
///
/// [`ErrorKind::Decode`] when a piece is not a string.
fn list_text(row: &DynamicEntity) -> Result<Option<String>> {
    // A list over 1 MiB lives in a blob: the blob layer read it back, held.
    if let Some(Value::Binary(bytes)) = row.get(MEMBERS_PROPERTY) {
        let value = Value::Binary(bytes.clone());
        if let Some(held) = unhold(&value) {
            if let Value::String(text) = held? {
                return Ok(Some(text));
            }
        } else if is_blob_ref(&value) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the index entity {} lists its members in a blob (a list over 1 MiB) and this \
                     client has no blob store to read it from: give the service client one \
                     (TableServiceClient::with_blob_store)",
                    row.key()
                ),
            )
            .with_entity_key(row.key())
            .with_property(MEMBERS_PROPERTY));
        }
    }
    let mut text: Option<String> = None;
    for index in 0.. {
        let name = piece_property(index);
        match row.get(&name) {
            None => return Ok(text),
            Some(Value::String(piece)) => text.get_or_insert_with(String::new).push_str(piece),
            Some(other) => {
                return Err(Error::new(
                    ErrorKind::Decode,
                    format!(
                        "the index entity {} has a `{name}` of type {}; expected a JSON string",
                        row.key(),
                        other.edm_type()
                    ),
                )
                .with_entity_key(row.key())
                .with_property(name))
            }
        }
    }
    Ok(text)
}

/// Separates PartitionKey and RowKey in a member of an index entity kept in another
/// partition.
const MEMBER_SEPARATOR: char = '\u{1f}';

/// A member as the `Members` list stores it.
pub(crate) fn encode_member(member: &EntityKey, same_partition: bool) -> String {
    if same_partition {
        member.row_key.clone()
    } else {
        format!(
            "{}{MEMBER_SEPARATOR}{}",
            member.partition_key, member.row_key
        )
    }
}

/// The key of a member listed by the index entity at `entry`.
pub(crate) fn member_key(entry: &EntityKey, member: &str) -> EntityKey {
    match member.split_once(MEMBER_SEPARATOR) {
        Some((partition_key, row_key)) => EntityKey::new(partition_key, row_key),
        None => EntityKey::new(entry.partition_key.clone(), member),
    }
}

/// The members an index entity row lists, as stored (in order, each as often as
/// it is listed).
///
/// # Errors
///
/// [`ErrorKind::Decode`] if the list is not a JSON array of strings.
pub fn index_entity_members(row: &DynamicEntity) -> Result<Vec<String>> {
    let Some(text) = list_text(row)? else {
        return Ok(Vec::new());
    };
    serde_json::from_str(&text).map_err(|e| {
        Error::new(
            ErrorKind::Decode,
            format!(
                "the index entity {} has a `{MEMBERS_PROPERTY}` list that is not a JSON array of strings: {e}",
                row.key()
            ),
        )
        .with_entity_key(row.key())
        .with_property(MEMBERS_PROPERTY)
    })
}

/// The members an index entity row lists.
///
/// # Errors
///
/// As [`index_entity_members`].
pub(crate) fn members_of(row: &DynamicEntity) -> Result<BTreeSet<String>> {
    Ok(index_entity_members(row)?.into_iter().collect())
}

/// The index entity row at `key` listing `members`.
///
/// # Errors
///
/// [`ErrorKind::InvalidValue`] when the list can't be encoded.
fn entry_row(
    key: &EntityKey,
    entry_type: &str,
    members: &BTreeSet<String>,
) -> Result<DynamicEntity> {
    let list = serde_json::to_string(members).map_err(|e| {
        Error::new(
            ErrorKind::InvalidValue,
            format!("can't encode the members of index entity {key}: {e}"),
        )
    })?;
    let bytes = 2 * tables_core::size::utf16_units(&list);
    let mut row = DynamicEntity::new(key.partition_key.clone(), key.row_key.clone());
    row.insert(ENTITY_TYPE_PROPERTY, entry_type);
    if bytes > MAX_LIST_BYTES {
        // More than one entity holds: the list goes to a blob, through the client's
        // blob layer (`crate::large`), which keeps a reference in `Members`; the
        // row is still written whole under its ETag.
        row.insert(MEMBERS_PROPERTY, hold(&Value::String(list)));
        return Ok(row);
    }
    for (index, piece) in pieces(&list).into_iter().enumerate() {
        row.insert(piece_property(index), piece);
    }
    Ok(row)
}

/// `text` cut at character boundaries into pieces of at most [`PIECE_UNITS`]
/// UTF-16 units.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut piece = String::new();
    let mut units = 0;
    for c in text.chars() {
        if units + c.len_utf16() > PIECE_UNITS {
            out.push(std::mem::take(&mut piece));
            units = 0;
        }
        piece.push(c);
        units += c.len_utf16();
    }
    out.push(piece);
    out
}

/// The write that turns the index entity `current` (at `key`) into one listing
/// `members`, conditional on `current`'s ETag: an insert when absent, a delete when
/// no member is left. `None` when there is nothing to write.
///
/// # Errors
///
/// As [`entry_row`].
pub(crate) fn entry_op(
    key: &EntityKey,
    current: Option<&DynamicEntity>,
    entry_type: &str,
    members: &BTreeSet<String>,
) -> Result<Option<WriteOp>> {
    let condition = |row: &DynamicEntity| row.etag.clone().map_or(IfMatch::Any, IfMatch::Etag);
    Ok(match (current, members.is_empty()) {
        (None, true) => None,
        (None, false) => Some(WriteOp::Insert(entry_row(key, entry_type, members)?)),
        (Some(row), true) => Some(WriteOp::Delete {
            key: key.clone(),
            if_match: condition(row),
        }),
        (Some(row), false) => Some(WriteOp::Replace {
            entity: entry_row(key, entry_type, members)?,
            if_match: condition(row),
        }),
    })
}

/// The members to add to and remove from one index entity.
#[derive(Debug, Default)]
pub(crate) struct MemberChanges {
    pub(crate) add: BTreeSet<String>,
    pub(crate) remove: BTreeSet<String>,
}

/// Adds `changes.add` to the index entity at `key` in `table` and removes
/// `changes.remove` from it, in one write conditional on the version read (with the
/// ETag retry loop), so the list is read and written once for all of them. Returns
/// the members it added and those it removed; members already so are left out.
///
/// # Errors
///
/// The engine's errors; [`ErrorKind::PreconditionFailed`] after `retries` lost
/// races; as [`entry_row`].
pub(crate) async fn update_members(
    engine: &dyn Engine,
    table: &str,
    key: &EntityKey,
    entry_type: &str,
    changes: &MemberChanges,
    retries: u32,
) -> Result<MemberChanges> {
    let mut rounds = ConflictLoop::new(retries);
    loop {
        let current = engine.get_entity(table, key, None).await?;
        let mut members = match &current {
            Some(row) => members_of(row)?,
            None => BTreeSet::new(),
        };
        let done = MemberChanges {
            add: changes
                .add
                .iter()
                .filter(|m| members.insert((*m).clone()))
                .cloned()
                .collect(),
            remove: changes
                .remove
                .iter()
                .filter(|m| members.remove(m.as_str()))
                .cloned()
                .collect(),
        };
        if done.add.is_empty() && done.remove.is_empty() {
            return Ok(done);
        }
        let Some(op) = entry_op(key, current.as_ref(), entry_type, &members)? else {
            return Ok(MemberChanges::default());
        };
        if rounds.write_planned(engine, table, &op).await? {
            return Ok(done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_round_trip_in_both_forms() {
        let entry = EntityKey::new("Sales", "lastname_Jones");
        let member = EntityKey::new("Sales", "empid_000223");
        let near = encode_member(&member, true);
        assert_eq!(near, "empid_000223");
        assert_eq!(member_key(&entry, &near), member);
        let far = encode_member(&member, false);
        assert_eq!(member_key(&EntityKey::new("x", "y"), &far), member);
    }

    #[test]
    fn rows_list_sorted_members_and_refuse_oversized_lists() -> Result<()> {
        let key = EntityKey::new("Sales", "lastname_Jones");
        let members: BTreeSet<String> = ["b", "a"].into_iter().map(String::from).collect();
        let Some(WriteOp::Insert(row)) = entry_op(&key, None, "Employee#last_name", &members)?
        else {
            return Err(Error::new(ErrorKind::Server, "expected an insert"));
        };
        assert_eq!(
            row.get(MEMBERS_PROPERTY),
            Some(&Value::from(r#"["a","b"]"#))
        );
        assert_eq!(members_of(&row)?, members);
        assert!(entry_op(&key, None, "Employee#last_name", &BTreeSet::new())?.is_none());

        // 25,000 members (400,000 UTF-16 units, 800 KB of list) continue over 13
        // properties, none over 64 KiB, and read back whole.
        let many: BTreeSet<String> = (0..25_000).map(|i| format!("empid_{i:06}é")).collect();
        let Some(WriteOp::Insert(row)) = entry_op(&key, None, "Employee#last_name", &many)? else {
            return Err(Error::new(ErrorKind::Server, "expected an insert"));
        };
        assert!(row.get("Members_12").is_some() && row.get("Members_13").is_none());
        for (_, value) in row.properties() {
            let units = value.as_str().map_or(0, |t| t.encode_utf16().count());
            assert!(2 * units <= MAX_PROPERTY_VALUE_BYTES);
        }
        tables_core::size::validate_entity(&row)?;
        assert_eq!(members_of(&row)?, many);
        assert_eq!(index_entity_members(&row)?.len(), 25_000);

        // Past one entity: held for a blob, in one property, read back whole once
        // the blob layer has fetched it (held again on the way up).
        let too_many: BTreeSet<String> = (0..70_000).map(|i| format!("empid_{i:06}")).collect();
        let Some(WriteOp::Insert(row)) = entry_op(&key, None, "Employee#last_name", &too_many)?
        else {
            return Err(Error::new(ErrorKind::Server, "expected an insert"));
        };
        assert!(tables_core::sealed::is_held(
            row.get(MEMBERS_PROPERTY).unwrap()
        ));
        assert!(row.get("Members_1").is_none());
        assert_eq!(members_of(&row)?, too_many);
        // Without a blob store, every engine refuses it, naming the property.
        let err = tables_core::sealed::refuse_sealed([&row]).unwrap_err();
        assert_eq!(err.property(), Some(MEMBERS_PROPERTY));
        Ok(())
    }
}
