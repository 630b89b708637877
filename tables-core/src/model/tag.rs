//! How the rows of one entity type are told apart from the other rows of a table:
//! the type's [`Tag`].
//!
//! By default every primary row carries `EntityType` (the kind) and `EntityVersion`
//! (the version of the Rust type that wrote it). Tables written by other programs
//! mark their types in other ways, or not at all; the heterogeneous entity types
//! pattern (<https://learn.microsoft.com/azure/storage/tables/table-storage-design-modeling>)
//! lists two: a property naming the type, and a RowKey prefix (`EMPLOYEE_000100`,
//! `DEPARTMENT_…`). A type states its tag with `#[entity(tag(..))]` or
//! `#[entity(untagged)]`; queries filter by it on the service, decoding checks it,
//! and an [`EntityUnion`](super::EntityUnion) picks the variant whose tag matches.

use crate::entity::DynamicEntity;
use crate::filter::{col, Filter};
use crate::model::{
    row_role, EntitySchema, KeyRange, Row, RowRole, ENTITY_TYPE_PROPERTY, ENTITY_VERSION_PROPERTY,
};
use crate::value::Value;

/// How an entity type's rows are marked: by default `EntityType` (the kind) and
/// `EntityVersion`; in tables written by other programs, a property naming the type,
/// a RowKey prefix, or nothing at all (`#[entity(tag(..))]`, `#[entity(untagged)]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tag {
    /// `EntityType` holds the kind and `EntityVersion` the version (the default).
    Kind,
    /// A property of the user's choice holds a fixed value, e.g. an existing `Type`
    /// column. No version is written.
    Property {
        /// The property's name.
        name: &'static str,
        /// The value that marks this type.
        value: TagValue,
    },
    /// The RowKey starts with a fixed prefix: the literal start of the type's RowKey
    /// template. Nothing is written.
    RowKeyPrefix(&'static str),
    /// Nothing is written or checked: every row of the table that is not one of the
    /// client's own (index copies, index entries, intents) reads as this type.
    Untagged,
}

/// The value of a [`Tag::Property`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagValue {
    /// A string value.
    Text(&'static str),
    /// An Int32 value (as .NET stores an enum).
    Int(i32),
}

impl TagValue {
    /// The value as stored.
    pub fn to_value(self) -> Value {
        match self {
            TagValue::Text(text) => Value::String(text.to_owned()),
            TagValue::Int(n) => Value::Int32(n),
        }
    }

    /// Whether `value` is this value (an Int64 of the same number counts: some
    /// writers widen integers).
    pub fn is(self, value: &Value) -> bool {
        match (self, value) {
            (TagValue::Text(text), Value::String(found)) => text == found,
            (TagValue::Int(n), Value::Int32(found)) => n == *found,
            (TagValue::Int(n), Value::Int64(found)) => i64::from(n) == *found,
            _ => false,
        }
    }
}

impl std::fmt::Display for TagValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TagValue::Text(text) => write!(f, "{text:?}"),
            TagValue::Int(n) => write!(f, "{n} (Int32)"),
        }
    }
}

impl Tag {
    /// The filter that selects the rows of `kind` with this tag on the service;
    /// `None` when nothing can be filtered (an untagged type).
    pub fn filter(&self, kind: &str) -> Option<Filter> {
        match *self {
            Tag::Kind => Some(col(ENTITY_TYPE_PROPERTY).eq(kind)),
            Tag::Property { name, value } => Some(col(name).eq(value.to_value())),
            Tag::RowKeyPrefix(prefix) => Some(KeyRange::prefix(prefix).row_key_filter()),
            Tag::Untagged => None,
        }
    }

    /// Whether `row` carries this tag for `kind`. Rows the client keeps for itself
    /// (index copies and entries, intents) never match.
    pub fn matches(&self, row: &DynamicEntity, kind: &str) -> bool {
        match *self {
            Tag::Kind => row_role(row) == RowRole::Primary { kind },
            Tag::Property { name, value } => {
                is_foreign(row) && row.get(name).is_some_and(|found| value.is(found))
            }
            Tag::RowKeyPrefix(prefix) => is_foreign(row) && row.row_key.starts_with(prefix),
            Tag::Untagged => is_foreign(row),
        }
    }

    /// The properties the tag writes on a primary row (and a projection must read).
    pub fn properties(&self) -> &[&'static str] {
        match self {
            Tag::Kind => &[ENTITY_TYPE_PROPERTY, ENTITY_VERSION_PROPERTY],
            Tag::Property { name, .. } => std::slice::from_ref(name),
            Tag::RowKeyPrefix(_) | Tag::Untagged => &[],
        }
    }

    /// Whether rows carry the version of the type that wrote them.
    pub fn is_versioned(&self) -> bool {
        matches!(self, Tag::Kind)
    }

    /// How the tag is written, for messages.
    pub fn describe(&self, kind: &str) -> String {
        match self {
            Tag::Kind => format!("{ENTITY_TYPE_PROPERTY} = {kind:?}"),
            Tag::Property { name, value } => format!("{name} = {value}"),
            Tag::RowKeyPrefix(prefix) => format!("a RowKey starting with {prefix:?}"),
            Tag::Untagged => "no tag".to_owned(),
        }
    }
}

/// The filter selecting the primary rows `T` reads on the service: its types' tag
/// filters, ORed; `None` when some rows can't be told apart on the service (an
/// untagged type, or a union with a catch-all variant), which are then told apart
/// as they are decoded.
pub fn rows_filter<T: Row>() -> Option<Filter> {
    T::KINDS?;
    let schemas = T::schemas();
    let mut filters = Vec::with_capacity(schemas.len());
    for schema in schemas {
        filters.push(schema.tag_filter()?);
    }
    // A union of no types reads nothing.
    Some(
        filters
            .into_iter()
            .reduce(Filter::or)
            .unwrap_or(Filter::Literal(false)),
    )
}

/// The kind of `row` among `T`'s types ([`schema_of`]).
pub fn kind_of<T: Row>(row: &DynamicEntity) -> Option<&'static str> {
    schema_of(&T::schemas(), row).map(|schema| schema.kind)
}

/// The type among `schemas` that `row` is a primary row of: the first tagged one
/// whose tag it carries, else the first untagged one that takes it. An untagged
/// type takes any row, so it comes last whatever its place in a union.
pub fn schema_of(
    schemas: &[&'static EntitySchema],
    row: &DynamicEntity,
) -> Option<&'static EntitySchema> {
    let tagged = schemas.iter().filter(|s| s.tag != Tag::Untagged);
    let untagged = schemas.iter().filter(|s| s.tag == Tag::Untagged);
    tagged
        .chain(untagged)
        .copied()
        .find(|schema| schema.is_tagged(row))
}

/// Whether `row` is not one of the rows the client keeps for itself: a row with no
/// `EntityType`, or one naming a primary kind.
fn is_foreign(row: &DynamicEntity) -> bool {
    matches!(row_role(row), RowRole::Primary { .. } | RowRole::Untyped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tag_filters_and_matches_its_rows() {
        let by_kind = DynamicEntity::new("p", "1").with(ENTITY_TYPE_PROPERTY, "Employee");
        let by_column = DynamicEntity::new("p", "2").with("Type", 3);
        let by_prefix = DynamicEntity::new("p", "EMPLOYEE_000100");
        let copy =
            DynamicEntity::new("p", "EMPLOYEE_x").with(ENTITY_TYPE_PROPERTY, "Employee@email");

        assert!(Tag::Kind.matches(&by_kind, "Employee"));
        assert!(!Tag::Kind.matches(&by_kind, "Department"));
        assert!(!Tag::Kind.matches(&by_column, "Employee"));

        let column = Tag::Property {
            name: "Type",
            value: TagValue::Int(3),
        };
        assert!(column.matches(&by_column, "Employee"));
        assert!(!column.matches(&by_kind, "Employee"));
        assert_eq!(column.filter("Employee").unwrap().to_odata(), "Type eq 3");

        let prefix = Tag::RowKeyPrefix("EMPLOYEE_");
        assert!(prefix.matches(&by_prefix, "Employee"));
        assert!(
            !prefix.matches(&copy, "Employee"),
            "a copy is never a primary"
        );
        assert!(!prefix.matches(&by_kind, "Employee"));
        assert_eq!(
            prefix.filter("Employee").unwrap().to_odata(),
            "RowKey ge 'EMPLOYEE_' and RowKey lt 'EMPLOYEE`'"
        );

        assert!(Tag::Untagged.matches(&by_column, "Employee"));
        assert!(!Tag::Untagged.matches(&copy, "Employee"));
        assert_eq!(Tag::Untagged.filter("Employee"), None);
    }

    #[test]
    fn int_tags_accept_widened_values() {
        assert!(TagValue::Int(2).is(&Value::Int64(2)));
        assert!(!TagValue::Int(2).is(&Value::String("2".into())));
        assert!(!TagValue::Text("2").is(&Value::Int32(2)));
    }
}
