use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{page}", row_key = "{day}")]
pub struct Hits {
    pub page: String,
    pub day: String,
    #[entity(series)]
    pub hourly: Vec<u32>,
}

fn main() {}
