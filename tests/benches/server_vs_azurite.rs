//! `tables-server` against Azurite, whole processes, in one run on this machine:
//! point insert, point get and partition scan, through our remote engine and
//! through the official JS SDK, at concurrency 1 and 16. For each, the throughput
//! and the server process's CPU time per operation (user + system: the sum of its
//! threads' `/proc/<pid>/task/<tid>/schedstat` run times, to the nanosecond; the
//! process's clock ticks from `/proc/<pid>/stat` if a thread ended during the
//! run), then the ratios; and the server's memory per million entities (resident
//! set growth while a million rows are loaded).
//!
//! ```text
//! cargo build --release -p tables-server
//! (cd tools/azurite && npm ci) && (cd tools/js-sdk && npm ci)
//! cargo bench -p tables-tests --bench server_vs_azurite
//! ```
//!
//! Both servers run on 127.0.0.1 on free ports and stop when the bench ends (also
//! on a panic). Knobs: `TABLES_BENCH_OPS` (point operations per configuration on
//! Azurite, default 2,000; ten times that on tables-server, so each of its runs
//! lasts about as long as Azurite's), `TABLES_BENCH_SCANS` (scans of a 1,000-row
//! partition, default 100 on Azurite, 1,000 on tables-server),
//! `TABLES_BENCH_MEMORY_ROWS` (default 1,000,000; 0 skips it), `TABLES_BENCH_ROUNDS`
//! (default 3). The client and the servers share the machine's cores, so the
//! figures include that contention. Each round measures every configuration on
//! tables-server, then on Azurite; the summary gives each figure's median over the
//! rounds, the ratios of those medians, and the lowest and highest ratio of a
//! single round (a shared machine's load changes from second to second, and one
//! round can't tell that from the servers). Linux only (it reads `/proc`).

#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)] // a bench

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tables_client::remote::{Credential, RemoteEngine};
use tables_client::{Engine, EntityKey, QuerySpec, WriteOp};
use tables_core::auth::{DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY};
use tables_tests::azurite::dev_key;
use tables_tests::server::bench_row as row;

/// A server process, killed when dropped.
struct Process {
    name: &'static str,
    child: Child,
    url: String,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Process {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// User + system CPU time so far, counted in clock ticks (10 ms here), the
    /// time of threads that have ended included.
    fn cpu_ticks(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // The fields after the command name (which may hold spaces) in parentheses.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64)
    }

    /// Each live thread's time on a CPU so far, in nanoseconds (the first field of
    /// `/proc/<pid>/task/<tid>/schedstat`), by thread id.
    fn cpu_by_thread(&self) -> Vec<(u32, u64)> {
        let mut threads = Vec::new();
        for task in std::fs::read_dir(format!("/proc/{}/task", self.pid())).unwrap() {
            let task = task.unwrap();
            let Ok(tid) = task.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            // A thread may end between the listing and the read.
            if let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) {
                let ns = text.split_whitespace().next().unwrap().parse().unwrap();
                threads.push((tid, ns));
            }
        }
        threads
    }

    /// A reading to take CPU time from, with [`CpuReading::since`].
    fn cpu(&self) -> CpuReading {
        CpuReading {
            threads: self.cpu_by_thread(),
            ticks: self.cpu_ticks(),
        }
    }
}

/// A server's CPU time at one moment: per thread to the nanosecond, and the
/// whole process in clock ticks.
struct CpuReading {
    threads: Vec<(u32, u64)>,
    ticks: Duration,
}

impl CpuReading {
    /// The CPU time used from `before` to this reading: the sum over threads, to the
    /// nanosecond (a 0.1 s run at 10 ms ticks would be 10% off), unless a thread
    /// ended in between, whose time only the tick count still holds.
    fn since(&self, before: &CpuReading) -> Duration {
        let mut ns = 0;
        for (tid, then) in &before.threads {
            match self.threads.iter().find(|(t, _)| t == tid) {
                Some((_, now)) => ns += now.saturating_sub(*then),
                None => return self.ticks.saturating_sub(before.ticks),
            }
        }
        // Threads started in between: all of their time is new.
        ns += self
            .threads
            .iter()
            .filter(|(tid, _)| !before.threads.iter().any(|(t, _)| t == tid))
            .map(|(_, now)| now)
            .sum::<u64>();
        Duration::from_nanos(ns)
    }
}

impl Process {
    /// Resident set size, bytes.
    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }

    fn connection_string(&self) -> String {
        format!(
            "DefaultEndpointsProtocol=http;AccountName={DEVELOPMENT_ACCOUNT};AccountKey={DEVELOPMENT_ACCOUNT_KEY};TableEndpoint={}",
            self.url
        )
    }
}

/// The kernel's clock ticks per second (read once).
fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(read_clock_ticks)
}

fn read_clock_ticks() -> u64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(100)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn azurite_binary() -> Option<PathBuf> {
    let bin = repo().join("tools/azurite/node_modules/.bin/azurite-table");
    bin.exists().then_some(bin)
}

fn start_tables_server(binary: &Path) -> Process {
    let threads = std::env::var("TABLES_BENCH_SERVER_THREADS").unwrap_or_else(|_| "2".to_owned());
    let (child, url) = tables_tests::server::spawn_child(binary, &["--threads", &threads]);
    Process {
        name: "tables-server",
        child,
        url,
    }
}

fn start_azurite(bin: &Path) -> Process {
    let port = free_port();
    let child = Command::new(bin)
        .args([
            "--inMemoryPersistence",
            "--disableTelemetry",
            "--tableHost",
            "127.0.0.1",
        ])
        .args(["--tablePort", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "Azurite did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Process {
        name: "Azurite",
        child,
        url: format!("http://127.0.0.1:{port}/{DEVELOPMENT_ACCOUNT}"),
    }
}

/// A count from the environment; under `cargo test` (a smoke run of the harness,
/// not a measurement) the small `smoke` count.
fn knob(name: &str, default: usize, smoke: usize) -> usize {
    if !measuring() {
        return smoke;
    }
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `cargo bench` passes `--bench`; `cargo test --all-targets` runs the harness once
/// with tiny counts against the debug build, to keep it working.
fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// One measured configuration.
struct Figure {
    server: &'static str,
    client: &'static str,
    op: &'static str,
    concurrency: usize,
    round: usize,
    ops: usize,
    wall: Duration,
    cpu: Duration,
}

impl Figure {
    fn per_second(&self) -> f64 {
        self.ops as f64 / self.wall.as_secs_f64()
    }

    fn cpu_per_op(&self) -> Duration {
        self.cpu / self.ops.max(1) as u32
    }
}

/// Runs `ops` of `op` through the remote engine, `concurrency` tasks at once.
async fn rust_load(
    engine: &Arc<RemoteEngine>,
    table: &str,
    op: &str,
    concurrency: usize,
    count: usize,
) -> usize {
    let per_task = count.div_ceil(concurrency);
    let mut tasks = Vec::new();
    for w in 0..concurrency {
        let engine = Arc::clone(engine);
        let table = table.to_owned();
        let op = op.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut done = 0;
            for i in 0..per_task {
                let pk = format!("p{w}");
                match op.as_str() {
                    "insert" => {
                        engine
                            .write(&table, &WriteOp::Insert(row(&pk, i)))
                            .await
                            .unwrap();
                        done += 1;
                    }
                    "get" => {
                        let key = EntityKey::new(pk, format!("{i:08}"));
                        assert!(engine
                            .get_entity(&table, &key, None)
                            .await
                            .unwrap()
                            .is_some());
                        done += 1;
                    }
                    _ => {
                        let spec =
                            QuerySpec::new().filter(tables_client::Column::partition_key().eq("s"));
                        let mut next = None;
                        loop {
                            let page = engine.query(&table, &spec, next.as_ref()).await.unwrap();
                            done += page.items.len();
                            match page.continuation {
                                Some(token) => next = Some(token),
                                None => break,
                            }
                        }
                    }
                }
            }
            done
        }));
    }
    let mut done = 0;
    for task in tasks {
        done += task.await.unwrap();
    }
    done
}

fn js_load(
    server: &Process,
    table: &str,
    op: &str,
    concurrency: usize,
    count: usize,
) -> (usize, Duration) {
    let out = Command::new("node")
        .current_dir(repo().join("tools/js-sdk"))
        .args(["bench.mjs", &server.connection_string(), table, op])
        .args([concurrency.to_string(), count.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        result["ops"].as_u64().unwrap() as usize,
        Duration::from_secs_f64(result["seconds"].as_f64().unwrap()),
    )
}

async fn seed_scan_partition(engine: &RemoteEngine, table: &str) {
    for chunk in 0..10 {
        let ops: Vec<WriteOp> = (0..100)
            .map(|i| WriteOp::Insert(row("s", chunk * 100 + i)))
            .collect();
        engine.submit_batch(table, &ops).await.unwrap();
    }
}

/// Measures every configuration; `scale` multiplies the operation counts (the
/// faster server gets more, so its runs last about as long as the slower one's).
async fn measure(server: &Process, scale: usize, round: usize, figures: &mut Vec<Figure>) {
    let engine = Arc::new(
        RemoteEngine::builder(&server.url)
            .credential(Credential::SharedKey(dev_key()))
            .build()
            .unwrap(),
    );
    let ops = knob("TABLES_BENCH_OPS", 2000, 16) * scale;
    let scans = knob("TABLES_BENCH_SCANS", 100, 1) * scale;
    for client in ["rust", "js"] {
        for concurrency in [1, 16] {
            let table = format!("bench{client}{concurrency}r{round}");
            engine.create_table(&table).await.unwrap();
            seed_scan_partition(&engine, &table).await;
            for op in ["insert", "get", "scan"] {
                let count = if op == "scan" {
                    scans.max(concurrency)
                } else {
                    ops
                };
                let cpu_before = server.cpu();
                let started = Instant::now();
                let (done, wall) = if client == "rust" {
                    let done = rust_load(&engine, &table, op, concurrency, count).await;
                    (done, started.elapsed())
                } else {
                    js_load(server, &table, op, concurrency, count)
                };
                let figure = Figure {
                    server: server.name,
                    client: if client == "rust" {
                        "remote engine"
                    } else {
                        "JS SDK"
                    },
                    op,
                    concurrency,
                    round,
                    ops: done,
                    wall,
                    cpu: server.cpu().since(&cpu_before),
                };
                println!(
                    "round {} {:<13} {:<13} {:<6} c{:<2} {:>9.0} /s  server CPU {:>8.2} µs/op  ({} in {:.2} s)",
                    figure.round + 1,
                    figure.server,
                    figure.client,
                    figure.op,
                    figure.concurrency,
                    figure.per_second(),
                    figure.cpu_per_op().as_secs_f64() * 1e6,
                    figure.ops,
                    figure.wall.as_secs_f64()
                );
                figures.push(figure);
            }
        }
    }
}

async fn memory_per_million(server: &Process, rows: usize) {
    let engine = Arc::new(
        RemoteEngine::builder(&server.url)
            .credential(Credential::SharedKey(dev_key()))
            .build()
            .unwrap(),
    );
    engine.create_table("memory").await.unwrap();
    let before = server.rss();
    let started = Instant::now();
    let batches = rows.div_ceil(100);
    let mut tasks = Vec::new();
    for w in 0..16 {
        let engine = Arc::clone(&engine);
        tasks.push(tokio::spawn(async move {
            for b in (w..batches).step_by(16) {
                let pk = format!("m{b:06}");
                let ops: Vec<WriteOp> = (0..100).map(|i| WriteOp::Insert(row(&pk, i))).collect();
                engine.submit_batch("memory", &ops).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let grown = server.rss().saturating_sub(before);
    println!(
        "{:<13} memory: {} rows loaded in {:.1} s; resident set grew {:.0} MiB: {:.0} MiB per million entities ({} bytes each)",
        server.name,
        batches * 100,
        started.elapsed().as_secs_f64(),
        grown as f64 / (1024.0 * 1024.0),
        grown as f64 / (1024.0 * 1024.0) * 1e6 / (batches * 100) as f64,
        grown / (batches * 100) as u64
    );
}

/// Each configuration's median figures over the rounds, the ratios of the
/// medians (Azurite's CPU per op over ours, our throughput over Azurite's), and
/// the lowest and highest of those ratios in a single round.
fn summarize(figures: &[Figure]) {
    println!();
    println!("Azurite / tables-server, medians over the rounds [single rounds' range]:");
    let ours = figures
        .iter()
        .filter(|f| f.server == "tables-server" && f.round == 0);
    for first in ours {
        let same = |server: &str| -> Vec<&Figure> {
            figures
                .iter()
                .filter(|f| {
                    f.server == server
                        && f.client == first.client
                        && f.op == first.op
                        && f.concurrency == first.concurrency
                })
                .collect()
        };
        let (ours, theirs) = (same("tables-server"), same("Azurite"));
        let cpu = |f: &&Figure| f.cpu_per_op().as_secs_f64().max(1e-9);
        let cpu_ratio = median(theirs.iter().map(cpu)) / median(ours.iter().map(cpu));
        let speed_ratio = median(ours.iter().map(|f| f.per_second()))
            / median(theirs.iter().map(|f| f.per_second()));
        let rounds: Vec<(f64, f64)> = ours
            .iter()
            .filter_map(|o| {
                let t = theirs.iter().find(|t| t.round == o.round)?;
                Some((cpu(t) / cpu(o), o.per_second() / t.per_second()))
            })
            .collect();
        let range = |values: Vec<f64>| {
            let low = values.iter().copied().fold(f64::INFINITY, f64::min);
            let high = values.iter().copied().fold(0.0, f64::max);
            format!("[{low:.1}-{high:.1}]")
        };
        println!(
            "  {:<13} {:<6} c{:<2} server CPU per op {:>6.1}x lower {:<12} throughput {:>6.1}x higher {}",
            first.client,
            first.op,
            first.concurrency,
            cpu_ratio,
            range(rounds.iter().map(|r| r.0).collect()),
            speed_ratio,
            range(rounds.iter().map(|r| r.1).collect()),
        );
    }
}

/// The middle value (the mean of the middle two for an even count).
fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn main() {
    let profile = if measuring() { "release" } else { "debug" };
    let (Some(server), Some(azurite)) = (tables_tests::server::binary(profile), azurite_binary())
    else {
        let message = format!(
            "server_vs_azurite needs target/{profile}/tables-server (cargo build{} -p \
             tables-server) and Azurite (npm ci in tools/azurite)",
            if measuring() { " --release" } else { "" }
        );
        assert!(
            std::env::var("CI").as_deref() != Ok("true") || measuring(),
            "{message}"
        );
        println!("SKIPPED: {message}");
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut figures = Vec::new();
        let ours = start_tables_server(&server);
        let azurite = start_azurite(&azurite);
        for round in 0..knob("TABLES_BENCH_ROUNDS", 3, 1) {
            measure(&ours, 10, round, &mut figures).await;
            measure(&azurite, 1, round, &mut figures).await;
        }
        drop(azurite);
        summarize(&figures);
        let rows = knob("TABLES_BENCH_MEMORY_ROWS", 1_000_000, 1_000);
        if rows > 0 {
            memory_per_million(&ours, rows).await;
        }
    });
}
