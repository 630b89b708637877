// Hashed shard keys: a bucket hashes a String, must be read back from the field's
// own placeholder, belongs to the primary key, and counts 2 to 1000 buckets.
use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{id:shard(8)}", row_key = "{id:06}")]
pub struct NotText {
    pub id: u32,
}

#[derive(Entity)]
#[entity(partition_key = "{user:shard(8)}", row_key = "{at:010}")]
pub struct NotReadBack {
    pub user: String,
    pub at: u64,
}

#[derive(Entity)]
#[entity(partition_key = "{user:shard(8)}", row_key = "u_{user}")]
#[entity(index(name = "by_mail", row_key = "mail_{mail:shard(4)}_{user}"))]
pub struct InIndex {
    pub user: String,
    pub mail: String,
}

#[derive(Entity)]
#[entity(partition_key = "{user:shard(1)}", row_key = "{user}")]
pub struct OneBucket {
    pub user: String,
}

fn main() {}
