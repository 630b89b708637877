//! The typed layer's vocabulary: the traits `#[derive(Entity)]`,
//! `#[derive(EntityUnion)]` and `#[derive(Property)]` implement, the static schema of
//! an entity type, index rows, typed filter columns and key ranges.
//!
//! Every row a derived type writes carries its discriminator: the `EntityType`
//! property names the kind (`"Employee"`) and `EntityVersion` (Int32) the version of
//! the Rust type that wrote it. Index copies and index entries written for a kind
//! carry `EntityType` values of their own (`"Employee@email"`, `"Employee#last_name"`),
//! so a query for a kind never mistakes a copy for a primary; [`row_role`] tells the
//! roles apart.

mod codec;
mod column;
#[cfg(any(feature = "chrono", feature = "time"))]
mod date;
#[cfg(feature = "bytes")]
mod ext_bytes;
#[cfg(feature = "chrono")]
mod ext_chrono;
#[cfg(feature = "rust_decimal")]
mod ext_decimal;
#[cfg(feature = "time")]
mod ext_time;
mod index;
mod keypart;
mod property;
mod range;
mod raw;
mod reader;
mod registry;
mod schema;
mod tag;
mod typed_key;

pub use crate::filter::Reads;
pub use crate::key::KeyRange;
pub use codec::OtherProperties;
pub use column::{
    EncryptedColumn, EncryptedFieldsCannotBeFiltered, FilterFor, Filterable, Operand, SeriesColumn,
    TypedColumn, TypedFilter,
};
pub use index::{primary_from_copy, primary_key_of_copy, IndexCopy, IndexEntry};
pub use keypart::{KeyDate, KeyInt, KeyText, KeyTime};
pub use property::Property;
pub use range::TextRange;
pub use registry::{check_writer, claimant};
pub use schema::{EntitySchema, IndexKind, IndexSchema, PropertySchema, StoredAs};
pub use tag::{kind_of, rows_filter, schema_of, Tag, TagValue};
pub use typed_key::{
    copy_carries, Contains, CopyIndex, CopyIndexKeyOf, IndexKey, IndexOf, IndexPartition, Key,
    KeyOf, ListIndex, ListIndexKeyOf, PartitionOf, ProjectedPartition,
};

use crate::entity::DynamicEntity;
use crate::error::Result;
use crate::value::Value;

#[doc(hidden)]
pub mod __private {
    pub use super::codec::{
        check_kind, check_not_client_row, check_tag, decode_field, decode_json, decode_with,
        encode_field, encode_json, encode_with, entity_type, expect_string, explain_decode,
        hold_encoded, hold_spill_encoded, kinds_distinct, mark_wide, missing_is_default,
        new_entity, push_other_properties, push_property, seal_encoded, series_array, series_point,
        str_eq, take_properties, unhold_slot, unknown_kind, unknown_variant, unknown_version,
        unseal_slot, FieldCodec, PropertyNames, TakenProperties, TakenProperty,
    };
    pub use super::index::{index_copy, index_entry_for};
    pub use super::keypart::{KeyDateCodec, KeyIntCodec, KeyTextCodec, KeyTimeCodec};
    pub use super::range::{
        prefix_str, range_date, range_iso, range_padded, range_reverse_ticks, range_signed,
        range_str, range_ticks, range_uuid,
    };
    pub use super::reader::{
        finish_partition_key, finish_row_key, write_bucket, write_date, write_iso, write_literal,
        write_padded, write_reverse_ticks, write_shard, write_signed, write_str_part, write_text,
        write_ticks, KeyReader,
    };
    pub use super::registry::Registration;
    pub use inventory;
}

/// The property holding a row's discriminator.
pub const ENTITY_TYPE_PROPERTY: &str = "EntityType";
/// The property holding the version of the type that wrote a primary row (Int32).
pub const ENTITY_VERSION_PROPERTY: &str = "EntityVersion";
/// On an index copy: the PartitionKey of its primary.
pub const PRIMARY_PARTITION_KEY_PROPERTY: &str = "PrimaryPartitionKey";
/// On an index copy: the RowKey of its primary.
pub const PRIMARY_ROW_KEY_PROPERTY: &str = "PrimaryRowKey";
/// On a primary being moved to another key (`Table::move_to`): the move's row in
/// its partition. Typed writes refuse the row until the move finishes.
pub const MOVING_TO_PROPERTY: &str = "MovingTo";
/// On the new row of a move under way: where it comes from. Typed writes refuse the
/// row until the move finishes.
pub const MOVED_FROM_PROPERTY: &str = "MovedFrom";
/// Property names the typed layer reserves: a derived field can't be stored under them.
pub const RESERVED_PROPERTIES: [&str; 9] = [
    ENTITY_TYPE_PROPERTY,
    ENTITY_VERSION_PROPERTY,
    PRIMARY_PARTITION_KEY_PROPERTY,
    PRIMARY_ROW_KEY_PROPERTY,
    ENTITY_PARTS_PROPERTY,
    ENTITY_PART_PROPERTY,
    ENTITY_PARTS_TAG_PROPERTY,
    MOVING_TO_PROPERTY,
    MOVED_FROM_PROPERTY,
];
/// On a wide entity's base row: how many part rows follow (`tables_core::wide`).
pub const ENTITY_PARTS_PROPERTY: &str = "EntityParts";
/// On a wide entity's part row: its number, from 1 (`tables_core::wide`).
pub const ENTITY_PART_PROPERTY: &str = "EntityPart";
/// On every row of a wide entity's multi-row version: the version's tag
/// (`tables_core::wide`).
pub const ENTITY_PARTS_TAG_PROPERTY: &str = "EntityPartsTag";
/// Separates kind and index name in an index copy's `EntityType` (`Employee@email`).
pub const INDEX_COPY_MARK: char = '@';
/// Separates kind and index name in an index entry's `EntityType` (`Employee#last_name`).
pub const INDEX_ENTRY_MARK: char = '#';
/// Starts the `EntityType` of rows the client keeps for itself (e.g. `$intent`).
pub const SYSTEM_ROW_MARK: char = '$';

/// What a typed table holds, and its codec: implemented by `#[derive(Entity)]` and
/// `#[derive(EntityUnion)]`, so one `Table<T>` serves both. [`Entity`] and
/// [`EntityUnion`] add what is theirs (the kind and version of one type; the
/// variants of a union).
pub trait Row: Sized + Send + Sync + 'static {
    /// The kinds of primary rows the type reads; `None` reads rows of every kind (a
    /// union with a catch-all variant).
    const KINDS: Option<&'static [&'static str]>;

    /// Whether any of the entity types declares an index or index entity (so a
    /// write needs index upkeep); known at compile time.
    const HAS_INDEXES: bool;

    /// Whether the type (or a variant of the union) is wide (`#[entity(wide)]`, or a
    /// series too long for one row): its rows go through the client's wide layer
    /// (`tables_core::wide`).
    const WIDE: bool = false;

    /// The schemas of the entity types: one for an entity, one per variant for a
    /// union.
    fn schemas() -> Vec<&'static EntitySchema>;

    /// The primary row's key.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidKey`] naming the field when a key part can't be
    /// written (a number wider than its padding, a forbidden character, a key over
    /// 1 KiB).
    fn entity_key(&self) -> Result<Key<Self>>;

    /// The primary row: keys, discriminator and properties (key fields are not
    /// stored twice).
    ///
    /// # Errors
    ///
    /// As [`Row::entity_key`]; [`crate::ErrorKind::InvalidValue`] or
    /// [`crate::ErrorKind::PropertyValueTooLarge`] naming the field whose value can't
    /// be stored.
    fn to_entity(&self) -> Result<DynamicEntity>;

    /// Reads a primary row back: checks the discriminator (upgrading rows written by
    /// an older version the type declares; a union picks the variant the row's tag
    /// names), parses the key fields back from the keys and decodes every property.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::Decode`] naming the entity key and, where one is at fault,
    /// the field and property: a row of another kind, an index copy, an unknown
    /// version, a key that doesn't match the template, a missing or mistyped property.
    fn from_entity(entity: DynamicEntity) -> Result<Self>;

    /// The index copies (`index(..)`) this value implies, given its primary row (from
    /// [`Row::to_entity`]); none for a union's catch-all variant.
    ///
    /// # Errors
    ///
    /// As [`Row::entity_key`], for the copies' keys.
    fn index_copies(&self, primary: &DynamicEntity) -> Result<Vec<IndexCopy>> {
        let _ = primary;
        Ok(Vec::new())
    }

    /// The index entries (`index_entity(..)`) this value belongs to; none for a
    /// union's catch-all variant.
    ///
    /// # Errors
    ///
    /// As [`Row::entity_key`], for the entries' keys.
    fn index_entries(&self) -> Result<Vec<IndexEntry>> {
        Ok(Vec::new())
    }
}

/// One Rust type stored as table rows: implemented by `#[derive(Entity)]`, beside
/// [`Row`] (the codec).
///
/// The derive writes every item from the struct's `#[entity(..)]` attributes; see
/// the `tables-client` crate docs for the attribute grammar and examples.
pub trait Entity: Row {
    /// The discriminator written as `EntityType` on every primary row.
    const KIND: &'static str;
    /// The version written as `EntityVersion` on every primary row.
    const VERSION: u32;
    /// The stored property names, in field order (what `schema().property_names()`
    /// lists), for checks made at compile time.
    const PROPERTIES: &'static [&'static str];
    /// The PartitionKey and RowKey templates as written, for checks made at compile
    /// time.
    const KEY_TEMPLATES: [&'static str; 2];

    /// The type's key design, properties and indexes.
    fn schema() -> &'static EntitySchema;

    /// Whether [`Row::from_entity`] can read a row written with `version`: the
    /// current version, or one the type upgrades from.
    fn decodes_version(version: u32) -> bool {
        version == Self::VERSION
    }
}

/// A date-time type truncated to the 100 ns ticks `Edm.DateTime` stores: a value
/// finer than that is refused by a write (it would read back different), so
/// truncate it first, e.g. `chrono::Utc::now().truncated_to_ticks()`.
///
/// [`DateTime`](crate::DateTime) always holds whole ticks.
pub trait TruncateToTicks: Sized {
    /// The value with every digit below 100 ns dropped.
    #[must_use]
    fn truncated_to_ticks(self) -> Self;
}

/// An enum over several entity types sharing a table (heterogeneous partitions):
/// implemented by `#[derive(EntityUnion)]`, beside [`Row`] (the codec, which
/// dispatches to the variant). Decoding picks the variant the row's tag names.
pub trait EntityUnion: Row {
    /// The kinds of the entity variants, in declaration order.
    const VARIANT_KINDS: &'static [&'static str];

    /// The kind of this value's variant; `None` for the catch-all variant.
    fn kind(&self) -> Option<&'static str>;
}

/// What a stored row is, by its `EntityType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowRole<'a> {
    /// A primary row of `kind`.
    Primary {
        /// The kind.
        kind: &'a str,
    },
    /// A copy kept by index `index` of `kind`.
    IndexCopy {
        /// The kind of the primary.
        kind: &'a str,
        /// The index name.
        index: &'a str,
    },
    /// An index entry kept by index entity `index` of `kind`.
    IndexEntry {
        /// The kind of the indexed entities.
        kind: &'a str,
        /// The index name.
        index: &'a str,
    },
    /// A row the client keeps for itself (`EntityType` starting with `$`).
    System(&'a str),
    /// A row with no string `EntityType`: not written by a derived type.
    Untyped,
}

/// Classifies a row by its `EntityType` property.
///
/// ```
/// use tables_core::model::{row_role, RowRole};
/// use tables_core::DynamicEntity;
///
/// let copy = DynamicEntity::new("Sales", "email_j@x").with("EntityType", "Employee@email");
/// assert_eq!(row_role(&copy), RowRole::IndexCopy { kind: "Employee", index: "email" });
/// let plain = DynamicEntity::new("Sales", "1");
/// assert_eq!(row_role(&plain), RowRole::Untyped);
/// ```
pub fn row_role(entity: &DynamicEntity) -> RowRole<'_> {
    match entity.get(ENTITY_TYPE_PROPERTY) {
        Some(Value::String(text)) => role_of(text),
        _ => RowRole::Untyped,
    }
}

/// Classifies an `EntityType` value (see [`row_role`]).
pub fn role_of(entity_type: &str) -> RowRole<'_> {
    if entity_type.starts_with(SYSTEM_ROW_MARK) {
        return RowRole::System(entity_type);
    }
    if let Some((kind, index)) = entity_type.split_once(INDEX_COPY_MARK) {
        return RowRole::IndexCopy { kind, index };
    }
    if let Some((kind, index)) = entity_type.split_once(INDEX_ENTRY_MARK) {
        return RowRole::IndexEntry { kind, index };
    }
    RowRole::Primary { kind: entity_type }
}

/// The `EntityType` of index `index`'s copies of `kind` (`Employee@email`).
pub fn index_copy_type(kind: &str, index: &str) -> String {
    format!("{kind}{INDEX_COPY_MARK}{index}")
}

/// The `EntityType` of index entity `index`'s rows for `kind` (`Employee#last_name`).
pub fn index_entry_type(kind: &str, index: &str) -> String {
    format!("{kind}{INDEX_ENTRY_MARK}{index}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DateTime;

    // The derive works inside this crate too, with `crate = "crate"`.
    #[derive(tables_derive::Entity, Debug, Clone, PartialEq)]
    #[entity(
        crate = "crate",
        kind = "Probe",
        partition_key = "p",
        row_key = "{at:rticks}"
    )]
    struct Probe {
        at: DateTime,
        reading: f64,
    }

    #[test]
    fn derived_entities_work_inside_core() {
        let probe = Probe {
            at: DateTime::from_ymd_hms(2024, 1, 2, 3, 4, 5).unwrap_or(DateTime::MIN),
            reading: 0.5,
        };
        let row = probe.to_entity().unwrap();
        assert_eq!(row_role(&row), RowRole::Primary { kind: "Probe" });
        assert_eq!(Probe::from_entity(row).unwrap(), probe);
        assert_eq!(Probe::schema().row_key, "{at:rticks}");
    }
}
