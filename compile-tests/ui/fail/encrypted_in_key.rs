use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{ssn}")]
pub struct Employee {
    pub department: String,
    #[entity(encrypted)]
    pub ssn: String,
}

fn main() {}
