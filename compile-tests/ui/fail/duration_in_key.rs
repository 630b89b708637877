use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{job}", row_key = "{took}")]
pub struct Run {
    pub job: String,
    pub took: std::time::Duration,
}

fn main() {}
