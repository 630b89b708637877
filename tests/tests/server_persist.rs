//! `tables-server --data-dir` under `kill -9`: writers insert rows, submit batches
//! and bump counters through our remote engine (retries off, so every answer is
//! the server's own) while the process is killed with `SIGKILL`; after each
//! restart on the same folder, every acknowledged write is there exactly as
//! acknowledged (ETag included), every batch is all there or not at all, and
//! nothing appears that was never sent. Three rounds, so later rounds replay a
//! folder that earlier crashes and restarts (and snapshots: the journal limit is
//! small) left behind.
//!
//! It runs the `tables-server` binary the test command builds first; with plain
//! `cargo test` it is built for `tables-server`'s own integration tests. Missing,
//! it fails under `CI=true` and is SKIPPED loudly otherwise.

#![allow(clippy::unwrap_used)] // tests

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tables_client::remote::{RemoteEngine, RetryPolicy};
use tables_client::{DynamicEntity, ETag, Engine, Value, WriteOp};
use tables_tests::azurite::under_ci;
use tables_tests::read::all_rows;
use tables_tests::server::{binary, Process};

const TABLE: &str = "Durable";
const WRITERS: usize = 6;
const BATCH: usize = 4;

/// What the writers were told, and what they sent without an answer.
#[derive(Default)]
struct Ledger {
    /// Inserted rows the server acknowledged, with the ETag it gave.
    acked: BTreeMap<(String, String), (ETag, i64)>,
    /// Rows (and batch rows) sent without a clear answer: may or may not exist.
    unsure: BTreeSet<(String, String)>,
    /// Batches: their partition, and whether acknowledged.
    batches: Vec<(String, bool)>,
    /// Per counter row: the highest acknowledged value and the highest sent.
    counters: BTreeMap<String, (Option<i64>, i64)>,
}

fn server(dir: &std::path::Path, binary: &std::path::Path) -> Process {
    Process::spawn(
        binary,
        &[
            "--data-dir",
            dir.to_str().unwrap(),
            // Small segments: snapshots are taken while the writers run.
            "--journal-limit",
            "65536",
        ],
    )
}

fn engine(server: &Process) -> RemoteEngine {
    server.engine(RetryPolicy::none())
}

async fn writer(
    engine: RemoteEngine,
    w: usize,
    round: usize,
    stop: Arc<AtomicBool>,
    ledger: Arc<Mutex<Ledger>>,
) {
    let payload: Vec<u8> = (0..200).map(|i| (i * 7 + w) as u8).collect();
    for i in 0_i64.. {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let pk = format!("w{w}-r{round}");
        let rk = format!("{i:06}");
        let entity = DynamicEntity::new(&pk, &rk)
            .with("N", i)
            .with("Note", format!("writer {w} round {round} \u{1F600}"))
            .with("Bytes", payload.clone());
        match engine.write(TABLE, &WriteOp::Insert(entity)).await {
            Ok(outcome) => {
                let etag = outcome.etag.expect("an insert answers its ETag");
                ledger.lock().unwrap().acked.insert((pk, rk), (etag, i));
            }
            Err(_) => {
                ledger.lock().unwrap().unsure.insert((pk, rk));
                return; // the server is gone
            }
        }
        if i % 5 == 0 {
            let partition = format!("batch-w{w}-r{round}-{i}");
            let ops: Vec<WriteOp> = (0..BATCH)
                .map(|b| {
                    WriteOp::Insert(
                        DynamicEntity::new(&partition, b.to_string()).with("B", b as i32),
                    )
                })
                .collect();
            let acked = engine.submit_batch(TABLE, &ops).await.is_ok();
            ledger.lock().unwrap().batches.push((partition, acked));
            if !acked {
                return;
            }
        }
        if i % 3 == 0 {
            let name = format!("w{w}");
            ledger
                .lock()
                .unwrap()
                .counters
                .entry(name.clone())
                .or_insert((None, 0))
                .1 = i;
            let bump = WriteOp::UpsertMerge(DynamicEntity::new("counter", &name).with("N", i));
            match engine.write(TABLE, &bump).await {
                Ok(_) => ledger.lock().unwrap().counters.get_mut(&name).unwrap().0 = Some(i),
                Err(_) => return,
            }
        }
    }
}

async fn every_row(engine: &RemoteEngine) -> BTreeMap<(String, String), DynamicEntity> {
    all_rows(engine, TABLE)
        .await
        .unwrap()
        .into_iter()
        .map(|row| ((row.partition_key.clone(), row.row_key.clone()), row))
        .collect()
}

/// Checks the restarted server against everything the writers were told.
fn check(rows: &BTreeMap<(String, String), DynamicEntity>, ledger: &Ledger, round: usize) {
    for (key, (etag, n)) in &ledger.acked {
        let row = rows
            .get(key)
            .unwrap_or_else(|| panic!("round {round}: the acknowledged insert {key:?} is gone"));
        assert_eq!(
            row.etag.as_ref(),
            Some(etag),
            "round {round}: {key:?} changed ETag"
        );
        assert_eq!(row.get("N"), Some(&(*n).into()), "round {round}: {key:?}");
    }
    for (partition, acked) in &ledger.batches {
        let present = (0..BATCH)
            .filter(|b| rows.contains_key(&(partition.clone(), b.to_string())))
            .count();
        assert!(
            present == 0 || present == BATCH,
            "round {round}: batch {partition} is half there ({present} of {BATCH} rows)"
        );
        assert!(
            !acked || present == BATCH,
            "round {round}: acknowledged batch {partition} is gone"
        );
    }
    for (name, (acked, sent)) in &ledger.counters {
        let value = rows
            .get(&("counter".to_owned(), name.clone()))
            .and_then(|r| match r.get("N") {
                Some(Value::Int64(n)) => Some(*n),
                _ => None,
            });
        assert!(
            value >= *acked,
            "round {round}: counter {name} went back to {value:?} (acknowledged {acked:?})"
        );
        assert!(
            value <= Some(*sent),
            "round {round}: counter {name} is {value:?}, more than ever sent ({sent})"
        );
    }
    let batch_partitions: BTreeSet<&str> = ledger.batches.iter().map(|(p, _)| p.as_str()).collect();
    for key in rows.keys() {
        let known = ledger.acked.contains_key(key)
            || ledger.unsure.contains(key)
            || key.0 == "counter"
            || batch_partitions.contains(key.0.as_str());
        assert!(known, "round {round}: {key:?} was never written");
    }
}

#[test]
fn every_acknowledged_write_survives_kill_9_and_no_batch_is_half_applied() {
    let Some(binary) = binary("debug") else {
        assert!(
            !under_ci(),
            "the debug tables-server binary is missing: the test command builds it"
        );
        eprintln!("SKIPPED server_persist: no target/debug/tables-server (run `cargo build -p tables-server`)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tables-kill9-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut acked_per_round = Vec::new();
    for (round, run_for) in [350_u64, 600, 900].into_iter().enumerate() {
        let mut process = server(&dir, &binary);
        runtime.block_on(async {
            let engine = engine(&process);
            if round == 0 {
                engine.create_table(TABLE).await.unwrap();
            } else {
                // What the last crash left must hold before more is written.
                check(&every_row(&engine).await, &ledger.lock().unwrap(), round);
            }
            let before = ledger.lock().unwrap().acked.len();
            let stop = Arc::new(AtomicBool::new(false));
            let tasks: Vec<_> = (0..WRITERS)
                .map(|w| {
                    tokio::spawn(writer(
                        engine.clone(),
                        w,
                        round,
                        Arc::clone(&stop),
                        Arc::clone(&ledger),
                    ))
                })
                .collect();
            tokio::time::sleep(Duration::from_millis(run_for)).await;
            // The writers are mid-flight: kill without warning.
            process.kill();
            stop.store(true, Ordering::Relaxed);
            for task in tasks {
                task.await.unwrap();
            }
            acked_per_round.push(ledger.lock().unwrap().acked.len() - before);
        });
    }
    let last = server(&dir, &binary);
    runtime.block_on(async {
        check(&every_row(&engine(&last)).await, &ledger.lock().unwrap(), 3);
    });
    drop(last);
    let ledger = ledger.lock().unwrap();
    eprintln!(
        "server_persist: acknowledged inserts per round {acked_per_round:?}, {} batches ({} acknowledged), {} writes without an answer",
        ledger.batches.len(),
        ledger.batches.iter().filter(|(_, acked)| *acked).count(),
        ledger.unsure.len()
    );
    // The kill landed while writes were in flight, in every round.
    assert!(
        acked_per_round.iter().all(|n| *n > 0),
        "{acked_per_round:?}"
    );
    let _ = std::fs::remove_dir_all(PathBuf::from(&dir));
}
