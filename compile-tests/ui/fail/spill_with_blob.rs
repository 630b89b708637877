use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{id}")]
pub struct Note {
    pub department: String,
    pub id: String,
    #[entity(blob, spill)]
    pub body: String,
}

fn main() {}
