//! The attribute keys one container accepts: read by the struct's parser, and named
//! by a field's when one of them is written on a field.

/// The keys a struct's `#[entity(..)]` accepts (on a field, named in the error as
/// belonging on the struct).
pub(crate) const ENTITY_KEYS: [&str; 14] = [
    "kind",
    "version",
    "upgrade_from",
    "partition_key",
    "row_key",
    "rename_all",
    "crate",
    "index",
    "unique_index",
    "index_entity",
    "tag",
    "untagged",
    "allow_hot_partition",
    "wide",
];
