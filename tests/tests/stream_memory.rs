//! Memory stays bounded while `Query::stream` reads a large result.
//!
//! Two probes, neither needing `unsafe` (forbidden in the workspace, so no counting
//! global allocator):
//!
//! - **Live items.** The entity carries a field whose codec counts the decoded values
//!   alive (created by decoding, gone when dropped). Its peak is how many decoded
//!   items the stream held at once: the page being consumed plus the page being
//!   prefetched, so at most two pages, whatever the result size.
//! - **Peak RSS.** Linux's `VmHWM` (peak resident set), reset through
//!   `/proc/self/clear_refs` just before reading, minus the resident set just before:
//!   how much the process grew while streaming, engine pages and all. It is
//!   process-wide and allocator-dependent, so it is checked loosely: the growth at
//!   100k entities stays within 4x the growth at 10k (plus 8 MiB of slack), while
//!   `collect()`, which holds everything, is used as the control that shows the probe
//!   sees real growth.
//!
//! Figures are printed; run in release for representative numbers:
//! `cargo test --release -p tables-tests --test stream_memory -- --nocapture`.

#![allow(clippy::unwrap_used, clippy::print_stdout)] // a measuring test

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use tables_client::mem::MemEngine;
use tables_client::{Engine, Result, Row, TableServiceClient, WriteOp};

/// Decoded values alive now, and the most alive at once since the last reset.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Resets the peak to the values alive now; returns that count.
fn reset_peak() -> usize {
    let live = LIVE.load(Ordering::SeqCst);
    PEAK.store(live, Ordering::SeqCst);
    live
}

/// A property value that counts its live instances.
struct Tracked(String);

impl Tracked {
    fn new(text: String) -> Tracked {
        let live = LIVE.fetch_add(1, Ordering::SeqCst) + 1;
        PEAK.fetch_max(live, Ordering::SeqCst);
        Tracked(text)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The codec of a [`Tracked`] field: stored as a string.
mod tracked {
    use super::Tracked;
    use tables_client::{Result, Value};

    pub(super) fn to_value(value: &Tracked) -> Result<Option<Value>> {
        Ok(Some(Value::String(value.0.clone())))
    }

    pub(super) fn from_value(value: Option<Value>) -> Result<Tracked> {
        let text = match value {
            Some(Value::String(text)) => text,
            _ => String::new(),
        };
        Ok(Tracked::new(text))
    }
}

#[derive(tables_client::Entity)]
#[entity(partition_key = "p{partition:04}", row_key = "r{id:08}")]
#[entity(rename_all = "PascalCase")]
struct Reading {
    partition: u32,
    id: u32,
    #[entity(with = tracked)]
    payload: Tracked,
    value: f64,
    sensor: String,
}

const PAGE: u32 = 1_000;
const PER_PARTITION: usize = 1_000;

/// An engine holding `n` readings, a thousand per partition.
async fn loaded(n: usize) -> Result<TableServiceClient> {
    let engine = MemEngine::new();
    engine.create_table("Readings").await?;
    let mut batch = Vec::with_capacity(100);
    for i in 0..n {
        let reading = Reading {
            partition: (i / PER_PARTITION) as u32,
            id: i as u32,
            payload: Tracked::new(format!("{i:0>120}")),
            value: i as f64 * 0.5,
            sensor: format!("sensor-{:04}-north-wing-floor-{}", i % 97, i % 7),
        };
        batch.push(WriteOp::Insert(reading.to_entity()?));
        if batch.len() == 100 || (i + 1) % PER_PARTITION == 0 || i + 1 == n {
            engine.submit_batch("Readings", &batch).await?;
            batch.clear();
        }
    }
    Ok(TableServiceClient::new(engine))
}

/// What one run held: peak live decoded items, and peak RSS growth in KiB.
#[derive(Debug, Clone, Copy)]
struct Held {
    items: usize,
    rss_growth_kib: usize,
}

/// Runs `read` with both probes reset; returns what it held at most.
async fn measure<F: std::future::Future<Output = usize>>(read: F) -> Held {
    let growth = tables_tests::memory::PeakGrowth::start();
    let live_before = reset_peak();
    let count = read.await;
    assert!(count > 0);
    Held {
        items: PEAK.load(Ordering::SeqCst) - live_before,
        rss_growth_kib: growth.kib(),
    }
}

/// Streams and collects `n` readings; returns what each held.
async fn stream_and_collect(n: usize) -> (Held, Held) {
    let service = loaded(n).await.unwrap();
    let readings = service.table::<Reading>("Readings");
    let streamed = measure(async {
        let mut stream = readings.query().page_size(PAGE).stream();
        let mut count = 0;
        while let Some(reading) = stream.next().await {
            let reading = reading.unwrap();
            assert_eq!(reading.id as usize, count, "in key order");
            count += 1;
            if count % 500 == 0 {
                // A consumer slower than the engine, so the prefetch runs as
                // far ahead as it is allowed to.
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
        assert_eq!(count, n);
        count
    })
    .await;
    let collected = measure(async {
        let all = readings.query().page_size(PAGE).collect().await.unwrap();
        assert_eq!(all.len(), n);
        // Still alive here, so the peak includes all of them.
        all.len()
    })
    .await;
    (streamed, collected)
}

#[test]
fn streaming_holds_at_most_two_pages() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Warm up the allocator and the runtime so the first measurement is not charged
    // for them.
    runtime.block_on(stream_and_collect(5_000));
    let (stream_10k, collect_10k) = runtime.block_on(stream_and_collect(10_000));
    let (stream_100k, collect_100k) = runtime.block_on(stream_and_collect(100_000));
    for (label, held) in [
        ("stream   10k", stream_10k),
        ("stream  100k", stream_100k),
        ("collect  10k", collect_10k),
        ("collect 100k", collect_100k),
    ] {
        println!(
            "{label}: peak live decoded items {:>6}, peak RSS growth {:>7} KiB ({:.1} MiB)",
            held.items,
            held.rss_growth_kib,
            held.rss_growth_kib as f64 / 1024.0
        );
    }

    // Structural bound: the page being consumed and the one being prefetched.
    let two_pages = 2 * PAGE as usize;
    assert!(stream_10k.items <= two_pages, "{stream_10k:?}");
    assert!(stream_100k.items <= two_pages, "{stream_100k:?}");
    assert!(
        stream_100k.items >= PAGE as usize,
        "a page is decoded at once"
    );
    // The probe sees unbounded holding when there is some.
    assert_eq!(collect_10k.items, 10_000);
    assert_eq!(collect_100k.items, 100_000);

    // Process growth does not follow the result size.
    let slack_kib = 8 * 1024;
    assert!(
        stream_100k.rss_growth_kib <= 4 * stream_10k.rss_growth_kib + slack_kib,
        "stream growth at 100k {} KiB vs 10k {} KiB",
        stream_100k.rss_growth_kib,
        stream_10k.rss_growth_kib
    );
    assert!(
        collect_100k.rss_growth_kib >= 4 * stream_100k.rss_growth_kib,
        "the control (collect) grows with the result: {} KiB vs stream {} KiB",
        collect_100k.rss_growth_kib,
        stream_100k.rss_growth_kib
    );
}
