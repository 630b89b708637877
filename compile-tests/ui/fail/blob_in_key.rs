use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{photo}")]
pub struct Employee {
    pub department: String,
    #[entity(blob)]
    pub photo: Vec<u8>,
}

fn main() {}
