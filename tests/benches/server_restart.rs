//! How long `tables-server --data-dir` takes to start on a folder holding a
//! million entities: the server is filled through our remote engine (batches of
//! 100, 16 at a time), stopped, then started again several times. The first start
//! loads the last snapshot written during the fill and replays the journal after
//! it; the later ones load the snapshot the first one wrote. Each
//! start is timed from the call until the server listens with every row restored
//! (the restore runs before it serves). Also: the folder's size, and the fill rate
//! with every batch synced to disk before it is answered.
//!
//! ```text
//! cargo bench -p tables-tests --bench server_restart
//! ```
//!
//! Knob: `TABLES_BENCH_RESTART_ROWS` (default 1,000,000). Under `cargo test` it is
//! a smoke run with 2,000 rows. The folder is made under the system's temporary
//! folder and removed at the end.

#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)] // a bench

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tables_client::remote::{RemoteEngine, RetryPolicy};
use tables_client::{Engine, QuerySpec, WriteOp};
use tables_server::{RunningServer, Server};
use tables_tests::read::query_all;
use tables_tests::server::bench_row as row;

fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn start(dir: &Path) -> (RunningServer, Duration) {
    let started = Instant::now();
    let server = Server::builder()
        .port(0)
        .data_dir(dir)
        .start_on_own_thread(2)
        .unwrap();
    (server, started.elapsed())
}

fn engine(server: &RunningServer) -> RemoteEngine {
    tables_tests::server::engine_at(&server.url(), RetryPolicy::default())
}

fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                folder_bytes(&entry.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

async fn fill(engine: Arc<RemoteEngine>, rows: usize) {
    engine.create_table("Restart").await.unwrap();
    let batches = rows.div_ceil(100);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (engine, next) = (Arc::clone(&engine), Arc::clone(&next));
            tokio::spawn(async move {
                loop {
                    let batch = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if batch >= batches {
                        return;
                    }
                    let pk = format!("p{batch:06}");
                    let ops: Vec<WriteOp> = (0..100.min(rows - batch * 100))
                        .map(|i| WriteOp::Insert(row(&pk, i)))
                        .collect();
                    engine.submit_batch("Restart", &ops).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

async fn count(engine: &RemoteEngine) -> usize {
    let spec = QuerySpec::new().select(["PartitionKey"]);
    query_all(engine, "Restart", &spec).await.unwrap().len()
}

fn main() {
    let rows = if measuring() {
        std::env::var("TABLES_BENCH_RESTART_ROWS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1_000_000)
    } else {
        2_000
    };
    let dir = std::env::temp_dir().join(format!("tables-restart-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let (server, _) = start(&dir);
    let filled = Instant::now();
    runtime.block_on(fill(Arc::new(engine(&server)), rows));
    let fill_time = filled.elapsed();
    server.stop();
    let journal_bytes = folder_bytes(&dir);

    let restarts = if measuring() { 5 } else { 2 };
    let mut times = Vec::new();
    for _ in 0..restarts {
        let (server, took) = start(&dir);
        let restored = runtime.block_on(async { count(&engine(&server)).await });
        assert_eq!(restored, rows, "a restart lost rows");
        times.push(took);
        // Stopping waits for the snapshot the first restart starts.
        server.stop();
    }
    let snapshot_bytes = folder_bytes(&dir);
    let _ = std::fs::remove_dir_all(&dir);

    let ms = |d: &Duration| format!("{:.0} ms", d.as_secs_f64() * 1e3);
    let mut later: Vec<Duration> = times[1..].to_vec();
    later.sort();
    println!("server_restart: {rows} entities (5 properties each), tables-server --data-dir");
    println!(
        "  fill: {} ({:.0} entities/s, batches of 100, 16 at a time, each synced before its answer)",
        ms(&fill_time),
        rows as f64 / fill_time.as_secs_f64()
    );
    println!(
        "  folder: {:.1} MiB after the fill (snapshot and journal), {:.1} MiB after the restarts",
        journal_bytes as f64 / (1 << 20) as f64,
        snapshot_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "  first start (snapshot and journal replay): {}",
        ms(&times[0])
    );
    println!(
        "  later starts (snapshot load): median {} (min {}, max {}, {} starts)",
        ms(&later[later.len() / 2]),
        ms(&later[0]),
        ms(&later[later.len() - 1]),
        later.len()
    );
}
