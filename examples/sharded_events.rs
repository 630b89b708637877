//! Spreading a hot partition: events keyed by time would all be written to one
//! partition at any moment (the design guide's prepend/append anti-pattern); a
//! hashed shard bucket of the device spreads them over 8, and one query reads the
//! 8 back at once, merged in time order.
//!
//! ```text
//! cargo run --example sharded_events
//! ```
//!
//! `{device:shard(8)}` writes the device's stable hash bucket, `0` to `7`; the
//! device itself is written in the RowKey, after the time, so each partition is in
//! time order. `Event::shard_partitions(day)` names the day's 8 partitions, and
//! `Query::across_partitions` reads them concurrently and merges them by RowKey.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;

use tables_client::{Entity, QuerySpec};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "DeviceEvents";

/// One device event.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "{device:shard(8)}_{day}",
    row_key = "{at:08}_{device}"
)]
struct Event {
    device: String,
    /// `yyyy-MM-dd`.
    day: String,
    /// Milliseconds since midnight.
    at: u32,
    reading: i64,
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(sharded_events).await
}

async fn sharded_events(example: Example) -> BoxResult<()> {
    let service = example.service();
    service.create_table(TABLE).await?;
    let events = service.table::<Event>(TABLE);

    // 1. 64 events of 16 devices, one every second: spread over the day's buckets.
    for i in 0..64u32 {
        let event = Event {
            device: format!("sensor-{:02}", i % 16),
            day: "2026-11-25".into(),
            at: 36_000_000 + i * 1_000,
            reading: i64::from(i) * 3,
        };
        events.insert(&event).await?;
    }
    let rows = service
        .engine()
        .query(TABLE, &QuerySpec::new(), None)
        .await?
        .items;
    let mut per_partition: BTreeMap<String, usize> = BTreeMap::new();
    for row in &rows {
        *per_partition.entry(row.partition_key.clone()).or_default() += 1;
    }
    println!(
        "\n1. 64 events over {} partitions: {per_partition:?}",
        per_partition.len()
    );
    ensure(
        per_partition.len() >= 5,
        "the writes are spread over the buckets",
    )?;

    // 2. The whole day, in time order, from all 8 partitions at once.
    let partitions = Event::shard_partitions("2026-11-25")?;
    // (`order_in_client`: the merge needs each partition in key order; on Cosmos DB
    // for Table that means ordering each on the client. Azure Storage orders them.)
    let day = events
        .query()
        .order_in_client(1_000)
        .across_partitions(partitions.clone())
        .collect()
        .await?;
    let times: Vec<u32> = day.iter().map(|e| e.at).collect();
    println!(
        "2. read {} events from {:?}: first at {} ms, last at {} ms",
        day.len(),
        partitions,
        times[0],
        times[times.len() - 1]
    );
    ensure(day.len() == 64, "every event comes back")?;
    ensure(times.windows(2).all(|w| w[0] < w[1]), "in time order")?;

    // 3. The first ten seconds only: a RowKey range in every bucket, merged.
    let first = events
        .query()
        .row_range(Event::at_range(36_000_000..36_010_000)?)
        .order_in_client(1_000)
        .across_partitions(partitions)
        .collect()
        .await?;
    println!("3. events in the first ten seconds: {}", first.len());
    ensure(first.len() == 10, "ten events, one a second")?;
    ensure(
        first
            .iter()
            .map(|e| e.at)
            .eq((0..10).map(|i| 36_000_000 + i * 1_000)),
        "the first ten, in order",
    )?;
    Ok(())
}
