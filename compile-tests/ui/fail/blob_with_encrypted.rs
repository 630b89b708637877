use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{id}")]
pub struct Employee {
    pub department: String,
    pub id: String,
    #[entity(blob, encrypted)]
    pub photo: Vec<u8>,
}

fn main() {}
