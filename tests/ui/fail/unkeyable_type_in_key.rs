use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "p", row_key = "{tags}")]
pub struct Tagged {
    pub tags: Vec<String>,
}

fn main() {}
