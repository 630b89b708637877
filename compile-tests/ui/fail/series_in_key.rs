use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{page}", row_key = "{hourly}")]
pub struct Hits {
    pub page: String,
    #[entity(series)]
    pub hourly: [u32; 24],
}

fn main() {}
