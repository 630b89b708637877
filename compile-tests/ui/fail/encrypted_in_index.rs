use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "e_{id}")]
#[entity(unique_index(name = "by_ssn", row_key = "ssn_{ssn}"))]
pub struct Employee {
    pub department: String,
    pub id: String,
    #[entity(encrypted)]
    pub ssn: String,
}

fn main() {}
