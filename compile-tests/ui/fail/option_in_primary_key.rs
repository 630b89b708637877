use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{email}")]
pub struct Employee {
    pub department: String,
    pub email: Option<String>,
}

fn main() {}
