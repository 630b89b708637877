//! [`EntityKey`]: the primary key of an entity. A leaf module: errors name keys, so
//! the key depends on nothing else of the crate.

use std::fmt;

/// The primary key of an entity: PartitionKey and RowKey.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityKey {
    /// The PartitionKey.
    pub partition_key: String,
    /// The RowKey.
    pub row_key: String,
}

impl EntityKey {
    /// A key from its two parts. Validation happens where the key is used
    /// ([`crate::key::validate_entity_key`]).
    pub fn new(partition_key: impl Into<String>, row_key: impl Into<String>) -> EntityKey {
        EntityKey {
            partition_key: partition_key.into(),
            row_key: row_key.into(),
        }
    }
}

// So calls taking `impl AsRef<EntityKey>` take typed keys and plain ones alike.
impl AsRef<EntityKey> for EntityKey {
    fn as_ref(&self) -> &EntityKey {
        self
    }
}

impl fmt::Display for EntityKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "(PartitionKey={:?}, RowKey={:?})",
            self.partition_key, self.row_key
        )
    }
}
