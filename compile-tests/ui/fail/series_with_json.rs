use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{page}", row_key = "{day}")]
pub struct Hits {
    pub page: String,
    pub day: String,
    #[entity(series, json)]
    pub hourly: [u32; 24],
}

fn main() {}
