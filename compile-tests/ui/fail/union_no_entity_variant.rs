use tables_client::{DynamicEntity, EntityUnion};

#[derive(EntityUnion)]
pub enum SalesPartition {
    #[entity(other)]
    Unknown(DynamicEntity),
}

fn main() {}
