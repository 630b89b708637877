use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{room}", row_key = "{starts:ticks}")]
pub struct Meeting {
    pub room: String,
    pub starts: chrono::NaiveDateTime,
}

fn main() {}
