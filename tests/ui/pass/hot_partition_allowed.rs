// A low write rate may key partitions by time, when the type says so.
#![deny(warnings)]

use tables_client::{DateTime, Entity};

#[derive(Entity)]
#[entity(allow_hot_partition, partition_key = "{at:ticks}", row_key = "{device}")]
pub struct Reading {
    pub at: DateTime,
    pub device: String,
    pub value: f64,
}

fn main() {
    let _ = Reading::key;
}
