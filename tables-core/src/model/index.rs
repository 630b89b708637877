//! Index rows: the copies (`index(..)`) and index entries (`index_entity(..)`) a
//! derived entity implies.

use std::sync::Arc;

use crate::entity::{DynamicEntity, EntityKey};
use crate::error::{Error, ErrorKind, Result};
use crate::model::schema::IndexSchema;
use crate::model::{
    index_copy_type, role_of, RowRole, ENTITY_TYPE_PROPERTY, ENTITY_VERSION_PROPERTY,
    MOVED_FROM_PROPERTY, MOVING_TO_PROPERTY, PRIMARY_PARTITION_KEY_PROPERTY,
    PRIMARY_ROW_KEY_PROPERTY,
};
use crate::value::Value;

/// A copy of an entity kept by one of its indexes: the row to write, and where.
///
/// The row carries `EntityType = "<Kind>@<index>"` (so queries for the kind never see
/// it), the primary's `EntityVersion`, the primary's keys as `PrimaryPartitionKey`
/// and `PrimaryRowKey`, and the primary's properties (all of them, or the
/// `include(..)`d ones of a partial copy).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexCopy {
    index: &'static IndexSchema,
    entity: DynamicEntity,
}

impl IndexCopy {
    /// The index's description.
    pub fn index(&self) -> &'static IndexSchema {
        self.index
    }

    /// The index name.
    pub fn name(&self) -> &'static str {
        self.index.name
    }

    /// The table of the copy; `None` is the primary's table.
    pub fn table(&self) -> Option<&'static str> {
        self.index.table
    }

    /// Whether the copy lives in the primary's partition and table (written in the
    /// primary's entity group transaction).
    pub fn same_partition(&self) -> bool {
        self.index.same_partition
    }

    /// The copy's key.
    pub fn key(&self) -> EntityKey {
        self.entity.key()
    }

    /// The row to write.
    pub fn entity(&self) -> &DynamicEntity {
        &self.entity
    }

    /// The row to write, by value.
    pub fn into_entity(self) -> DynamicEntity {
        self.entity
    }
}

/// One entity's membership in an index entity: the index row at `key` lists
/// `member` (the client keeps the list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    index: &'static IndexSchema,
    key: EntityKey,
    member: EntityKey,
}

impl IndexEntry {
    /// The index's description.
    pub fn index(&self) -> &'static IndexSchema {
        self.index
    }

    /// The index name.
    pub fn name(&self) -> &'static str {
        self.index.name
    }

    /// The table of the index row; `None` is the primary's table.
    pub fn table(&self) -> Option<&'static str> {
        self.index.table
    }

    /// Whether the index row lives in the member's partition and table.
    pub fn same_partition(&self) -> bool {
        self.index.same_partition
    }

    /// The key of the index row.
    pub fn key(&self) -> &EntityKey {
        &self.key
    }

    /// The entity the index row lists.
    pub fn member(&self) -> &EntityKey {
        &self.member
    }
}

/// Builds index `index`'s copy of `primary` (a row from `Row::to_entity`) at the
/// given keys.
pub fn index_copy(
    primary: &DynamicEntity,
    index: &'static IndexSchema,
    partition_key: String,
    row_key: String,
) -> IndexCopy {
    let mut entity = DynamicEntity::new(partition_key, row_key);
    let kind = primary
        .get(ENTITY_TYPE_PROPERTY)
        .and_then(Value::as_str)
        .unwrap_or_default();
    entity.reserve(primary.len() + 2);
    for (name, value) in primary.properties() {
        // A move's marks belong to the primary row only.
        if name == MOVING_TO_PROPERTY || name == MOVED_FROM_PROPERTY {
            continue;
        }
        let copied = name == ENTITY_VERSION_PROPERTY
            || index.include.is_none_or(|include| include.contains(&name));
        if name == ENTITY_TYPE_PROPERTY {
            entity.push_unchecked(
                Arc::from(name),
                Value::String(index_copy_type(kind, index.name)),
            );
        } else if copied {
            entity.push_unchecked(Arc::from(name), value.clone());
        }
    }
    entity.push_unchecked(
        Arc::from(PRIMARY_PARTITION_KEY_PROPERTY),
        Value::String(primary.partition_key.clone()),
    );
    entity.push_unchecked(
        Arc::from(PRIMARY_ROW_KEY_PROPERTY),
        Value::String(primary.row_key.clone()),
    );
    IndexCopy { index, entity }
}

/// Builds the entry of `primary` in index entity `index`, at the given keys.
pub fn index_entry_for(
    primary: &EntityKey,
    index: &'static IndexSchema,
    partition_key: String,
    row_key: String,
) -> IndexEntry {
    IndexEntry {
        index,
        key: EntityKey::new(partition_key, row_key),
        member: primary.clone(),
    }
}

/// The key of the primary row an index copy was made from.
///
/// # Errors
///
/// [`ErrorKind::Decode`] if `copy` is not an index copy.
pub fn primary_key_of_copy(copy: &DynamicEntity) -> Result<EntityKey> {
    let text = |name: &str| copy.get(name).and_then(Value::as_str).map(str::to_owned);
    match (
        copy_role(copy),
        text(PRIMARY_PARTITION_KEY_PROPERTY),
        text(PRIMARY_ROW_KEY_PROPERTY),
    ) {
        (Some(_), Some(pk), Some(rk)) => Ok(EntityKey::new(pk, rk)),
        _ => Err(not_a_copy(copy)),
    }
}

fn copy_role(copy: &DynamicEntity) -> Option<(&str, &str)> {
    match copy
        .get(ENTITY_TYPE_PROPERTY)
        .and_then(Value::as_str)
        .map(role_of)
    {
        Some(RowRole::IndexCopy { kind, index }) => Some((kind, index)),
        _ => None,
    }
}

fn not_a_copy(copy: &DynamicEntity) -> Error {
    Error::new(
        ErrorKind::Decode,
        format!(
            "entity ({:?}, {:?}) is not an index copy (no `<Kind>@<index>` {ENTITY_TYPE_PROPERTY} \
             with {PRIMARY_PARTITION_KEY_PROPERTY} and {PRIMARY_ROW_KEY_PROPERTY})",
            copy.partition_key, copy.row_key
        ),
    )
    .with_entity_key(copy.key())
}

/// Turns a full index copy back into the primary row it was made from (keys,
/// `EntityType` and properties as the primary has them), for `Row::from_entity`.
///
/// # Errors
///
/// [`ErrorKind::Decode`] if `copy` is not an index copy.
pub fn primary_from_copy(mut copy: DynamicEntity) -> Result<DynamicEntity> {
    let key = primary_key_of_copy(&copy)?;
    let kind = copy_role(&copy)
        .map(|(kind, _)| kind.to_owned())
        .unwrap_or_default();
    copy.remove(PRIMARY_PARTITION_KEY_PROPERTY);
    copy.remove(PRIMARY_ROW_KEY_PROPERTY);
    copy.insert(ENTITY_TYPE_PROPERTY, kind);
    copy.partition_key = key.partition_key;
    copy.row_key = key.row_key;
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::__private::new_entity;
    use crate::model::IndexKind;

    static EMAIL: IndexSchema = IndexSchema {
        name: "email",
        kind: IndexKind::Copy,
        table: None,
        partition_key: "{department}",
        row_key: "email_{email}",
        include: None,
        unique: true,
        same_partition: true,
    };
    static PARTIAL: IndexSchema = IndexSchema {
        name: "by_email",
        kind: IndexKind::Copy,
        table: Some("EmployeesByEmail"),
        partition_key: "email_{department}",
        row_key: "{email}",
        include: Some(&["LastName"]),
        unique: true,
        same_partition: false,
    };

    fn primary() -> DynamicEntity {
        let mut e = new_entity(
            "Sales".into(),
            "empid_000223".into(),
            &crate::model::Tag::Kind,
            "Employee",
            1,
            2,
        );
        e.insert("LastName", "Jones");
        e.insert("Age", 34);
        e
    }

    #[test]
    fn full_copy_round_trips_to_the_primary() {
        let copy = index_copy(&primary(), &EMAIL, "Sales".into(), "email_j@x".into());
        assert_eq!(copy.key(), EntityKey::new("Sales", "email_j@x"));
        assert_eq!(
            copy.entity().get(ENTITY_TYPE_PROPERTY),
            Some(&Value::from("Employee@email"))
        );
        assert_eq!(primary_key_of_copy(copy.entity()).unwrap(), primary().key());
        assert_eq!(primary_from_copy(copy.into_entity()).unwrap(), primary());
    }

    #[test]
    fn partial_copy_keeps_only_included_properties() {
        let copy = index_copy(&primary(), &PARTIAL, "email_Sales".into(), "j@x".into());
        let names: Vec<_> = copy.entity().properties().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "EntityType",
                "EntityVersion",
                "LastName",
                "PrimaryPartitionKey",
                "PrimaryRowKey"
            ]
        );
        assert!(!copy.same_partition());
        assert_eq!(copy.table(), Some("EmployeesByEmail"));
        assert!(primary_key_of_copy(&primary()).is_err());
    }
}
