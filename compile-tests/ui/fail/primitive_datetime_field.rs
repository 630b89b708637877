use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{room}", row_key = "r")]
pub struct Meeting {
    pub room: String,
    pub ends: Option<time::PrimitiveDateTime>,
}

fn main() {}
