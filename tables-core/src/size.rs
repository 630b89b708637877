//! Size accounting as the service counts it. (Being written: helper "core-data".)

use crate::entity::DynamicEntity;
use crate::error::Result;

/// The service's size estimate of an entity, in bytes.
pub fn entity_size(_entity: &DynamicEntity) -> usize {
    todo!("core-data helper")
}

/// Checks keys, property names, value sizes, property count and entity size.
pub fn validate_entity(_entity: &DynamicEntity) -> Result<()> {
    todo!("core-data helper")
}
