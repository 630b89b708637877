use tables_client::Entity;

#[derive(Entity)]
#[entity(kind = "Client", partition_key = "{id}", row_key = "c")]
pub struct CustomerV1 {
    pub id: String,
}

#[derive(Entity)]
#[entity(
    kind = "Customer",
    version = 2,
    upgrade_from(CustomerV1),
    partition_key = "{id}",
    row_key = "c"
)]
pub struct Customer {
    pub id: String,
}

impl From<CustomerV1> for Customer {
    fn from(old: CustomerV1) -> Customer {
        Customer { id: old.id }
    }
}

fn main() {}
