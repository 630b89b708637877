//! Rows as they are stored: [`DynamicEntity`] as a [`Row`], for moving data that no
//! Rust type describes (imports, copies between tables and accounts).

use super::{EntitySchema, Key, Row};
use crate::{DynamicEntity, Result};

/// A [`DynamicEntity`] is its own row: written with its keys and properties as they
/// are, read back as stored. It declares no kind and no index, so writes of it do
/// no index upkeep; a `BulkWriter<DynamicEntity>` loads rows from anywhere in
/// entity group transactions.
///
/// ```
/// use tables_core::{DynamicEntity, Row};
///
/// let row = DynamicEntity::new("p", "r").with("Total", 12.5);
/// assert_eq!(row.to_entity().unwrap().get("Total"), row.get("Total"));
/// assert_eq!(row.entity_key().unwrap().as_entity_key().row_key, "r");
/// ```
impl Row for DynamicEntity {
    const KINDS: Option<&'static [&'static str]> = None;
    const HAS_INDEXES: bool = false;

    fn schemas() -> Vec<&'static EntitySchema> {
        Vec::new()
    }

    fn entity_key(&self) -> Result<Key<Self>> {
        Ok(Key::from_entity_key(self.key()))
    }

    /// The row without what the service sets (Timestamp, ETag).
    fn to_entity(&self) -> Result<DynamicEntity> {
        let mut row = self.clone();
        row.timestamp = None;
        row.etag = None;
        Ok(row)
    }

    fn from_entity(entity: DynamicEntity) -> Result<Self> {
        Ok(entity)
    }
}
