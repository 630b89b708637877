use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{last_name}_{first_name}")]
pub struct Employee {
    pub department: String,
    pub last_name: String,
    pub first_name: String,
}

fn main() {}
