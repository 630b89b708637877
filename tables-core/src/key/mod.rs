//! Key validation and key encodings. (Being written: helper "core-data".)

mod order;

use crate::entity::EntityKey;
use crate::error::Result;

/// Checks a table name against the service's rules.
pub fn validate_table_name(_name: &str) -> Result<()> {
    todo!("core-data helper")
}

/// Checks both parts of an entity key.
pub fn validate_entity_key(_key: &EntityKey) -> Result<()> {
    todo!("core-data helper")
}
