//! The `tables` command line against `tables-server`, whole processes, in one run on
//! this machine, with a million narrow rows (the bench rows of `server_vs_azurite`:
//! four properties):
//!
//! - `tables import` of a JSON Lines file, and the official Python SDK's batch loop
//!   (`submit_transaction` of 100 rows at a time, pinned in `tools/py-sdk`) over its
//!   own rows (target: import at least 10 times its rate);
//! - `tables export` (one worker, and four), a raw loop that fetches the same pages
//!   (one signed GET per page of 1,000, continuation followed, bytes discarded;
//!   target: export at least half its rate), and the Python SDK's `list_entities`
//!   (target: 20 times its rate);
//! - the peak resident memory of each `tables` process (`VmHWM`, read from `/proc`
//!   while it runs).
//!
//! ```text
//! cargo build --release -p tables-server
//! python3 -m venv tools/py-sdk/.venv && tools/py-sdk/.venv/bin/pip install --require-hashes --no-deps -r tools/py-sdk/requirements.txt
//! cargo bench -p tables-cli --bench cli_throughput
//! ```
//!
//! Knobs: `TABLES_BENCH_ROWS` (default 1,000,000), `TABLES_BENCH_PY_ROWS` (rows the
//! Python batch loop writes, default 100,000: it is the slow one),
//! `TABLES_BENCH_ROUNDS` (times each read is measured, default 3: the median is
//! reported), `TABLES_BENCH_PYTHON=0` (skip the Python SDK). The server and the
//! clients share the machine's cores. Linux only (it reads `/proc`).

#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)] // a bench

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tables_core::auth::{
    canonical_resource, shared_key_authorization, AccountKey, DEVELOPMENT_ACCOUNT,
    DEVELOPMENT_ACCOUNT_KEY,
};
use tables_core::odata::encode_stored_entity;
use tables_tests::server::{bench_row, binary, spawn_child};

/// The median of `runs` (seconds) and the spread, "fastest-slowest s".
fn median(runs: &mut [f64]) -> (f64, String) {
    runs.sort_by(f64::total_cmp);
    let spread = format!("{:.2}-{:.2} s", runs[0], runs[runs.len() - 1]);
    (runs[runs.len() / 2], spread)
}

fn rows_knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// Runs `command` to its end: seconds taken and the process's peak resident KiB.
fn timed(command: &mut Command) -> (f64, u64) {
    let start = Instant::now();
    let mut child: Child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            if let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
            }
        }
        if let Some(exit) = child.try_wait().unwrap() {
            assert!(exit.success(), "{command:?} failed: {exit}");
            return (start.elapsed().as_secs_f64(), peak);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads every page of `table` with one signed GET each, discarding the bytes.
async fn raw_loop(url: &str, table: &str) -> (f64, usize) {
    let key = AccountKey::new(DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY).unwrap();
    let client = reqwest::Client::new();
    let base = url::Url::parse(url).unwrap();
    let path = format!("{}/{table}()", base.path().trim_end_matches('/'));
    let origin = format!("{}://{}", base.scheme(), base.authority());
    let mut next: Option<(String, Option<String>)> = None;
    let mut bytes = 0;
    let start = Instant::now();
    loop {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let resource = canonical_resource(DEVELOPMENT_ACCOUNT, &path, None);
        let auth = shared_key_authorization(&key, true, "GET", "", "", &date, &resource);
        let mut request = format!("{origin}{path}?$top=1000");
        if let Some((pk, rk)) = &next {
            request.push_str(&format!("&NextPartitionKey={pk}"));
            if let Some(rk) = rk {
                request.push_str(&format!("&NextRowKey={rk}"));
            }
        }
        let response = client
            .get(&request)
            .header("x-ms-date", &date)
            .header("x-ms-version", "2019-02-02")
            // What the client asks for: the same pages, byte for byte.
            .header("Accept", "application/json;odata=minimalmetadata")
            .header("Authorization", auth)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        let pk = header("x-ms-continuation-NextPartitionKey");
        let rk = header("x-ms-continuation-NextRowKey");
        bytes += response.bytes().await.unwrap().len();
        match pk {
            Some(pk) => next = Some((pk, rk)),
            None => return (start.elapsed().as_secs_f64(), bytes),
        }
    }
}

fn python_sdk(args: &[&str]) -> Option<(usize, f64)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("tools/py-sdk");
    let python = root.join(".venv/bin/python");
    if std::env::var("TABLES_BENCH_PYTHON").is_ok_and(|v| v == "0") {
        return None;
    }
    if !python.exists() {
        println!(
            "(the Python SDK is not installed in tools/py-sdk/.venv: its figures are skipped)"
        );
        return None;
    }
    let output = Command::new(python)
        .arg(root.join("throughput.py"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    Some((
        result["rows"].as_u64().unwrap() as usize,
        result["seconds"].as_f64().unwrap(),
    ))
}

#[tokio::main]
async fn main() {
    let rows = rows_knob("TABLES_BENCH_ROWS", 1_000_000);
    let py_rows = rows_knob("TABLES_BENCH_PY_ROWS", 100_000);
    let rounds = rows_knob("TABLES_BENCH_ROUNDS", 3).max(1);
    let Some(server_binary) = binary("release") else {
        println!("build the server first: cargo build --release -p tables-server");
        return;
    };
    let (mut server, url) = spawn_child(&server_binary, &["--threads", "2"]);
    let connection = format!(
        "DefaultEndpointsProtocol=http;AccountName={DEVELOPMENT_ACCOUNT};AccountKey={DEVELOPMENT_ACCOUNT_KEY};TableEndpoint={url}"
    );
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("bench.jsonl");
    {
        let mut out = BufWriter::new(std::fs::File::create(&file).unwrap());
        let mut line = Vec::new();
        for i in 0..rows {
            line.clear();
            encode_stored_entity(&bench_row(&format!("p{:05}", i / 1000), i), &mut line);
            line.push(b'\n');
            out.write_all(&line).unwrap();
        }
    }
    let at = |name: &str| work.path().join(name).display().to_string();
    let tables = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tables"));
        command
            .args(args)
            .arg("--quiet")
            .env("AZURE_STORAGE_CONNECTION_STRING", &connection);
        command
    };
    let rate = |n: usize, s: f64| n as f64 / s;
    println!("{rows} narrow rows, tables-server (release, 2 threads) on this machine\n");

    let file = file.display().to_string();
    let (import_s, import_kib) = timed(&mut tables(&[
        "import",
        &file,
        "--table",
        "Bench",
        "--create",
        "--parallel",
        "8",
        "--checkpoint",
        &at("i.ck"),
        "--rejects",
        &at("r"),
    ]));
    let import_rate = rate(rows, import_s);
    println!(
        "tables import (--parallel 8):   {import_rate:>10.0} rows/s  ({import_s:.1} s, peak RSS {} MiB)",
        import_kib / 1024
    );

    // Each read is measured `rounds` times, the three kinds taking turns (so a
    // round's state of the machine, the page cache or the server's heap, is shared
    // by all three), and the median reported with the spread.
    let export = |workers: &str| {
        let dir: PathBuf = work.path().join(format!("out{workers}"));
        let _ = std::fs::remove_dir_all(&dir);
        timed(&mut tables(&[
            "export",
            "Bench",
            "--to",
            dir.to_str().unwrap(),
            "--parallel",
            workers,
        ]))
    };
    let (mut export1_runs, mut export4_runs, mut raw_runs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut export1_kib, mut export4_kib, mut raw_bytes) = (0, 0, 0);
    for _ in 0..rounds {
        let (s, kib) = export("1");
        export1_runs.push(s);
        export1_kib = export1_kib.max(kib);
        let (s, kib) = export("4");
        export4_runs.push(s);
        export4_kib = export4_kib.max(kib);
        let (s, bytes) = raw_loop(&url, "Bench").await;
        raw_runs.push(s);
        raw_bytes = bytes;
    }
    let (export1_s, export1_spread) = median(&mut export1_runs);
    let (export4_s, export4_spread) = median(&mut export4_runs);
    let (raw_s, raw_spread) = median(&mut raw_runs);
    let export1 = rate(rows, export1_s);
    let export4 = rate(rows, export4_s);
    let raw = rate(rows, raw_s);
    println!("reads, the median of {rounds} rounds (fastest-slowest run):");
    println!(
        "tables export (--parallel 1):   {export1:>10.0} rows/s  ({export1_s:.2} s, {export1_spread}, peak RSS {} MiB)",
        export1_kib / 1024
    );
    println!(
        "tables export (--parallel 4):   {export4:>10.0} rows/s  ({export4_s:.2} s, {export4_spread}, peak RSS {} MiB)",
        export4_kib / 1024
    );
    println!(
        "raw page loop (1 at a time):    {raw:>10.0} rows/s  ({raw_s:.2} s, {raw_spread}, {} MiB fetched)",
        raw_bytes >> 20
    );
    println!(
        "  export --parallel 1 / raw loop: {:.2} (target at least 0.5)",
        export1 / raw
    );

    if let Some((n, s)) = python_sdk(&[&connection, "list", "Bench"]) {
        assert_eq!(n, rows);
        let py = rate(n, s);
        println!("Python SDK list_entities:       {py:>10.0} rows/s  ({s:.1} s)");
        println!(
            "  export --parallel 4 / Python: {:.1}x (target 20x); --parallel 1: {:.1}x",
            export4 / py,
            export1 / py
        );
    }
    if let Some((n, s)) = python_sdk(&[&connection, "batch", "PyBench", &py_rows.to_string()]) {
        let py = rate(n, s);
        println!("Python SDK submit_transaction:  {py:>10.0} rows/s  ({n} rows, {s:.1} s)");
        println!("  import / Python: {:.1}x (target 10x)", import_rate / py);
    }
    let _ = server.kill();
    let _ = server.wait();
}
