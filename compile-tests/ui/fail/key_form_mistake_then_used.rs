use tables_client::{DateTime, Entity};

// One mistake: a date-time written as plain text. The key builder keeps its
// signature, so using it adds no error.
#[derive(Entity)]
#[entity(partition_key = "{device}", row_key = "{at}")]
pub struct Reading {
    pub device: String,
    pub at: DateTime,
    pub value: f64,
}

fn main() {
    let _ = Reading::key("d1", DateTime::MIN);
    let _ = Reading::VALUE.lt(1.5);
}
