use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{account}", row_key = "balance")]
pub struct Balance {
    pub account: String,
    pub cents: i128,
}

fn main() {
    let _ = Balance::key("a1");
}
