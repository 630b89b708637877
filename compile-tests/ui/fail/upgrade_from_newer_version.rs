use tables_client::Entity;

#[derive(Entity)]
#[entity(kind = "Customer", version = 3, partition_key = "{id}", row_key = "c")]
pub struct CustomerV3 {
    pub id: String,
}

#[derive(Entity)]
#[entity(
    kind = "Customer",
    version = 2,
    upgrade_from(CustomerV3),
    partition_key = "{id}",
    row_key = "c"
)]
pub struct Customer {
    pub id: String,
}

impl From<CustomerV3> for Customer {
    fn from(old: CustomerV3) -> Customer {
        Customer { id: old.id }
    }
}

fn main() {}
