// The guide's 365 daily counts need more properties than one row holds: until wide
// entities exist, the derive refuses them and says what to do.
use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{page}", row_key = "{year:04}")]
pub struct DailyCounts {
    pub page: String,
    pub year: u16,
    #[entity(series)]
    pub daily: [u32; 365],
}

fn main() {}
