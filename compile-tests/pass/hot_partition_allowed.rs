//! A low write rate may key partitions by time, when the type says so.
#![deny(warnings)]

use tables_client::{DateTime, Entity};

/// A device's reading, partitioned by the time it was taken.
#[derive(Entity, Debug)]
#[entity(
    allow_hot_partition,
    partition_key = "{at:ticks}",
    row_key = "{device}"
)]
pub struct Reading {
    /// When.
    pub at: DateTime,
    /// Which device.
    pub device: String,
    /// What it read.
    pub value: f64,
}

fn main() {
    let _ = Reading::key;
}
