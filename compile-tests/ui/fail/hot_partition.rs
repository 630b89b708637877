// The guide's prepend/append anti-pattern: a PartitionKey that starts with a time.
use tables_client::{DateTime, Entity};

#[derive(Entity)]
#[entity(partition_key = "{at:ticks}", row_key = "{device}")]
pub struct Reading {
    pub at: DateTime,
    pub device: String,
    pub value: f64,
}

fn main() {}
