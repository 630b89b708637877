//! The bulk writer streams: over a million generated rows (`TABLES_BULK_MEMORY_ROWS`;
//! 250,000 in the test command's CI-sized run, 1,000,000 under `TABLES_THOROUGH=1`)
//! it holds at most the items its docs state
//! (`4 × concurrency × 100` waiting, `concurrency` chunks of at most 100 in flight),
//! sends while it reads, and a bad row in the middle stops the load with
//! everything before it written and nothing after it read.
//!
//! The rows go to an engine that counts and discards them, so what grows is the
//! writer's own holding: the items read from the input but not yet handed to the
//! engine, measured at every transaction the engine receives. The process's peak
//! resident growth is printed beside it (and checked loosely: it is allocator- and
//! runtime-dependent).
//!
//! Figures: `cargo test --release -p tables-tests --test bulk_memory -- --nocapture`.

#![allow(clippy::unwrap_used, clippy::print_stdout)] // a measuring test

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use tables_client::mem::MemEngine;
use tables_client::{
    BulkMode, BulkSummary, ETag, Engine, Entity, Result, TableServiceClient, WriteOp, WriteOutcome,
};
use tables_tests::memory::PeakGrowth;
use tables_tests::{Forward, Forwarding};

/// A narrow row, as an export of a large table gives them: sorted by partition.
#[derive(Entity, Debug, Clone)]
#[entity(partition_key = "p{bucket:05}", row_key = "{seq:09}")]
struct Narrow {
    bucket: u32,
    seq: u32,
    value: i64,
}

fn narrow(i: usize) -> Narrow {
    let seq = u32::try_from(i).unwrap();
    Narrow {
        bucket: seq / 1_000,
        seq,
        value: i64::from(seq) * 3,
    }
}

/// Counts the rows it receives and keeps none; records how many items the writer
/// held (read, not yet received) at each transaction.
#[derive(Debug)]
struct Sink {
    inner: Arc<dyn Engine>,
    read: Arc<AtomicUsize>,
    received: AtomicUsize,
    most_held: AtomicUsize,
}

#[async_trait]
impl Forward for Sink {
    fn inner(&self) -> &dyn Engine {
        &self.inner
    }

    async fn submit_batch(&self, _table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        let before = self.received.fetch_add(ops.len(), Ordering::SeqCst);
        let held = self.read.load(Ordering::SeqCst).saturating_sub(before);
        self.most_held.fetch_max(held, Ordering::SeqCst);
        let etag = ETag::new("W/\"datetime'2026-01-01T00%3A00%3A00Z'\"");
        Ok(ops
            .iter()
            .map(|_| WriteOutcome::new(Some(etag.clone()), None))
            .collect())
    }
}

fn rows() -> usize {
    tables_tests::sizes::cases("TABLES_BULK_MEMORY_ROWS", 250_000, 1_000_000) as usize
}

async fn sink() -> (Arc<Forwarding<Sink>>, TableServiceClient, Arc<AtomicUsize>) {
    let read = Arc::new(AtomicUsize::new(0));
    let sink = Arc::new(Forwarding(Sink {
        inner: Arc::new(MemEngine::new()),
        read: Arc::clone(&read),
        received: AtomicUsize::new(0),
        most_held: AtomicUsize::new(0),
    }));
    let service = TableServiceClient::from_engine(sink.clone());
    service.create_table("Narrow").await.unwrap();
    (sink, service, read)
}

const CONCURRENCY: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_rows_hold_at_most_the_documented_items() {
    let count = rows();
    let (sink, service, read) = sink().await;
    let growth = PeakGrowth::start();
    let items = (0..count).map(|i| {
        read.fetch_add(1, Ordering::SeqCst);
        narrow(i)
    });
    let mut chunks = 0;
    let summary = service
        .bulk_writer::<Narrow>("Narrow")
        .mode(BulkMode::Insert)
        .concurrency(CONCURRENCY)
        .write_each(items, |chunk| {
            assert!(chunk.is_written());
            chunks += 1;
        })
        .await
        .unwrap();
    let grew_kib = growth.kib();
    let most_held = sink.most_held.load(Ordering::SeqCst);
    let bound = 4 * CONCURRENCY * 100 + CONCURRENCY * 100;
    println!(
        "{count} rows, {chunks} transactions: at most {most_held} items held (bound {bound}); \
         peak resident growth {} KiB",
        grew_kib
    );
    assert_eq!(summary.items_written, count);
    assert_eq!(sink.received.load(Ordering::SeqCst), count);
    assert_eq!(summary.resume_at(), count);
    assert_eq!(
        chunks,
        count / 100,
        "full chunks of 100: the input is sorted"
    );
    assert!(most_held <= bound, "{most_held} items held, over {bound}");
    // It reads ahead while sending (more than one chunk's worth waits).
    assert!(most_held > 100, "{most_held}");
    // A million rows of ~150 bytes encoded would be ~150 MB held at once (38 MB
    // at the CI size); the writer's growth stays a small fraction of that.
    assert!(grew_kib < 64 * 1024, "grew {grew_kib} KiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_row_in_the_middle_stops_the_load_there() {
    let count = rows();
    let middle = count / 2 + 37;
    let (sink, service, read) = sink().await;
    let items = (0..count).map(|i| {
        read.fetch_add(1, Ordering::SeqCst);
        let mut row = narrow(i);
        if i == middle {
            row.bucket = u32::MAX; // a PartitionKey wider than its template's 5 digits
        }
        row
    });
    let mut written = Vec::new();
    let err = service
        .bulk_writer::<Narrow>("Narrow")
        .mode(BulkMode::Insert)
        .concurrency(CONCURRENCY)
        .write_each(items, |chunk| {
            assert!(chunk.is_written());
            written.extend(chunk.items);
        })
        .await
        .unwrap_err();
    let summary = BulkSummary::from_error(&err).expect("the error carries the summary");
    println!("refused: {err}");
    assert_eq!(err.batch_index(), Some(middle));
    let refused = summary.refused.as_ref().unwrap();
    assert_eq!(refused.index, middle);
    assert_eq!(summary.resume_at(), middle);
    // Everything before it written, nothing after it read or claimed.
    assert_eq!(read.load(Ordering::SeqCst), middle + 1);
    assert_eq!(summary.items_written, middle);
    assert_eq!(sink.received.load(Ordering::SeqCst), middle);
    written.sort_unstable();
    assert!(written.iter().copied().eq(0..middle));
    assert_eq!(summary.items_failed, 0);
}
